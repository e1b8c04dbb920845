"""Table 2 (Precision@1 per model, dataset, direction and view) as Markdown, LaTeX and CSV; MTEB-shaped JSON."""

from __future__ import annotations

import hashlib
import platform
from collections import Counter
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from clsd import render
from clsd.score import summary

#: ISO 639-3 + script codes as MTEB writes them.
MTEB_LANGUAGES = {"de": "deu-Latn", "fr": "fra-Latn", "en": "eng-Latn"}
PACKAGES = ("clsd", "torch", "sentence-transformers", "transformers", "polars", "numpy", "snakemake")


@dataclass(frozen=True)
class ScoreFile:
    """One per-item score file and the labels it is reported under."""

    view: str
    model: str
    dataset: str
    dataset_label: str
    path: str


def package_versions() -> dict[str, str]:
    """Versions of the packages that determine the numbers (written beside every result)."""
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def direction_label(direction: str) -> str:
    """de-fr → DE→FR (the paper's naming)."""
    src, tgt = direction.split("-")
    return f"{src.upper()}→{tgt.upper()}"


def table2(files: list[ScoreFile], directions: list[str]) -> tuple[pl.DataFrame, dict[str, int]]:
    """Wide Table 2: one row per view and model (input order), a column per dataset × direction, Average;
    and the number of items scored per column.

    Every row of a column must have scored the same number of items: a score file from other candidates
    (stale, or another item set) would make its row incomparable, so it stops the job.
    """
    rows: dict[tuple[str, str], dict[str, float]] = {}
    counts: dict[str, int] = {}
    for item in files:
        scores = pl.read_parquet(item.path)
        p1 = summary(scores)
        n_items = dict(scores.group_by("direction").len().iter_rows())
        row = rows.setdefault((item.view, item.model), {})
        for direction in directions:
            column = f"{item.dataset_label} {direction_label(direction)}"
            if column in row:
                raise ValueError(f"two score files for {item.view} / {item.model} / {column}: labels must be unique")
            if counts.setdefault(column, n_items[direction]) != n_items[direction]:
                raise ValueError(
                    f"{item.path}: {n_items[direction]} items scored for {column}, other rows scored {counts[column]}; "
                    "rerun its embedding and scoring"
                )
            row[column] = p1[direction]
    columns = list(counts)
    records = []
    for (view, model), values in rows.items():
        present = [values[c] for c in columns if c in values]
        records.append({"view": view, "model": model, **{c: values.get(c) for c in columns}, "Average": sum(present) / len(present)})
    schema = {"view": pl.String, "model": pl.String, **{c: pl.Float64 for c in columns}, "Average": pl.Float64}
    return pl.DataFrame(records, schema=schema, orient="row"), counts


def not_scored_notes(datasets: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """One footnote per dataset with items left out of scoring: how many of how many, grouped by reason.

    `datasets` holds (dataset label, provenance of its direct candidate table).
    """
    notes = []
    for label, meta in datasets:
        dropped = meta.get("dropped", [])
        if not dropped:
            continue
        reasons = Counter(record["reason"] for record in dropped).most_common()
        detail = "; ".join(f"{n} × {reason}" for reason, n in reasons)
        notes.append(f"{label}: {len(dropped)} of {meta['items']} items not scored ({detail}).")
    return notes


def write_table2(table: pl.DataFrame, counts: dict[str, int], notes: list[str], md: str | Path, tex: str | Path, csv: str | Path) -> None:
    """Write Table 2 in all three formats: P@1 in percent (two decimals in Markdown/LaTeX, full precision in
    CSV), a last row `n` with the items scored per column, and the not-scored footnotes under the table."""
    n_row = {"view": "n", "model": "items scored", **{c: float(n) for c, n in counts.items()}, "Average": None}
    full = pl.concat([table, pl.DataFrame([n_row], schema=table.schema, orient="row")])
    shown = full.with_columns(
        pl.when(pl.col("view") == "n").then(pl.col(c).cast(pl.Int64).cast(pl.String)).otherwise(pl.col(c).map_elements(lambda v: f"{v:.2f}", return_dtype=pl.String)).alias(c)
        for c in [*counts, "Average"]
    )
    right = set(counts) | {"Average"}
    render.write(shown.rename({"view": "View", "model": "Model"}), md, tex, csv=None, right=right, notes=notes)
    full.write_csv(csv)


def dataset_revision(dataset_meta: dict[str, Any]) -> str:
    """One checksum for a dataset: its single source's sha256, or the sha256 of its sources' checksums."""
    checksums = [source["sha256"] for source in dataset_meta["sources"]]
    if len(checksums) == 1:
        return checksums[0]
    return hashlib.sha256(" ".join(checksums).encode("ascii")).hexdigest()


def mteb_result(
    *,
    dataset: str,
    dataset_meta: dict[str, Any],
    model_meta: dict[str, Any],
    scores_by_view: dict[str, pl.DataFrame],
    candidates_meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One MTEB-shaped results record for a model on a dataset (fractions rounded to 6 decimals)."""
    subsets = []
    for view, scores in scores_by_view.items():
        for direction, p1 in summary(scores).items():
            n_items = scores.filter(pl.col("direction") == direction).height
            subsets.append(
                {
                    "hf_subset": f"{view}-{direction}",
                    "languages": [MTEB_LANGUAGES.get(lang, lang) for lang in direction.split("-")],
                    "main_score": round(p1 / 100.0, 6),
                    "precision_at_1": round(p1 / 100.0, 6),
                    "n_items": n_items,
                }
            )
    return {
        "task_name": f"CLSD-{dataset}",
        "dataset_revision": dataset_revision(dataset_meta),
        "dataset": dataset_meta,
        "scores": {"test": subsets},
        "model": model_meta,
        "packages": package_versions(),
        "ties": "a tie between the true target and a distractor counts as a failure",
        "items_not_scored": (candidates_meta or {}).get("dropped", []),
    }
