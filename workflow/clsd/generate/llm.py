"""LLM distractor generation: one request per sentence and language, stored before parsing, re-asked
with a new attempt number while fewer than four valid distractors come back.

Responses come from the store whenever the same request (endpoint, model, messages, sampling parameters,
attempt) was answered before, so a rerun, or a rerun after deleting results/, makes no request at all; the
endpoint (and a local server) is only contacted when some request is missing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import polars as pl
from tqdm import tqdm

from clsd.datasets import LANGUAGE_NAMES, N_DISTRACTORS
from clsd.generate.client import ChatClient
from clsd.generate.parse import parse_answer
from clsd.generate.store import Response, ResponseStore, request_key
from clsd.text import normalise
from clsd.validate import Validator

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """What is sent for every request (all of it is part of the request key)."""

    model: str
    template: str
    endpoint: str
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 512
    seed: int | None = None
    max_attempts: int = 3
    concurrency: int = 4

    def sampling(self) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}
        if self.seed is not None:
            params["seed"] = self.seed
        return params


def messages_for(template: str, lang: str, sentence: str) -> list[dict[str, str]]:
    """The paper's single user message: the prompt in the target language's name, then the sentence."""
    content = template.rstrip("\n").replace("{language}", LANGUAGE_NAMES[lang]).replace("{sentence}", sentence)
    return [{"role": "user", "content": content}]


@dataclass
class Outcome:
    """Result of one (item, language): four distractors, or a failure reason."""

    id: int
    lang: str
    distractors: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    failure: str | None = None
    rejects: Counter = field(default_factory=Counter)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (distractor, validation reason), re-asked
    attempts: int = 0


@dataclass
class Tally:
    """Counters for the generation report (thread-safe increments)."""

    cache_hits: int = 0
    shared_in_flight: int = 0
    new_responses: int = 0
    new_prompt_tokens: int = 0
    new_completion_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)


class Generator:
    """Generates distractors for many sentences of one language with bounded concurrency."""

    def __init__(self, settings: Settings, store: ResponseStore, connect: Callable[[], ChatClient],
                 validator: Validator | None = None) -> None:
        self.settings = settings
        self.validator = validator
        self.store = store
        self._connect = connect
        self._client: ChatClient | None = None
        self._client_lock = threading.Lock()
        self._in_flight: dict[str, Future] = {}
        self._in_flight_lock = threading.Lock()
        self.tally = Tally()

    @property
    def client(self) -> ChatClient:
        """The endpoint client, connected (and a local server started) on first need only."""
        with self._client_lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def response(self, messages: list[dict[str, str]], attempt: int) -> Response:
        """The stored response of this request, or a new one, stored before anything parses it.

        Identical requests in flight at the same time (repeated sentences) are sent once: later callers wait
        for the first one's response.
        """
        params = self.settings.sampling()
        key = request_key(self.settings.endpoint, self.settings.model, messages, params, attempt)
        stored = self.store.get(key)
        if stored is not None:
            self.tally.add(cache_hits=1)
            return stored
        with self._in_flight_lock:
            pending = self._in_flight.get(key)
            if pending is None:
                self._in_flight[key] = owned = Future()
        if pending is not None:
            self.tally.add(shared_in_flight=1)
            return pending.result()
        try:
            response = self.store.get(key)  # answered between the first look and taking ownership
            if response is None:
                response = self._ask(key, messages, params, attempt)
            else:
                self.tally.add(cache_hits=1)
            owned.set_result(response)
            return response
        except BaseException as exc:
            owned.set_exception(exc)
            raise
        finally:
            with self._in_flight_lock:
                del self._in_flight[key]

    def _ask(self, key: str, messages: list[dict[str, str]], params: dict[str, Any], attempt: int) -> Response:
        completion = self.client.complete(self.settings.model, messages, params)
        response = Response(key, self.settings.endpoint, self.settings.model, messages, params, attempt, completion.text,
                            completion.finish_reason, completion.prompt_tokens, completion.completion_tokens, completion.latency_s)
        self.store.put(response)
        self.tally.add(new_responses=1, new_prompt_tokens=completion.prompt_tokens or 0,
                       new_completion_tokens=completion.completion_tokens or 0)
        return response

    def one(self, item_id: int, sentence: str, lang: str) -> Outcome:
        """Ask until four valid distractors came back or the attempts are used up; a distractor the validator
        rejects (a reorder, a non-word, a paraphrase by the judge) is replaced by asking again."""
        outcome = Outcome(item_id, lang)
        messages = messages_for(self.settings.template, lang, sentence)
        for attempt in range(self.settings.max_attempts):
            outcome.attempts = attempt + 1
            response = self.response(messages, attempt)
            parsed = parse_answer(response.text, sentence, lang)
            outcome.rejects.update(reason for _, reason in parsed.rejected)
            if len(parsed.accepted) < N_DISTRACTORS:
                outcome.rejects["short_answer"] += 1  # the answer held fewer than four valid numbered sentences
            for text in parsed.accepted:
                if len(outcome.distractors) == N_DISTRACTORS or normalise(text) in map(normalise, outcome.distractors):
                    continue
                reason = self.validator.reason(sentence, text) if self.validator else None
                if reason is not None:
                    outcome.rejects[reason] += 1
                    outcome.rejected.append((text, reason))
                    continue
                outcome.distractors.append(text)
                outcome.keys.append(response.key)
            if len(outcome.distractors) == N_DISTRACTORS:
                return outcome
        outcome.failure = f"{len(outcome.distractors)} valid distractors after {outcome.attempts} attempts"
        return outcome

    def run(self, items: list[tuple[int, str]], lang: str) -> list[Outcome]:
        """All items of one language, in input order."""
        with ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            futures = [pool.submit(self.one, item_id, text, lang) for item_id, text in items]
            return [f.result() for f in tqdm(futures, desc=f"generate {lang}", unit="item")]


def distractor_table(outcomes: list[Outcome], generator: str) -> pl.DataFrame:
    """Distractor rows (id, lang, k, text, generator, source = request key) of the successful items."""
    rows = [
        {"id": o.id, "lang": o.lang, "k": k, "text": text, "generator": generator, "source": key}
        for o in outcomes
        if o.failure is None
        for k, (text, key) in enumerate(zip(o.distractors, o.keys), start=1)
    ]
    schema = {"id": pl.Int64, "lang": pl.String, "k": pl.Int64, "text": pl.String, "generator": pl.String, "source": pl.String}
    return pl.DataFrame(rows, schema=schema)


def judge_report(judge: Generator) -> dict[str, Any]:
    """Requests the judge made (new), answered from the store, and their tokens."""
    tally = judge.tally
    return {"new_responses": tally.new_responses, "cache_hits": tally.cache_hits, "shared_in_flight": tally.shared_in_flight,
            "new_prompt_tokens": tally.new_prompt_tokens, "new_completion_tokens": tally.new_completion_tokens}


def report(outcomes: list[Outcome], generator: Generator, seconds: float, prices: dict[str, float | None],
           judge: Generator | None = None) -> dict[str, Any]:
    """Requests, cache hits, retries, rejects by reason, failures, tokens and estimated cost of a run (the
    judge's requests, when there is one, are listed apart and included in tokens and cost)."""
    tally, client = generator.tally, generator._client
    rejects = sum((o.rejects for o in outcomes), Counter())
    prompt_tokens = tally.new_prompt_tokens + (judge.tally.new_prompt_tokens if judge else 0)
    completion_tokens = tally.new_completion_tokens + (judge.tally.new_completion_tokens if judge else 0)
    cost = None
    if prices.get("prompt_per_1k") is not None and prices.get("completion_per_1k") is not None:
        cost = prompt_tokens / 1000 * prices["prompt_per_1k"] + completion_tokens / 1000 * prices["completion_per_1k"]
    return {
        "items": len(outcomes),
        "generated": sum(o.failure is None for o in outcomes),
        "failed": [{"id": o.id, "lang": o.lang, "reason": o.failure, "rejected": dict(o.rejects)} for o in outcomes if o.failure],
        "attempts": sum(o.attempts for o in outcomes),
        "cache_hits": tally.cache_hits,
        "shared_in_flight": tally.shared_in_flight,
        "new_responses": tally.new_responses,
        "http_requests": client.requests if client else 0,
        "retries": client.retried if client else 0,
        "rejects": dict(rejects),
        "judge": judge_report(judge) if judge else None,
        "new_prompt_tokens": prompt_tokens,
        "new_completion_tokens": completion_tokens,
        "estimated_cost": cost,
        "seconds": round(seconds, 2),
    }


def rejected_rows(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Every distractor the validator rejected during generation, with its reason (validation report examples)."""
    return [{"id": o.id, "lang": o.lang, "text": text, "reason": reason} for o in outcomes for text, reason in o.rejected]


def generate(items: list[tuple[int, str]], lang: str, generator: Generator, prices: dict[str, float | None], label: str,
             judge: Generator | None = None) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Run one language and return its distractor table and report (with the validator's rejects)."""
    start = time.perf_counter()
    outcomes = generator.run(items, lang)
    result = report(outcomes, generator, time.perf_counter() - start, prices, judge)
    for failure in result["failed"]:
        log.warning("item %s (%s) failed: %s (rejected: %s)", failure["id"], failure["lang"], failure["reason"], failure["rejected"])
    result["rejected"] = rejected_rows(outcomes)
    return distractor_table(outcomes, label), result
