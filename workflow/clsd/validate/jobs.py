"""What the jobs of stage validate (rules/validate.smk) depend on, from the validated config: their params, as plain
functions of the config (the rules call them while Snakemake plans). The judge's inputs and threads are the LLM
endpoint's (clsd.generate.jobs)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clsd.core import paths
from clsd.core.paths import input_name

Config = Mapping[str, Any]


def distractor_kind(config: Config, dataset: str) -> str:
    """Where a dataset's distractors come from: from_source, published_csv, llm or rules."""
    return config["datasets"][dataset]["distractors"]["kind"]


def validation_params(config: Config, dataset: str) -> dict[str, Any]:
    """The validation settings a set's job uses: rules, their closeness threshold and judge, and apply_to_published only for published sets
    (a generated set does not rerun when it changes). The judge's template is an input (its content counts, not
    its path); the number of examples shown is the validation table's display setting.
    """
    settings = {key: config["validation"][key] for key in ("rules", "min_closeness", "judge")}
    if distractor_kind(config, dataset) not in ("llm", "rules"):
        settings["apply_to_published"] = config["validation"]["apply_to_published"]
    return settings


def source_language(config: Config, dataset: str, lang: str) -> str:
    """The language an annotation page shows as the source beside a target language: the source of the first
    configured direction into it, else the dataset's first other language."""
    spec = config["datasets"][dataset]
    into = [d.split("-")[0] for d in spec["directions"] if d.split("-")[1] == lang]
    others = [other for other in spec["languages"] if other != lang]
    return (into or others)[0]


def annotation_design(config: Config) -> dict[str, Any]:
    """What an annotation sample depends on (the verdict files and `apply` do not change it)."""
    return {key: config["annotation"][key] for key in ("sample", "seed", "stratify", "min_per_stratum")}


def annotator_names(files: list[str]) -> list[str]:
    """One name per verdict file: its file name, numbered by position when two share a name (never a path: params
    hold no path on this machine)."""
    names = [Path(file).name for file in files]
    return [name if names.count(name) == 1 else f"{name} ({i + 1})" for i, name in enumerate(names)]


def annotation_files(config: Config, dataset: str, lang: str) -> dict[str, str]:
    """The verdict files of one dataset and language, keyed by position."""
    return {input_name("verdicts", str(i)): file for i, file in enumerate(config["annotation"]["files"][dataset][lang])}


def annotation_report_inputs(config: Config) -> dict[str, str]:
    """Every annotated sample's design and verdict files, keyed by dataset, language (and position)."""
    inputs = {}
    for dataset, by_lang in config["annotation"]["files"].items():
        for lang, files in by_lang.items():
            inputs[input_name("design", dataset, lang)] = paths.ANNOTATION_DESIGN.format(dataset=dataset, lang=lang)
            inputs |= {input_name("verdicts", dataset, lang, str(i)): file for i, file in enumerate(files)}
    return inputs


def annotators(config: Config) -> dict[str, dict[str, list[str]]]:
    """The annotators' names by dataset and language (the annotation table prints them)."""
    return {dataset: {lang: annotator_names(files) for lang, files in by_lang.items()}
            for dataset, by_lang in config["annotation"]["files"].items()}
