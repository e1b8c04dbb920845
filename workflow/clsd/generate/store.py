"""The LLM response store: one SQLite row per request, written before the response is parsed.

Paid responses must never be lost or bought twice: rows are keyed by a hash of endpoint + model + full
messages + sampling parameters + attempt number, the database runs in WAL mode and every response is committed in
its own transaction, so a `kill -9` at any point leaves a consistent file and a rerun asks only for what
was in flight. The API key is never part of a row or a key.

Each row also records whether its answer was usable (1/0, NULL until a reader has parsed it: rows stored
before this column existed are decided on their next read) and who asked for it first (dataset, lang), so
that an unusable answer — a refusal, no numbered lines, every line in another language — is not replayed
forever: `supersede` moves rows to the `superseded` table (kept for cost accounting and audit), which frees
their request key to be asked again (`clsd.generate.forget`, or `generation.reask_unusable`). The `runs`
table holds one row per generation job run with the responses and tokens it paid for, committed with each
response, so the generation report can sum what was paid across resumes, even of runs that were killed.

The `batches` table records every batch a job submitted to a Batch API (`generation.batch`, clsd.generate.batch)
with the requests it holds, committed right after the batch was created and before it is polled: a job killed
while it waits finds its unfinished batch there and polls the same batch again instead of paying twice.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clsd.serving.ledger import PaidStore, now

#: The columns of a stored response, shared by `responses` and `superseded` (forgotten or replaced answers).
RESPONSE_COLUMNS = """
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
    created_at TEXT NOT NULL,
    usable INTEGER,
    dataset TEXT,
    lang TEXT"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
{RESPONSE_COLUMNS}
);
CREATE TABLE IF NOT EXISTS superseded (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
{RESPONSE_COLUMNS},
    superseded_at TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT,
    lang TEXT,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT,
    new_responses INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    http_requests INTEGER,
    retries INTEGER
);
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    dataset TEXT,
    lang TEXT,
    input_file_id TEXT NOT NULL,
    requests TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0
);
"""

COLUMNS = ("key", "endpoint", "model", "messages", "params", "attempt", "text", "finish_reason", "prompt_tokens",
           "completion_tokens", "latency_s", "created_at", "usable", "dataset", "lang")
ADDED = {"endpoint": "TEXT", "usable": "INTEGER", "dataset": "TEXT", "lang": "TEXT"}  # columns older stores lack


def request_key(endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any], attempt: int) -> str:
    """Stable key of one request: sha256 of its canonical JSON.

    `endpoint` says who answers: the base URL of a remote endpoint, or `gguf:<sha256>` of the weights a local
    server loads. The same model name behind another endpoint or another GGUF file is another request.
    """
    payload = {"endpoint": endpoint, "model": model, "messages": messages, "params": params, "attempt": attempt}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Response:
    """One stored chat completion; `usable` is None until a reader parsed it, (dataset, lang) name its first asker."""

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
    usable: bool | None = None
    dataset: str | None = None
    lang: str | None = None


@dataclass(frozen=True)
class StoredBatch:
    """One submitted batch: its id, who answers it, who asked, its input file and its requests (request key →
    [messages, params, attempt]), and its last seen status."""

    id: str
    endpoint: str
    model: str
    dataset: str | None
    lang: str | None
    input_file_id: str
    requests: dict[str, list[Any]]
    status: str


@dataclass(frozen=True)
class Selection:
    """Which rows to act on: every given field must match (None: any)."""

    dataset: str | None = None
    lang: str | None = None
    model: str | None = None
    endpoint: str | None = None

    def where(self) -> tuple[str, list[str]]:
        """SQL conditions (joined by AND, or TRUE) and their parameters."""
        fields = {name: value for name, value in asdict(self).items() if value is not None}
        return " AND ".join([f"{name} = ?" for name in fields] or ["1"]), list(fields.values())


def _record(row: tuple) -> Response:
    record = dict(zip(COLUMNS, row))
    usable = None if record["usable"] is None else bool(record["usable"])
    return Response(**record | {"messages": json.loads(record["messages"]), "params": json.loads(record["params"]), "usable": usable})


class ResponseStore(PaidStore):
    """Thread-safe durable store of responses (SQLite, WAL, one transaction per response)."""

    ASKER = ("dataset", "lang", "endpoint", "model")
    PAID = {"new_responses": "new_responses", "prompt_tokens": "new_prompt_tokens", "completion_tokens": "new_completion_tokens"}

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, SCHEMA)
        self._db.execute("BEGIN IMMEDIATE")  # one migration at a time when several jobs open an older store
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
        for column, kind in ADDED.items():  # a store written before these columns existed: migrated in place
            if column not in columns:
                self._db.execute(f"ALTER TABLE responses ADD COLUMN {column} {kind}")
        self._db.execute("COMMIT")

    def get(self, key: str) -> Response | None:
        with self._lock:
            row = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else _record(row)

    def answers(self, endpoint: str, model: str) -> list[tuple[list[dict[str, str]], str]]:
        """(messages, answer) of every stored response of `endpoint` and `model` (a judge reads its earlier verdicts)."""
        with self._lock:
            rows = self._db.execute("SELECT messages, text FROM responses WHERE endpoint = ? AND model = ?",
                                    (endpoint, model)).fetchall()
        return [(json.loads(messages), text) for messages, text in rows]

    def unkeyed(self) -> int:
        """Rows stored before the endpoint was part of the key: never answered again (their endpoint is unknown)."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses WHERE endpoint IS NULL").fetchone()[0]

    def put(self, response: Response, run: int | None = None, *, replace: bool = False) -> None:
        """Commit one response and add it to `run`'s paid figures, in one transaction.

        A second write of the same key is ignored (the first answer is kept), unless `replace`: then the row
        already stored under the key is moved to `superseded` (reason `reask_unusable`) first.
        """
        record = asdict(response) | {"created_at": response.created_at or now()}
        record["messages"] = json.dumps(response.messages, ensure_ascii=False)
        record["params"] = json.dumps(response.params, sort_keys=True)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            if replace:
                self._move("key = ?", [response.key], "reask_unusable")
            inserted = self._db.execute(
                f"INSERT OR IGNORE INTO responses ({', '.join(COLUMNS)}) VALUES ({', '.join(':' + c for c in COLUMNS)})",
                record,
            ).rowcount
            if run is not None and inserted:
                self._db.execute("UPDATE runs SET new_responses = new_responses + 1, prompt_tokens = prompt_tokens + ?, "
                                 "completion_tokens = completion_tokens + ? WHERE id = ?",
                                 (response.prompt_tokens or 0, response.completion_tokens or 0, run))
            self._db.execute("COMMIT")

    def classify(self, key: str, usable: bool, dataset: str | None, lang: str | None) -> None:
        """Record whether the answer under `key` was usable, and its first asker when none is recorded yet."""
        with self._lock:
            self._db.execute("UPDATE responses SET usable = ?, dataset = COALESCE(dataset, ?), lang = COALESCE(lang, ?) WHERE key = ?",
                             (int(usable), dataset, lang, key))

    def unusable(self, selection: Selection) -> list[Response]:
        """Rows whose answer was found unusable, among the selected ones."""
        where, params = selection.where()
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM responses WHERE usable = 0 AND {where} ORDER BY created_at",
                                    params).fetchall()
        return [_record(row) for row in rows]

    def undecided(self, selection: Selection) -> int:
        """Rows not yet parsed since usability was recorded (their dataset is unknown too, so `selection.dataset`
        and `selection.lang` are not applied)."""
        where, params = Selection(model=selection.model, endpoint=selection.endpoint).where()
        with self._lock:
            return self._db.execute(f"SELECT COUNT(*) FROM responses WHERE usable IS NULL AND endpoint IS NOT NULL AND {where}",
                                    params).fetchone()[0]

    def supersede(self, keys: list[str], reason: str) -> int:
        """Move the rows of `keys` to `superseded` in one transaction (their request key is free again); returns
        how many moved. Nothing is deleted: superseded rows stay paid-for and auditable."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            moved = sum(self._move("key = ?", [key], reason) for key in keys)
            self._db.execute("COMMIT")
        return moved

    def _move(self, where: str, params: list[Any], reason: str) -> int:
        """Copy matching rows to `superseded`, then delete them (inside the caller's transaction and lock)."""
        self._db.execute(f"INSERT INTO superseded ({', '.join(COLUMNS)}, superseded_at, reason) "
                         f"SELECT {', '.join(COLUMNS)}, ?, ? FROM responses WHERE {where}", [now(), reason, *params])
        return self._db.execute(f"DELETE FROM responses WHERE {where}", params).rowcount

    def superseded(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM superseded").fetchone()[0]

    def start_run(self, dataset: str | None, lang: str | None, endpoint: str, model: str) -> int:
        """Open the row of one generation job run; responses put with its id are counted there as they arrive."""
        return self._open_run(dataset, lang, endpoint, model)

    def add_batch(self, batch: StoredBatch) -> None:
        """Record a batch just created, with its requests, before anything waits for it."""
        with self._lock:
            self._db.execute("INSERT INTO batches (id, endpoint, model, dataset, lang, input_file_id, requests, status, created_at, "
                             "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (batch.id, batch.endpoint, batch.model, batch.dataset, batch.lang, batch.input_file_id,
                              json.dumps(batch.requests, ensure_ascii=False), batch.status, now(), now()))

    def update_batch(self, batch_id: str, status: str, finished: bool = False) -> None:
        """The batch's last seen status; `finished` once its output is stored (it is never resumed again)."""
        with self._lock:
            self._db.execute("UPDATE batches SET status = ?, updated_at = ?, finished = ? WHERE id = ?",
                             (status, now(), int(finished), batch_id))

    def open_batches(self, endpoint: str, model: str, dataset: str | None, lang: str | None) -> list[StoredBatch]:
        """The batches of this endpoint, model, dataset and language whose output is not stored yet, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT id, endpoint, model, dataset, lang, input_file_id, requests, status FROM batches "
                                    "WHERE finished = 0 AND endpoint = ? AND model = ? AND dataset IS ? AND lang IS ? "
                                    "ORDER BY created_at", (endpoint, model, dataset, lang)).fetchall()
        return [StoredBatch(*row[:6], json.loads(row[6]), row[7]) for row in rows]

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def unusable_stamp(path: Path, dataset: str, lang: str) -> str:
    """How many answers of `dataset` and `lang` the store at `path` holds as unusable, and when the newest was stored
    ("" without any): read-only, for the generate rule's param under `reask_unusable`, so that a job whose answers
    left items unscored is run again, and asks again, on the next run rather than being up to date."""
    if not path.exists():
        return ""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            count, newest = db.execute("SELECT COUNT(*), MAX(created_at) FROM responses WHERE usable = 0 AND dataset = ? "
                                       "AND lang = ?", (dataset, lang)).fetchone()
    except sqlite3.OperationalError:  # a store from before usability was recorded: its next reader decides
        return ""
    return f"{count} unusable, the newest stored {newest}" if count else ""
