"""Requests sent through a Batch API (`generation.batch`): OpenAI's, at half the price, answered within 24 h.

A batch is one uploaded JSONL file of requests (`custom_id` is the request key, so every output line names the
stored request it answers), created with `completion_window: 24h` and polled every `generation.batch_poll_s`
until it is completed, failed, expired or cancelled. Every output line is written to the response store as it is
read, as the same Response rows a synchronous request writes, so the store's guarantees hold: nothing paid is
lost, a rerun sends nothing it has an answer for. An endpoint without the Files and Batch API (a vLLM or llama.cpp
server, a proxy) rejects the upload: the error names generation.batch and what the endpoint answered.

Resume: a batch is recorded in the store (its id, input file and requests) as soon as it is created, before it is
polled. A job killed while it waits finds this job's unfinished batches there and polls them again: the same
batch id, nothing uploaded or created twice. The one window left is a kill between the provider's answer to the
creation and that commit: the batch then runs unknown to the store, and a rerun creates another.

Faults: lines that failed (the error file, or an output line whose status is not 200) and the lines an expired or
failed batch did not answer are sent again in a new batch, at most `generation.retries` times; what an expired
batch answered is stored first. A cancelled batch (this job never cancels one: someone did, on the provider's
dashboard or API) stops the job with an error once its answered lines are stored; a rerun sends the rest in a new
batch.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable

from clsd.serving.client import ChatClient, Completion, EndpointError, Interrupted, RequestRejected
from clsd.generate.store import ResponseStore, StoredBatch

log = logging.getLogger(__name__)

URL = "/v1/chat/completions"
WINDOW = "24h"
#: Statuses after which a batch changes no more.
TERMINAL = ("completed", "failed", "expired", "cancelled")


class BatchCancelled(EndpointError):
    """Someone cancelled a batch of this job: its answered lines are stored, the job stops."""


@dataclass(frozen=True)
class Request:
    """One request a batch sends: its store key, messages, sampling parameters and attempt number."""

    key: str
    messages: list[dict[str, str]]
    params: dict[str, Any]
    attempt: int


def request_line(request: Request, model: str) -> dict[str, Any]:
    """The request as one line of a batch input file (OpenAI's format, which vLLM's run_batch reads too)."""
    return {"custom_id": request.key, "method": "POST", "url": URL,
            "body": {"model": model, "messages": request.messages, **request.params}}


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")


def read_line(line: dict[str, Any]) -> Completion | str:
    """The completion of one batch output line, or why it has none (its error, a status other than 200, no choices)."""
    response, error = line.get("response"), line.get("error")
    if error:
        return f"{error.get('code', 'error')}: {error.get('message', '')}" if isinstance(error, dict) else str(error)
    if not isinstance(response, dict):
        return "no response"
    if response.get("status_code") != 200:
        body = response.get("body")
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message", "") if isinstance(error, dict) else ""
        return f"HTTP {response.get('status_code')}: {message}".rstrip(": ")
    body = response["body"]
    if not body.get("choices"):
        return "no choices in the response"
    choice, usage = body["choices"][0], body.get("usage") or {}
    return Completion(text=choice["message"].get("content") or "", finish_reason=choice.get("finish_reason"),
                      prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"), latency_s=0.0)


class Batches:
    """Sends requests as batches of one job (endpoint, model, dataset, language) and stores every answer.

    `keep(request, completion)` stores one answer (the generator's own storing, counted as paid); `connect()`
    gives the job's client, connected on first need. `stopping` is set when the job is interrupted: waiting stops
    then, and the batch stays recorded for the next run to resume.
    """

    def __init__(self, connect: Callable[[], ChatClient], store: ResponseStore, *, endpoint: str, model: str,
                 dataset: str | None, lang: str | None, poll_s: float, retries: int,
                 keep: Callable[[Request, Completion], None], stopping: threading.Event) -> None:
        self._connect = connect
        self.store = store
        self.endpoint, self.model, self.dataset, self.lang = endpoint, model, dataset, lang
        self.poll_s = poll_s
        self.retries = retries
        self.keep = keep
        self.stopping = stopping
        self.answered: set[str] = set()  # keys whose answer a batch returned during this run
        self.submitted = 0
        self.resumed = 0
        self.failed_lines = 0

    def resume(self) -> None:
        """Wait for this job's batches recorded unfinished (a killed run's) and store their answers; a failed line
        is left to the next `send`."""
        for stored in self.store.open_batches(self.endpoint, self.model, self.dataset, self.lang):
            log.info("resuming batch %s (%d requests, last seen %s): nothing is uploaded again", stored.id,
                     len(stored.requests), stored.status)
            self.resumed += 1
            self._finish(stored)

    def send(self, requests: dict[str, Request]) -> None:
        """Answer every request through batches, each answer stored: failed or unanswered lines go in a new batch,
        at most `retries` times; then an EndpointError names what is still unanswered and why."""
        pending = {key: request for key, request in requests.items() if key not in self.answered}
        errors: dict[str, str] = {}
        for round_ in range(self.retries + 1):
            if not pending:
                return
            if round_:
                log.warning("sending %d unanswered requests again in a new batch (%d of %d retries)", len(pending), round_,
                            self.retries)
            errors = self._finish(self._submit(pending))
            pending = {key: request for key, request in pending.items() if key not in self.answered}
        if pending:
            reasons = sorted({errors.get(key, "no answer") for key in pending})
            raise EndpointError(f"{self.client.url}: {len(pending)} batch requests unanswered after {self.retries + 1} batches "
                                f"(generation.retries: {self.retries}): {'; '.join(reasons[:3])}")

    @property
    def client(self) -> ChatClient:
        return self._connect()

    def _submit(self, requests: dict[str, Request]) -> StoredBatch:
        """Upload the requests, create their batch and record it in the store before anything waits for it."""
        client = self.client
        data = jsonl([request_line(request, self.model) for request in requests.values()])
        try:
            uploaded = client.api(client.client.files.create, file=("requests.jsonl", data, "application/jsonl"), purpose="batch")
        except RequestRejected as exc:
            raise RequestRejected(f"{client.url}: generation.batch: true needs OpenAI's Files and Batch API, and the endpoint "
                                  f"answered the upload of the requests (files.create) with {exc.answer}; set "
                                  "generation.batch: false to ask it request by request (a vLLM server: write the requests "
                                  "with rule generation_requests, run them with vLLM's run_batch and read its output with "
                                  "generation.batch_output)", exc.answer) from None
        batch = client.api(client.client.batches.create, input_file_id=uploaded.id, endpoint=URL, completion_window=WINDOW,
                           metadata={"dataset": str(self.dataset), "lang": str(self.lang)})
        stored = StoredBatch(batch.id, self.endpoint, self.model, self.dataset, self.lang, uploaded.id,
                             {key: [r.messages, r.params, r.attempt] for key, r in requests.items()}, batch.status)
        self.store.add_batch(stored)
        self.submitted += 1
        log.info("batch %s created: %d requests (input file %s)", batch.id, len(requests), uploaded.id)
        return stored

    def _wait(self, batch_id: str) -> Any:
        """The batch once it reached a final status, polled every `poll_s` (its progress logged)."""
        client = self.client
        while True:
            batch = client.api(client.client.batches.retrieve, batch_id)
            counts = batch.request_counts
            log.info("batch %s: %s, %s", batch_id, batch.status,
                     f"{counts.completed} of {counts.total} completed, {counts.failed} failed" if counts else "no counts yet")
            self.store.update_batch(batch_id, batch.status)
            if batch.status in TERMINAL:
                return batch
            if self.stopping.wait(self.poll_s):
                raise Interrupted(f"{client.url}: interrupted while waiting for batch {batch_id} (a rerun resumes it)")

    def _finish(self, stored: StoredBatch) -> dict[str, str]:
        """Wait for the batch, store every answered line and mark it finished; the lines that failed, with why.
        A cancelled batch raises BatchCancelled once its answers are stored."""
        batch = self._wait(stored.id)
        errors: dict[str, str] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            for number, line in enumerate(self._lines(file_id), 1):
                key = line.get("custom_id")
                if key not in stored.requests:
                    log.warning("batch %s, file %s line %d: custom_id %r is no request of this batch; ignored",
                                stored.id, file_id, number, key)
                    continue
                found = read_line(line)
                if isinstance(found, str):
                    errors[key] = found
                    continue
                messages, params, attempt = stored.requests[key]
                self.keep(Request(key, messages, params, attempt), found)
                self.answered.add(key)
        unanswered = len(stored.requests) - len(self.answered & stored.requests.keys())
        self.failed_lines += unanswered
        self.store.update_batch(stored.id, batch.status, finished=True)
        if batch.status != "completed" or unanswered:
            why = "; ".join(f"{e.code}: {e.message}" for e in (batch.errors.data or [])) if batch.errors else ""
            for key in stored.requests.keys() - self.answered - errors.keys():
                errors[key] = f"batch {batch.status}" + (f" ({why})" if why else ", no answer")
            log.warning("batch %s %s: %d of %d requests unanswered%s", stored.id, batch.status, unanswered,
                        len(stored.requests), f" ({why})" if why else "")
        if batch.status == "cancelled":
            raise BatchCancelled(f"{self.client.url}: batch {stored.id} was cancelled (not by this job, which never cancels "
                                 f"one); its {len(stored.requests) - unanswered} answered requests are stored, a rerun "
                                 f"sends the other {unanswered} in a new batch")
        return errors

    def _lines(self, file_id: str | None) -> list[dict[str, Any]]:
        """The JSON lines of an output or error file (none without one)."""
        if not file_id:
            return []
        client = self.client
        text = client.api(client.client.files.content, file_id).text
        return [json.loads(line) for line in text.splitlines() if line.strip()]
