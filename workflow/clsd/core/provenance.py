"""What is written beside every result so that a number can be traced: the versions of the packages behind it, and
the CPU that computed it."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

#: Packages that determine the numbers (recorded with embeddings, translations and results).
PACKAGES = ("clsd", "mteb", "torch", "sentence-transformers", "transformers", "polars", "numpy", "snakemake")
#: /proc/cpuinfo flags that decide which kernels the CPU backends use: vector width, int8 dot products (VNNI, AMX;
#: ARM asimddp, i8mm), bf16 and fp16 arithmetic. OpenVINO's default precision is bf16 where avx512_bf16 or amx_bf16
#: is present.
CPU_FLAGS = frozenset({"avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16",
                       "amx_tile", "amx_bf16", "amx_int8", "amx_fp16", "asimddp", "i8mm", "bf16", "sve", "sve2"})


def package_versions() -> dict[str, str]:
    """Versions of the packages that determine the numbers ("not installed" for an absent one)."""
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def cpu_features(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """The CPU that computed a result: model name, logical CPUs, which of CPU_FLAGS it has (from `cpuinfo`; None
    where there is no such file, e.g. macOS) and torch's CPU capability (e.g. AVX512). Recorded with every
    embedding file and benchmark: speed and a runtime's default precision depend on these."""
    import torch

    fields: dict[str, str] = {}
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields.setdefault(key.strip(), value.strip())
    flags = fields.get("flags", fields.get("Features"))  # x86, ARM
    return {"model": fields.get("model name") or platform.processor() or platform.machine(), "machine": platform.machine(),
            "logical_cpus": os.cpu_count(), "instruction_sets": sorted(CPU_FLAGS & set(flags.split())) if flags is not None else None,
            "torch_capability": torch.backends.cpu.get_cpu_capability()}
