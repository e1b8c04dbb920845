"""Statistics of a distractor set: intra-item word Jaccard, similarity to the original, single-word share.

Jaccard (PAPER.md): word sets are the lower-cased tokens of 2+ word characters; each distractor's Jaccard
with each of the other distractors of the same item and language is averaged, then mean and sample
standard deviation are taken over all distractors (0.47 / 0.17 on the full published sets).
"""

from __future__ import annotations

import re
from statistics import mean, stdev

import polars as pl

from clsd.swaps import single_word_change
from clsd.table3 import similarity
from clsd.text import normalise

WORD = re.compile(r"\w\w+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def intra_jaccard(distractors: list[str]) -> list[float]:
    """Per distractor: mean Jaccard with the item's other distractors."""
    sets = [words(t) for t in distractors]
    return [mean(jaccard(s, o) for j, o in enumerate(sets) if j != i) for i, s in enumerate(sets)] if len(sets) > 1 else []


def target_copies(candidates: pl.DataFrame) -> pl.DataFrame:
    """Distractors equal to their item's true target up to case, whitespace and final punctuation (id, lang, k,
    target, distractor): each ties with the target, so its item can only fail in that direction."""
    targets = candidates.filter(pl.col("slot") == 0).select("id", "lang", pl.col("text").alias("target"))
    distractors = candidates.filter(pl.col("slot") > 0).select("id", "lang", pl.col("slot").alias("k"), pl.col("text").alias("distractor"))
    joined = distractors.join(targets, on=["id", "lang"]).sort("id", "lang", "k")
    same = [normalise(t) == normalise(d) for t, d in zip(joined["target"], joined["distractor"])]
    return joined.filter(pl.Series(same, dtype=pl.Boolean)).select("id", "lang", "k", "target", "distractor")


def stats(candidates: pl.DataFrame) -> list[dict[str, object]]:
    """One record per language: counts, Jaccard mean/sd, mean Levenshtein ratio, single-word pairs, copies of
    the target.

    Items are identified by `id`, or by (`dataset`, `id`) when a `dataset` column pools several datasets.
    """
    item_key = ["dataset", "id"] if "dataset" in candidates.columns else ["id"]
    records = []
    for (lang,), part in candidates.group_by("lang", maintain_order=True):
        jaccards, ratios, single, copies = [], [], 0, 0
        for _, item in part.sort("slot").group_by(item_key, maintain_order=True):
            texts = item["text"].to_list()
            target, distractors = texts[0], texts[1:]
            jaccards += intra_jaccard(distractors)
            ratios += [similarity(target, d) for d in distractors]
            single += sum(single_word_change(target, d) is not None for d in distractors)
            copies += sum(normalise(target) == normalise(d) for d in distractors)
        records.append({
            "lang": lang,
            "items": part.select(item_key).n_unique(),
            "distractors": len(ratios),
            "jaccard_mean": mean(jaccards) if jaccards else None,
            "jaccard_sd": stdev(jaccards) if len(jaccards) > 1 else 0.0,
            "levenshtein_mean": mean(ratios),
            "single_word_pairs": single,
            "single_word_share": single / len(ratios),
            "target_copies": copies,
        })
    return records
