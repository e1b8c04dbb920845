"""Config checks of stage translate: the pivot backend and the views.

Called by clsd.config.check while the Snakefile is parsed, so a bad config fails before any job starts, naming
the key."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from clsd.core.errors import InputError
from clsd.serving.checks import require_loadable


def check_pivot(config: dict[str, Any]) -> None:
    """The pivot backend must be usable: published files named, translation model loadable."""
    pivot = config["pivot"]
    if pivot["backend"] == "published":
        if pivot["language"] != "en":
            raise InputError(f"config key pivot.language: the published pivot files are English, not {pivot['language']}; "
                             "use a translation backend for another pivot language")
        for name, dataset in config["datasets"].items():
            if "pivot_csv" not in dataset:
                raise InputError(f"config key datasets.{name}.pivot_csv: required when pivot.backend is published")
            if dataset["distractors"]["kind"] not in ("from_source", "published_csv"):
                raise InputError(
                    f"config key datasets.{name}.pivot_csv: published translations cover only published distractors, "
                    f"not {dataset['distractors']['kind']} ones; use a translation backend"
                )
    elif pivot["backend"] in ("transformers", "ctranslate2"):
        key = "config key pivot"
        if pivot["source"] == "local":
            path = Path(os.path.expanduser(pivot.get("path", "")))
            if not pivot.get("path") or not (path / "config.json").is_file():
                raise InputError(f"{key}.path: {str(path)!r} is not a transformers model folder")
        else:
            require_loadable(pivot["model"], None, f"{key}.model")


def check_views(config: dict[str, Any]) -> None:
    """Every run scores the direct view: the pivot view, the analysis, the exports and the MTEB records are built on
    it, and a pivot view without a pivot backend is skipped, which would leave nothing to run."""
    views = config["views"]
    if "direct" not in views:
        skipped = " (and with pivot.backend none it would be skipped too, leaving nothing to run)" if config["pivot"]["backend"] == "none" else ""
        raise InputError(f"config key views: {views} lacks direct: the pivot view is scored beside the direct one, which "
                         f"the analysis and the exports are built on{skipped}; use views: [direct, pivot] and set pivot.backend")
