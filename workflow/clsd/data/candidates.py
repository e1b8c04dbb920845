"""The candidate table of a dataset: every text a view evaluates, in long form (id, lang, slot, text).

slot 0 is the item's original sentence in `lang`; slots 1..k are its distractors in `lang`. A direction
src-tgt uses slot 0 of src as the query and slots 0..k of tgt as the candidates (slot 0 = true target).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from clsd.core.errors import InputError


def complete_items(parallel: pl.DataFrame, distractors: list[pl.DataFrame], languages: list[str], k: int) -> tuple[pl.DataFrame, list[int]]:
    """Items with `k` distractors in every language, and the ids of the others (e.g. failed generations)."""
    counts = pl.concat([d.select("id", "lang") for d in distractors]).group_by("id", "lang").len() if distractors else pl.DataFrame(schema={"id": pl.Int64, "lang": pl.String, "len": pl.UInt32})
    full = counts.filter(pl.col("len") == k).group_by("id").len().filter(pl.col("len") == len(languages))["id"]
    kept = parallel.filter(pl.col("id").is_in(full.implode()))
    return kept, sorted(set(parallel["id"].to_list()) - set(kept["id"].to_list()))


def dropped_reasons(dropped: list[int], distractors: list[pl.DataFrame], metas: list[dict], languages: list[str], k: int) -> list[dict]:
    """Why each dropped item was left out: per language lacking distractors, the generator's recorded failure
    (generation report) or what the distractor file holds for it (one reason when every language has the
    same). `metas[i]` is the provenance of `distractors[i]`."""
    failures = {(f["id"], f["lang"]): f["reason"] for meta in metas for f in meta.get("failed", [])}
    counts = Counter(row for frame in distractors for row in frame.select("id", "lang").iter_rows())
    origin = {meta.get("lang"): Path((meta.get("source") or {}).get("path", "")).name or meta.get("generator", "?") for meta in metas}
    records = []
    for item in dropped:
        reasons = []
        for lang in languages:
            n = counts.get((item, lang), 0)
            if n == k:
                continue
            reason = failures.get((item, lang))
            if reason is None:
                reason = f"not in {origin.get(lang)}" if n == 0 else f"{n} of {k} distractors in {origin.get(lang)}"
            reasons.append((lang, reason))
        same = len({reason for _, reason in reasons}) == 1 and len(reasons) == len(languages)
        text = reasons[0][1] if same else " and ".join(f"{lang}: {reason}" for lang, reason in reasons)
        records.append({"id": item, "reason": text})
    return records


def build(parallel: pl.DataFrame, distractors: list[pl.DataFrame], languages: list[str]) -> pl.DataFrame:
    """Union of original sentences (slot 0) and distractors (slots 1..k), sorted by id, lang, slot."""
    originals = [
        parallel.select("id", pl.lit(lang).alias("lang"), pl.lit(0, dtype=pl.Int64).alias("slot"), pl.col(lang).alias("text"))
        for lang in languages
    ]
    others = [d.select("id", "lang", pl.col("k").alias("slot"), "text") for d in distractors]
    table = pl.concat(originals + others).sort("id", "lang", "slot")
    unknown = table.join(parallel.select("id"), on="id", how="anti")
    if unknown.height:
        raise InputError(f"distractors for item id {unknown['id'][0]} which is not in the parallel table")
    return table


def distinct_texts(table: pl.DataFrame) -> list[str]:
    """Each distinct text once, in first-seen order (a source is used by two directions, encoded once)."""
    return table["text"].unique(maintain_order=True).to_list()


def with_originals(texts: list[str], parallel: pl.DataFrame, languages: list[str]) -> list[str]:
    """`texts` followed by each original sentence of `parallel` not among them yet (first-seen order)."""
    return list(dict.fromkeys([*texts, *(text for lang in languages for text in parallel[lang].to_list())]))


def content_sha256(table: pl.DataFrame) -> str:
    """Checksum of a candidate table's rows (id, lang, slot, text) in order: the texts a model is evaluated on."""
    digest = hashlib.sha256()
    for row in table.select("id", "lang", "slot", "text").iter_rows():
        digest.update(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
    return digest.hexdigest()


def dropped_detail(dropped: list[dict[str, Any]]) -> str:
    """Items left out, grouped by reason, most frequent first: `2 × not in x.csv; 1 × de: ...`."""
    return "; ".join(f"{n} × {reason}" for reason, n in Counter(record["reason"] for record in dropped).most_common())


def why_none(reasons: list[dict], n_items: int) -> str:
    """One line saying why a dataset has no scorable item: its reasons with their counts (or an empty selection)."""
    return dropped_detail(reasons) if n_items else "the selection holds no item"
