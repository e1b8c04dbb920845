"""Table 2 (Precision@1 per model, dataset, direction and view) as Markdown, LaTeX and CSV; MTEB-shaped JSON."""

from __future__ import annotations

import hashlib
import platform
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


def table2(files: list[ScoreFile], directions: list[str]) -> pl.DataFrame:
    """Wide Table 2: one row per view and model (input order), a column per dataset × direction, Average."""
    rows: dict[tuple[str, str], dict[str, float]] = {}
    columns: list[str] = []
    for item in files:
        p1 = summary(pl.read_parquet(item.path))
        row = rows.setdefault((item.view, item.model), {})
        for direction in directions:
            column = f"{item.dataset_label} {direction_label(direction)}"
            if column not in columns:
                columns.append(column)
            row[column] = p1[direction]
    records = []
    for (view, model), values in rows.items():
        present = [values[c] for c in columns if c in values]
        records.append({"view": view, "model": model, **{c: values.get(c) for c in columns}, "Average": sum(present) / len(present)})
    schema = {"view": pl.String, "model": pl.String, **{c: pl.Float64 for c in columns}, "Average": pl.Float64}
    return pl.DataFrame(records, schema=schema, orient="row")


def write_table2(table: pl.DataFrame, md: str | Path, tex: str | Path, csv: str | Path) -> None:
    """Write Table 2 in all three formats (P@1 in percent, two decimals; CSV keeps full precision)."""
    render.write(table.rename({"view": "View", "model": "Model"}), md, tex, csv=None)
    table.write_csv(csv)


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
    }
