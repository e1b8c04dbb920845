"""What the jobs of stage translate (rules/translate.smk) read and depend on, from the validated config: their input
files, params and GPUs, as plain functions of the config (the rules call them while Snakemake plans)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clsd.core import paths
from clsd.data.jobs import is_local, published_distractors, reference_params
from clsd.translate.pivot import TranslatorSpec

Config = Mapping[str, Any]


def converted_model(config: Config) -> list[str]:
    """The CTranslate2 conversion, when that backend is configured."""
    return [paths.CT2] if config["pivot"]["backend"] == "ctranslate2" else []


def translator_spec(config: Config) -> dict[str, Any]:
    """What translations depend on (a local model's display name is no part of it: its sentinel is an input)."""
    spec = TranslatorSpec.from_config(config["pivot"]).__dict__
    return spec | {"model": None} if config["pivot"]["source"] == "local" else spec


def pivot_inputs(config: Config, dataset: str) -> dict[str, str]:
    """published backend: the English file and the published CSV whose items it must cover (the local ones)."""
    if config["pivot"]["backend"] != "published":
        return {}
    files = {"pivot_csv": config["datasets"][dataset].get("pivot_csv"), "published": published_distractors(config, dataset)}
    return {name: reference["path"] for name, reference in files.items() if is_local(reference)}


def pivot_params(config: Config, dataset: str) -> dict[str, Any]:
    """published backend: the URLs and pins of the English file and of the published CSV."""
    if config["pivot"]["backend"] != "published":
        return {}
    return {
        "pivot_csv": reference_params(config["datasets"][dataset].get("pivot_csv")),
        "published": reference_params(published_distractors(config, dataset)),
    }


def translation_gpus(config: Config) -> int:
    """Published translations need no GPU; model backends request the configured number."""
    return 0 if config["pivot"]["backend"] == "published" else config["pivot"]["gpu"]


def effective_views(config: Config) -> list[str]:
    """The views that run: `pivot` is dropped when no pivot backend is configured."""
    if config["pivot"]["backend"] == "none":
        return [view for view in config["views"] if view != "pivot"]
    return list(config["views"])


def translation_model(config: Config) -> str:
    """What the translation backends load: the local folder or the HF model id."""
    pivot = config["pivot"]
    return str(Path(os.path.expanduser(pivot["path"]))) if pivot["source"] == "local" else pivot["model"]
