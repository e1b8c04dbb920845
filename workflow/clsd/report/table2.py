"""Table 2 (Precision@1 per model, dataset, direction and view) as Markdown, LaTeX and CSV, with exact intervals,
footnotes for items not scored and the paired model comparisons."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from clsd.core import intervals, render
from clsd.core.items import direction_label
from clsd.data import candidates
from clsd.score.precision import precision_at_1
from clsd.validate.verdicts import DUPLICATE


@dataclass(frozen=True)
class ScoreFile:
    """One per-item score file and the labels it is reported under."""

    view: str
    model: str
    dataset: str
    dataset_label: str
    path: str


@dataclass(frozen=True)
class Outcome:
    """Per-item correctness of one Table 2 cell (view × model × dataset × direction); a cell may hold zero items
    (every item of its dataset was left out), which is shown as `–` with n = 0."""

    view: str
    model: str
    dataset: str
    column: str
    ids: np.ndarray
    correct: np.ndarray
    path: str


def read_outcomes(files: list[ScoreFile], directions: dict[str, list[str]]) -> list[Outcome]:
    """Every cell of Table 2, in table order (files in input order, then each dataset's directions)."""
    cells = []
    for item in files:
        scores = pl.read_parquet(item.path)
        for direction in directions[item.dataset]:
            part = scores.filter(pl.col("direction") == direction).sort("id")
            column = f"{item.dataset_label} {direction_label(direction)}"
            cells.append(Outcome(item.view, item.model, item.dataset, column, part["id"].to_numpy(),
                                 part["correct"].to_numpy().astype(bool), item.path))
    return cells


def table2(outcomes: list[Outcome]) -> tuple[pl.DataFrame, dict[str, int]]:
    """Wide Table 2: one row per view and model (input order), a column per dataset × direction, Average;
    and the number of items scored per column.

    A column with zero items has no value (null, shown as `–`); the Average is the mean over the columns of
    its row that have items (null when none has). Every row of a column must have scored the same number of
    items: a score file from other candidates (stale, or another item set) would make its row incomparable, so
    it stops the job.
    """
    rows: dict[tuple[str, str], dict[str, float | None]] = {}
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
        row[cell.column] = precision_at_1(cell.correct) if cell.ids.size else None
    columns = list(counts)
    records = []
    for (view, model), values in rows.items():
        present = [value for value in values.values() if value is not None]
        average = sum(present) / len(present) if present else None
        records.append({"view": view, "model": model, **{c: values.get(c) for c in columns}, "Average": average})
    schema = {"view": pl.String, "model": pl.String, **{c: pl.Float64 for c in columns}, "Average": pl.Float64}
    return pl.DataFrame(records, schema=schema, orient="row"), counts


def shared_items(cells: list[Outcome]) -> list[np.ndarray]:
    """The cells of one row grouped by dataset, as item × column matrices of outcomes (both directions of a
    dataset score the same items); cells with zero items are left out."""
    by_dataset: dict[str, list[Outcome]] = {}
    for cell in cells:
        if cell.ids.size:
            by_dataset.setdefault(cell.dataset, []).append(cell)
    groups = []
    for parts in by_dataset.values():
        for other in parts[1:]:
            if not np.array_equal(parts[0].ids, other.ids):
                raise ValueError(f"{other.path}: {other.column} scored other items than {parts[0].column} of the same dataset")
        groups.append(np.column_stack([cell.correct for cell in parts]))
    return groups


def confidence_intervals(outcomes: list[Outcome]) -> pl.DataFrame:
    """95% interval of every cell and of each row's Average (long: view, model, column, n, p1, ci_low, ci_high,
    in percent; a cell with zero items has n = 0 and no value or bounds).

    A cell's interval is exact (Clopper–Pearson). The Average's is `intervals.paired_mean_interval`: the variance
    of resampling items jointly for the directions of a dataset (they score the same items), computed exactly, so
    an interval depends on its row's outcomes alone: two models with the same outcomes get the same interval, and
    adding a model or a dataset changes no other row's.
    """
    rows, by_row = [], {}
    for cell in outcomes:
        by_row.setdefault((cell.view, cell.model), []).append(cell)
        row = {"view": cell.view, "model": cell.model, "column": cell.column, "n": int(cell.ids.size), "p1": None, "ci_low": None, "ci_high": None}
        if cell.ids.size:
            low, high = intervals.exact_interval(int(cell.correct.sum()), int(cell.ids.size))
            row |= {"p1": precision_at_1(cell.correct), "ci_low": 100.0 * low, "ci_high": 100.0 * high}
        rows.append(row)
    for (view, model), cells in by_row.items():
        scored = [cell for cell in cells if cell.ids.size]
        row = {"view": view, "model": model, "column": "Average", "n": sum(int(cell.ids.size) for cell in cells), "p1": None, "ci_low": None, "ci_high": None}
        if scored:
            low, high = intervals.paired_mean_interval(shared_items(cells))
            row |= {"p1": float(np.mean([precision_at_1(cell.correct) for cell in scored])), "ci_low": 100.0 * low, "ci_high": 100.0 * high}
        rows.append(row)
    schema = {"view": pl.String, "model": pl.String, "column": pl.String, "n": pl.Int64, "p1": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def paired_comparisons(outcomes: list[Outcome]) -> pl.DataFrame:
    """Every pair of models on the same items (per view and column): discordant counts, P@1 difference,
    exact McNemar p-value and its Holm adjustment over all comparisons of the table. Columns with zero items
    have nothing to compare and are skipped."""
    rows = []
    by_cell: dict[tuple[str, str], list[Outcome]] = {}
    for cell in outcomes:
        if cell.ids.size:
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
                             "p_mcnemar": intervals.mcnemar_exact(only_a, only_b)})
    schema = {"view": pl.String, "column": pl.String, "model_a": pl.String, "model_b": pl.String, "n": pl.Int64,
              "only_a": pl.Int64, "only_b": pl.Int64, "difference": pl.Float64, "p_mcnemar": pl.Float64}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.with_columns(pl.Series("p_holm", intervals.holm(frame["p_mcnemar"].to_list()), dtype=pl.Float64))


def not_scored_notes(datasets: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """One footnote per dataset with items left out of scoring: how many of how many, grouped by reason; when
    none is left to score, that its columns show `–`.

    `datasets` holds (dataset label, provenance of its direct candidate table).
    """
    notes = []
    for label, meta in datasets:
        dropped, items = meta.get("dropped", []), meta["items"]
        if items == 0:
            notes.append(f"{label}: no items selected, so its columns show –.")
        elif len(dropped) == items:
            notes.append(f"{label}: all {items} items not scored ({candidates.dropped_detail(dropped)}), so its columns show –.")
        elif dropped:
            notes.append(f"{label}: {len(dropped)} of {items} items not scored ({candidates.dropped_detail(dropped)}).")
    return notes


def duplicate_notes(datasets: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """One footnote per dataset whose published distractors repeat another of their item, as validation flagged them
    (a flagged set keeps them, validation.apply_to_published removes them): like a copy of the target, which leaves
    its item out, such an item is not what it seems, but it is scored, against fewer than four different distractors.

    `datasets` holds (dataset label, provenance of its direct candidate table: the validated sets' `validation`)."""
    notes = []
    for label, meta in datasets:
        counts = {origin.get("lang"): origin["validation"].get("reasons", {}).get(DUPLICATE, 0)
                  for origin in meta.get("distractors", []) if (origin.get("validation") or {}).get("action") == "flagged"}
        counts = {lang: n for lang, n in counts.items() if n}
        if counts:
            detail = ", ".join(f"{n} {lang}" for lang, n in counts.items())
            notes.append(f"{label}: {sum(counts.values())} published distractor(s) repeat another of their item ({detail}; "
                         "flagged in the validation table), scored as published: their items have fewer than four "
                         "different distractors.")
    return notes


def failed_generation(datasets: list[tuple[str, dict[str, Any]]]) -> list[tuple[str | None, str | None]]:
    """Dataset and language of every LLM generation job that left items short of four valid distractors (from the
    provenance of each direct candidate table)."""
    return [(origin.get("dataset"), origin.get("lang")) for _, meta in datasets for origin in meta.get("distractors", [])
            if origin.get("failed") and (origin.get("settings") or {}).get("endpoint")]


def nothing_to_score(datasets: list[tuple[str, dict[str, Any]]]) -> str:
    """Why no item of any dataset could be scored, per dataset and language (from the provenance of each direct
    candidate table: the failures its distractor sets recorded), and what to try: the warning of a run with nothing
    to score, whose Table 2 shows `–` in every column."""
    parts = []
    for label, meta in datasets:
        if meta["items"] == 0:
            parts.append(f"{label}: no items selected")
            continue
        per_language = []
        for origin in meta.get("distractors", []):
            failed = Counter(record["reason"] for record in origin.get("failed", []))
            if failed:
                detail = "; ".join(f"{n} × {reason}" for reason, n in failed.most_common())
                per_language.append(f"{origin.get('lang')}: {detail}")
        reasons = ", ".join(per_language) or candidates.dropped_detail(meta.get("dropped", []))
        parts.append(f"{label}: none of {meta['items']} items has four valid distractors in every language ({reasons})")
    asked = failed_generation(datasets)
    return ("no item can be scored, so no model was run and Table 2 shows – in every column. " + ". ".join(parts) + "."
            + more_items_hint(asked) + ask_again_hint(asked))


def nothing_scored_notes(datasets: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The footnote of a Table 2 with nothing scored, where an LLM left the items short: what to try (none when no
    LLM was asked: the per-dataset notes say why its items were left out)."""
    asked = failed_generation(datasets)
    return [f"No item could be scored.{more_items_hint(asked)}{ask_again_hint(asked)}"] if asked else []


def more_items_hint(asked: list[tuple[str | None, str | None]]) -> str:
    """What a user can change when an LLM left items with too few valid distractors (`asked`: the generation jobs with
    failures): more asks, more candidates per ask, more items, or a stronger generator."""
    if not asked:
        return ""
    return (" To get items scored: raise generation.max_attempts (an item short of four valid distractors is asked "
            "again) or generation.candidates (more sentences per answer to choose from), select more items "
            "(select.limit), or have a stronger LLM write the distractors (generation.base_url, docs/guides/llm.md): "
            "the local 1.5B model writes usable distractors in a few languages only (docs/guides/language-pair.md).")


def ask_again_hint(asked: list[tuple[str | None, str | None]]) -> str:
    """How to ask the LLM again for items that failed on its answers (`asked`: dataset and language of each generation
    job with failures): those answers are stored and the generation's results kept, so a plain rerun asks nothing."""
    if not asked:
        return ""
    forget = "; ".join(f"clsd-forget --dataset {dataset} --lang {lang}" for dataset, lang in asked)
    return (" These failures come from answers stored in the response store (generation.store), and the generation "
            "results are kept: a rerun reads them again and sends nothing. To ask again once the endpoint answers: set "
            f"generation.reask_unusable: true and rerun, or forget the unusable answers (`{forget}`, with --store when "
            "generation.store is not the default) and rerun with `--forcerun generate_distractors`.")


def average_note(counts: dict[str, int]) -> list[str]:
    """A footnote when some columns have no items: the Average is over the others (empty when all have items)."""
    empty = [column for column, n in counts.items() if n == 0]
    if not empty:
        return []
    scored = [column for column, n in counts.items() if n > 0]
    if not scored:
        return ["Average: no column has items scored."]
    return [f"Average: over the columns with items scored ({', '.join(scored)}); {', '.join(empty)} left out (no items)."]


def bounds_text(value: float, low: float, high: float) -> str:
    """`P@1 [low, high]` with one decimal, bounds rounded outwards (an interval is never shown narrower than it
    is) and written `0` / `100` when they are exactly there: `100.0 [71.5, 100]`."""

    def bound(x: float, outwards: Callable[[float], float]) -> str:
        if x in (0.0, 100.0):
            return f"{x:.0f}"
        return f"{outwards(round(x * 10, 9)) / 10:.1f}"

    return f"{value:.1f} [{bound(low, math.floor)}, {bound(high, math.ceil)}]"


def write_table2(
    table: pl.DataFrame,
    counts: dict[str, int],
    interval_table: pl.DataFrame,
    notes: list[str],
    show_ci: bool,
    md: str | Path,
    tex: str | Path,
    csv: str | Path,
) -> None:
    """Write Table 2 in all three formats: P@1 in percent (two decimals in Markdown/LaTeX, full precision in
    CSV, with `<column> ci_low`/`ci_high` columns), a last row `n` with the items scored per column, and the
    footnotes under the table. `show_ci` writes each cell as `P@1 [low, high]` (one decimal: the 95% interval,
    not symmetric near 0 and 100). A column with zero items shows `–` (and empty cells in the CSV)."""
    value_columns = [*counts, "Average"]
    bounds_of = {(r["view"], r["model"], r["column"]): (r["ci_low"], r["ci_high"]) for r in interval_table.iter_rows(named=True)}

    def shown(view: str, model: str, column: str, value: float | None) -> str | None:
        if value is None:
            return None
        return bounds_text(value, *bounds_of[(view, model, column)]) if show_ci else f"{value:.2f}"

    rows = [
        {"View": r["view"], "Model": r["model"], **{c: shown(r["view"], r["model"], c, r[c]) for c in value_columns}}
        for r in table.iter_rows(named=True)
    ]
    rows.append({"View": "n", "Model": "items scored", **{c: str(n) for c, n in counts.items()}, "Average": None})
    display = pl.DataFrame(rows, schema={"View": pl.String, "Model": pl.String, **{c: pl.String for c in value_columns}}, orient="row")
    render.write(display, md, tex, csv=None, right=set(value_columns), notes=notes)

    bounds = interval_table.pivot(on="column", index=["view", "model"], values=["ci_low", "ci_high"])
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
