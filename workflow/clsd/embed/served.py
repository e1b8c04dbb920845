"""Embedding models served behind an OpenAI-compatible `POST /v1/embeddings`: OpenAI, Mistral, Jina, Voyage or Gemini
through their compatible endpoints, vLLM, Text Embeddings Inference, Infinity, Ollama, llama.cpp's `llama-server
--embeddings` (`source: endpoint`).

Every vector comes from the vector store (clsd.embed.vectors) when it holds it; only the others are sent, in
requests of at most `inputs_per_request` texts and `tokens_per_request` tokens, through the one OpenAI-compatible
client (clsd.serving.client: retries with backoff honouring Retry-After, requests and tokens per minute, the API key
from the environment and never written), and each answer is committed as it arrives. An answer is checked before
anything of it is stored: as many vectors as texts, each `index` once, vectors of one length (the `dimensions` asked
for, and the length this model's stored vectors have), no NaN, no vector of zeros; items sent back in another order
are put back in `index` order. A bad answer stops the job with an error naming the request and its first text.

The text sent is the configured prefix, then the text (an endpoint has no prompts of its own). A text longer than
`max_input_tokens` is an error naming it, unless `truncate` is set: then it is cut after its last whole token within
the limit (clsd.embed.token_counts) and the vector is the cut text's.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from clsd.core import stopping
from clsd.serving.client import ChatClient, Embedded, EndpointError, Interrupted
from clsd.core.errors import InputError
from clsd.embed.spec import ModelSpec
from clsd.embed.token_counts import TokenCounter
from clsd.embed.vectors import VectorStore, vector_key
from clsd.serving.ledger import Counts

log = logging.getLogger(__name__)
SIGNAL_POLL_S = 0.2  # the longest the main thread waits for workers before it looks for Ctrl-C
#: Loopback hosts: a server run on this machine (vLLM, TEI, llama-server) needs no API key.
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class BadAnswer(EndpointError):
    """An answer whose vectors cannot be attached to the texts sent (nothing of it is stored)."""


def sent_texts(model: ModelSpec, texts: Sequence[str], counter: TokenCounter) -> tuple[list[str], int]:
    """The exact text sent for each of `texts` (the prefix, then the text; cut to `max_input_tokens` when truncating)
    and how many were cut. A text over the limit without `truncate` is an error naming it, before anything is sent."""
    sent, cut = [], 0
    for text in texts:
        full = model.prefix + text
        if model.max_input_tokens is not None and counter.count(full) > model.max_input_tokens:
            if not model.truncate:
                raise InputError(f"config key models.{model.key}.endpoint.max_input_tokens: the text {text[:200]!r} is "
                                 f"{counter.count(full)} tokens ({counter.rule}), over the limit of {model.max_input_tokens}; "
                                 "set endpoint.truncate: true to embed its first tokens only")
            full, cut = counter.cut(full, model.max_input_tokens), cut + 1
        sent.append(full)
    return sent, cut


@dataclass(frozen=True)
class Request:
    """One request to send: its number in the job, the keys and texts of its inputs and their expected tokens."""

    number: int
    keys: list[str]
    texts: list[str]
    tokens: int


def plan(keys: Sequence[str], texts: Sequence[str], tokens: Sequence[int], per_request: int,
         token_budget: int | None) -> list[Request]:
    """`texts` in order, in requests of at most `per_request` inputs and `token_budget` tokens (a text over the budget
    alone goes in a request of its own)."""
    requests: list[Request] = []
    batch: list[int] = []
    for i, count in enumerate(tokens):
        over = token_budget is not None and batch and sum(tokens[j] for j in batch) + count > token_budget
        if len(batch) == per_request or over:
            requests.append(Request(len(requests) + 1, [keys[j] for j in batch], [texts[j] for j in batch], sum(tokens[j] for j in batch)))
            batch = []
        batch.append(i)
    if batch:
        requests.append(Request(len(requests) + 1, [keys[j] for j in batch], [texts[j] for j in batch], sum(tokens[j] for j in batch)))
    return requests


def checked(answer: Embedded, request: Request, total: int, dimension: int | None, url: str) -> np.ndarray:
    """The vectors of `answer` in the order of the request's texts, or BadAnswer naming the request (`total`: the
    job's number of requests) when they cannot be attached to them or are not vectors of length `dimension` (None:
    any one length)."""
    where = f"{url}: request {request.number} of {total} ({len(request.texts)} texts, the first {request.texts[0][:80]!r})"
    if len(answer.data) != len(request.texts):
        raise BadAnswer(f"{where}: {len(answer.data)} vectors came back for {len(request.texts)} texts; nothing of it was stored")
    indices = [index for index, _ in answer.data]
    repeated = [str(index) for index, n in Counter(indices).items() if n > 1]
    if repeated:
        raise BadAnswer(f"{where}: index {', '.join(repeated)} repeated; nothing of it was stored")
    if set(indices) != set(range(len(request.texts))):
        raise BadAnswer(f"{where}: indices {indices} are not 0..{len(request.texts) - 1}; nothing of it was stored")
    by_index = dict(answer.data)
    if any(not isinstance(vector, list) for vector in by_index.values()):
        raise BadAnswer(f"{where}: an item without an embedding list; nothing of it was stored")
    lengths = {len(by_index[i]) for i in range(len(request.texts))}
    if len(lengths) > 1 or (dimension is not None and lengths != {dimension}):
        expected = f"; {dimension} expected" if dimension is not None else ""
        raise BadAnswer(f"{where}: vectors of {' and '.join(map(str, sorted(lengths)))} dimensions{expected}; nothing of it was stored")
    vectors = np.array([by_index[i] for i in range(len(request.texts))], dtype=np.float64)
    for i, vector in enumerate(vectors):
        if not np.all(np.isfinite(vector)) or not np.any(vector):
            what = "holds NaN or infinite values" if not np.all(np.isfinite(vector)) else "is all zeros"
            raise BadAnswer(f"{where}: the vector of {request.texts[i][:80]!r} {what}; nothing of it was stored")
    return vectors.astype(np.float32)


def rejected_hint(model: ModelSpec, status: int) -> str:
    """What to fix when the endpoint refuses a request for good: the API key (401, 403), the model name (404)."""
    if status in (401, 403):
        where = f"the environment variable {model.api_key_env}" if model.api_key_env else "no variable (endpoint.api_key_env is null)"
        return f"; check the API key: it is read from {where} (config key models.{model.key}.endpoint.api_key_env)"
    if status == 404:
        return (f"; check the model name {model.name!r} (config key models.{model.key}.name) and the base URL "
                f"{model.base_url!r} (models.{model.key}.endpoint.base_url)")
    return ""


def connector(model: ModelSpec) -> Callable[[], ChatClient]:
    """A function that connects to the model's endpoint with the API key from the environment: a loopback server
    needs none (a placeholder is sent), any other endpoint fails naming the variable to set."""

    def connect() -> ChatClient:
        key = os.environ.get(model.api_key_env) if model.api_key_env else None
        if not key:
            if urlsplit(model.base_url).hostname not in LOOPBACK and model.api_key_env:
                raise InputError(f"config key models.{model.key}.endpoint.api_key_env: set the API key of {model.base_url} in "
                                 f"the environment variable {model.api_key_env}")
            key = "none"
        return ChatClient(base_url=model.base_url, api_key=key, timeout=model.timeout, retries=model.retries,
                          requests_per_minute=model.requests_per_minute, tokens_per_minute=model.tokens_per_minute,
                          caller=f"models.{model.key}.endpoint", rejected_hint=lambda status: rejected_hint(model, status))

    return connect


@dataclass
class Sent(Counts):
    """What one job sent and paid for (the report): texts cut to the limit, requests answered, texts embedded, input
    tokens the endpoint counted (texts whose answer reported none are counted by the job's token rule), HTTP requests
    and retries (the client's), and the seconds spent waiting for answers."""

    truncated: int = 0
    requests: int = 0
    texts: int = 0
    prompt_tokens: int = 0
    uncounted_tokens: int = 0
    http_requests: int = 0
    retries: int = 0
    seconds: float = 0.0

    def record(self) -> dict[str, Any]:
        return super().record() | {"seconds": round(self.seconds, 3)}


class Embedder:
    """Embeds texts with one endpoint model through the vector store: what it holds is read, the rest sent, each answer
    checked and committed as it arrives (`run`: the store's row of this job run)."""

    def __init__(self, model: ModelSpec, store: VectorStore, counter: TokenCounter, connect: Callable[[], ChatClient],
                 run: int | None = None) -> None:
        self.model = model
        self.store = store
        self.counter = counter
        self.connect = connect
        self.run = run
        self.sent = Sent()
        self.client: ChatClient | None = None
        self._dimension = model.dimensions or store.dimension(model.endpoint, model.name, model.dimensions)
        self._lock = threading.Lock()

    def keys(self, texts: Sequence[str]) -> list[str]:
        """The vector key of each text as sent."""
        return [vector_key(self.model.endpoint, self.model.name, self.model.dimensions, text) for text in texts]

    def missing(self, texts: Sequence[str]) -> list[Request]:
        """The requests that would embed what the store lacks of `texts` (texts as sent), nothing sent."""
        keys = self.keys(texts)
        stored = self.store.vectors(keys)
        todo = {key: text for key, text in zip(keys, texts) if key not in stored}
        tokens = [self.counter.count(text) for text in todo.values()]
        return plan(list(todo), list(todo.values()), tokens, self.model.inputs_per_request, self.model.tokens_per_request)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The vector of each of `texts` (as the user wrote them: the prefix is added and the limit applied here), from
        the store or sent; raises the first EndpointError (after stopping every request) or InputError."""
        sent, self.sent.truncated = sent_texts(self.model, texts, self.counter)
        requests = self.missing(sent)
        if requests:
            log.info("%s: %d texts of %d are not in the vector store: %d requests to %s", self.model.key,
                     sum(len(r.texts) for r in requests), len(sent), len(requests), self.model.endpoint)
            self.client = self.connect()
            try:
                self._send(requests)
            finally:
                self.sent.add(http_requests=self.client.requests, retries=self.client.retried)
        else:
            log.info("%s: all %d texts are in the vector store: nothing sent", self.model.key, len(sent))
        keys = self.keys(sent)
        stored = self.store.vectors(keys)
        return np.stack([stored[key] for key in keys]) if keys else np.zeros((0, self._dimension or 0), dtype=np.float32)

    def _send(self, requests: list[Request]) -> None:
        """Send `requests` with `concurrency` in flight; the first failure or an interruption stops the others: nothing
        new is sent, the answers in flight are waited for and stored, then it is raised."""
        assert self.client is not None
        pool = ThreadPoolExecutor(max_workers=self.model.concurrency, thread_name_prefix="embed")
        pending: set[Future] = {pool.submit(self._one, request, len(requests)) for request in requests}
        try:
            while pending:
                done, pending = wait(pending, timeout=SIGNAL_POLL_S, return_when=FIRST_COMPLETED)
                errors = [future.exception() for future in done if future.exception() is not None]
                if errors:  # the failure itself, not a request it stopped
                    raise next((error for error in errors if not isinstance(error, Interrupted)), errors[0])
        except BaseException as exc:
            self.client.stop()
            stopping.drain(pool, pending, exc, self.model.timeout, self.model.key)
            raise
        pool.shutdown()

    def _one(self, request: Request, total: int) -> None:
        """Send one request, check its answer and commit it; a failure stops every request not sent yet."""
        assert self.client is not None
        try:
            answer = self.client.embed(self.model.name, request.texts, self.model.params(), request.tokens)
            with self._lock:  # the first answer fixes the length of the vectors of this model
                vectors = checked(answer, request, total, self._dimension, self.client.url)
                self._dimension = vectors.shape[1]
        except BaseException:
            self.client.stop()
            raise
        self.store.put(self.run, self.model.endpoint, self.model.name, self.model.dimensions, request.keys, request.texts,
                       vectors, answer.prompt_tokens, answer.latency_s)
        self.sent.add(requests=1, texts=len(request.texts), prompt_tokens=answer.prompt_tokens or 0,
                      uncounted_tokens=0 if answer.prompt_tokens is not None else request.tokens, seconds=answer.latency_s)
        if request.number % 10 == 0 or request.number == total:
            log.info("%s: request %d of %d answered (%d texts, %s tokens)", self.model.key, request.number, total,
                     len(request.texts), answer.prompt_tokens)


@dataclass
class EmbeddingEstimate:
    """What embedding one dataset view with one endpoint model will send and cost."""

    model: str
    dataset: str
    view: str
    texts: int
    stored: int
    requests: int
    tokens: int
    cost: float | None
    assumptions: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        """The figures for a table (cost in USD rounded to cents; None without a price)."""
        return {key: value for key, value in asdict(self).items() if key != "assumptions"} | {
            "cost": None if self.cost is None else round(self.cost, 2)}


def estimate(embedder: Embedder, dataset: str, view: str, known: Sequence[str], assumed: Sequence[str] = (),
             notes: Sequence[str] = ()) -> EmbeddingEstimate:
    """What embedding `known` texts (written already: the store may hold them) and `assumed` ones (stand-ins for texts
    not written yet, e.g. an LLM's distractors: always to send) will send and cost; `notes` say what was assumed."""
    model = embedder.model
    sent, _ = sent_texts(model, known, embedder.counter)
    requests = embedder.missing(sent)
    stored = len(set(embedder.keys(sent))) - sum(len(request.texts) for request in requests)
    extra, _ = sent_texts(model, assumed, embedder.counter)
    if extra:
        tokens = [embedder.counter.count(text) for text in extra]
        pending = [text for request in requests for text in request.texts]
        requests = plan([str(i) for i in range(len(pending) + len(extra))], pending + extra,
                        [embedder.counter.count(text) for text in pending] + tokens,
                        model.inputs_per_request, model.tokens_per_request)
    tokens = sum(request.tokens for request in requests)
    price = "no cost: endpoint.prices.input_per_1k is not set" if model.input_per_1k is None else (
        f"USD {model.input_per_1k:g} per 1,000 input tokens (endpoint.prices.input_per_1k)")
    assumptions = [f"tokens counted with {embedder.counter.rule}",
                   f"at most {model.inputs_per_request} inputs" + (f" and {model.tokens_per_request} tokens" if model.tokens_per_request else "")
                   + " per request", price, *notes]
    return EmbeddingEstimate(model.key, dataset, view, len(set(sent)) + len(extra), stored, len(requests), tokens,
                             model.cost(tokens), assumptions)


def log_lines(found: EmbeddingEstimate) -> list[str]:
    """The estimate as log lines: the figures, then each assumption."""
    cost = "no price set" if found.cost is None else f"USD {found.cost:.4f}"
    return [f"estimate {found.model} {found.dataset} {found.view}: {found.texts} texts, {found.stored} in the vector store, "
            f"{found.requests} requests with {found.tokens} input tokens to send; {cost}"] + [
        f"  assumed: {line}" for line in found.assumptions]
