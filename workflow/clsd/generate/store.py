"""The LLM response store: one SQLite row per request, written before the response is parsed.

Paid responses must never be lost or bought twice: rows are keyed by a hash of endpoint + model + full
messages + sampling parameters + attempt number, the database runs in WAL mode and every response is committed in
its own transaction, so a `kill -9` at any point leaves a consistent file and a rerun asks only for what
was in flight. The API key is never part of a row or a key.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    endpoint TEXT,
    model TEXT NOT NULL,
    messages TEXT NOT NULL,
    params TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    latency_s REAL,
    created_at TEXT NOT NULL
)
"""


COLUMNS = ("key", "endpoint", "model", "messages", "params", "attempt", "text", "finish_reason", "prompt_tokens",
           "completion_tokens", "latency_s", "created_at")


def request_key(endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any], attempt: int) -> str:
    """Stable key of one request: sha256 of its canonical JSON.

    `endpoint` says who answers: the base URL of a remote endpoint, or `gguf:<sha256>` of the weights a local
    server loads. The same model name behind another endpoint or another GGUF file is another request.
    """
    payload = {"endpoint": endpoint, "model": model, "messages": messages, "params": params, "attempt": attempt}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Response:
    """One stored chat completion."""

    key: str
    endpoint: str
    model: str
    messages: list[dict[str, str]]
    params: dict[str, Any]
    attempt: int
    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    created_at: str = ""


class ResponseStore:
    """Thread-safe durable store of responses (SQLite, WAL, one transaction per response)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
        if "endpoint" not in columns:  # a store written before requests were keyed by endpoint
            self._db.execute("ALTER TABLE responses ADD COLUMN endpoint TEXT")

    def get(self, key: str) -> Response | None:
        with self._lock:
            row = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        record = dict(zip(COLUMNS, row))
        return Response(**record | {"messages": json.loads(record["messages"]), "params": json.loads(record["params"])})

    def unkeyed(self) -> int:
        """Rows stored before the endpoint was part of the key: never answered again (their endpoint is unknown)."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses WHERE endpoint IS NULL").fetchone()[0]

    def put(self, response: Response) -> None:
        """Commit one response (a second write of the same key is ignored: the first answer is kept)."""
        record = asdict(response) | {"created_at": response.created_at or datetime.now(timezone.utc).isoformat()}
        record["messages"] = json.dumps(response.messages, ensure_ascii=False)
        record["params"] = json.dumps(response.params, sort_keys=True)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                f"INSERT OR IGNORE INTO responses ({', '.join(COLUMNS)}) VALUES ({', '.join(':' + c for c in COLUMNS)})",
                record,
            )
            self._db.execute("COMMIT")

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
