"""Verdict files: the spreadsheet version of a sample (CSV with an empty verdict column) and the reader of what the
annotators send back, from the sheet or from the page's download. Every row carries the sample id; a file from
another sample, an unknown item, a verdict outside the allowed set or an item given twice stops the run naming
the file, row and field."""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl

from clsd.core.errors import InputError

DIFFERENT, SAME, NOT_SENTENCE, SKIP = "different", "same", "not_sentence", "skip"
#: The verdicts an annotator may give (empty: not annotated yet, like skip).
VERDICTS = (DIFFERENT, SAME, NOT_SENTENCE, SKIP)
#: Verdicts that make a distractor invalid: it keeps the meaning, or it is no sentence of its language.
INVALID = (SAME, NOT_SENTENCE)
#: The columns every verdict file needs (a sheet has source, target and distractor too; a comment is optional).
REQUIRED = ("sample_id", "item", "verdict")
SHEET_COLUMNS = ("sample_id", "item", "source", "target", "distractor", "verdict", "comment")


def write_sheet(sample: pl.DataFrame, sample_id: str, path: str | Path) -> None:
    """The sample as CSV for spreadsheet annotators: the sample id on every row, the texts, and empty verdict and
    comment columns (allowed verdicts: different, same, not_sentence, skip)."""
    sheet = sample.select(pl.lit(sample_id).alias("sample_id"), "item", "source", "target", "distractor",
                          pl.lit("").alias("verdict"), pl.lit("").alias("comment"))
    sheet.write_csv(path)


def read_verdicts(path: str | Path, sample_id: str, items: list[str]) -> pl.DataFrame:
    """One annotator's file as (item, verdict, comment); blank verdicts become `skip`. Raises InputError naming the
    file, row (data rows from 1, the header being line 1) and field of the first bad cell."""
    known = set(items)
    rows, seen = [], {}
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in REQUIRED if column not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)} (a verdict file has {', '.join(REQUIRED)}, comment)",
                             path=path, line=1)
        for row_number, row in enumerate(reader, start=1):
            line = reader.line_num

            def fail(message: str, field: str) -> InputError:
                return InputError(message, path=path, row=row_number, line=line, field=field)

            if (row["sample_id"] or "").strip() != sample_id:
                raise fail(f"sample id {row['sample_id']!r} is not this sample's {sample_id!r}: a sheet of another "
                           "sample (other seed, size, strata or texts); annotate the current page or sheet", "sample_id")
            item = (row["item"] or "").strip()
            if item not in known:
                raise fail(f"unknown item {item!r}: not in sample {sample_id}", "item")
            if item in seen:
                raise fail(f"duplicate row: item {item!r} is already on row {seen[item]}", "item")
            seen[item] = row_number
            verdict = (row["verdict"] or "").strip().lower() or SKIP
            if verdict not in VERDICTS:
                raise fail(f"verdict {row['verdict']!r} is not one of {', '.join(VERDICTS)} (or empty)", "verdict")
            rows.append({"item": item, "verdict": verdict, "comment": (row.get("comment") or "").strip()})
    return pl.DataFrame(rows, schema={"item": pl.String, "verdict": pl.String, "comment": pl.String})
