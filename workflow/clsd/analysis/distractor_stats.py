"""Statistics of a distractor set: intra-item word Jaccard, similarity to the original, single-word share.

Jaccard (PAPER.md): word sets are the lower-cased runs of 2+ word characters of the words (clsd.core.words; for
scripts written without spaces, ICU's words themselves: one character is a word there); each distractor's
Jaccard with each of the other distractors of the same item and language is averaged, then mean and sample
standard deviation are taken over all distractors (0.47 / 0.17 on the full published sets).
"""

from __future__ import annotations

from statistics import mean, stdev

import polars as pl

from clsd.analysis.swaps import single_word_change
from clsd.analysis.table3 import similarity
from clsd.core.languages import language
from clsd.core.text import normalise, word_runs
from clsd.core.words import words

#: A distractor is far from its target below this Levenshtein ratio (the lowest bin of Table 3 starts at 0.3 and ends
#: here), and shares almost no word with it below this word Jaccard: the distractor set's closeness at a glance.
FAR_RATIO, FEW_SHARED = 0.6, 0.1


def vocabulary(text: str, lang: str) -> set[str]:
    """The word set Jaccard compares (see the module docstring)."""
    if language(lang).segmentation == "whitespace":
        return {run for word in words(text, lang) for run in word_runs(word.lower()) if len(run) >= 2}
    return {word.lower() for word in words(text, lang)}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def intra_jaccard(distractors: list[str], lang: str) -> list[float]:
    """Per distractor: mean Jaccard with the item's other distractors."""
    sets = [vocabulary(t, lang) for t in distractors]
    return [mean(jaccard(s, o) for j, o in enumerate(sets) if j != i) for i, s in enumerate(sets)] if len(sets) > 1 else []


def target_copies(candidates: pl.DataFrame) -> pl.DataFrame:
    """Distractors equal to their item's true target up to case, whitespace and final punctuation (id, lang, k,
    target, distractor): each ties with the target, so its item can only fail in that direction."""
    targets = candidates.filter(pl.col("slot") == 0).select("id", "lang", pl.col("text").alias("target"))
    distractors = candidates.filter(pl.col("slot") > 0).select("id", "lang", pl.col("slot").alias("k"), pl.col("text").alias("distractor"))
    joined = distractors.join(targets, on=["id", "lang"]).sort("id", "lang", "k")
    same = [normalise(t, lang) == normalise(d, lang) for t, d, lang in zip(joined["target"], joined["distractor"], joined["lang"])]
    return joined.filter(pl.Series(same, dtype=pl.Boolean)).select("id", "lang", "k", "target", "distractor")


def stats(candidates: pl.DataFrame) -> list[dict[str, object]]:
    """One record per language: counts, Jaccard mean/sd, mean Levenshtein ratio and the share of distractors far from
    their target (ratio below 0.6, the lowest bin of Table 3; word Jaccard with the target below 0.1: almost no word
    shared), single-word pairs, copies of the target.

    Items are identified by `id`, or by (`dataset`, `id`) when a `dataset` column pools several datasets.
    """
    item_key = ["dataset", "id"] if "dataset" in candidates.columns else ["id"]
    records = []
    for (lang,), part in candidates.group_by("lang", maintain_order=True):
        jaccards, ratios, shared, single, copies = [], [], [], 0, 0
        for _, item in part.sort("slot").group_by(item_key, maintain_order=True):
            texts = item["text"].to_list()
            target, distractors = texts[0], texts[1:]
            jaccards += intra_jaccard(distractors, lang)
            ratios += [similarity(target, d) for d in distractors]
            shared += [jaccard(vocabulary(target, lang), vocabulary(d, lang)) for d in distractors]
            single += sum(single_word_change(target, d, lang) is not None for d in distractors)
            copies += sum(normalise(target, lang) == normalise(d, lang) for d in distractors)
        records.append({
            "lang": lang,
            "items": part.select(item_key).n_unique(),
            "distractors": len(ratios),
            "jaccard_mean": mean(jaccards) if jaccards else None,
            "jaccard_sd": stdev(jaccards) if len(jaccards) > 1 else 0.0,
            "levenshtein_mean": mean(ratios),
            "levenshtein_below_0_6": sum(r < FAR_RATIO for r in ratios) / len(ratios),
            "target_jaccard_below_0_1": sum(j < FEW_SHARED for j in shared) / len(shared),
            "single_word_pairs": single,
            "single_word_share": single / len(ratios),
            "target_copies": copies,
        })
    return records


#: Columns of the statistics table (one row per dataset and language).
STATS_SCHEMA = {"Dataset": pl.String, "lang": pl.String, "items": pl.Int64, "distractors": pl.Int64, "jaccard_mean": pl.Float64,
                "jaccard_sd": pl.Float64, "levenshtein_mean": pl.Float64, "levenshtein_below_0_6": pl.Float64,
                "target_jaccard_below_0_1": pl.Float64, "single_word_pairs": pl.Int64,
                "single_word_share": pl.Float64, "target_copies": pl.Int64}


def stats_table(rows: list[dict[str, object]]) -> pl.DataFrame:
    """The statistics records as a table (with its columns even when no dataset has an item)."""
    return pl.DataFrame(rows, schema=STATS_SCHEMA, orient="row") if rows else pl.DataFrame(schema=STATS_SCHEMA)
