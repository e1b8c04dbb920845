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
    from clsd.embed.model_store import RECIPES, materialise

    return materialise(RECIPES["all-MiniLM-L6-v2"], MODEL_STORE / "all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def minilm(minilm_folder: Path):
    from clsd.embed.models import ModelSpec, load_model

    spec = ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from=str(minilm_folder))
    model, _ = load_model(spec, "cpu")
    return model


@pytest.fixture(scope="session")
def tiny_m2m(tmp_path_factory) -> Path:
    """A tiny random M2M100 saved as a transformers folder (see tests/tiny_m2m.py)."""
    from tiny_m2m import build_tiny_m2m

    return build_tiny_m2m(tmp_path_factory.mktemp("tiny-m2m"))
