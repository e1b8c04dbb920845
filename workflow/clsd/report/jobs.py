"""What the jobs of stage report (rules/report.smk) read and depend on, from the validated config: their keyed inputs
(clsd.core.paths.input_name) and params, as plain functions of the config and the views it runs (the rules call
them while Snakemake plans)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clsd.analysis.jobs import candidates_of, model_labels, scores_of
from clsd.core import paths
from clsd.core.paths import input_name

Config = Mapping[str, Any]


def table2_labels(config: Config) -> dict[str, dict[str, str]]:
    """The model and dataset labels Table 2 prints."""
    return {
        "models": model_labels(config),
        "datasets": {name: config["datasets"][name]["label"] for name in sorted(config["datasets"])},
    }


def directions_by_dataset(config: Config) -> dict[str, list[str]]:
    """Every dataset's directions, by name."""
    return {name: config["datasets"][name]["directions"] for name in sorted(config["datasets"])}


def table2_inputs(config: Config, views: Sequence[str]) -> dict[str, str]:
    """Every score file of the views and every direct candidate table."""
    return scores_of(config, *views) | candidates_of(config)


def generator_check_inputs(config: Config) -> dict[str, str]:
    """The direct-view score files of every model and the candidate tables of every dataset a `generator_check` pair
    names, keyed as scores_of and candidates_of key them."""
    named = {name for pair in config["generator_check"] for name in (pair["reference"], pair["candidate"])}
    keep = lambda key: key.split(paths.SEPARATOR)[-1] in named  # noqa: E731
    return {key: path for key, path in (scores_of(config, "direct") | candidates_of(config)).items() if keep(key)}


def generator_check_pairs(config: Config) -> list[dict[str, str]]:
    """Each pair of the generator check with the two datasets' labels and directions (the rule's param)."""
    datasets = config["datasets"]
    return [{"reference": pair["reference"], "candidate": pair["candidate"], "reference_label": datasets[pair["reference"]]["label"],
             "candidate_label": datasets[pair["candidate"]]["label"], "directions": datasets[pair["reference"]]["directions"]}
            for pair in config["generator_check"]]


def validation_reports(config: Config) -> dict[str, str]:
    """Every validation report, keyed `report|<dataset>|<lang>`."""
    return {
        input_name("report", d, lang): paths.VALIDATION_REPORT.format(dataset=d, lang=lang)
        for d in config["datasets"]
        for lang in config["datasets"][d]["languages"]
    }


def score_files(model: str, dataset: str, views: Sequence[str]) -> dict[str, str]:
    """A model's score files of a dataset, keyed `scores|<view>`."""
    return {input_name("scores", v): paths.SCORES.format(model=model, dataset=dataset, view=v) for v in views}


def view_candidates(dataset: str, views: Sequence[str]) -> dict[str, str]:
    """A dataset's candidate tables, keyed `candidates|<view>`."""
    return {input_name("candidates", v): paths.CANDIDATES.format(dataset=dataset, view=v) for v in views}


def mteb_inputs(model: str, dataset: str, views: Sequence[str]) -> dict[str, str]:
    """A model's score files and the candidate tables of every view of a dataset, keyed by view."""
    return score_files(model, dataset, views) | view_candidates(dataset, views)


def card_params(config: Config, dataset: str) -> dict[str, Any]:
    """What a dataset's exported card takes from the config: its label, license and source kind and ids."""
    spec = config["datasets"][dataset]
    source = {key: spec["source"][key] for key in ("kind", "test_set", "langpair") if key in spec["source"]}
    return {"label": spec["label"], "license": spec["license"], "source": source}
