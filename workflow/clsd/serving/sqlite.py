"""The one way to open a SQLite file that holds what was paid for: the LLM response store (clsd.generate.store) and
the vector store of embedding endpoints (clsd.embed.vectors).

WAL journal and `synchronous=FULL`, autocommit (a writer opens its own transaction, BEGIN IMMEDIATE, and commits
each paid answer in it), a 60 s busy timeout for other jobs writing at once, and one connection shared by a job's
threads (the caller holds a lock around it): a `kill -9` at any moment leaves a consistent file that holds every
answer committed before it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_database(path: Path, schema: str) -> sqlite3.Connection:
    """A connection to the SQLite file at `path` (its folder made when missing), its tables made by `schema` (a script
    of CREATE ... IF NOT EXISTS statements)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=60)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(schema)
    return db
