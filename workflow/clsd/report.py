"""Table 2 (Precision@1 per model, dataset, direction and view) as Markdown, LaTeX and CSV; MTEB-shaped JSON."""

from __future__ import annotations

import hashlib
import json
import platform
from collections import Counter
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from clsd import render
from clsd.intervals import bootstrap_means, holm, mcnemar_exact, percentile_interval
from clsd.score import precision_at_1, summary

#: ISO 639-3 + script codes as MTEB writes them.
MTEB_LANGUAGES = {"de": "deu-Latn", "fr": "fra-Latn", "en": "eng-Latn"}
PACKAGES = ("clsd", "mteb", "torch", "sentence-transformers", "transformers", "polars", "numpy", "snakemake")


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


@dataclass(frozen=True)
class Outcome:
    """Per-item correctness of one Table 2 cell (view × model × dataset × direction)."""

    view: str
    model: str
    column: str
    ids: np.ndarray
    correct: np.ndarray
    path: str


def read_outcomes(files: list[ScoreFile], directions: list[str]) -> list[Outcome]:
    """Every cell of Table 2, in table order (files in input order, then directions)."""
    cells = []
    for item in files:
        scores = pl.read_parquet(item.path)
        for direction in directions:
            part = scores.filter(pl.col("direction") == direction).sort("id")
            column = f"{item.dataset_label} {direction_label(direction)}"
            cells.append(Outcome(item.view, item.model, column, part["id"].to_numpy(), part["correct"].to_numpy(), item.path))
    return cells


def table2(outcomes: list[Outcome]) -> tuple[pl.DataFrame, dict[str, int]]:
    """Wide Table 2: one row per view and model (input order), a column per dataset × direction, Average;
    and the number of items scored per column.

    Every row of a column must have scored the same number of items: a score file from other candidates
    (stale, or another item set) would make its row incomparable, so it stops the job.
    """
    rows: dict[tuple[str, str], dict[str, float]] = {}
    counts: dict[str, int] = {}
    for cell in outcomes:
        row = rows.setdefault((cell.view, cell.model), {})
        if cell.column in row:
            raise ValueError(f"two score files for {cell.view} / {cell.model} / {cell.column}: labels must be unique")
        if counts.setdefault(cell.column, cell.ids.size) != cell.ids.size:
            raise ValueError(
                f"{cell.path}: {cell.ids.size} items scored for {cell.column}, other rows scored {counts[cell.column]}; "
                "rerun its embedding and scoring"
            )
        row[cell.column] = precision_at_1(cell.correct)
    columns = list(counts)
    records = []
    for (view, model), values in rows.items():
        present = [values[c] for c in columns if c in values]
        records.append({"view": view, "model": model, **{c: values.get(c) for c in columns}, "Average": sum(present) / len(present)})
    schema = {"view": pl.String, "model": pl.String, **{c: pl.Float64 for c in columns}, "Average": pl.Float64}
    return pl.DataFrame(records, schema=schema, orient="row"), counts


def confidence_intervals(outcomes: list[Outcome], n_boot: int, seed: int) -> pl.DataFrame:
    """95% percentile bootstrap interval of every cell and of each row's Average (long: view, model, column,
    n, p1, ci_low, ci_high, in percent). Items are resampled per cell; the Average's replicates are the mean
    of its cells' replicates. Seeded: the same inputs give the same intervals."""
    rows, replicates = [], {}
    for index, cell in enumerate(outcomes):
        means = 100.0 * bootstrap_means(cell.correct, n_boot, np.random.default_rng([seed, index]))
        replicates.setdefault((cell.view, cell.model), []).append(means)
        low, high = percentile_interval(means)
        rows.append({"view": cell.view, "model": cell.model, "column": cell.column, "n": int(cell.ids.size),
                     "p1": precision_at_1(cell.correct), "ci_low": low, "ci_high": high})
    for (view, model), parts in replicates.items():
        cells = [r for r in rows if (r["view"], r["model"]) == (view, model)]
        low, high = percentile_interval(np.mean(parts, axis=0))
        rows.append({"view": view, "model": model, "column": "Average", "n": sum(r["n"] for r in cells),
                     "p1": float(np.mean([r["p1"] for r in cells])), "ci_low": low, "ci_high": high})
    schema = {"view": pl.String, "model": pl.String, "column": pl.String, "n": pl.Int64, "p1": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def paired_comparisons(outcomes: list[Outcome]) -> pl.DataFrame:
    """Every pair of models on the same items (per view and column): discordant counts, P@1 difference,
    exact McNemar p-value and its Holm adjustment over all comparisons of the table."""
    rows = []
    by_cell: dict[tuple[str, str], list[Outcome]] = {}
    for cell in outcomes:
        by_cell.setdefault((cell.view, cell.column), []).append(cell)
    for (view, column), cells in by_cell.items():
        for i, a in enumerate(cells):
            for b in cells[i + 1 :]:
                if not np.array_equal(a.ids, b.ids):
                    raise ValueError(f"{a.path} and {b.path} scored different items for {column}")
                only_a = int(np.sum(a.correct & ~b.correct))
                only_b = int(np.sum(~a.correct & b.correct))
                rows.append({"view": view, "column": column, "model_a": a.model, "model_b": b.model, "n": int(a.ids.size),
                             "only_a": only_a, "only_b": only_b,
                             "difference": precision_at_1(a.correct) - precision_at_1(b.correct),
                             "p_mcnemar": mcnemar_exact(only_a, only_b)})
    schema = {"view": pl.String, "column": pl.String, "model_a": pl.String, "model_b": pl.String, "n": pl.Int64,
              "only_a": pl.Int64, "only_b": pl.Int64, "difference": pl.Float64, "p_mcnemar": pl.Float64}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.with_columns(pl.Series("p_holm", holm(frame["p_mcnemar"].to_list()), dtype=pl.Float64))


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


def write_table2(
    table: pl.DataFrame,
    counts: dict[str, int],
    intervals: pl.DataFrame,
    notes: list[str],
    show_ci: bool,
    md: str | Path,
    tex: str | Path,
    csv: str | Path,
) -> None:
    """Write Table 2 in all three formats: P@1 in percent (two decimals in Markdown/LaTeX, full precision in
    CSV, with `<column> ci_low`/`ci_high` columns), a last row `n` with the items scored per column, and the
    not-scored footnotes under the table. `show_ci` adds `± half-width` of the 95% interval to each cell."""
    value_columns = [*counts, "Average"]
    half = {(r["view"], r["model"], r["column"]): (r["ci_high"] - r["ci_low"]) / 2 for r in intervals.iter_rows(named=True)}

    def shown(view: str, model: str, column: str, value: float | None) -> str | None:
        if value is None:
            return None
        return f"{value:.2f} ± {half[(view, model, column)]:.2f}" if show_ci else f"{value:.2f}"

    rows = [
        {"View": r["view"], "Model": r["model"], **{c: shown(r["view"], r["model"], c, r[c]) for c in value_columns}}
        for r in table.iter_rows(named=True)
    ]
    rows.append({"View": "n", "Model": "items scored", **{c: str(n) for c, n in counts.items()}, "Average": None})
    display = pl.DataFrame(rows, schema={"View": pl.String, "Model": pl.String, **{c: pl.String for c in value_columns}}, orient="row")
    render.write(display, md, tex, csv=None, right=set(value_columns), notes=notes)

    bounds = intervals.pivot(on="column", index=["view", "model"], values=["ci_low", "ci_high"])
    renamed = {f"{bound}_{c}": f"{c} {bound}" for c in value_columns for bound in ("ci_low", "ci_high")}
    full = table.join(bounds.rename(renamed), on=["view", "model"], how="left", maintain_order="left")
    full = full.select("view", "model", *[name for c in value_columns for name in (c, f"{c} ci_low", f"{c} ci_high")])
    n_row = pl.DataFrame([{"view": "n", "model": "items scored", **{c: float(n) for c, n in counts.items()}}])
    pl.concat([full, n_row], how="diagonal_relaxed").write_csv(csv)


def write_pairs(pairs: pl.DataFrame, md: str | Path, csv: str | Path) -> None:
    """The paired comparisons as Markdown (differences with 2 decimals, p-values with 3 significant digits)
    and CSV (full precision)."""
    pairs.write_csv(csv)
    shown = pairs.with_columns(pl.col(c).map_elements(lambda p: f"{p:.3g}", return_dtype=pl.String) for c in ("p_mcnemar", "p_holm"))
    Path(md).write_text(render.markdown(shown.rename({"difference": "P@1 A − B"}), right={"p_mcnemar", "p_holm"}), encoding="utf-8")


def dataset_revision(candidates_meta: dict[str, Any]) -> str:
    """One checksum for what a model was evaluated on: the pairs' sources and selection, the distractors'
    provenance (published file checksums, or generator, endpoint, sampling and prompt checksum) and the
    candidate texts themselves. A new prompt, LLM or distractor file is a new revision."""
    parallel = candidates_meta["parallel"]
    record = {
        "sources": [source["sha256"] for source in parallel["sources"]],
        "selection": parallel.get("selection"),
        "distractors": candidates_meta.get("distractors", []),
        "texts": candidates_meta.get("content_sha256"),
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def mteb_result(
    *,
    dataset: str,
    candidates_meta: dict[str, Any],
    model_meta: dict[str, Any],
    scores_by_view: dict[str, pl.DataFrame],
    evaluation_time: float | None,
) -> dict[str, Any]:
    """One results record for a model on a dataset that loads with mteb's `TaskResult.from_dict` (mteb 2.x):
    task_name, dataset_revision, mteb_version, evaluation_time (encoding seconds) and scores.test with one
    entry per view and direction (fractions rounded to 6 decimals)."""
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
    try:
        mteb_version = metadata.version("mteb")
    except metadata.PackageNotFoundError:
        mteb_version = None
    return {
        "task_name": f"CLSD-{dataset}",
        "dataset_revision": dataset_revision(candidates_meta),
        "mteb_version": mteb_version,
        "evaluation_time": evaluation_time,
        "kg_co2_emissions": None,
        "scores": {"test": subsets},
        "dataset": candidates_meta["parallel"],
        "model": model_meta,
        "packages": package_versions(),
        "ties": "a tie between the true target and a distractor counts as a failure",
        "items_not_scored": candidates_meta.get("dropped", []),
    }
