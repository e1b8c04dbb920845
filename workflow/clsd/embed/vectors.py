"""The vector store: every vector an embedding endpoint sent, kept outside `results/` so that it is paid for once.

A vector is keyed by what determines it: the endpoint (its base URL), the model name, the dimensions asked for and
the exact text sent (prefix included, after any truncation). Each answer is committed in one transaction with the
request that bought it (`requests`: inputs, characters, the input tokens the endpoint counted, latency) as it
arrives, so a rerun, `rm -r results`, a killed job, another dataset or another view holding the same text finds it
and sends nothing for it. The `runs` table holds one row per embedding job run, what it paid added with each answer
(the report sums every run of a model, dataset and view, resumes included). The API key is never part of a row.

Vectors are stored as float32 bytes (little-endian), what the embedding tables hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from clsd.serving.ledger import PaidStore, now

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    dataset TEXT,
    view TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT,
    requests INTEGER NOT NULL DEFAULT 0,
    texts INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    http_requests INTEGER,
    retries INTEGER
);
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run INTEGER,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    dimensions INTEGER,
    texts INTEGER NOT NULL,
    chars INTEGER NOT NULL,
    prompt_tokens INTEGER,
    latency_s REAL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    key TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    dimensions INTEGER,
    text TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    request INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors_by_model ON vectors (endpoint, model, dimensions);
"""
#: Keys looked up per query (SQLite's limit on bound parameters is far above it).
CHUNK = 500


def vector_key(endpoint: str, model: str, dimensions: int | None, text: str) -> str:
    """Stable key of one vector: sha256 of the canonical JSON of who answers, the dimensions asked for and the text sent."""
    payload = {"endpoint": endpoint, "model": model, "dimensions": dimensions, "text": text}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


class VectorStore(PaidStore):
    """Thread-safe durable store of endpoint vectors (SQLite, WAL, one transaction per answer)."""

    ASKER = ("endpoint", "model", "dataset", "view")
    PAID = {"requests": "answers", "texts": "texts", "prompt_tokens": "prompt_tokens"}

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, SCHEMA)

    def vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors among `keys`, by key."""
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), CHUNK):
                chunk = unique[start:start + CHUNK]
                rows = self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
                found.update((key, np.frombuffer(blob, dtype="<f4")) for key, blob in rows)
        return found

    def dimension(self, endpoint: str, model: str, dimensions: int | None) -> int | None:
        """The length of the vectors already stored for `endpoint`, `model` and `dimensions` (None: none stored)."""
        with self._lock:
            row = self._db.execute("SELECT dim FROM vectors WHERE endpoint = ? AND model = ? AND dimensions IS ? LIMIT 1",
                                   (endpoint, model, dimensions)).fetchone()
        return None if row is None else row[0]

    def chars_per_token(self, endpoint: str, model: str) -> tuple[float | None, int]:
        """Characters per input token over the earlier requests of `endpoint` and `model` whose tokens the endpoint
        counted (None without any), and how many requests say so."""
        with self._lock:
            chars, tokens, requests = self._db.execute(
                "SELECT SUM(chars), SUM(prompt_tokens), COUNT(*) FROM requests WHERE endpoint = ? AND model = ? "
                "AND prompt_tokens > 0", (endpoint, model)).fetchone()
        return (chars / tokens if tokens else None), requests

    def put(self, run: int | None, endpoint: str, model: str, dimensions: int | None, keys: Sequence[str],
            texts: Sequence[str], vectors: np.ndarray, prompt_tokens: int | None, latency_s: float) -> None:
        """Commit one answer: the request that bought it, its vectors (a key stored already keeps its first vector) and
        what `run` paid, in one transaction."""
        created = now()
        vectors = np.ascontiguousarray(vectors, dtype="<f4")
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            request = self._db.execute(
                "INSERT INTO requests (run, endpoint, model, dimensions, texts, chars, prompt_tokens, latency_s, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run, endpoint, model, dimensions, len(texts), sum(len(text) for text in texts), prompt_tokens, latency_s,
                 created)).lastrowid
            self._db.executemany(
                "INSERT OR IGNORE INTO vectors (key, endpoint, model, dimensions, text, dim, vector, request, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(key, endpoint, model, dimensions, text, vector.shape[0], vector.tobytes(), request, created)
                 for key, text, vector in zip(keys, texts, vectors)])
            if run is not None:
                self._db.execute("UPDATE runs SET requests = requests + 1, texts = texts + ?, prompt_tokens = prompt_tokens + ? "
                                 "WHERE id = ?", (len(texts), prompt_tokens or 0, run))
            self._db.execute("COMMIT")

    def start_run(self, endpoint: str, model: str, dataset: str | None, view: str | None) -> int:
        """Open the row of one embedding job run; answers put with its id are counted there as they arrive."""
        return self._open_run(endpoint, model, dataset, view)

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
