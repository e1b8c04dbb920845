"""Precision@1 for CLSD: the true target must beat every distractor strictly (a tie is a failure)."""

from __future__ import annotations

import numpy as np
import polars as pl

from clsd.core.errors import InputError
from clsd.core.items import N_DISTRACTORS
from clsd.core.keys import lookup, text_key


def normalise(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows (in float64, so equal vectors give exactly equal cosines)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0.0, 1.0, norms)


def cosines(queries: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """cos(query_i, candidate_ij) for queries [n, d] and candidates [n, m, d] → [n, m]."""
    return np.einsum("nd,nmd->nm", normalise(queries), normalise(candidates))


def correct(cos: np.ndarray) -> np.ndarray:
    """Item succeeds iff column 0 (true target) is strictly greater than every other column."""
    return cos[:, 0] > cos[:, 1:].max(axis=1)


def precision_at_1(hits: np.ndarray | pl.Series) -> float:
    """Share of successful items in percent (not rounded: round only for display)."""
    hits = np.asarray(hits, dtype=bool)
    if hits.size == 0:
        raise ValueError("Precision@1 of zero items is undefined")
    return 100.0 * float(hits.mean())


def direction_texts(table: pl.DataFrame, direction: str) -> tuple[np.ndarray, list[str], list[list[str]]]:
    """Item ids, query texts and candidate texts (true target first) of one direction."""
    src, tgt = direction.split("-")
    queries = table.filter((pl.col("lang") == src) & (pl.col("slot") == 0)).sort("id")
    targets = table.filter(pl.col("lang") == tgt).sort("id", "slot")
    grouped = targets.group_by("id", maintain_order=True).agg(pl.col("slot"), pl.col("text"))
    sizes = grouped["slot"].list.len()
    n_slots = int(sizes.max()) if grouped.height else 0
    incomplete = grouped.filter((sizes != n_slots) | (pl.col("slot").list.first() != 0))
    if incomplete.height:
        raise InputError(f"item id {incomplete['id'][0]} lacks its {tgt} target or some of its {n_slots - 1} distractors")
    if queries["id"].to_list() != grouped["id"].to_list():
        raise InputError(f"direction {direction}: items with a {src} source differ from items with {tgt} candidates")
    return queries["id"].to_numpy(), queries["text"].to_list(), grouped["text"].to_list()


def empty_scores(n_distractors: int = N_DISTRACTORS) -> pl.DataFrame:
    """A score table without items (a direction none of whose items has a full set of distractors)."""
    schema = {"id": pl.Int64, "direction": pl.String, "cos_true": pl.Float64}
    schema |= {f"cos_d{k}": pl.Float64 for k in range(1, n_distractors + 1)}
    return pl.DataFrame(schema=schema | {"correct": pl.Boolean})


def score_direction(table: pl.DataFrame, embeddings: pl.DataFrame, prefix: str, direction: str) -> pl.DataFrame:
    """Per-item cosines (true, d1..dk) and `correct` for one direction (no rows when it has no items)."""
    ids, query_texts, candidate_texts = direction_texts(table, direction)
    if not len(ids):
        return empty_scores()
    queries = lookup(embeddings, [text_key(prefix, t) for t in query_texts])
    flat = lookup(embeddings, [text_key(prefix, t) for row in candidate_texts for t in row])
    n_candidates = len(candidate_texts[0])
    cos = cosines(queries, flat.reshape(len(ids), n_candidates, -1))
    columns = {"id": ids, "direction": [direction] * len(ids), "cos_true": cos[:, 0]}
    columns |= {f"cos_d{k}": cos[:, k] for k in range(1, n_candidates)}
    return pl.DataFrame(columns).with_columns(pl.Series("correct", correct(cos)))


def score(table: pl.DataFrame, embeddings: pl.DataFrame, prefix: str, directions: list[str]) -> pl.DataFrame:
    """Score every direction of a view; one row per item and direction."""
    return pl.concat([score_direction(table, embeddings, prefix, d) for d in directions])


def summary(scores: pl.DataFrame) -> dict[str, float]:
    """Precision@1 (percent) per direction."""
    return {
        direction: precision_at_1(group["correct"])
        for (direction,), group in scores.group_by("direction", maintain_order=True)
    }
