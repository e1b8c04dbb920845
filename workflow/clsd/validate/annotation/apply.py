"""The verdicts used: distractors an annotator judged same meaning or not a sentence leave the scored set, and
each item that lost some gets a failure record, so that an item left with fewer than four is not scored and
Table 2's footnote says why (clsd.data.candidates reads `failed` from the set's provenance)."""

from __future__ import annotations

from typing import Any

import polars as pl


def remove(distractors: pl.DataFrame, removals: pl.DataFrame, lang: str) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """The set without the removed distractors (`removals`: id, k, verdicts) and one failure record per item."""
    kept = distractors.join(removals.select("id", "k"), on=["id", "k"], how="anti")
    counts = removals.group_by("id", maintain_order=True).agg(pl.len().alias("n"), pl.col("verdicts").str.join(", "))
    records = [{"id": item, "lang": lang,
                "reason": f"annotators removed {n} distractor(s): {', '.join(sorted(set(verdicts.split(', '))))}"}
               for item, n, verdicts in counts.sort("id").iter_rows()]
    return kept, records


def merge_failures(earlier: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Failure records of both lists, one per (id, lang): an item failing for two reasons names both."""
    merged: dict[tuple[int, str], dict[str, Any]] = {}
    for record in [*earlier, *new]:
        key = (record["id"], record["lang"])
        if key in merged:
            merged[key] = merged[key] | {"reason": f"{merged[key]['reason']}; {record['reason']}"}
        else:
            merged[key] = dict(record)
    return list(merged.values())
