"""Paste-ready tables: any polars frame as GitHub Markdown, a booktabs LaTeX tabular, and CSV."""

from __future__ import annotations

from pathlib import Path

import polars as pl

#: Text-mode replacements of LaTeX's ten special characters, of < and > (which the OT1 font encoding prints as
#: ¡ and ¿), and of the arrow of direction labels; applied in one pass, so no replacement is escaped again.
TEX_ESCAPES = str.maketrans({
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "^": r"\textasciicircum{}",
    "_": r"\_", "~": r"\textasciitilde{}", "%": r"\%", "<": r"\textless{}", ">": r"\textgreater{}", "→": r"$\rightarrow$",
})


def cell(value: object, digits: int) -> str:
    """Floats with `digits` decimals, missing values as an en dash, everything else as text."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def cells(frame: pl.DataFrame, digits: int) -> list[list[str]]:
    return [[cell(v, digits) for v in row] for row in frame.iter_rows()]


def right_aligned(frame: pl.DataFrame, right: set[str] | None) -> list[bool]:
    """Which columns to right-align: numeric ones, plus `right` (numbers already formatted as text)."""
    return [frame.schema[c].is_numeric() or c in (right or set()) for c in frame.columns]


def markdown(frame: pl.DataFrame, digits: int = 2, right: set[str] | None = None, notes: list[str] | None = None) -> str:
    """GitHub Markdown table; numeric columns right-aligned; `notes` as paragraphs under the table."""
    align = ["---:" if r else "---" for r in right_aligned(frame, right)]
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells(frame, digits)]
    for note in notes or []:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def tex_escape(text: str) -> str:
    """Text as LaTeX text mode prints it: the specials escaped, arrows as math arrows."""
    return text.translate(TEX_ESCAPES)


def latex(frame: pl.DataFrame, digits: int = 2, right: set[str] | None = None, notes: list[str] | None = None) -> str:
    """A booktabs tabular; a \\midrule separates blocks with a new value in the first column; `notes` as
    full-width rows under the last rule."""
    align = "".join("r" if r else "l" for r in right_aligned(frame, right))
    lines = [r"\begin{tabular}{" + align + "}", r"\toprule", " & ".join(tex_escape(c) for c in frame.columns) + r" \\", r"\midrule"]
    previous = None
    for row in cells(frame, digits):
        if previous is not None and row[0] != previous:
            lines.append(r"\midrule")
        previous = row[0]
        lines.append(" & ".join(tex_escape(c) for c in row) + r" \\")
    lines.append(r"\bottomrule")
    lines += [rf"\multicolumn{{{len(frame.columns)}}}{{l}}{{\footnotesize {tex_escape(note)}}} \\" for note in notes or []]
    lines.append(r"\end{tabular}")
    return "\n".join(lines) + "\n"


def write(
    frame: pl.DataFrame,
    md: str | Path,
    tex: str | Path,
    csv: str | Path | None = None,
    digits: int = 2,
    right: set[str] | None = None,
    notes: list[str] | None = None,
) -> None:
    """Write Markdown and LaTeX (rounded to `digits`, `notes` under the table) and, when asked, CSV at full precision."""
    Path(md).write_text(markdown(frame, digits, right, notes), encoding="utf-8")
    Path(tex).write_text(latex(frame, digits, right, notes), encoding="utf-8")
    if csv is not None:
        frame.write_csv(csv)
