"""Encoding texts with a sentence-transformers model: device and precision, backend, prompts/prefixes, keyed vectors.

An embedding row is keyed by the sha256 of the exact text the model saw (prompt and prefix included), after
a tag of the encoder when it is not plain PyTorch in float32 (`<onnx-int8>`, `<torch-bfloat16>`,
`<openvino-bfloat16>`), so embeddings of different prompts, models, backends or precisions can never be mixed
up, and each distinct text is encoded once. What ran is recorded with the vectors (`runs_on`): device, backend,
the precision of weights and activations, and the CPU's instruction sets, on which speed (and, left to a
runtime's defaults, precision) depends.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

log = logging.getLogger(__name__)

# /proc/cpuinfo flags that decide which kernels the CPU backends use: vector width, int8 dot products (VNNI, AMX;
# ARM asimddp, i8mm), bf16 and fp16 arithmetic. OpenVINO's default precision is bf16 where avx512_bf16 or amx_bf16
# is present.
CPU_FLAGS = frozenset({"avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16",
                       "amx_tile", "amx_bf16", "amx_int8", "amx_fp16", "asimddp", "i8mm", "bf16", "sve", "sve2"})
# Precisions of the export backends on the CPU (torch: see resolve_dtype).
EXPORT_DTYPES = {"onnx": ("float32",), "openvino": ("float32", "bfloat16")}


@dataclass(frozen=True)
class ModelSpec:
    """What the workflow needs to load and call one embedding model."""

    key: str
    name: str
    load_from: str
    prefix: str = ""
    prompt_name: str | None = None
    trust_remote_code: bool = False
    revision: str | None = None
    batch_size: int = 32
    max_length: int | None = None
    backend: str = "torch"
    quantize: str = "none"
    dtype: str = "float32"

    @classmethod
    def from_config(cls, key: str, model: dict[str, Any], folder: Path | None) -> "ModelSpec":
        """Build from a validated config entry; `folder` is the local copy (None: load `name` from the hub)."""
        return cls(
            key=key,
            name=model["name"],
            load_from=str(folder) if folder is not None else model["name"],
            prefix=model["prefix"],
            prompt_name=model["prompt_name"],
            trust_remote_code=model["trust_remote_code"],
            revision=model["revision"],
            batch_size=model["batch_size"],
            max_length=model["max_length"],
            backend=model["backend"],
            quantize=model["quantize"],
            dtype=model["dtype"],
        )


def resolve_device(device: str) -> str:
    """`auto` → cuda when present, else mps, else cpu; anything else is passed through."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def resolve_dtype(dtype: str, device: str, backend: str = "torch") -> str:
    """The precision a backend computes in. torch: half precision (float16, bfloat16) on CUDA only; elsewhere
    float32, with a warning (torch's bfloat16 was slower than float32 on a CPU with AVX512-BF16 but no AMX, MPS
    lacks bfloat16 kernels). onnx: float32; openvino: float32 or bfloat16 (on the CPU), as asked."""
    if backend != "torch":
        if dtype not in EXPORT_DTYPES[backend]:
            raise ValueError(f"backend {backend} runs in {' or '.join(EXPORT_DTYPES[backend])}, not {dtype}")
        return dtype
    if dtype != "float32" and device != "cuda":
        log.warning("dtype %s is used on CUDA only; loading in float32 on %s (bfloat16 on the CPU: backend openvino)",
                    dtype, device)
        return "float32"
    return dtype


def encoder_tag(backend: str, quantize: str, dtype: str) -> str:
    """Name of the encoder in row keys: "" for plain PyTorch in float32, else e.g. onnx-int8, torch-bfloat16,
    openvino-bfloat16 or openvino-int8-bfloat16 (the precision is named whenever it is not float32)."""
    if backend == "torch":
        return "" if dtype == "float32" else f"torch-{dtype}"
    name = backend if quantize == "none" else f"{backend}-{quantize}"
    return name if dtype == "float32" else f"{name}-{dtype}"


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


def row_key_prefix(tag: str, applied: str) -> str:
    """What precedes a text in its row key: the encoder tag (if any), then the applied prompt and prefix."""
    return (f"<{tag}>" if tag else "") + applied


def load_model(spec: ModelSpec, device: str, exported: str | None = None):  # -> SentenceTransformer (lazy import: torch is heavy)
    """Load the model exactly as a user would: `SentenceTransformer(name or local folder)`; with the onnx or
    openvino backend its transformer then runs from the exported file `exported` on the CPU, in the precision
    asked for (set explicitly: OpenVINO would otherwise pick bf16 on a CPU with bf16 instructions).

    Returns the model and what runs it: {"device", "dtype", "backend", "quantize", "tag", "precision" (weights,
    activations and what the runtime reports), "cpu" (cpu_features)}.
    """
    import torch
    from sentence_transformers import SentenceTransformer

    target = resolve_device(device) if spec.backend == "torch" else "cpu"
    dtype = resolve_dtype(spec.dtype, target, spec.backend)
    if spec.backend != "torch" and exported is None:
        raise ValueError(f"model {spec.key}: backend {spec.backend} needs its export (rule export_model)")
    model = SentenceTransformer(
        spec.load_from,
        device=target,
        trust_remote_code=spec.trust_remote_code,
        revision=spec.revision,
        model_kwargs={"dtype": getattr(torch, dtype)} if spec.backend == "torch" and dtype != "float32" else None,
    )
    if spec.backend == "torch":
        precision = {"weights": dtype, "activations": dtype, "float32_matmul_precision": torch.get_float32_matmul_precision()}
    elif spec.backend == "onnx":
        from clsd.embed.backends.onnx import use_onnx

        precision = use_onnx(model, exported, torch.get_num_threads(), spec.quantize)
    else:
        from clsd.embed.backends.openvino import use_openvino

        precision = use_openvino(model, exported, torch.get_num_threads(), dtype, spec.quantize)
    if spec.prompt_name is not None and spec.prompt_name not in model.prompts:
        raise ValueError(f"model {spec.key}: no prompt named {spec.prompt_name!r}; it has {sorted(model.prompts)}")
    if spec.max_length is not None:
        model.max_seq_length = spec.max_length
    runs_on = {"device": target, "dtype": dtype, "backend": spec.backend, "quantize": spec.quantize,
               "tag": encoder_tag(spec.backend, spec.quantize, dtype), "precision": precision, "cpu": cpu_features()}
    return model, runs_on


def applied_prefix(spec: ModelSpec, prompts: dict[str, str]) -> str:
    """The exact string placed before every text: the named prompt (if any), then the configured prefix."""
    prompt = prompts[spec.prompt_name] if spec.prompt_name is not None else ""
    return prompt + spec.prefix


def text_key(prefix: str, text: str) -> str:
    """Row key of an embedding: sha256 of the exact encoded text."""
    return hashlib.sha256((prefix + text).encode("utf-8")).hexdigest()


def encode(model, spec: ModelSpec, texts: list[str]) -> np.ndarray:
    """Encode `texts` (configured prefix prepended, named prompt applied by sentence-transformers)."""
    return model.encode(
        [spec.prefix + text for text in texts],
        prompt_name=spec.prompt_name,
        batch_size=spec.batch_size,
        show_progress_bar=True,
        convert_to_numpy=True,
    ).astype(np.float32, copy=False)


def embedding_table(texts: list[str], prefix: str, vectors: np.ndarray) -> pl.DataFrame:
    """Embeddings keyed by `text_key(prefix, text)`."""
    if len(texts) != len(vectors):
        raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
    return pl.DataFrame(
        {"text_id": [text_key(prefix, text) for text in texts], "embedding": vectors},
        schema={"text_id": pl.String, "embedding": pl.Array(pl.Float32, vectors.shape[1])},
    )


def empty_embedding_table() -> pl.DataFrame:
    """An embedding table without rows (a view with no item to score: no model is loaded for it)."""
    return pl.DataFrame(schema={"text_id": pl.String, "embedding": pl.List(pl.Float32)})


def lookup(table: pl.DataFrame, keys: list[str]) -> np.ndarray:
    """Vectors for `keys` in order; fails naming a missing key (a text the embedding job never saw)."""
    index = {key: row for row, key in enumerate(table["text_id"].to_list())}
    matrix = table["embedding"].to_numpy()
    try:
        rows = [index[key] for key in keys]
    except KeyError as exc:
        raise KeyError(f"no embedding for text key {exc.args[0]}; rerun the embedding job") from exc
    return matrix[rows]
