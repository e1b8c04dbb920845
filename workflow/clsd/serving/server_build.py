"""Build llama.cpp's `llama-server` for the local LLM, from the llama.cpp source that ships inside the pinned
llama-cpp-python sdist on PyPI (`vendor/llama.cpp`), so that no other download is needed.

The build runs at this CPU's speed and is safe on another: the server and its libraries are built once without a
CPU backend, and the CPU backend as run-time variants (`GGML_BACKEND_DL`: `libggml-cpu-<variant>.so` beside the
binary; ggml loads the best one the CPU supports when the server starts). Building all of llama.cpp's 14 x86
variants costs about 9 minutes on 2 cores, so by default only three are built: the best variant for the CPU
that installs (the speed of a native build), `haswell` (AVX2, what any x86 server of the last decade has) and
`x64` (any x86-64), so that an environment moved to an older or another CPU still runs, on a lower variant
(the generation report names the variant that ran); where the best needs AMX, which a VM may list and not run,
the best without AMX is built too. `CLSD_LLAMA_CPU_VARIANTS=all` (or a comma list) builds
others, e.g. for a cluster of several CPU generations.

    python -m clsd.serving.server_build --prefix .venv

installs `<prefix>/libexec/llama.cpp/` (binary, libraries, variants) and links `<prefix>/bin/llama-server`
to it; a second run with the same source and variants does nothing.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)

SDIST = "llama-cpp-python==0.3.36"
# CPU feature names in llama.cpp's CMake variant list -> the /proc/cpuinfo flag that shows each
CPUINFO_FLAG = {
    "SSE42": "sse4_2", "AVX": "avx", "F16C": "f16c", "FMA": "fma", "AVX2": "avx2", "BMI2": "bmi2",
    "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi", "AVX512_VNNI": "avx512_vnni", "AVX512_BF16": "avx512_bf16",
    "AVX_VNNI": "avx_vnni", "AMX_TILE": "amx_tile", "AMX_INT8": "amx_int8", "AMX_BF16": "amx_bf16",
}
FALLBACKS = ("haswell", "x64")
# Instructions a virtual machine may list without running them (measured: a VM listing AMX whose tile instructions
# raise SIGILL; clsd.serving.server_variants then never loads the variant that uses them)
UNTRUSTED = ("AMX_TILE", "AMX_INT8", "AMX_BF16")
VARIANT_LINE = re.compile(r"ggml_add_cpu_backend_variant\((\w+)((?:\s+\w+)*)\s*\)")
COMMON_ARGS = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DGGML_BACKEND_DL=ON", "-DGGML_NATIVE=OFF",
               "-DBUILD_SHARED_LIBS=ON", "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
               "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DGGML_CCACHE=OFF",
               # every binary and library finds the others beside it, wherever the folder is moved
               "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON", "-DCMAKE_INSTALL_RPATH=$ORIGIN"]
# The server tree's C++ (llama, common, server, mtmd: HTTP, JSON, chat templates, graph building) at -O1: it builds
# in 257 s instead of about 400 s on 2 cores and decodes as fast (20-24 tokens/s either way, Qwen2.5-1.5B Q4_K_M,
# 2 threads); the kernels that decode are the CPU variants', built at -O3 in the other tree.
SERVER_ARGS = ["-DGGML_CPU=OFF", "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"]


def x86_variants(cmake_text: str) -> dict[str, tuple[str, ...]]:
    """llama.cpp's x86 CPU variants and the features each needs, read from ggml/src/CMakeLists.txt (the x86 branch
    of its `if (GGML_CPU_ALL_VARIANTS)` block), in the order listed there."""
    start = cmake_text.index('GGML_SYSTEM_ARCH STREQUAL "x86")', cmake_text.index("if (GGML_CPU_ALL_VARIANTS)"))
    end = cmake_text.index('GGML_SYSTEM_ARCH STREQUAL "ARM")', start)
    variants = {match.group(1): tuple(match.group(2).split()) for match in VARIANT_LINE.finditer(cmake_text[start:end])}
    if "x64" not in variants:
        raise ValueError("no x86 CPU variants found in llama.cpp's ggml/src/CMakeLists.txt (has its layout changed?)")
    return variants


def cpu_flags(cpuinfo: str) -> set[str]:
    """The flags of the first processor in a /proc/cpuinfo text."""
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def machine_flags() -> set[str]:
    """This machine's CPU flags (none where /proc/cpuinfo is missing)."""
    cpuinfo = Path("/proc/cpuinfo")
    return cpu_flags(cpuinfo.read_text(encoding="utf-8")) if cpuinfo.is_file() else set()


def machine_key() -> str:
    """The CPU features of this machine that choose a variant, as build.json's `cpu_flags` writes them."""
    return " ".join(sorted(machine_flags() & set(CPUINFO_FLAG.values())))


def best_variant(variants: dict[str, tuple[str, ...]], flags: set[str]) -> str:
    """The variant with the most features, all of which the CPU has (what ggml's run-time score picks among
    them); `x64` needs none."""
    usable = [name for name, features in variants.items() if all(CPUINFO_FLAG[f] in flags for f in features)]
    return max(usable, key=lambda name: len(variants[name]))


def chosen_variants(variants: dict[str, tuple[str, ...]], flags: set[str], request: str | None) -> list[str]:
    """Which variants to build: `request` ("all", or a comma list of names), else this CPU's best, the best without
    AMX where that differs, and the fallbacks. Unknown names fail, naming the ones there are."""
    if request == "all":
        return list(variants)
    if request:
        names = [name.strip() for name in request.split(",") if name.strip()]
        unknown = [name for name in names if name not in variants]
        if unknown:
            raise ValueError(f"CLSD_LLAMA_CPU_VARIANTS: unknown variant(s) {', '.join(unknown)}; known: {', '.join(variants)}")
        return names
    # where the best variant needs AMX, the best without it too: if the VM cannot run AMX, the server falls to it and
    # not to haswell (on such a VM zen4 read prompts at 99 tokens/s, haswell at 68; decoding 15 either way: bench/cpu_variants.py)
    trusted = flags - {CPUINFO_FLAG[feature] for feature in UNTRUSTED}
    return list(dict.fromkeys([best_variant(variants, flags), best_variant(variants, trusted), *FALLBACKS]))


def download_sdist(workdir: Path) -> Path:
    """The pinned llama-cpp-python sdist from PyPI (pip's cache makes a second download free)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:", SDIST,
                    "-d", str(workdir)], check=True)
    return next(workdir.glob("llama_cpp_python-*.tar.gz"))


def extract_llama_cpp(sdist: Path, workdir: Path) -> Path:
    """`vendor/llama.cpp` of the sdist, extracted under `workdir`."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if "/vendor/llama.cpp/" in m.name]
        archive.extractall(workdir, members=members, filter="data")
    return next(workdir.glob("llama_cpp_python-*/vendor/llama.cpp"))


def run(command: list[str], log_file: Path) -> float:
    """Run a build step, its output to `log_file`; its seconds. A failure shows the end of the log."""
    start = time.perf_counter()
    with log_file.open("ab") as out:
        result = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        tail = log_file.read_text(errors="replace").splitlines()[-30:]
        raise RuntimeError(f"{' '.join(command)} failed (exit {result.returncode}); end of {log_file}:\n" + "\n".join(tail))
    return time.perf_counter() - start


def build(source: Path, workdir: Path, variants: list[str], jobs: int) -> tuple[Path, Path, dict[str, float]]:
    """Configure and build the server without a CPU backend, then the CPU variants in a second tree; the two
    build folders and the seconds of each step."""
    steps: dict[str, float] = {}
    server, cpu, log_file = workdir / "server", workdir / "cpu", workdir / "build.log"
    steps["configure"] = run(["cmake", "-S", str(source), "-B", str(server), *COMMON_ARGS, *SERVER_ARGS], log_file)
    steps["configure"] += run(["cmake", "-S", str(source), "-B", str(cpu), *COMMON_ARGS, "-DGGML_CPU_ALL_VARIANTS=ON"], log_file)
    steps["llama-server"] = run(["ninja", "-C", str(server), f"-j{jobs}", "llama-server"], log_file)
    steps["cpu variants"] = run(["ninja", "-C", str(cpu), f"-j{jobs}", *(f"ggml-cpu-{v}" for v in variants)], log_file)
    return server / "bin", cpu / "bin", steps


def install(server_bin: Path, cpu_bin: Path, variants: list[str], prefix: Path, stamp: dict) -> Path:
    """Copy the binary, its libraries and the variants into `<prefix>/libexec/llama.cpp` (replacing an older
    install whole) and link `<prefix>/bin/llama-server` to it."""
    target = prefix / "libexec" / "llama.cpp"
    staging = target.with_name("llama.cpp.new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in server_bin.iterdir():
        if path.name == "llama-server" or path.name.startswith("lib"):
            shutil.copy2(path, staging / path.name, follow_symlinks=False)
    for variant in variants:
        shutil.copy2(cpu_bin / f"libggml-cpu-{variant}.so", staging / f"libggml-cpu-{variant}.so")
    (staging / "build.json").write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
    check = subprocess.run([str(staging / "llama-server"), "--version"], capture_output=True, text=True)
    if check.returncode != 0:
        raise RuntimeError(f"the built llama-server does not start: {check.stderr.strip()[-500:]} "
                           f"(files: {', '.join(sorted(p.name for p in staging.iterdir()))})")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    link = prefix / "bin" / "llama-server"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(os.path.relpath(target / "llama-server", link.parent))
    return link


def installed_stamp(prefix: Path) -> dict | None:
    """What the install in `prefix` was built from, or None."""
    path = prefix / "libexec" / "llama.cpp" / "build.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() and (path.parent / "llama-server").is_file() else None


def main() -> None:
    parser = argparse.ArgumentParser(description="Build llama.cpp's llama-server (CPU variants chosen at run time).")
    parser.add_argument("--prefix", type=Path, required=True, help="environment to install into (its bin/ gets llama-server)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    request = os.environ.get("CLSD_LLAMA_CPU_VARIANTS") or None
    flags = machine_flags()
    # the CPU features that choose a variant: a machine with others (a new CPU generation) builds anew
    wanted = {"source": SDIST, "request": request, "cpu_flags": machine_key(),
              "cmake": COMMON_ARGS + SERVER_ARGS}
    stamp = installed_stamp(args.prefix)
    if stamp is not None and all(stamp.get(key) == value for key, value in wanted.items()):
        log.info("llama-server from %s (CPU variants %s) is already installed in %s", SDIST, ", ".join(stamp["variants"]), args.prefix)
        return
    with tempfile.TemporaryDirectory(prefix="clsd-llama-build-") as tmp:
        workdir = Path(tmp)
        source = extract_llama_cpp(download_sdist(workdir), workdir)
        variants = chosen_variants(x86_variants((source / "ggml/src/CMakeLists.txt").read_text(encoding="utf-8")), flags, request)
        log.info("building llama-server from %s's vendor/llama.cpp, CPU variants %s (%d jobs)", SDIST, ", ".join(variants), args.jobs)
        server_bin, cpu_bin, steps = build(source, workdir, variants, args.jobs)
        stamp = wanted | {"variants": variants, "seconds": {step: round(seconds, 1) for step, seconds in steps.items()}}
        link = install(server_bin, cpu_bin, variants, args.prefix, stamp)
    log.info("installed %s (%s)", link, ", ".join(f"{step} {seconds:.0f} s" for step, seconds in steps.items()))


if __name__ == "__main__":
    main()
