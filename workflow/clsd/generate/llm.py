"""LLM distractor generation: one request per sentence and language, stored before parsing, re-asked
with a new attempt number while fewer than four valid distractors come back.

Responses come from the store whenever the same request (endpoint, model, messages, sampling parameters,
attempt) was answered before, so a rerun, or a rerun after deleting results/, makes no request at all; the
endpoint (and a local server) is only contacted when some request is missing.

Every answer is marked usable or not once parsed (an answer without a single accepted numbered sentence is
unusable: a refusal, chatter, every line a copy or in another language). An unusable stored answer is replayed
like any other unless the generator re-asks them (`generation.reask_unusable`), or they were forgotten
(`clsd.generate.forget`); either way the old row is kept, superseded, in the store.

When the job is interrupted, or the first item fails for good (an EndpointError), no further item starts and
no request is retried: the error is raised at once.

With a Batch API (`Batching`, `generation.batch`) generation goes in rounds: each round runs every item against
the store alone, collects the one request each unfinished item misses (its next attempt), sends them all as one
batch (clsd.generate.batch) and stores the answers; the next round finds them stored and collects the re-asks.
After at most `max_attempts` rounds the items are run as usual, every answer replayed from the store. The judge
is asked synchronously during the rounds (its requests are few and short).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any, Callable, Protocol

import polars as pl
from tqdm import tqdm

from clsd.core import stopping
from clsd.serving.client import ChatClient, Completion, EndpointError, Interrupted
from clsd.core.items import N_DISTRACTORS
from clsd.core.languages import language
from clsd.core.text import normalise
from clsd.generate import quotes
from clsd.generate.batch import Batches, Request
from clsd.generate.choose import closest_to_profile, shortened
from clsd.generate.parse import WHOLE_ANSWER, Parsed, first_words, parse_answer
from clsd.generate.settings import Settings
from clsd.generate.store import Response, ResponseStore, request_key
from clsd.serving.ledger import Counts

log = logging.getLogger(__name__)
SIGNAL_POLL_S = 0.2  # the longest the main thread waits for workers before it looks for Ctrl-C or SIGTERM
GENERATION, VALIDATION = "generation", "validation"  # where a rejected sentence was caught (Outcome.rejected)
#: Free-text answers (and no JSON one) after which a job asking for the JSON schema stops: the endpoint ignores it.
FREE_TEXT_LIMIT = 3


class FreeText(EndpointError):
    """The endpoint answers numbered free text where the JSON schema was asked for (it ignores `response_format`)."""


class Checked(Protocol):
    """A validator's verdict on one distractor (clsd.validate.verdicts.Verdict is one): why it is rejected (None:
    valid), and whether a valid one holds words nothing attests (an invented place, a stray capitalised word)."""

    reason: str | None
    mended: str | None  # the sentence with broken copies of target words put back, when that made it valid
    mends: str | None  # what was put back

    @property
    def unattested(self) -> bool: ...


class Validator(Protocol):
    """What generation asks of a validator (clsd.validate.validator.Validator is one): a verdict on each new
    distractor of `target` (one call per answer: a judge may ask about all of them at once), with `mend` one
    checked again with its broken copies of target words put back (generation.mend_broken_words)."""

    def check_item(self, target: str, distractors: list[str], mend: bool = False) -> Sequence[Checked]: ...


def messages_for(template: str, lang: str, sentence: str, prompt_quotes: str = "as_written") -> list[dict[str, str]]:
    """The paper's single user message: the prompt in the target language's name, then the sentence (its straight
    double quotes curly with `prompt_quotes` curly, clsd.generate.quotes)."""
    shown = quotes.shown(sentence, prompt_quotes)
    content = template.rstrip("\n").replace("{language}", language(lang).name).replace("{sentence}", shown)
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
    # every sentence written and not kept: (sentence, reason, where it was caught: `generation`, the answer's own
    # filter of copies, repeats and other languages, or `validation`, the validator's rules and judge)
    rejected: list[tuple[str, str, str]] = field(default_factory=list)
    unused: int = 0  # valid sentences written after the item had its four (not kept, but valid)
    # valid once broken copies of target words were put back (clsd.validate.mend): mended sentence -> (as written,
    # what was put back)
    mended: dict[str, tuple[str, str]] = field(default_factory=dict)
    attempts: int = 0
    replayed: bool = True  # every answer came from the store (asked in an earlier run)
    refusal: str | None = None  # the first words of its first refusal


@dataclass(frozen=True)
class Batching:
    """Send generation's requests through the endpoint's Batch API: polled every `poll_s`, failed lines sent
    again at most `retries` times."""

    poll_s: float = 30.0
    retries: int = 6


class Missing(Exception):
    """A request the store does not answer (raised while a batch round collects requests: nothing is sent)."""

    def __init__(self, request: Request) -> None:
        super().__init__(request.key)
        self.request = request


@dataclass
class Tally(Counts):
    """Counters for the generation report (thread-safe increments)."""

    cache_hits: int = 0
    shared_in_flight: int = 0
    reasked_unusable: int = 0
    new_responses: int = 0
    new_prompt_tokens: int = 0
    new_completion_tokens: int = 0
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    batches_submitted: int = 0
    batches_resumed: int = 0
    batch_failed_lines: int = 0


class Generator:
    """Generates distractors for many sentences of one language with bounded concurrency.

    `dataset` and `lang` name who asks (recorded with each new response, so unusable answers can be forgotten
    per dataset); `run` is the store's row of this job run, where every new response is counted as it is
    stored. `usable(text)` decides whether a stored answer was usable when the caller does not say (the judge:
    a readable verdict). With `reask_unusable`, an answer found unusable that was stored before this run is
    superseded and asked again, once per run. With `batch` the requests go through the Batch API in rounds.
    With more candidates per answer than four (`settings.candidates`), `reference_shares` (percent per closeness
    bin, clsd.analysis.profile) choose the four an item keeps (clsd.generate.choose).
    """

    def __init__(self, settings: Settings, store: ResponseStore, connect: Callable[[], ChatClient],
                 validator: Validator | None = None, *, dataset: str | None = None, lang: str | None = None,
                 run: int | None = None, usable: Callable[[str], bool] | None = None, reask_unusable: bool = False,
                 batch: Batching | None = None, reference_shares: Sequence[float] | None = None) -> None:
        self.settings = settings
        # the reference profile's shares that choose an item's four among more candidates (None: answer order)
        self.profile_shares = (tuple(reference_shares) if settings.candidates > N_DISTRACTORS and reference_shares
                               is not None else None)
        self.validator = validator
        self.store = store
        self.dataset = dataset
        self.lang = lang
        self.run_id = run
        self.usable = usable
        self.reask_unusable = reask_unusable
        self.batch = batch
        self._collecting = False  # a batch round runs the items against the store only
        self._connect = connect
        self._client: ChatClient | None = None
        self._client_lock = threading.Lock()
        self._in_flight: dict[str, Future] = {}
        self._in_flight_lock = threading.Lock()
        self._asked: set[str] = set()  # keys answered by the endpoint during this run
        self._stopping = threading.Event()
        self._formats: Counter = Counter()  # answers to the JSON schema by what they were: free_text, or json
        self._formats_lock = threading.Lock()
        self.tally = Tally()

    @property
    def client(self) -> ChatClient:
        """The endpoint client, connected (and a local server started) on first need only, never once interrupted."""
        with self._client_lock:
            if self._stopping.is_set():
                raise Interrupted("interrupted: no endpoint is contacted")
            if self._client is None:
                self._client = self._connect()
            return self._client

    @property
    def connected(self) -> ChatClient | None:
        """The client once this generator connected (None before), without connecting."""
        return self._client

    def interrupt(self) -> None:
        """Stop at once: no new connection, no new request, no retry (requests already sent still finish)."""
        self._stopping.set()
        if self._client is not None:
            self._client.stop()

    def response(self, messages: list[dict[str, str]], attempt: int, *, lang: str | None = None,
                 usable: Callable[[str], bool] | None = None, extra: dict[str, Any] | None = None) -> Response:
        """The stored response of this request, or a new one, stored before anything parses it.

        `usable(text)` (default: the generator's own) marks the answer usable or not in the store; `extra` adds
        parameters of this request (the per-item judge's response format) to the settings' sampling. Identical
        requests in flight at the same time (repeated sentences) are sent once: later callers wait for the first
        one's response.
        """
        usable = usable or self.usable
        lang = lang or self.lang
        params = self.settings.sampling() | (extra or {})
        key = request_key(self.settings.endpoint, self.settings.model, messages, params, attempt)
        stored = self._reusable(key, usable, lang)
        if self._collecting:
            if stored is None:
                raise Missing(Request(key, messages, params, attempt))
            return stored
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
            response = self._reusable(key, usable, lang)  # answered between the first look and taking ownership
            if response is None:
                response = self._ask(key, messages, params, attempt, lang)
                self._classify(response, usable, lang)
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

    def _reusable(self, key: str, usable: Callable[[str], bool] | None, lang: str | None) -> Response | None:
        """The stored response under `key`, classified; None when there is none, or when it is unusable, stored
        before this run, and the generator re-asks unusable answers."""
        stored = self.store.get(key)
        if stored is None:
            return None
        if self._classify(stored, usable, lang) is False and self.reask_unusable and key not in self._asked:
            return None
        return stored

    def _classify(self, response: Response, usable: Callable[[str], bool] | None, lang: str | None) -> bool | None:
        """Whether the answer is usable (None without a judge of it); written to the store when it says otherwise
        or does not know, and the first asker is recorded when unknown."""
        if usable is None:
            return response.usable
        verdict = usable(response.text)
        if verdict != response.usable or response.dataset is None or response.lang is None:
            self.store.classify(response.key, verdict, self.dataset, lang)
        return verdict

    def _ask(self, key: str, messages: list[dict[str, str]], params: dict[str, Any], attempt: int, lang: str | None) -> Response:
        completion = self.client.complete(self.settings.model, messages, params)
        return self.keep(Request(key, messages, params, attempt), completion, lang)

    def keep(self, request: Request, completion: Completion, lang: str | None) -> Response:
        """Store a new answer (asked now, or returned by a batch) and count it as paid by this run."""
        key = request.key
        response = Response(key, self.settings.endpoint, self.settings.model, request.messages, request.params, request.attempt,
                            completion.text, completion.finish_reason, completion.prompt_tokens, completion.completion_tokens,
                            completion.latency_s or None, dataset=self.dataset, lang=lang)
        stored = self.store.get(key)
        # an unusable answer stored before this run, re-asked (a batch may also return what another job stored)
        superseding = stored is not None and key not in self._asked and (self.batch is None or stored.usable is False)
        self.store.put(response, self.run_id, replace=superseding)
        self._asked.add(key)
        self.tally.add(new_responses=1, new_prompt_tokens=completion.prompt_tokens or 0,
                       new_completion_tokens=completion.completion_tokens or 0, reasked_unusable=int(superseding),
                       drafted_tokens=completion.drafted or 0, accepted_tokens=completion.accepted or 0)
        return response

    def one(self, item_id: int, sentence: str, lang: str) -> Outcome:
        """Ask until four valid distractors came back or the attempts are used up; a distractor the validator
        rejects (a reorder, a non-word, a paraphrase by the judge) is replaced by asking again."""
        outcome = Outcome(item_id, lang)
        style = self.settings.prompt_quotes
        shown = quotes.shown(sentence, style)  # what the prompt holds: copies and prompt text are judged against it
        messages = messages_for(self.settings.template, lang, sentence, style)
        parse = functools.cache(lambda text, truncated=False: quotes.restored_answer(
            parse_answer(text, shown, lang, truncated, self.settings.answer_format,
                         prompt=messages[-1]["content"], n=self.settings.candidates), sentence, style))
        waiting: list[tuple[str, str]] = []  # fallbacks held for the last attempt (generation.fallbacks_wait), with their keys
        for attempt in range(self.settings.max_attempts):
            outcome.attempts = attempt + 1
            response = self.response(messages, attempt, lang=lang, usable=lambda text: bool(parse(text).accepted),
                                     extra=self.settings.script_format(sentence, lang))
            if self._stopping.is_set():  # interrupted while it was asked: stored, but neither checked nor asked again
                raise Interrupted("interrupted: the answer is stored, nothing more is asked")
            outcome.replayed = outcome.replayed and response.key not in self._asked
            truncated = response.finish_reason == "length"
            parsed = parse(response.text, truncated)
            if truncated:
                lost = "the answer is unusable" if parsed.no_list else "its last sentence is rejected as truncated"
                log.warning("item %s (%s), attempt %d: the answer was cut at max_tokens=%d; %s "
                            "(raise generation.max_tokens for this language)", item_id, lang, attempt + 1,
                            self.settings.max_tokens, lost)
            outcome.rejects.update(reason for _, reason in parsed.rejected)
            outcome.rejected += [(text, reason, GENERATION) for text, reason in parsed.rejected if reason not in WHOLE_ANSWER]
            if outcome.refusal is None and any(reason == "refusal" for _, reason in parsed.rejected):
                outcome.refusal = first_words(response.text)
            if self.settings.answer_format == "json":
                self._check_format(parsed, response.text)
            if len(parsed.accepted) < N_DISTRACTORS and not parsed.no_list and self.settings.answer_format == "numbered":
                outcome.rejects["short_answer"] += 1  # the list held fewer than four (a JSON answer always holds four)
            new: list[str] = []
            # what the item holds (kept, or held for the last attempt), as normalised: an equal sentence is a repeat
            taken = {normalise(text, lang) for text in outcome.distractors + [text for text, _ in waiting]}
            seen = set(taken)
            for text in parsed.accepted:
                if normalise(text, lang) not in seen:
                    new.append(text)
                    seen.add(normalise(text, lang))
                else:  # the same as a distractor an earlier answer gave
                    outcome.rejects["duplicate"] += 1
                    outcome.rejected.append((text, "duplicate", GENERATION))
            # every new sentence is checked at once (a per-item judge asks about all of them in one request); the
            # valid ones fill the free places in answer order, or (more candidates asked than four) those closest to
            # the reference profile do; a sentence with words nothing attests (non_word_suspect: an invented place, a
            # stray capitalised word) or a shortened one (clsd.generate.choose.shortened) comes in only where too few
            # others are valid (with generation.fallbacks_wait, only once the last attempt is answered)
            verdicts = (self.validator.check_item(sentence, new, mend=self.settings.mend_broken_words)
                        if self.validator and new else [None] * len(new))
            valid, fallback = [], []
            for text, found in zip(new, verdicts):
                if found is not None and found.reason is not None:
                    outcome.rejects[found.reason] += 1
                    outcome.rejected.append((text, found.reason, VALIDATION))
                    continue
                written = text
                if found is not None and found.mended is not None:  # broken copies of target words put back
                    text = found.mended
                # mended, a sentence may be one kept before or one of this answer (written after it, or mended too)
                if normalise(text, lang) in taken:
                    outcome.rejects["duplicate"] += 1
                    outcome.rejected.append((written, "duplicate", VALIDATION))
                    continue
                taken.add(normalise(text, lang))
                if found is not None and found.mended is not None:
                    outcome.mended[text] = (written, found.mends)
                if (found is not None and found.unattested) or shortened(sentence, text, lang):
                    fallback.append(text)
                else:
                    valid.append(text)
            fallback_keyed = [(text, response.key) for text in fallback]
            holding = self.settings.fallbacks_wait and attempt < self.settings.max_attempts - 1
            if self.settings.fallbacks_wait:
                waiting += fallback_keyed
                fallback_keyed = [] if holding else waiting
            for candidates in ([(text, response.key) for text in valid], fallback_keyed):
                free = N_DISTRACTORS - len(outcome.distractors)
                texts = [text for text, _ in candidates]
                chosen = (closest_to_profile(sentence, outcome.distractors, texts, free, self.profile_shares)
                          if self.profile_shares is not None else range(min(free, len(candidates))))
                for index in chosen:
                    outcome.distractors.append(texts[index])
                    outcome.keys.append(candidates[index][1])
                outcome.unused += len(candidates) - len(chosen)
            if len(outcome.distractors) == N_DISTRACTORS:
                if holding:  # the item is done before the last attempt: the held ones go unused
                    outcome.unused += len(waiting)
                return outcome
        outcome.failure = f"{len(outcome.distractors)} valid distractors after {outcome.attempts} attempts"
        if outcome.refusal is not None:
            outcome.failure += f" ({outcome.rejects['refusal']} refused: “{outcome.refusal}”)"
        return outcome

    def _check_format(self, parsed: Parsed, text: str) -> None:
        """Stop the job once FREE_TEXT_LIMIT answers to the JSON schema came back as numbered free text and none as
        JSON: the endpoint ignores `response_format`, and every further answer would be unusable too."""
        reasons = {reason for _, reason in parsed.rejected}
        if "refusal" in reasons:
            return
        with self._formats_lock:
            self._formats["free_text" if "free_text" in reasons else "json"] += 1
            ignored = self._formats["free_text"] >= FREE_TEXT_LIMIT and not self._formats["json"]
        if ignored:
            raise FreeText(f"{self.settings.endpoint}: the endpoint answered free text, not the JSON schema: set "
                           f"generation.answer_format: numbered (its first {FREE_TEXT_LIMIT} answers to generation."
                           f"answer_format: json were numbered lists, e.g. “{first_words(text)}”)")

    def run(self, items: list[tuple[int, str]], lang: str) -> list[Outcome]:
        """All items of one language, in input order. The first error (or a stop signal) stops everything at once:
        queued items are cancelled and requests in progress are neither retried nor followed by others; the answers
        of an endpoint's requests in flight are waited for (at most a timeout) and stored, as they are paid for, but
        not those of a server this job started (free, and stopping with the job). With a Batch API, the batch rounds
        first store every answer the items need."""
        if self.batch is not None:
            self._batch_rounds(items, lang)
        pool = ThreadPoolExecutor(max_workers=self.settings.concurrency)
        futures = [pool.submit(self.one, item_id, text, lang) for item_id, text in items]
        try:
            pending = set(futures)
            with tqdm(total=len(futures), desc=f"generate {lang}", unit="item") as progress:
                while pending:
                    # Wake up often: a signal delivered to a worker thread reaches Python only when the main thread
                    # runs, and a local server that got Ctrl-C too may never answer the request it was computing.
                    done, pending = wait(pending, timeout=SIGNAL_POLL_S, return_when=FIRST_COMPLETED)
                    for future in done:
                        future.result()
                        progress.update()
        except BaseException as exc:
            self.interrupt()
            client = self._client
            paid = client is not None and not client.own_server
            stopping.drain(pool, futures, exc, client.timeout if client is not None else 0, f"generate {lang}", wait=paid)
            raise
        pool.shutdown()
        return [future.result() for future in futures]

    def _batch_rounds(self, items: list[tuple[int, str]], lang: str) -> None:
        """Store every answer the items need through batches: this job's unfinished batches first (a killed run's),
        then one batch per round of the requests still missing (see the module)."""
        batching = self.batch
        assert batching is not None
        batches = Batches(lambda: self.client, self.store, endpoint=self.settings.endpoint, model=self.settings.model,
                          dataset=self.dataset, lang=lang, poll_s=batching.poll_s, retries=batching.retries,
                          keep=lambda request, completion: self.keep(request, completion, lang), stopping=self._stopping)
        try:
            batches.resume()
            for _ in range(self.settings.max_attempts):
                missing = self.missing(items, lang)
                if not missing:
                    break
                log.info("batch round: %d requests missing from the store", len(missing))
                batches.send(missing)
        finally:
            self.tally.add(batches_submitted=batches.submitted, batches_resumed=batches.resumed,
                           batch_failed_lines=batches.failed_lines)

    def requests(self, items: list[tuple[int, str]], lang: str) -> dict[str, Request]:
        """Every generation request the items may send (each attempt of each item), by key."""
        found: dict[str, Request] = {}
        for _, sentence in items:
            messages = messages_for(self.settings.template, lang, sentence, self.settings.prompt_quotes)
            params = self.settings.item_params(sentence, lang)
            for attempt in range(self.settings.max_attempts):
                key = request_key(self.settings.endpoint, self.settings.model, messages, params, attempt)
                found[key] = Request(key, messages, params, attempt)
        return found

    def missing(self, items: list[tuple[int, str]], lang: str) -> dict[str, Request]:
        """The next request each item needs that the store does not answer, by key (none: every item is done, or
        failed on stored answers). Nothing is sent for generation; a judge asks as usual."""
        self._collecting = True
        found: dict[str, Request] = {}

        def collect(item: tuple[int, str]) -> Request | None:
            try:
                self.one(item[0], item[1], lang)
            except Missing as missing:
                return missing.request
            return None

        try:
            with ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
                for request in pool.map(collect, items):
                    if request is not None:
                        found[request.key] = request
        finally:
            self._collecting = False
        return found


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
            "reasked_unusable": tally.reasked_unusable, "new_prompt_tokens": tally.new_prompt_tokens,
            "new_completion_tokens": tally.new_completion_tokens}


def estimated_cost(prompt_tokens: int, completion_tokens: int, prices: dict[str, float | None]) -> float | None:
    """USD for the tokens at the configured prices per 1000 tokens (None when a price is not set)."""
    if prices.get("prompt_per_1k") is None or prices.get("completion_per_1k") is None:
        return None
    return prompt_tokens / 1000 * prices["prompt_per_1k"] + completion_tokens / 1000 * prices["completion_per_1k"]


#: The fraction of the price a Batch API request costs when `generation.prices.batch_discount` is not set (OpenAI's).
BATCH_DISCOUNT = 0.5


def batch_prices(prices: dict[str, float | None], batch: bool) -> dict[str, float | None]:
    """The prices generation's requests pay: with a Batch API, the configured ones times `batch_discount`."""
    if not batch:
        return prices
    discount = prices.get("batch_discount", BATCH_DISCOUNT)
    return prices | {name: None if prices.get(name) is None else prices[name] * discount
                     for name in ("prompt_per_1k", "completion_per_1k")}


def job_cost(generation: tuple[int, int], judge: tuple[int, int], prices: dict[str, float | None], batch: bool) -> float | None:
    """USD for generation's (prompt, completion) tokens, at the batch price when batching, plus the judge's at the
    full price (the judge is always asked synchronously)."""
    paid = estimated_cost(*generation, batch_prices(prices, batch))
    return None if paid is None else paid + (estimated_cost(*judge, prices) or 0.0)


def report(outcomes: list[Outcome], generator: Generator, seconds: float, prices: dict[str, float | None],
           judge: Generator | None = None) -> dict[str, Any]:
    """Requests, cache hits, retries, rejects by reason, failures, tokens and estimated cost of this run (the
    judge's requests, when there is one, are listed apart and included in tokens and cost); with a recorded run,
    `all_runs` adds what every run of this dataset, language, endpoint and model paid for, resumes and killed
    runs included. With a Batch API generation's tokens cost `batch_prices`, and `batches` counts its batches."""
    tally = generator.tally
    batch = generator.batch is not None
    judge_tokens = (judge.tally.new_prompt_tokens, judge.tally.new_completion_tokens) if judge else (0, 0)
    http_requests, retries = http_figures(generator, judge)
    rejects = sum((o.rejects for o in outcomes), Counter())
    prompt_tokens = tally.new_prompt_tokens + (judge.tally.new_prompt_tokens if judge else 0)
    completion_tokens = tally.new_completion_tokens + (judge.tally.new_completion_tokens if judge else 0)
    result = {
        "items": len(outcomes),
        "generated": sum(o.failure is None for o in outcomes),
        "generated_at_first_ask": sum(o.failure is None and o.attempts == 1 for o in outcomes),
        "answer_format": generator.settings.answer_format,
        "failed": [{"id": o.id, "lang": o.lang, "reason": o.failure, "rejected": dict(o.rejects)} for o in outcomes if o.failure],
        "attempts": sum(o.attempts for o in outcomes),
        "cache_hits": tally.cache_hits,
        "shared_in_flight": tally.shared_in_flight,
        "reasked_unusable": tally.reasked_unusable,
        "new_responses": tally.new_responses,
        "http_requests": http_requests,
        "retries": retries,
        "rejects": dict(rejects),
        "judge": judge_report(judge) if judge else None,
        "new_prompt_tokens": prompt_tokens,
        "new_completion_tokens": completion_tokens,
        "estimated_cost": job_cost((tally.new_prompt_tokens, tally.new_completion_tokens), judge_tokens, prices, batch),
        "batches": {"submitted": tally.batches_submitted, "resumed": tally.batches_resumed,
                    "failed_lines": tally.batch_failed_lines} if batch else None,
        "seconds": round(seconds, 2),
        "completion_tokens_per_s": round(completion_tokens / seconds, 2) if seconds > 0 and completion_tokens else None,
        "drafted_tokens": tally.drafted_tokens,
        "accepted_tokens": tally.accepted_tokens,
    }
    if generator.run_id is not None:
        totals = generator.store.run_totals(generator.run_id)
        cost = estimated_cost(totals["new_prompt_tokens"], totals["new_completion_tokens"], batch_prices(prices, batch))
        result["all_runs"] = totals | {"estimated_cost": cost}
    return result


def rejected_rows(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Every sentence written and not kept, with its reason and where it was caught (`generation`: the answer's own
    filter; `validation`: the validator), for the validation report's counts and examples."""
    return [{"id": o.id, "lang": o.lang, "text": text, "reason": reason, "caught_by": by}
            for o in outcomes for text, reason, by in o.rejected]


def mended_rows(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Every distractor the set keeps that was valid only once its broken copies of target words were put back
    (clsd.validate.mend): as kept, as written, and what was put back."""
    return [{"id": o.id, "lang": o.lang, "text": text, "written": o.mended[text][0], "mends": o.mended[text][1]}
            for o in outcomes if o.failure is None for text in o.distractors if text in o.mended]


def written_counts(outcomes: list[Outcome]) -> dict[str, Any]:
    """Every sentence the model wrote (every answer of every attempt), how many were valid, how many of those the set
    keeps, the valid ones it does not (`unused`: written after an item had its four, or of an item that failed), and
    the share valid of all written: the figure to compare with a published set's validity, which counts all it holds;
    `mended`, how many of the valid ones were valid only once broken copies of target words were put back."""
    kept = sum(len(o.distractors) for o in outcomes if o.failure is None)
    valid = sum(len(o.distractors) + o.unused for o in outcomes)
    written = valid + sum(len(o.rejected) for o in outcomes)
    return {"written": written, "valid": valid, "kept": kept, "unused": valid - kept,
            "share_valid": round(valid / written, 4) if written else None,
            "mended": sum(len(o.mended) for o in outcomes)}


def http_figures(*generators: Generator | None) -> tuple[int, int]:
    """HTTP requests and retries of the clients the generators connected (a client they share counted once: the
    judge asks through generation's)."""
    clients = {id(client): client for client in (g.connected for g in generators if g is not None) if client is not None}
    return sum(client.requests for client in clients.values()), sum(client.retried for client in clients.values())


def finish_run(generator: Generator, status: str, judge: Generator | None = None) -> None:
    """Close the generator's run row in the store (if it has one) with its status and HTTP figures."""
    if generator.run_id is not None:
        generator.store.finish_run(generator.run_id, status, *http_figures(generator, judge))


def generate(items: list[tuple[int, str]], lang: str, generator: Generator, prices: dict[str, float | None], label: str,
             judge: Generator | None = None) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Run one language and return its distractor table and report (with the validator's rejects); the run's row
    in the store is closed as `done`, `interrupted` or `failed: <error>`. The first error stops the judge too."""
    start = time.perf_counter()
    try:
        outcomes = generator.run(items, lang)
    except BaseException as exc:
        if judge is not None:
            judge.interrupt()
        finish_run(generator, "interrupted" if isinstance(exc, (KeyboardInterrupt, Interrupted)) else f"failed: {exc}", judge)
        raise
    finish_run(generator, "done", judge)
    result = report(outcomes, generator, time.perf_counter() - start, prices, judge)
    for failure in result["failed"]:
        log.info("item %s (%s) failed: %s (rejected: %s)", failure["id"], failure["lang"], failure["reason"], failure["rejected"])
    if result["failed"]:
        reasons = Counter(failure["reason"] for failure in result["failed"])
        log.warning("%d of %d items failed: %s", len(result["failed"]), len(outcomes),
                    "; ".join(f"{n} × {reason}" for reason, n in reasons.most_common()))
    result["sentences"] = written_counts(outcomes)
    result["rejected"] = rejected_rows(outcomes)
    result["mended"] = mended_rows(outcomes)
    replayed = [o.id for o in outcomes if o.failure is not None and o.replayed]
    result["failed_on_replayed_answers"] = replayed
    if replayed:
        log.warning("%d item(s) failed on answers replayed from the response store, asked in an earlier run (ids %s): a "
                    "rerun asks nothing again. To ask again after fixing the endpoint: `clsd-forget --store %s --dataset %s "
                    "--lang %s` (unusable answers only), or generation.reask_unusable: true", len(replayed),
                    ", ".join(map(str, replayed[:10])), generator.store.path, generator.dataset, lang)
    return distractor_table(outcomes, label), result
