"""The annotators' verdicts of one sample put together: per item the share judging it valid, the estimates of the
annotation table (share valid, precision and recall of each validator verdict, agreement), the items the
annotators disagree on, and the record the dataset card states."""

from __future__ import annotations

from typing import Any

import polars as pl

from clsd.validate.annotation import estimate
from clsd.validate.annotation.sample import VALID
from clsd.validate.annotation.sheets import DIFFERENT, INVALID, SKIP

#: The table's columns (one row per dataset, language, measure and validator verdict).
COLUMNS = {"Dataset": pl.String, "Language": pl.String, "Annotators": pl.Int64, "Measure": pl.String, "Verdict": pl.String,
           "Estimate": pl.Float64, "Low": pl.Float64, "High": pl.Float64, "Items": pl.Int64, "Effective n": pl.Float64}
METHOD = ("share valid: stratified estimator over the sample's strata, 95% Wilson "
          "interval at the design's effective sample size (Kish); precision and recall: weighted domain shares, 95% "
          "Wilson interval at Kish's effective size. An item's value is the share of its annotators (skips left out) "
          "who judged it a different meaning.")
#: Why a validator verdict may have no row.
PRESENT_ONLY = ("Rows only for the validator verdicts present in a set: rejects re-asked during generation or removed "
                "by the rules are not in the validated set, so a flag's precision is measured where its distractors stay "
                "(published sets, flagged only).")


def long_verdicts(files: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Every annotator's verdicts in one table: item, annotator, verdict, comment."""
    frames = [frame.with_columns(pl.lit(name).alias("annotator")) for name, frame in files.items()]
    return pl.concat(frames).select("item", "annotator", "verdict", "comment")


def per_item(design: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """The design rows that at least one annotator judged, with `valid` (share of judging annotators who said
    different meaning), `invalid_any` (one said same meaning or not a sentence) and `weight` (N_h / m_h, m_h the
    annotated draws of the stratum)."""
    judged = (verdicts.filter(pl.col("verdict") != SKIP).group_by("item")
              .agg((pl.col("verdict") == DIFFERENT).mean().alias("valid"), pl.col("verdict").is_in(INVALID).any().alias("invalid_any")))
    rows = design.join(judged, on="item", how="inner")
    return rows.with_columns((pl.col("population") / pl.len().over("stratum")).alias("weight"))


def rows(design: pl.DataFrame, verdicts: pl.DataFrame, annotators: list[str], dataset: str, language: str) -> list[dict[str, Any]]:
    """The table rows of one sample: share valid; precision and recall of each validator verdict in the set;
    agreement when two or more annotated."""
    items = per_item(design, verdicts)
    population = dict(design.select("stratum", "population").unique().iter_rows())
    base = {"Dataset": dataset, "Language": language, "Annotators": len(annotators)}

    def row(measure: str, verdict: str, value: estimate.Estimate) -> dict[str, Any]:
        return base | {"Measure": measure, "Verdict": verdict, "Estimate": value.value, "Low": value.low, "High": value.high,
                       "Items": value.items, "Effective n": value.effective}

    valid = items["valid"].to_numpy().astype(float)
    out = [row("share valid", "all", estimate.stratified_share(valid, items["stratum"].to_list(), population))]
    weight, invalid = items["weight"].to_numpy().astype(float), 1.0 - valid
    for verdict in sorted(set(design["verdict"].to_list()) - {VALID}):
        hit = (items["verdict"] == verdict).to_numpy().astype(float)
        out.append(row("precision", verdict, estimate.domain_share(invalid, weight * hit)))
        out.append(row("recall", verdict, estimate.domain_share(hit, weight * invalid)))
    if len(annotators) >= 2:
        method, kappa, n = estimate.agreement(verdicts, annotators)
        name = "agreement (Cohen's kappa)" if method == "cohen" else "agreement (Fleiss' kappa)"
        out.append(base | {"Measure": name, "Verdict": "all", "Estimate": kappa, "Low": None, "High": None, "Items": n,
                           "Effective n": None})
    return out


def table(all_rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(all_rows, schema=COLUMNS)


def disagreements(design: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Items whose annotators gave different verdicts (skips left out): item, the verdicts (`a: same; b: different`),
    target and distractor."""
    judged = verdicts.filter(pl.col("verdict") != SKIP).sort("annotator")
    split = (judged.group_by("item").agg(pl.col("verdict").n_unique().alias("kinds"),
                                         pl.format("{}: {}", "annotator", "verdict").str.join("; ").alias("verdicts"))
             .filter(pl.col("kinds") > 1))
    return (design.join(split, on="item").sort("id", "k").select("item", "verdicts", "target", "distractor"))


def removals(design: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """The sampled distractors some annotator judged invalid (same meaning or not a sentence): id, k, verdicts."""
    bad = (verdicts.filter(pl.col("verdict").is_in(INVALID)).group_by("item")
           .agg(pl.col("verdict").unique().sort().str.join(", ").alias("verdicts")))
    return design.join(bad, on="item").select("id", "k", "verdicts").sort("id", "k")


def people_column(design: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Per sampled distractor that an annotator judged (id, k): `people`, its verdicts counted (`different 2/2`,
    `same 1/2, different 1/2`), so that Table 5 tells a failure people confirmed from one nobody checked."""
    judged = verdicts.filter(pl.col("verdict") != SKIP)
    counts = (judged.group_by("item", "verdict").agg(pl.len().alias("n"))
              .join(judged.group_by("item").agg(pl.len().alias("of")), on="item")
              .sort("item", "n", "verdict", descending=[False, True, False])
              .group_by("item", maintain_order=True)
              .agg(pl.format("{} {}/{}", "verdict", "n", "of").str.join(", ").alias("people")))
    return design.join(counts, on="item").select("id", "k", "people")


def card_record(design: pl.DataFrame, verdicts: pl.DataFrame, annotators: list[str], sample_id: str) -> dict[str, Any]:
    """What the dataset card states: annotators, sample and annotated counts, share valid with its interval."""
    items = per_item(design, verdicts)
    population = dict(design.select("stratum", "population").unique().iter_rows())
    share = estimate.stratified_share(items["valid"].to_numpy().astype(float), items["stratum"].to_list(), population)
    return {"sample_id": sample_id, "annotators": len(annotators), "sample": design.height, "annotated": items.height,
            "share_valid": share.value, "low": share.low, "high": share.high, "method": METHOD}
