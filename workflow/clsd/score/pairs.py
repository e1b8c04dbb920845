"""Do a model's true pairs stand above unrelated ones? A second look at alignment, where names and numbers could not
check it (clsd.data.alignment skips files with few of them): in aligned data a model that reads both languages
puts a sentence closer to its translation than to the translation of the next item.

It only warns: a model that cannot read one of the languages (the English-only control on Japanese) shows the same
picture as misaligned files, and its scores are still what they are.
"""

from __future__ import annotations

import logging

import numpy as np
import polars as pl

from clsd.core.keys import lookup, text_key
from clsd.score.precision import normalise

log = logging.getLogger(__name__)

#: Fewer items than this say nothing: not checked.
MIN_ITEMS = 20
#: How far the true pairs' median cosine must stand above the shifted pairs' (cosine points).
MARGIN = 0.05


def originals(table: pl.DataFrame, lang: str) -> pl.DataFrame:
    """id and text of the originals (slot 0) of one language, in item order."""
    return table.filter((pl.col("lang") == lang) & (pl.col("slot") == 0)).select("id", "text").sort("id")


def true_and_shifted(table: pl.DataFrame, embeddings: pl.DataFrame, prefix: str, direction: str) -> dict[str, float] | None:
    """Median cosine of the true pairs of a direction and of the pairs shifted by one item (each source with the
    next item's target); None with fewer than MIN_ITEMS items."""
    src, tgt = direction.split("-")
    pairs = originals(table, src).join(originals(table, tgt), on="id", suffix="_tgt")
    if pairs.height < MIN_ITEMS:
        return None
    sources = normalise(lookup(embeddings, [text_key(prefix, t) for t in pairs["text"]]))
    targets = normalise(lookup(embeddings, [text_key(prefix, t) for t in pairs["text_tgt"]]))
    true = np.einsum("nd,nd->n", sources, targets)
    shifted = np.einsum("nd,nd->n", sources, np.roll(targets, -1, axis=0))
    return {"items": pairs.height, "true_median": float(np.median(true)), "shifted_median": float(np.median(shifted))}


def check_pairs(table: pl.DataFrame, embeddings: pl.DataFrame, prefix: str, directions: list[str], model: str) -> dict[str, object]:
    """Per direction, the two medians; a warning naming the direction and model where the true pairs do not stand
    MARGIN above the shifted ones (misaligned sides, or a model that cannot read a language)."""
    found: dict[str, object] = {}
    for direction in directions:
        medians = true_and_shifted(table, embeddings, prefix, direction)
        found[direction] = medians
        if medians is not None and medians["true_median"] < medians["shifted_median"] + MARGIN:
            log.warning("%s, %s: the true pairs are no closer than pairs shifted by one item (median cosine %.3f against "
                        "%.3f over %d items): are the two sides aligned, and can %s read both languages?", model, direction,
                        medians["true_median"], medians["shifted_median"], medians["items"], model)
    return found
