"""Where the embedding models' files lie on this machine: the model store and the folder each configured model loads
from.

The config (its checks, the checksum sentinels of local folders), generation (the local LLM's GGUF) and the embedding
stage (loading, exporting) need these paths. They live here, in a module that imports nothing of clsd, so that
clsd.config can import the stages' accessors while no stage imports clsd.config.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def model_store(config: Mapping[str, Any]) -> Path:
    """Absolute folder holding models rebuilt from PyPI."""
    return Path(os.path.expanduser(config["model_store"])).resolve()


def model_folder(config: Mapping[str, Any], name: str) -> Path | None:
    """The local folder a model loads from, or None for hub models (loaded by name)."""
    model = config["models"][name]
    if model["source"] == "pypi":
        return model_store(config) / model["recipe"]
    if model["source"] == "local":
        return Path(os.path.expanduser(model["path"]))
    return None
