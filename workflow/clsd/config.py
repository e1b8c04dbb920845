"""The run configuration: schema validation with defaults, then each stage's semantic checks (`<stage>/checks.py`,
called in `check`); what a rule reads of the config is in its stage's `jobs.py`.

Everything here runs when the Snakefile is parsed, so a bad config fails before any job starts, with an
error naming the offending key.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import jsonschema

from clsd.analysis.checks import check_profile_reference
from clsd.core.errors import InputError
from clsd.core.languages import language
from clsd.core.workflow import PACKAGE_ROOT, read_schema, root
from clsd.data.checks import check_dataset_languages, check_directions, check_selection_keys
from clsd.embed import backends
from clsd.embed.checks import check_device, check_endpoint_models, check_model
from clsd.generate.checks import check_generation, check_word_lists, default_generator_label
from clsd.report.checks import check_generator_check, check_unique_labels
from clsd.serving.locations import model_folder
from clsd.translate.checks import check_pivot, check_views
from clsd.translate.jobs import translation_model
from clsd.validate.checks import check_annotation, check_registry_tools

SCHEMA_PATH = PACKAGE_ROOT / "workflow" / "schemas" / "config.schema.yaml"
#: The shipped judge prompts, by `validation.judge_per`.
JUDGE_PROMPTS = {"item": "resources/prompts/judge-item-v1.txt", "distractor": "resources/prompts/judge-v2.txt"}


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
    """The config JSON Schema shipped with the package, with the choices of a model's backend, dtype and quantize
    filled in from the backend registry (clsd.embed.backends): a backend added there is accepted here."""
    schema = read_schema(SCHEMA_PATH)
    for setting, values in backends.choices().items():
        schema["$defs"]["model"]["properties"][setting]["enum"] = values
    return schema


def validate(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of `config` with defaults filled in; raises InputError naming the first bad key."""
    check_selection_keys(config)
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
    """Checks the schema cannot express: languages and directions, sources, model sources, endpoints, paths."""
    check_device(config["device"])
    check_registry_tools()
    check_directions(config["directions"], "config key directions")
    language(config["pivot"]["language"], "config key pivot.language")
    for name, dataset in config["datasets"].items():
        check_dataset_languages(name, dataset, config["directions"])
        source = dataset["source"]
        if source["kind"] == "published_csv":
            dataset.setdefault("distractors", {"kind": "from_source", "generator": "published"})
        elif dataset.get("distractors", {}).get("kind", "from_source") == "from_source":
            raise InputError(
                f"config key datasets.{name}.distractors: a {source['kind']} source has no distractors; "
                "name a published_csv for them"
            )
        if dataset["distractors"]["kind"] == "rules":
            for lang in dataset["languages"]:
                check_word_lists(name, lang)
        if dataset["distractors"]["kind"] == "published_csv" and "path" not in dataset["distractors"]:
            raise InputError(f"config key datasets.{name}.distractors.path: required for kind published_csv")
        dataset["distractors"].setdefault("generator", default_generator_label(config, dataset["distractors"]["kind"]))
        if isinstance(dataset.get("pivot_csv"), str):
            dataset["pivot_csv"] = {"path": dataset["pivot_csv"]}
    for name, model in config["models"].items():
        model.setdefault("label", name)
        check_model(name, model)
    check_profile_reference(config)
    check_generator_check(config)
    if config["validation"]["judge_prompt"] is None:
        config["validation"]["judge_prompt"] = JUDGE_PROMPTS[config["validation"]["judge_per"]]
    config["validation"]["judge_prompt"] = resource(config["validation"]["judge_prompt"])
    config["generation"]["prompt"] = resource(config["generation"]["prompt"])
    check_unique_labels(config)
    check_views(config)
    check_pivot(config)
    check_generation(config)
    check_annotation(config)
    check_endpoint_models(config)


def resource(path: str) -> str:
    """A file named in the config: as given when it exists from the working folder, else the workflow's own file of
    that relative path (resources/...; clsd.core.workflow), written relative to the working folder when possible, so
    that a moved copy of a run names the same inputs."""
    given = Path(os.path.expanduser(path))
    if given.is_absolute() or given.exists() or not (root() / given).exists():
        return path
    return os.path.relpath(root() / given)


def local_folders(config: dict[str, Any]) -> dict[tuple[str, str], Path]:
    """Local folders whose content jobs read, by (kind, name) of their checksum sentinel (clsd.core.sentinel): local
    embedding models, a local translation model, local Stanza models."""
    folders = {("models", name): model_folder(config, name) for name, model in config["models"].items() if model["source"] == "local"}
    pivot = config["pivot"]
    if pivot["backend"] in ("transformers", "ctranslate2") and pivot["source"] == "local":
        folders[("translator", "model")] = Path(translation_model(config))
    analysis = config["analysis"]
    if analysis["tagger"] != "offline" and analysis["stanza_dir"]:
        folder = Path(os.path.expanduser(analysis["stanza_dir"]))
        if folder.is_dir():
            folders[("stanza", "models")] = folder
    return folders
