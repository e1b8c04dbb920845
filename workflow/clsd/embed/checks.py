"""Config checks of stage embed: each model can be loaded here (recipe, folder, backend, dtype) or asked behind its
endpoint.

Called by clsd.config.check while the Snakefile is parsed, so a bad config fails before any job starts, naming
the key."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from clsd.core.errors import InputError
from clsd.embed import backends
from clsd.embed.jobs import endpoint_models
from clsd.serving.checks import check_server_installed, check_store_path, check_url, require_loadable
from clsd.serving.model_store import RECIPES


def check_device(device: str) -> None:
    """`auto`, `cpu`, `mps`, `cuda` or `cuda:<index>` (a typo such as `gpu9` would fail only inside an embedding job)."""
    if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", device):
        raise InputError(f"config key device: {device!r} is not a device; use auto, cpu, mps, cuda or cuda:<index>")


def check_model(name: str, model: dict[str, Any]) -> None:
    """Fail early when a model cannot be loaded: unknown recipe, missing folder, not cached while offline, or a
    dtype or quantisation its backend does not offer (the backend registry says which, clsd.embed.backends)."""
    key = f"config key models.{name}"
    if model["source"] == "endpoint":
        check_endpoint_model(key, model)
        return
    if "endpoint" in model:
        raise InputError(f"{key}.endpoint: only a model with source: endpoint is served behind one (source is {model['source']})")
    backend, quantize, dtype = model["backend"], model["quantize"], model["dtype"]
    chosen = backends.backend(backend)
    if quantize not in chosen.quantizations:
        able = " or ".join(other for other, entry in backends.BACKENDS.items() if quantize in entry.quantizations)
        raise InputError(f"{key}.quantize: {quantize} needs backend {able}, not {backend}")
    if dtype not in chosen.dtypes:
        able = " or ".join(other for other, entry in backends.BACKENDS.items() if dtype in entry.dtypes)
        raise InputError(f"{key}.dtype: {dtype} is for the {able} backend; {backend} runs in {' or '.join(chosen.dtypes)}")
    if chosen.from_folder and model["source"] == "hub":
        raise InputError(f"{key}.backend: {backend} converts the model's own folder: use source pypi or local (a hub model's "
                         "folder is not known before the job runs)")
    if backend == "llama-server":
        check_server_installed(None)
    if model["source"] == "pypi":
        if model.get("recipe") not in RECIPES:
            raise InputError(f"{key}.recipe: unknown recipe {model.get('recipe')!r}; known: {sorted(RECIPES)}")
    elif model["source"] == "local":
        check_local_model_folder(Path(os.path.expanduser(model.get("path", ""))) if model.get("path") else None, f"{key}.path")
    elif model["source"] == "hub":
        require_loadable(model["name"], model.get("revision"), f"{key}.name")


#: Settings of a model loaded here that an endpoint model cannot have (the endpoint runs it), with what to use instead.
NOT_FOR_ENDPOINTS = {
    "backend": ("torch", "the endpoint runs the model"), "quantize": ("none", "the endpoint runs the model"),
    "dtype": ("float32", "the endpoint runs the model"), "trust_remote_code": (False, "no code is loaded here"),
    "revision": (None, "the endpoint serves one revision"),
    "prompt_name": (None, "an endpoint has no named prompts: put the prompt's text in prefix"),
    "max_length": (None, "use endpoint.max_input_tokens"), "batch_size": (32, "use endpoint.inputs_per_request"),
}


def check_endpoint_model(key: str, model: dict[str, Any]) -> None:
    """A `source: endpoint` model: an http(s) base URL, none of the settings of a model loaded here, a limit to
    truncate to, and a tokenizer file that exists."""
    endpoint = model["endpoint"]
    check_url(endpoint["base_url"], f"{key}.endpoint.base_url")
    for setting, (default, instead) in NOT_FOR_ENDPOINTS.items():
        if model[setting] != default:
            raise InputError(f"{key}.{setting}: not for a model served behind an endpoint ({instead})")
    if endpoint["truncate"] and endpoint["max_input_tokens"] is None:
        raise InputError(f"{key}.endpoint.truncate: set endpoint.max_input_tokens, the tokens a text is cut to")
    if endpoint["tokenizer"] is not None:
        from clsd.embed.token_counts import tokenizer_file

        if not tokenizer_file(endpoint["tokenizer"]).is_file():
            raise InputError(f"{key}.endpoint.tokenizer: {endpoint['tokenizer']!r} is neither a tokenizer.json nor a folder "
                             "holding one")


def check_endpoint_models(config: dict[str, Any]) -> None:
    """Models served behind an endpoint need a vector store that can be written."""
    if endpoint_models(config):
        check_store_path(config["embedding_store"], "config key embedding_store")


def transformer_config(folder: Path) -> Path | None:
    """The config.json of the transformer a model folder holds: its Transformer module's (modules.json of a
    sentence-transformers folder), else the folder's own (a plain transformers folder); None when there is none."""
    modules = folder / "modules.json"
    if modules.is_file():
        try:
            entries = json.loads(modules.read_text(encoding="utf-8"))
        except ValueError:
            return None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and str(entry.get("type", "")).endswith("Transformer"):
                return folder / str(entry.get("path", "")) / "config.json"
    return folder / "config.json" if (folder / "config.json").is_file() else None


def check_local_model_folder(folder: Path | None, key: str) -> None:
    """A local embedding model must be a folder sentence-transformers can load: a transformer whose config.json
    names a model_type this transformers knows (otherwise the embedding job fails half a minute in)."""
    config_file = transformer_config(folder) if folder is not None and folder.is_dir() else None
    if config_file is None or not config_file.is_file():
        raise InputError(f"{key}: {str(folder)!r} is not a sentence-transformers model folder (no modules.json with a "
                         "Transformer module, nor a config.json)")
    try:
        model_type = json.loads(config_file.read_text(encoding="utf-8")).get("model_type")
    except (ValueError, AttributeError):
        raise InputError(f"{key}: {str(config_file)!r} is not a JSON object") from None
    from transformers import __version__ as version
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    if model_type not in CONFIG_MAPPING_NAMES:
        raise InputError(f"{key}: {str(config_file)!r} names model_type {model_type!r}, which transformers {version} "
                         "does not know: not a transformers model folder?")
