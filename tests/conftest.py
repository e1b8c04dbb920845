"""Shared fixtures: the project root, ../shared data (skipped with a reason when absent), real models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CLSD_SHARED", ROOT.parent / "shared")).resolve()
WMT = SHARED / "data" / "wmt"
PUBLISHED = SHARED / "data" / "clsd-published-sample"
MODEL_STORE = Path(os.path.expanduser(os.environ.get("CLSD_MODEL_STORE", "~/.cache/clsd/models")))


def group_alive(pgid: int) -> bool:
    """Whether any process of the process group `pgid` still runs (a job and the local server it started)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def require_shared() -> None:
    """Skip (with the reason) when ../shared/data is not beside the project."""
    if not (WMT.is_dir() and PUBLISHED.is_dir()):
        pytest.skip(f"shared data not found at {SHARED} (set CLSD_SHARED or place shared/ beside the project)")


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    """all-MiniLM-L6-v2 rebuilt from its PyPI wheel (the real loading path, small enough for tests)."""
    from clsd.serving.model_store import RECIPES, materialise

    return materialise(RECIPES["all-MiniLM-L6-v2"], MODEL_STORE / "all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def minilm(minilm_folder: Path):
    from clsd.embed.loaded import load_model
    from clsd.embed.spec import ModelSpec

    spec = ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from=str(minilm_folder))
    model, _ = load_model(spec, "cpu")
    return model


@pytest.fixture(scope="session")
def tiny_m2m(tmp_path_factory) -> Path:
    """A tiny random M2M100 saved as a transformers folder (see tests/tiny_m2m.py)."""
    from tiny_m2m import build_tiny_m2m

    return build_tiny_m2m(tmp_path_factory.mktemp("tiny-m2m"))


#: A CPU variant library that faults on purpose: ggml scores it above every real variant, and it executes an illegal
#: instruction when loaded (ud2: SIGILL, as AMX tile instructions do on a VM that advertises AMX without granting it).
FAULTY_VARIANT = r"""
int ggml_backend_score(void) { return 1 << 20; }
void * ggml_backend_init(void) { __builtin_trap(); return 0; }
"""


def llama_server_with_a_faulty_variant(folder: Path, *, tested: bool, source: str = FAULTY_VARIANT) -> Path:
    """A copy of the llama-server install.sh built, laid out under `folder` as install.sh lays it out under a prefix
    (`bin/llama-server`), with a variant `faulty` compiled from C `source` beside the real ones; `tested`: recorded as having passed
    this machine's self-test (its fault shows first at run time; the real variants keep this machine's outcomes), else
    no machine tested. The program's path."""
    import json
    import shutil
    import subprocess
    import sys

    from clsd.serving.server_variants import SELFTEST_GGUF, record, this_cpu, variant_files, write_tiny_gguf_with_sdist

    installed = (Path(sys.executable).parent / "llama-server").resolve().parent
    install = folder / "libexec" / "llama.cpp"
    shutil.copytree(installed, install, symlinks=True, ignore=shutil.ignore_patterns("views", "build.lock"))
    stamp = json.loads((install / "build.json").read_text())
    this_machine = stamp.pop("machines", {}).get(this_cpu())
    (install / "build.json").write_text(json.dumps(stamp))
    if not (install / SELFTEST_GGUF).is_file():
        write_tiny_gguf_with_sdist(install / SELFTEST_GGUF)
    (folder / "faulty.c").write_text(source)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(install / "libggml-cpu-faulty.so"), str(folder / "faulty.c")], check=True)
    if tested:  # this machine's own outcomes (a real variant may fault here too), and `faulty` passed
        outcomes = {name: "ok" for name in variant_files(install)} | (this_machine or {}).get("variants", {})
        record(install, this_cpu(), outcomes | {"faulty": "ok"}, "self-test")
    (folder / "bin").mkdir()
    (folder / "bin" / "llama-server").symlink_to(install / "llama-server")
    return folder / "bin" / "llama-server"
