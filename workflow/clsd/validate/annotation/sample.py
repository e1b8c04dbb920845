"""The annotation sample: a seeded draw of distractors from one validated set, stratified by generator and by the
validator's verdict, with inclusion weights so that estimates of the whole set and of each verdict come from it.

A stratum is the combination of the configured `stratify` keys: `generator` and `verdict` (the flag when one is
set, else the suspect note, else `valid`). Every stratum first gets up to `min_per_stratum` draws (so a rare flag
is measured at all), the rest of the sample is spread in proportion to what is left of each stratum. A drawn
distractor weighs N_h / n_h: the stratum's size over its draws.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import polars as pl

from clsd.core.intervals import identity_rng

VALID = "valid"
#: The columns of a sample (the design file): what the annotator sees, and the strata and weights they never see.
SAMPLE_SCHEMA = {"item": pl.String, "id": pl.Int64, "k": pl.Int64, "source": pl.String, "target": pl.String,
                 "distractor": pl.String, "generator": pl.String, "verdict": pl.String, "stratum": pl.String,
                 "population": pl.Int64, "drawn": pl.Int64, "weight": pl.Float64}


def verdict_column() -> pl.Expr:
    """The validator's verdict of a distractor: its flag, else its suspect note, else `valid`."""
    return pl.coalesce(pl.col("flag"), pl.col("note"), pl.lit(VALID)).alias("verdict")


def item_name(lang: str, item: int, k: int) -> str:
    """The name of a sampled distractor in every file of the round trip: `fr-12-3` (language, item id, slot)."""
    return f"{lang}-{item}-{k}"


def allocate(sizes: list[int], total: int, floor: int) -> list[int]:
    """Draws per stratum: up to `floor` each first (one at a time round the strata while `total` is short), then
    the rest in proportion to what is left of each stratum (largest remainders), never more than a stratum holds."""
    counts = [0] * len(sizes)
    left = min(total, sum(sizes))
    while left and any(c < min(s, floor) for c, s in zip(counts, sizes)):
        for h, size in enumerate(sizes):
            if left and counts[h] < min(size, floor):
                counts[h] += 1
                left -= 1
    while left:
        room = [size - count for size, count in zip(sizes, counts)]
        shares = [left * r / sum(room) for r in room]
        whole = [min(int(share), r) for share, r in zip(shares, room)]
        if not sum(whole):  # fewer draws left than strata with room: largest remainders first
            for h in sorted(range(len(sizes)), key=lambda h: (-shares[h], h))[:left]:
                whole[h] = 1
        counts = [c + w for c, w in zip(counts, whole)]
        left -= sum(whole)
    return counts


def stratum_of(row: dict[str, Any], keys: list[str]) -> str:
    """A stratum's name: `generator=llm:x|verdict=valid` (`all` when the sample is not stratified)."""
    return "|".join(f"{key}={row[key]}" for key in keys) or "all"


def draw(distractors: pl.DataFrame, targets: dict[int, str], sources: dict[int, str], *, dataset: str, lang: str,
         size: int, seed: int, stratify: list[str], min_per_stratum: int) -> tuple[pl.DataFrame, str]:
    """The sample of one validated set and its sample id. Rows (in a seeded order that says nothing of the strata):
    item, id, k, source, target, distractor, generator, verdict, stratum, population (N_h), drawn (n_h), weight.
    A set without distractors (a dataset without items) gives an empty sample."""
    design = {"dataset": dataset, "lang": lang, "size": size, "seed": seed, "stratify": stratify,
              "min_per_stratum": min_per_stratum}
    if distractors.height == 0:
        return pl.DataFrame(schema=SAMPLE_SCHEMA), sample_id(design, pl.DataFrame(schema=SAMPLE_SCHEMA))
    frame = (distractors.with_columns(verdict_column()).sort("id", "k")
             .with_columns(pl.struct(stratify or ["id"]).map_elements(lambda r: stratum_of(r, stratify), return_dtype=pl.String)
                           .alias("stratum")))
    strata = frame.group_by("stratum").len().sort("stratum")
    counts = allocate(strata["len"].to_list(), size, min_per_stratum)
    parts = []
    for (name, population), n in zip(strata.iter_rows(), counts):
        members = frame.filter(pl.col("stratum") == name)
        rows = np.sort(identity_rng(seed, dataset, lang, name).choice(members.height, size=n, replace=False))
        parts.append(members[rows.tolist()].with_columns(pl.lit(population).alias("population"), pl.lit(n).alias("drawn")))
    sample = pl.concat(parts).with_columns(
        pl.struct("id", "k").map_elements(lambda r: item_name(lang, r["id"], r["k"]), return_dtype=pl.String).alias("item"),
        pl.col("id").replace_strict(sources, return_dtype=pl.String).alias("source"),
        pl.col("id").replace_strict(targets, return_dtype=pl.String).alias("target"),
        pl.col("text").alias("distractor"),
        (pl.col("population") / pl.col("drawn")).alias("weight"),
    )
    order = identity_rng(seed, dataset, lang, "order").permutation(sample.height)
    sample = sample[order.tolist()].select(list(SAMPLE_SCHEMA)).cast(SAMPLE_SCHEMA)
    return sample, sample_id(design, sample)


def sample_id(design: dict[str, Any], sample: pl.DataFrame) -> str:
    """16 hex digits of the sha256 of the design and of what the annotator sees (item, source, target, distractor,
    in order): a sheet from another draw, another seed or other texts never passes for this one."""
    digest = hashlib.sha256(json.dumps(design, sort_keys=True).encode("utf-8"))
    for row in sample.select("item", "source", "target", "distractor").iter_rows():
        digest.update(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
    return digest.hexdigest()[:16]
