"""Table 3: which distractors fool a model, by their Levenshtein similarity to the true target.

For every failed item the *successful distractor* is the distractor with the highest cosine to the source.
Similarity is rapidfuzz's normalised InDel similarity (= python-Levenshtein's `ratio`). Bins are
right-open: [0.3,0.6), [0.6,0.7), [0.7,0.8), [0.8,0.9), [0.9,0.999); percentages are over these five bins
(the paper's), and values outside them are listed separately. Languages are target languages: French pools the DE→FR sets of all datasets.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from clsd.core.io import read_table
from clsd.core.levenshtein import similarity

#: Label of Table 3's last row: successful distractors outside the five bins, in percent of all of them.
OUTSIDE_ROW = "outside (% of all)"
#: Right-open bin edges of the paper's Table 3, high to low as printed there.
BINS: list[tuple[float, float]] = [(0.9, 0.999), (0.8, 0.9), (0.7, 0.8), (0.6, 0.7), (0.3, 0.6)]


def bin_label(low: float, high: float) -> str:
    return f"[{low:g},{high:g})"


def assign_bin(values: pl.Expr) -> pl.Expr:
    """Bin label of each similarity (right-open bins), `outside` when in none."""
    expr = pl.lit("outside")
    for low, high in reversed(BINS):
        expr = pl.when((values >= low) & (values < high)).then(pl.lit(bin_label(low, high))).otherwise(expr)
    return expr


def successful_distractors(scores: pl.DataFrame) -> pl.DataFrame:
    """For failed items: (id, direction, k) of the distractor with the highest cosine to the source."""
    columns = sorted((c for c in scores.columns if c.startswith("cos_d")), key=lambda c: int(c[5:]))
    failed = scores.filter(~pl.col("correct"))
    matrix = failed.select(columns).to_numpy()
    best = np.argmax(matrix, axis=1) + 1 if len(failed) else np.array([], dtype=np.int64)
    return failed.select("id", "direction").with_columns(pl.Series("k", best, dtype=pl.Int64))


def successful_of(scores: dict[tuple[str, str], str]) -> pl.DataFrame:
    """Successful distractors of every score file ({(model label, dataset): path}): model, dataset, id, direction,
    k and target `lang`."""
    frames = [
        successful_distractors(read_table(path)).with_columns(pl.lit(model).alias("model"), pl.lit(dataset).alias("dataset"))
        for (model, dataset), path in scores.items()
    ]
    return pl.concat(frames).with_columns(pl.col("direction").str.split("-").list.get(1).alias("lang"))


def with_similarity(pairs: pl.DataFrame, candidates: pl.DataFrame) -> pl.DataFrame:
    """Add the true target, the distractor and their similarity to (id, lang, k) rows."""
    targets = candidates.filter(pl.col("slot") == 0).select("id", "lang", pl.col("text").alias("target"))
    distractors = candidates.filter(pl.col("slot") > 0).select("id", "lang", pl.col("slot").alias("k"), pl.col("text").alias("distractor"))
    joined = pairs.join(targets, on=["id", "lang"]).join(distractors, on=["id", "lang", "k"])
    sims = [similarity(t, d) for t, d in zip(joined["target"], joined["distractor"])]
    return joined.with_columns(pl.Series("similarity", sims, dtype=pl.Float64)).with_columns(assign_bin(pl.col("similarity")).alias("bin"))


def all_distractor_bins(candidates: pl.DataFrame) -> pl.DataFrame:
    """Every distractor of a dataset with its similarity bin (for |D_bin|)."""
    pairs = candidates.filter(pl.col("slot") > 0).select("id", "lang", pl.col("slot").alias("k"))
    return with_similarity(pairs, candidates)


def table3(successful: pl.DataFrame, everything: pl.DataFrame, models: list[str], language_names: dict[str, str]) -> pl.DataFrame:
    """Rows (language, bin); |D_bin| and, per model, the percentage of its successful distractors in the bin.

    As in the paper, the five bins' percentages add up to 100 (of the successful distractors inside them);
    the last row gives the share of all successful distractors that fall outside the bins.

    `successful` has columns model, lang, bin; `everything` has lang, bin for all distractors.
    """
    rows = []
    labels = [bin_label(*b) for b in BINS]
    for lang in everything["lang"].unique(maintain_order=True).to_list():
        mine = {m: successful.filter((pl.col("model") == m) & (pl.col("lang") == lang)) for m in models}
        in_bins = {m: frame.filter(pl.col("bin").is_in(labels)).height for m, frame in mine.items()}
        for label in labels + ["outside"]:
            row: dict[str, object] = {
                "Language": language_names.get(lang, lang),
                "Levenshtein": OUTSIDE_ROW if label == "outside" else label,
                "|D_bin|": everything.filter((pl.col("lang") == lang) & (pl.col("bin") == label)).height,
            }
            for model, frame in mine.items():
                n = frame.filter(pl.col("bin") == label).height
                total = frame.height if label == "outside" else in_bins[model]
                row[model] = 100.0 * n / total if total else None
            rows.append(row)
    schema = {"Language": pl.String, "Levenshtein": pl.String, "|D_bin|": pl.Int64, **{m: pl.Float64 for m in models}}
    return pl.DataFrame(rows, schema=schema, orient="row")
