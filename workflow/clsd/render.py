"""Paste-ready tables: any polars frame as GitHub Markdown, a booktabs LaTeX tabular, and CSV."""

from __future__ import annotations

from pathlib import Path

import polars as pl

TEX_ESCAPES = (("\\", r"\textbackslash{}"), ("_", r"\_"), ("&", r"\&"), ("%", r"\%"), ("#", r"\#"), ("$", r"\$"))


def cell(value: object, digits: int) -> str:
    """Floats with `digits` decimals, missing values as an en dash, everything else as text."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def cells(frame: pl.DataFrame, digits: int) -> list[list[str]]:
    return [[cell(v, digits) for v in row] for row in frame.iter_rows()]


def markdown(frame: pl.DataFrame, digits: int = 2) -> str:
    """GitHub Markdown table; numeric columns right-aligned."""
    align = ["---:" if frame.schema[c].is_numeric() else "---" for c in frame.columns]
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells(frame, digits)]
    return "\n".join(lines) + "\n"


def tex_escape(text: str) -> str:
    """Escape LaTeX specials; arrows become math arrows."""
    for char, escaped in TEX_ESCAPES:
        text = text.replace(char, escaped)
    return text.replace("→", r"$\rightarrow$")


def latex(frame: pl.DataFrame, digits: int = 2) -> str:
    """A booktabs tabular; a \\midrule separates blocks with a new value in the first column."""
    align = "".join("r" if frame.schema[c].is_numeric() else "l" for c in frame.columns)
    lines = [r"\begin{tabular}{" + align + "}", r"\toprule", " & ".join(tex_escape(c) for c in frame.columns) + r" \\", r"\midrule"]
    previous = None
    for row in cells(frame, digits):
        if previous is not None and row[0] != previous:
            lines.append(r"\midrule")
        previous = row[0]
        lines.append(" & ".join(tex_escape(c) for c in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def write(frame: pl.DataFrame, md: str | Path, tex: str | Path, csv: str | Path | None = None, digits: int = 2) -> None:
    """Write Markdown and LaTeX (rounded to `digits`) and, when asked, CSV at full precision."""
    Path(md).write_text(markdown(frame, digits), encoding="utf-8")
    Path(tex).write_text(latex(frame, digits), encoding="utf-8")
    if csv is not None:
        frame.write_csv(csv)
