"""The MTEB-shaped record of a model on a dataset (loads with mteb's `TaskResult.from_dict`), and the content
revision and subset languages that the Hugging Face export (clsd.report.hf_export) and the MTEB task share."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import polars as pl

from clsd import __version__
from clsd.core.items import split_direction
from clsd.core.languages import language
from clsd.core.provenance import package_versions
from clsd.data.candidates import content_sha256, dropped_detail
from clsd.score.precision import precision_at_1


@dataclass(frozen=True)
class ViewTexts:
    """What one view of a dataset gave the model to encode: the content checksum of its candidate table
    (`candidates.content_sha256`) and the language its texts were translated into (None: as they are)."""

    content_sha256: str
    translated_to: str | None = None


def view_texts(table: pl.DataFrame, meta: dict[str, Any]) -> ViewTexts:
    """The `ViewTexts` of a candidate table and its provenance (the pivot view records its translator)."""
    return ViewTexts(content_sha256(table), (meta.get("translator") or {}).get("target_lang"))


def dataset_revision(texts_by_view: dict[str, ViewTexts]) -> str:
    """One checksum of what a model was evaluated on: the content of the candidate tables of the views the
    record scores (item ids, languages, slots and texts, in order) and the pivot language. It depends on
    content only: the same pairs and distractors give the same revision on any machine, whatever the paths,
    labels, generator names or display settings; another prompt or LLM gives a new revision when (and only
    when) it wrote other distractors."""
    record = {view: {"content_sha256": texts.content_sha256, "translated_to": texts.translated_to}
              for view, texts in sorted(texts_by_view.items())}
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()


def subset_languages(direction: str, translated_to: str | None) -> list[str]:
    """ISO 639-3 + script codes (the registry's `code`, as MTEB writes them) of the texts a model compares in a
    subset: source and target, or the one language a translated view is in."""
    if translated_to:
        return [language(translated_to).code]
    return [language(lang).code for lang in split_direction(direction)]


def mteb_result(
    *,
    dataset: str,
    candidates_meta: dict[str, Any],
    texts_by_view: dict[str, ViewTexts],
    model_meta: dict[str, Any],
    scores_by_view: dict[str, pl.DataFrame],
    directions: list[str],
    evaluation_time: float | None,
) -> dict[str, Any]:
    """One results record for a model on a dataset that loads with mteb's `TaskResult.from_dict` (mteb 2.x):
    task_name, dataset_revision, mteb_version (the version of mteb's result format this record follows; the
    scores are computed by clsd, named with its version under `produced_by`), evaluation_time (encoding
    seconds) and scores.test with one entry per view and direction (fractions rounded to 6 decimals).

    `languages` name the texts the model encoded: source and target language for the direct view, the pivot
    language for a translated view (the original languages under `translated_from`). A view and direction
    with zero items has no score: it is not in scores.test (mteb averages every `main_score` it finds, and
    cannot average a null) but in `subsets_not_scored`, with the reason. `candidates_meta` is the provenance of
    the direct candidate table (parallel sources, items left out).
    """
    subsets, not_scored = [], []
    dropped = candidates_meta.get("dropped", [])
    for view, scores in scores_by_view.items():
        translated_to = texts_by_view[view].translated_to
        for direction in directions:
            hits = scores.filter(pl.col("direction") == direction)["correct"]
            entry = {"hf_subset": f"{view}-{direction}", "languages": subset_languages(direction, translated_to)}
            if translated_to:
                entry["translated_from"] = subset_languages(direction, None)
            if hits.len() == 0:
                left_out = f"{len(dropped)} of {candidates_meta.get('items')} items left out ({dropped_detail(dropped)})"
                not_scored.append({**entry, "n_items": 0, "reason": left_out if dropped else "no items selected"})
                continue
            p1 = round(precision_at_1(hits) / 100.0, 6)
            subsets.append({**entry, "main_score": p1, "precision_at_1": p1, "n_items": hits.len()})
    try:
        mteb_version = metadata.version("mteb")
    except metadata.PackageNotFoundError:
        mteb_version = None
    return {
        "task_name": f"CLSD-{dataset}",
        "dataset_revision": dataset_revision(texts_by_view),
        "mteb_version": mteb_version,
        "evaluation_time": evaluation_time,
        "kg_co2_emissions": None,
        "scores": {"test": subsets},
        "subsets_not_scored": not_scored,
        "produced_by": {"tool": "clsd", "version": __version__,
                        "note": "scores computed by clsd (strict Precision@1); mteb_version is the version of mteb's result format"},
        "dataset": candidates_meta["parallel"],
        "model": model_meta,
        "packages": package_versions(),
        "ties": "a tie between the true target and a distractor counts as a failure",
        "items_not_scored": dropped,
    }
