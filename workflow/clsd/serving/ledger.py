"""What a job paid for, counted once for both kinds of paid answer (LLM responses, endpoint vectors).

`PaidStore` is the base of the response store (clsd.generate.store) and the vector store (clsd.embed.vectors): a
SQLite file opened the one way (clsd.serving.sqlite), one lock around its connection, and the `runs` ledger: one row
per job run, what it paid added with each answer in that answer's transaction (the subclass's `put`), closed with
its status, and summed over every run of the same asker so that a report counts resumes, even of killed runs.
`Counts` is the job's own thread-safe tally of what it sent (the report's figures).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from clsd.serving.sqlite import open_database


def now() -> str:
    """The time a row is written (UTC, ISO 8601)."""
    return datetime.now(timezone.utc).isoformat()


class PaidStore:
    """A durable, thread-safe store of paid answers with its runs ledger. The subclass's SCHEMA has a `runs` table
    with `id`, the ASKER columns, `started_at`, `finished_at`, `status`, the PAID columns, `http_requests` and
    `retries`."""

    #: The `runs` columns that say who ran, in `_open_run`'s order: runs with equal ones are summed together.
    ASKER: ClassVar[tuple[str, ...]] = ()
    #: The `runs` columns of what a run paid, each with the name its sum has in `run_totals`.
    PAID: ClassVar[dict[str, str]] = {}

    def __init__(self, path: str | Path, schema: str) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._db = open_database(self.path, schema)

    def _open_run(self, *asker: Any) -> int:
        """Open the row of one job run of `asker` (the ASKER values); answers put with its id are counted there."""
        columns = [*self.ASKER, "started_at"]
        with self._lock:
            return self._db.execute(f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                                    (*asker, now())).lastrowid

    def finish_run(self, run: int, status: str, http_requests: int, retries: int) -> None:
        """Close a run (`done`, `interrupted` or `failed: <error>`); a run killed outright keeps no status."""
        with self._lock:
            self._db.execute("UPDATE runs SET finished_at = ?, status = ?, http_requests = ?, retries = ? WHERE id = ?",
                             (now(), status, http_requests, retries, run))

    def run_totals(self, run: int) -> dict[str, int]:
        """What every run of the same asker paid for, this one included; runs that did not finish (killed,
        interrupted, failed) are counted apart."""
        sums = "".join(f"SUM({column}), " for column in self.PAID)
        same = " AND ".join(f"r.{column} IS t.{column}" for column in self.ASKER)
        with self._lock:
            row = self._db.execute(
                f"SELECT COUNT(*), SUM(status IS NULL OR status != 'done'), {sums}SUM(COALESCE(http_requests, 0)) FROM runs r "
                f"WHERE EXISTS (SELECT 1 FROM runs t WHERE t.id = ? AND {same})", (run,)).fetchone()
        names = ("runs", "unfinished_runs", *self.PAID.values(), "http_requests")
        return {name: int(value or 0) for name, value in zip(names, row)}

    def close(self) -> None:
        with self._lock:
            self._db.close()


@dataclass
class Counts:
    """Figures a job's threads add to (subclasses declare them, each with a default of zero)."""

    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: float) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def record(self) -> dict[str, Any]:
        """The figures by name."""
        return {item.name: getattr(self, item.name) for item in fields(self) if item.name != "lock"}
