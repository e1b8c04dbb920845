"""The fault server (tests/fault_server.py) with OpenAI's Batch API, written for the batch tests.

Serves `POST /v1/files` (multipart upload, purpose batch), `GET /v1/files/{id}/content`, `POST /v1/batches`,
`GET /v1/batches/{id}` and `POST /v1/batches/{id}/cancel`. A batch's lines are answered with the fault server's
distractor logic (its per-sentence plans apply: a line planned "500" fails with that status) once the batch has
been looked at `polls` times; until then it is `in_progress`. Each created batch takes the next fault of
`batch_faults` ("ok" once they run out):

- ok: completed, every line in the output file (failed lines in the error file);
- fail: failed (a validation error), no output;
- expire: expired with the first half of its lines answered;
- partial: completed, but only the first half of its lines in the output file (the rest nowhere);
- cancel: cancelled with the first half of its lines answered;
- hold: in_progress until `release()` (a job is killed while it polls).

`upload_faults` and `retrieve_faults` are HTTP statuses the next uploads and looks at a batch answer instead.

Everything is counted on the server: uploads, batches created, each request key uploaded, retrieves, cancels, and
chat completions asked one by one.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from fault_server import FaultServer


@dataclass
class Batch:
    id: str
    input_file_id: str
    fault: str
    status: str = "validating"
    polls: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=lambda: {"total": 0, "completed": 0, "failed": 0})


@dataclass
class BatchServer(FaultServer):
    batch_faults: list[str] = field(default_factory=list)
    polls: int = 2
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, Batch] = field(default_factory=dict)
    uploads: int = 0
    uploaded_keys: Counter = field(default_factory=Counter)
    retrieves: int = 0
    cancels: int = 0
    chats: int = 0  # requests sent one by one, outside any batch
    upload_faults: list[int] = field(default_factory=list)  # HTTP statuses the next uploads answer (then 200)
    retrieve_faults: list[int] = field(default_factory=list)  # the same for looks at a batch

    def __post_init__(self) -> None:
        super().__post_init__()
        self._released = threading.Event()

    def release(self) -> None:
        """Let held batches finish."""
        self._released.set()

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches/{id}", self._retrieve)
        app.router.add_post("/v1/batches/{id}/cancel", self._cancel)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        with self._lock:
            self.chats += 1
        return await super()._chat(request)

    def _file(self, data: bytes) -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return file_id

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        assert form["purpose"] == "batch"
        data = form["file"].file.read()
        assert data, "an empty upload"
        with self._lock:
            if self.upload_faults:
                return web.json_response({"error": {"message": "injected"}}, status=self.upload_faults.pop(0))
            self.uploads += 1
            self.uploaded_keys.update(json.loads(line)["custom_id"] for line in data.decode().splitlines())
            file_id = self._file(data)
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data), "created_at": 0,
                                  "filename": "requests.jsonl", "purpose": "batch", "status": "processed"})

    async def _content(self, request: web.Request) -> web.Response:
        return web.Response(body=self.files[request.match_info["id"]], content_type="application/octet-stream")

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        assert body["endpoint"] == "/v1/chat/completions" and body["completion_window"] == "24h"
        with self._lock:
            fault = self.batch_faults.pop(0) if self.batch_faults else "ok"
            batch = Batch(f"batch-{len(self.batches) + 1}", body["input_file_id"], fault)
            batch.counts["total"] = len(self.files[batch.input_file_id].splitlines())
            self.batches[batch.id] = batch
        return web.json_response(self._object(batch))

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches[request.match_info["id"]]
        with self._lock:
            if self.retrieve_faults:
                return web.json_response({"error": {"message": "injected"}}, status=self.retrieve_faults.pop(0))
            self.retrieves += 1
            batch.polls += 1
        if batch.status in ("validating", "in_progress"):
            batch.status = "in_progress"
            held = batch.fault == "hold" and not self._released.is_set()
            if batch.polls > self.polls and not held:
                await self._run(batch)
        return web.json_response(self._object(batch))

    async def _cancel(self, request: web.Request) -> web.Response:
        batch = self.batches[request.match_info["id"]]
        with self._lock:
            self.cancels += 1
        batch.status = "cancelled"
        return web.json_response(self._object(batch))

    async def _run(self, batch: Batch) -> None:
        """Answer the batch's lines as its fault says and set its final status."""
        lines = [json.loads(line) for line in self.files[batch.input_file_id].decode().splitlines()]
        if batch.fault == "fail":
            batch.status = "failed"
            return
        answered = lines[: len(lines) // 2] if batch.fault in ("expire", "partial", "cancel") else lines
        outputs, errors = [], []
        for number, line in enumerate(answered):
            answer = await self.complete(line["body"], "")
            result = {"id": f"batch_req_{number}", "custom_id": line["custom_id"],
                      "response": {"status_code": answer.status, "request_id": f"req_{number}", "body": json.loads(answer.body)},
                      "error": None}
            (outputs if answer.status == 200 else errors).append(result)
        batch.counts |= {"completed": len(outputs), "failed": len(errors)}
        if outputs:
            batch.output_file_id = self._file("".join(json.dumps(o) + "\n" for o in outputs).encode())
        if errors:
            batch.error_file_id = self._file("".join(json.dumps(e) + "\n" for e in errors).encode())
        batch.status = {"expire": "expired", "cancel": "cancelled"}.get(batch.fault, "completed")

    def _object(self, batch: Batch) -> dict[str, Any]:
        errors = ({"object": "list", "data": [{"code": "invalid_request", "message": "injected failure", "line": 1}]}
                  if batch.status == "failed" else None)
        return {"id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "completion_window": "24h",
                "created_at": 0, "input_file_id": batch.input_file_id, "status": batch.status, "errors": errors,
                "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
                "request_counts": batch.counts}
