"""Normalised cosine shifts of single-word distractors (the paper's Figures 2 and 3) and their correlations.

N (per model) = mean cos(S, T) over all parallel pairs of the datasets (the paper's definition: every pair,
also those not scored for lack of distractors) − mean cos(S, T') over unrelated pairs, where T' is the
target of another pair: targets are permuted by a seeded derangement (Sattolo's algorithm, a random cyclic
permutation, so no pair keeps its own target) within each dataset.
Cross-lingual shift = (cos(S, d) − cos(S, T)) / N; monolingual shift = (cos(T, d) − 1) / N.
Negative shifts mean the distractor moved away from the source (the model noticed the change).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import stats

from clsd.core.intervals import bootstrap_ci
from clsd.core.keys import lookup, text_key
from clsd.score.precision import normalise


def derangement(n: int, seed: int) -> np.ndarray:
    """A seeded permutation of range(n) with no fixed point (Sattolo's algorithm); n must be >= 2."""
    if n < 2:
        raise ValueError("a derangement needs at least two items")
    rng = np.random.default_rng(seed)
    order = np.arange(n)
    for i in range(n - 1, 0, -1):
        j = int(rng.integers(0, i))
        order[i], order[j] = order[j], order[i]
    return order


def pair_cosines(parallel: pl.DataFrame, embeddings: pl.DataFrame, prefix: str, languages: list[str], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """cos(S, T) of every parallel pair (columns id and one per language) and of its deranged (unrelated)
    counterpart (none for a single pair)."""
    ordered = parallel.sort("id")
    a, b = (normalise(lookup(embeddings, [text_key(prefix, text) for text in ordered[lang].to_list()])) for lang in languages[:2])
    cosines = np.einsum("nd,nd->n", a, b)
    if ordered.height < 2:
        return cosines, np.empty(0)
    return cosines, np.einsum("nd,nd->n", a, b[derangement(ordered.height, seed)])


#: Columns of a shift table: the single-word pair (clsd.analysis.swaps, with its POS), its shifts, dataset and model.
SHIFT_SCHEMA = {"id": pl.Int64, "lang": pl.String, "k": pl.Int64, "operation": pl.String, "position": pl.Int64,
                "original": pl.String, "new": pl.String, "target": pl.String, "distractor": pl.String, "pos": pl.String,
                "tagger": pl.String, "pos_rule": pl.String, "x_shift": pl.Float64, "m_shift": pl.Float64, "dataset": pl.String, "model": pl.String}


def empty_shifts() -> pl.DataFrame:
    """A shift table without pairs (no dataset had an item to score)."""
    return pl.DataFrame(schema=SHIFT_SCHEMA)


def normaliser(parallel: list[np.ndarray], unrelated: list[np.ndarray]) -> dict[str, float]:
    """N = mean parallel cosine − mean unrelated cosine, pooled over datasets."""
    unrelated_all = np.concatenate(unrelated) if unrelated else np.empty(0)
    if unrelated_all.size == 0:
        raise ValueError("the shift normaliser needs a dataset with at least two items")
    p, u = float(np.concatenate(parallel).mean()), float(unrelated_all.mean())
    return {"parallel_mean": p, "unrelated_mean": u, "N": p - u}


def pair_shifts(pairs: pl.DataFrame, table: pl.DataFrame, embeddings: pl.DataFrame, prefix: str, languages: list[str], n: float) -> pl.DataFrame:
    """Cross-lingual and monolingual shifts of single-word pairs (the source is the item's other language)."""
    texts = {(i, lang, slot): text for i, lang, slot, text in table.select("id", "lang", "slot", "text").iter_rows()}
    other = {lang: next(l for l in languages if l != lang) for lang in languages}
    rows = pairs.select("id", "lang", "k").rows()

    def embedded(keys: list[tuple[int, str, int]]) -> np.ndarray:
        return normalise(lookup(embeddings, [text_key(prefix, texts[key]) for key in keys]))

    s = embedded([(i, other[lang], 0) for i, lang, _ in rows])
    t = embedded([(i, lang, 0) for i, lang, _ in rows])
    d = embedded([(i, lang, k) for i, lang, k in rows])
    cos_sd, cos_st, cos_td = (np.einsum("nd,nd->n", a, b) for a, b in ((s, d), (s, t), (t, d)))
    return pairs.with_columns(
        pl.Series("x_shift", (cos_sd - cos_st) / n, dtype=pl.Float64),
        pl.Series("m_shift", (cos_td - 1.0) / n, dtype=pl.Float64),
    )


def pos_groups(shifts: pl.DataFrame, min_group: int) -> pl.DataFrame:
    """`group` = the UPOS tag, or OTHER when the tag has fewer than `min_group` pairs over all models' data; null
    for pairs of a language without a tagger (they count under ANY only)."""
    counts = shifts.unique(subset=["dataset", "id", "lang", "k"]).group_by("pos").len()
    keep = set(counts.filter(pl.col("len") >= min_group)["pos"].drop_nulls().to_list())
    group = pl.when(pl.col("pos").is_null()).then(pl.lit(None, dtype=pl.String))
    return shifts.with_columns(group.when(pl.col("pos").is_in(list(keep))).then(pl.col("pos")).otherwise(pl.lit("OTHER")).alias("group"))


def summary(shifts: pl.DataFrame, kind: str, n_boot: int, seed: int) -> pl.DataFrame:
    """Per model and POS group (plus ANY): n, mean shift and its 95% bootstrap CI; `kind` is x_shift or m_shift."""
    rows = []
    for (model,), data in shifts.group_by("model", maintain_order=True):
        groups = [("ANY", data)] + [(g, data.filter(pl.col("group") == g)) for g in sorted(data["group"].drop_nulls().unique())]
        for group, part in groups:
            values = part[kind].to_numpy()
            low, high = bootstrap_ci(values, n_boot, seed)
            rows.append({"model": model, "group": group, "n": len(values), "mean": float(values.mean()), "ci_low": low, "ci_high": high})
    return pl.DataFrame(rows, schema={"model": pl.String, "group": pl.String, "n": pl.Int64, "mean": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64})


def correlations(shifts: pl.DataFrame, language_names: dict[str, str]) -> pl.DataFrame:
    """Pearson and Spearman correlation of monolingual vs cross-lingual shifts: all pairs, per language, per POS group."""
    rows = []
    for (model,), data in shifts.group_by("model", maintain_order=True):
        scopes = [("all", data)]
        scopes += [(f"language={language_names.get(l, l)}", data.filter(pl.col("lang") == l)) for l in sorted(data["lang"].unique())]
        scopes += [(f"POS={g}", data.filter(pl.col("group") == g)) for g in sorted(data["group"].drop_nulls().unique())]
        for scope, part in scopes:
            x, m = part["x_shift"].to_numpy(), part["m_shift"].to_numpy()
            defined = len(x) >= 3 and np.std(x) > 0 and np.std(m) > 0
            rows.append({
                "Model": model, "Scope": scope, "n": len(x),
                "Pearson": float(stats.pearsonr(m, x).statistic) if defined else None,
                "Spearman": float(stats.spearmanr(m, x).statistic) if defined else None,
            })
    return pl.DataFrame(rows, schema={"Model": pl.String, "Scope": pl.String, "n": pl.Int64, "Pearson": pl.Float64, "Spearman": pl.Float64})
