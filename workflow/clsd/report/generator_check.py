"""The generator check: would a set whose distractors another generator wrote rank the models as a reference set does?

Two datasets of one run hold the same items (the same source and target sentences) with distractors by two
generators, e.g. GPT-4's published ones and the local LLM's (config key `generator_check`, docs/generator-check.md).
For every model and direction, on the items both sets score (an item left unscored by either is counted apart):
P@1 under each set, their paired difference (candidate minus reference) with Newcombe's paired 95% interval and
the exact McNemar p-value; then whether the models come in the same order under both sets; and the two sets'
closeness profiles side by side (clsd.analysis.profile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from clsd.core import intervals
from clsd.core.errors import InputError
from clsd.core.items import direction_label


@dataclass(frozen=True)
class Pair:
    """A reference and a candidate dataset (keys of the config) and how tables name them."""

    reference: str
    candidate: str
    reference_label: str
    candidate_label: str


def check_same_items(reference: pl.DataFrame, candidate: pl.DataFrame, pair: Pair) -> None:
    """The two candidate tables' shared items hold the same sentences (slot 0, both languages); an InputError names the
    first item that differs (two sets of other items would compare nothing)."""
    keys = ["id", "lang"]
    ref = reference.filter(pl.col("slot") == 0).select(*keys, "text")
    cand = candidate.filter(pl.col("slot") == 0).select(*keys, pl.col("text").alias("text_candidate"))
    joined = ref.join(cand, on=keys)
    if joined.is_empty():
        raise InputError(f"generator_check: datasets {pair.reference} and {pair.candidate} share no item (same ids are compared)")
    differ = joined.filter(pl.col("text") != pl.col("text_candidate"))
    if not differ.is_empty():
        row = differ.row(0, named=True)
        raise InputError(f"generator_check: item {row['id']} ({row['lang']}) is not the same sentence in {pair.reference} "
                         f"({row['text']!r}) and {pair.candidate} ({row['text_candidate']!r}): both must hold the same items")


def compare(reference: pl.DataFrame, candidate: pl.DataFrame, direction: str) -> dict[str, object]:
    """One model and direction: items each set scores, the items both score, P@1 on those under each set (percent),
    the paired difference with its interval (points) and the McNemar p-value. Score frames: id, direction, correct."""
    ref = reference.filter(pl.col("direction") == direction).select("id", pl.col("correct").alias("ref"))
    cand = candidate.filter(pl.col("direction") == direction).select("id", pl.col("correct").alias("cand"))
    shared = ref.join(cand, on="id")
    row: dict[str, object] = {"n_reference": ref.height, "n_candidate": cand.height, "n": shared.height}
    if shared.is_empty():
        return row | {"p_reference": None, "p_candidate": None, "difference": None, "ci_low": None, "ci_high": None, "p_mcnemar": None}
    a, b = shared["ref"].to_numpy().astype(bool), shared["cand"].to_numpy().astype(bool)
    both, only_ref, only_cand, neither = (int(np.sum(x)) for x in (a & b, a & ~b, ~a & b, ~a & ~b))
    low, high = intervals.paired_difference_interval(both, only_ref, only_cand, neither)
    return row | {"p_reference": 100.0 * a.mean(), "p_candidate": 100.0 * b.mean(), "difference": 100.0 * (b.mean() - a.mean()),
                  "ci_low": 100.0 * low, "ci_high": 100.0 * high, "p_mcnemar": intervals.mcnemar_exact(only_ref, only_cand)}


#: Columns of the generator check table.
SCHEMA = {"Reference": pl.String, "Candidate": pl.String, "Model": pl.String, "Direction": pl.String, "n": pl.Int64,
          "P@1 reference": pl.Float64, "P@1 candidate": pl.Float64, "Difference": pl.Float64, "CI low": pl.Float64,
          "CI high": pl.Float64, "McNemar p": pl.Float64, "unscored reference": pl.Int64, "unscored candidate": pl.Int64}


def check_table(pair: Pair, scores: Mapping[str, tuple[pl.DataFrame, pl.DataFrame]], directions: Sequence[str],
                items: Mapping[str, int]) -> pl.DataFrame:
    """Rows per model (label -> its reference and candidate score frames) and direction; `items` counts each
    dataset's items (so the unscored are counted apart)."""
    rows = []
    for model, (reference, candidate) in scores.items():
        for direction in directions:
            found = compare(reference, candidate, direction)
            rows.append({"Reference": pair.reference_label, "Candidate": pair.candidate_label, "Model": model,
                         "Direction": direction_label(direction), "n": found["n"], "P@1 reference": found["p_reference"],
                         "P@1 candidate": found["p_candidate"], "Difference": found["difference"], "CI low": found["ci_low"],
                         "CI high": found["ci_high"], "McNemar p": found["p_mcnemar"],
                         "unscored reference": items[pair.reference] - found["n_reference"],
                         "unscored candidate": items[pair.candidate] - found["n_candidate"]})
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def ranking_notes(table: pl.DataFrame) -> list[str]:
    """Per pair and direction: the models in order of P@1 under each set, whether the order is the same (no two models
    swapped; a tie under one set swaps nothing), and Kendall's tau of the two orders (three models or more)."""
    notes = []
    for (reference, candidate, direction), part in table.group_by("Reference", "Candidate", "Direction", maintain_order=True):
        part = part.drop_nulls("P@1 reference")
        if part.height < 2:
            continue
        order_ref = part.sort("P@1 reference", descending=True)["Model"].to_list()
        order_cand = part.sort("P@1 candidate", descending=True)["Model"].to_list()
        ref, cand = part["P@1 reference"].to_list(), part["P@1 candidate"].to_list()
        swapped = any((ref[i] - ref[j]) * (cand[i] - cand[j]) < 0 for i in range(len(ref)) for j in range(i + 1, len(ref)))
        tau = ""
        if part.height >= 3:
            statistic = stats.kendalltau(ref, cand).statistic
            tau = "" if np.isnan(statistic) else f"; Kendall's tau {statistic:.2f}"
        notes.append(f"{direction}: {reference} ranks {' > '.join(order_ref)}; {candidate} ranks {' > '.join(order_cand)}: "
                     f"{'another order' if swapped else 'the same order'}{tau}.")
    return notes
