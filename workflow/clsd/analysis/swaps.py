"""Single-word pairs: a distractor that differs from its true target by exactly one word.

A *swap* has the same number of words and one differing position; an *addition* has one more word and
equals the target once that word is removed (the first such position is reported). Words are those of
clsd.core.words: whitespace-separated tokens, punctuation attached, as in the paper, or ICU word breaks for
scripts written without spaces. An edit of punctuation or case only ("genehmigt." → "genehmigt!", "Rat" →
"rat"), or an added token without a letter or digit, changes no word and is not a single-word pair
(whitespace differences are no change at all).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from clsd.core.text import is_word_character
from clsd.core.words import words


@dataclass(frozen=True)
class Change:
    """How a distractor differs from its target by one token."""

    operation: str  # "swap" | "addition"
    position: int  # 0-based token index (in the target for swaps, in the distractor for additions)
    original: str | None  # the target's token (swaps only)
    new: str  # the distractor's token


def word_form(token: str) -> str:
    """What a token says as a word: its letters, digits and combining marks (clsd.core.text.is_word_character:
    a vowel sign is part of the word), case-folded."""
    return "".join(char for char in token.casefold() if is_word_character(char))


def single_word_change(target: str, distractor: str, lang: str) -> Change | None:
    """The one-word change turning `target` into `distractor` (language `lang`), or None if it is not exactly one word."""
    t, d = words(target, lang), words(distractor, lang)
    if len(t) == len(d):
        differing = [i for i, (a, b) in enumerate(zip(t, d)) if a != b]
        if len(differing) == 1 and word_form(t[differing[0]]) != word_form(d[differing[0]]):
            i = differing[0]
            return Change("swap", i, t[i], d[i])
        return None
    if len(d) == len(t) + 1:
        i = next((i for i, (a, b) in enumerate(zip(t, d)) if a != b), len(t))
        if d[:i] + d[i + 1 :] == t and word_form(d[i]):
            return Change("addition", i, None, d[i])
    return None


def find_pairs(candidates: pl.DataFrame) -> pl.DataFrame:
    """All single-word (target, distractor) pairs of a candidate table (direct view)."""
    targets = candidates.filter(pl.col("slot") == 0).select("id", "lang", pl.col("text").alias("target"))
    distractors = candidates.filter(pl.col("slot") > 0).select("id", "lang", pl.col("slot").alias("k"), pl.col("text").alias("distractor"))
    rows = []
    for row in distractors.join(targets, on=["id", "lang"]).sort("id", "lang", "k").iter_rows(named=True):
        change = single_word_change(row["target"], row["distractor"], row["lang"])
        if change is not None:
            rows.append({**row, "operation": change.operation, "position": change.position, "original": change.original, "new": change.new})
    schema = {"id": pl.Int64, "lang": pl.String, "k": pl.Int64, "distractor": pl.String, "target": pl.String,
              "operation": pl.String, "position": pl.Int64, "original": pl.String, "new": pl.String}
    return pl.DataFrame(rows, schema=schema).select("id", "lang", "k", "operation", "position", "original", "new", "target", "distractor")
