"""What the jobs of stage analysis (rules/analysis.smk) read and depend on, from the validated config: their keyed
inputs (clsd.core.paths.input_name) and labels, as plain functions of the config (the rules call them while
Snakemake plans). The keyed candidate and score files serve the report stage's aggregations too."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from clsd.core import paths
from clsd.core.paths import input_name
from clsd.core.workflow import data_file
from clsd.data import jobs as data_jobs

Config = Mapping[str, Any]


def candidates_of(config: Config, view: str = "direct") -> dict[str, str]:
    """Every dataset's candidate table of a view, keyed `candidates|<dataset>`."""
    return {input_name("candidates", d): paths.CANDIDATES.format(dataset=d, view=view) for d in config["datasets"]}


def scores_of(config: Config, *views: str) -> dict[str, str]:
    """Every score file of the views, keyed `scores|<view>|<model>|<dataset>`."""
    return {
        input_name("scores", v, m, d): paths.SCORES.format(model=m, dataset=d, view=v)
        for v in views
        for m in config["models"]
        for d in config["datasets"]
    }


def model_labels(config: Config) -> dict[str, str]:
    """The model labels a table prints (a relabelled model re-renders it, and reruns nothing else)."""
    return {name: config["models"][name]["label"] for name in sorted(config["models"])}


def dataset_labels(config: Config) -> dict[str, str]:
    """The dataset labels a table prints."""
    return {name: config["datasets"][name]["label"] for name in sorted(config["datasets"])}


def direct_analysis_inputs(config: Config) -> dict[str, str]:
    """Every direct-view score file and candidate table (Table 3, Table 5)."""
    return scores_of(config, "direct") | candidates_of(config)


def examples_inputs(config: Config) -> dict[str, str]:
    """Table 5's inputs: the direct analysis inputs and every scored distractor set, keyed
    `distractors|<dataset>|<lang>` (who checked each distractor: the judge's and the annotators' columns)."""
    sets = {input_name("distractors", d, lang): path for d in config["datasets"]
            for lang, path in zip(config["datasets"][d]["languages"], data_jobs.scored_sets(config, d))}
    return direct_analysis_inputs(config) | sets


def pivot_failure_inputs(config: Config) -> dict[str, str]:
    """Every score file of both views and the direct candidate tables (items right directly, wrong via the pivot)."""
    return scores_of(config, "direct", "pivot") | candidates_of(config)


def shifts_of(config: Config) -> dict[str, str]:
    """Every model's shift table, keyed `shifts|<model>`."""
    return {input_name("shifts", m): paths.SHIFTS.format(model=m) for m in config["models"]}


def shift_inputs(config: Config, model: str) -> dict[str, str]:
    """One model's direct embeddings of every dataset, with the candidates, single-word pairs and parallel pairs."""
    files = {}
    for d in config["datasets"]:
        files[input_name("embeddings", d)] = paths.EMBEDDINGS.format(model=model, dataset=d, view="direct")
        files[input_name("candidates", d)] = paths.CANDIDATES.format(dataset=d, view="direct")
        files[input_name("pairs", d)] = paths.SINGLE_WORD.format(dataset=d)
        files[input_name("parallel", d)] = paths.PARALLEL.format(dataset=d)
    return files


def shift_languages(config: Config) -> dict[str, list[str]]:
    """The languages of every dataset, by name (what the shift normaliser's pairs are drawn from)."""
    return {name: spec["languages"] for name, spec in sorted(config["datasets"].items())}


def profile_reference(config: Mapping[str, Any]) -> dict[str, str]:
    """What closeness profiles are held against (`analysis.profile_reference`), as a param: `{"dataset": key}` for a
    dataset of the run, else `{"file": as configured, "sha256": of its content}` (what it holds, not where it lies: an
    edited reference re-renders the tables, a moved checkout replans nothing)."""
    reference = config["analysis"]["profile_reference"]
    if reference in config["datasets"]:
        return {"dataset": reference}
    return {"file": reference, "sha256": hashlib.sha256(data_file(reference).read_bytes()).hexdigest()}
