"""Errors raised on bad user input: they name the file, row and field so a user can fix it at once."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad input data or configuration, detected before any expensive work."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        row: int | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        where = []
        if path is not None:
            where.append(f"file {path}")
        if row is not None:
            where.append(f"row {row}" + (f" (line {line})" if line is not None and line != row else ""))
        elif line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        self.path, self.row, self.line, self.field = path, row, line, field
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
