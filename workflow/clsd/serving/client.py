"""Chat completions and embeddings through the `openai` package against any OpenAI-compatible endpoint: one client
for distractor generation and the judge (clsd.generate) and for embedding models served behind an endpoint
(clsd.embed.endpoint).

Transport faults are retried with tenacity: 429, 5xx, timeouts and connection errors, with exponential backoff
and jitter, honouring `Retry-After`. An HTTP 200 that is no chat completion (not JSON, an HTML page, JSON without
choices) arrived, so it may be billed: it is asked once more (a proxy's hiccup), and the second such answer of the
job stops it ("not a chat completion"; of embeddings: "not an embeddings answer"). 400/401/403/404 are not
retried: they raise `RequestRejected` with the server's message. A request that timed out is sent at most
MAX_TIMEOUTS times (a hanging endpoint costs that many timeouts, not every retry's). Requests start no faster than the
configured requests-per-minute, and an embeddings request no sooner than the tokens-per-minute allow.

Every error that leaves the client names the endpoint URL (never the API key) and the config key of its caller that
changes the outcome (`caller`: `generation`, `models.<model>.endpoint`): the base URL, the timeout and retries, the
API key's variable.

Three failures are deterministic and stop at once instead of being retried: the local llama.cpp server
process has exited (`exited` reports its exit code), a connection to this machine (127.0.0.1, localhost) is
refused (no server listens there; a remote endpoint keeps its backoff), or the job is being interrupted
(`stop()`, from Ctrl-C or SIGTERM): no new request is sent and no backoff is slept.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import openai
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_any,
    stop_when_event_set,
    wait_random_exponential,
)

from clsd.core.urls import on_this_machine

log = logging.getLogger(__name__)


MIN_SECRET = 8  # shorter API keys (the local server's placeholder "local") are not secrets, and too common to redact


#: Answers of one job that are no chat completion before it stops: the first may be a proxy's hiccup, the second is not.
MAX_NOT_COMPLETIONS = 2
#: Attempts of one request that end in a timeout before it fails: a hanging endpoint is not waited for `retries` times.
MAX_TIMEOUTS = 2


class MalformedResponse(RuntimeError):
    """A 200 answer that is not what was asked for (no choices, no data, or not a JSON object at all)."""


#: A 200 answer that is no chat completion: it arrived (and may be billed), so it is not a transport fault.
NOT_A_COMPLETION = (
    MalformedResponse,
    json.JSONDecodeError,  # a 200 whose body is not JSON: the openai client does not wrap it
    openai.APIResponseValidationError,  # a 200 that is not JSON at all (an HTML page)
)
RETRYABLE = (
    *NOT_A_COMPLETION,
    openai.RateLimitError,
    openai.InternalServerError,
    openai.APITimeoutError,
    openai.APIConnectionError,
)


class EndpointError(RuntimeError):
    """A request that failed for good (after its retries, or at once when retrying cannot help); the message
    starts with the endpoint URL (an interruption before any connection has none to name)."""


class RequestRejected(EndpointError):
    """The endpoint refused the request for a reason retrying cannot fix (bad request, auth, unknown model);
    `answer` is what it answered (`HTTP 404: Not Found`)."""

    def __init__(self, message: str, answer: str = "") -> None:
        super().__init__(message)
        self.answer = answer


class Interrupted(EndpointError):
    """The job is being interrupted (Ctrl-C, SIGTERM): the request was not sent, or its answer is abandoned."""


@dataclass(frozen=True)
class Embedded:
    """One answer of `POST /embeddings` as it came: (index, vector) of each item of its `data`, in the order sent back
    (the caller checks them against its inputs), and the input tokens the endpoint counted (None without usage)."""

    data: list[tuple[Any, list[float]]]
    prompt_tokens: int | None
    latency_s: float


@dataclass(frozen=True)
class Completion:
    """One answer: its text, why it ended, its tokens, the seconds it took, and the tokens a llama.cpp server drafted
    and accepted by speculative decoding (its `timings`; None from other endpoints)."""

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    drafted: int | None = None
    accepted: int | None = None


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, RETRYABLE):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def describe(exc: BaseException, timeout: float) -> str:
    """What went wrong, in words: `connection refused`, `HTTP 500: <the server's message>`, `no answer within 5 s`."""
    if isinstance(exc, openai.APITimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, openai.APIConnectionError):
        cause: BaseException | None = exc
        while cause.__cause__ is not None or cause.__context__ is not None:
            cause = cause.__cause__ or cause.__context__
            if isinstance(cause, ConnectionRefusedError):
                return "connection refused"
            if isinstance(cause, ConnectionResetError):
                return "connection reset"
        return f"connection failed: {cause}" if cause is not exc else "connection failed"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {server_message(exc)}"
    return f"unreadable response: {exc}"


def server_message(exc: openai.APIStatusError) -> str:
    """The server's own error text: the `message` of an OpenAI-style error body, or the body itself."""
    body = exc.body
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    if body:
        return body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return exc.message


#: How llama-server names the request field whose value it refuses ("Field 'top_k': Value must be ...").
REFUSED_FIELD = re.compile(r"\b[Ff]ield '([A-Za-z_][A-Za-z0-9_]*)'")


def refused_field(message: str) -> str | None:
    """The request field a server's error text names as refused, if it names one."""
    match = REFUSED_FIELD.search(message)
    return match.group(1) if match else None


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (Retry-After header, seconds form), if any."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class RetryAfterOrBackoff:
    """tenacity wait: the server's Retry-After when given, else exponential backoff with full jitter."""

    def __init__(self, initial: float, maximum: float) -> None:
        self.backoff = wait_random_exponential(multiplier=initial, max=maximum)

    def __call__(self, state: RetryCallState) -> float:
        asked = retry_after(state.outcome.exception() if state.outcome else None)
        return asked if asked is not None else self.backoff(state)


class RateLimiter:
    """Spaces request starts to at most `per_minute` a minute (None: no limit); a request that weighs `amount` (its
    tokens, against a tokens-per-minute limit) holds back the next one `amount` times as long."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self, stopping: threading.Event, amount: float = 1.0) -> None:
        """Sleep until this request may start (cut short when `stopping` is set)."""
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval * amount
        stopping.wait(max(0.0, start - now))


class ChatClient:
    """One OpenAI client plus retry and rate policy; counts requests and retries for the report.

    `exited` (a local server's `LlamaServer.exit_code`) says whether the server behind `base_url` has exited:
    then a failed request is not retried. `stop()` makes every request in progress stop at once. `caller` is the config
    key the errors name (`generation`, `models.<model>.endpoint`); `rejected_hint(status)` says what to fix when the
    endpoint refuses a request for good (default: the caller's API key variable for 401/403, base URL for 404).
    """

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str,
        timeout: float,
        retries: int,
        requests_per_minute: float | None,
        tokens_per_minute: float | None = None,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
        exited: Callable[[], int | None] | None = None,
        caller: str = "generation",
        rejected_hint: Callable[[int], str] | None = None,
    ) -> None:
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
        self.url = str(self.client.base_url).rstrip("/")
        self.loopback = on_this_machine(self.url)
        self._secret = api_key if len(api_key) >= MIN_SECRET else None
        self.timeout = timeout
        self.retries = retries
        self.wait = RetryAfterOrBackoff(backoff_initial, backoff_max)
        self.limiter = RateLimiter(requests_per_minute)
        self.token_limiter = RateLimiter(tokens_per_minute)
        self.exited = exited or (lambda: None)
        self.own_server = exited is not None  # a server this job started: it answers for free and stops with the job
        self.caller = caller
        self.rejected_hint = rejected_hint or self._default_hint
        self.stopping = threading.Event()
        self.requests = 0
        self.retried = 0
        self.not_completions = 0  # 200 answers that were no chat completion
        self._lock = threading.Lock()

    def stop(self) -> None:
        """The job is being interrupted: send nothing new, retry nothing, sleep no backoff."""
        self.stopping.set()

    def _count(self, field: str) -> None:
        with self._lock:
            setattr(self, field, getattr(self, field) + 1)

    def _redact(self, text: str) -> str:
        """`text` without the API key (a server may echo it in its error message)."""
        return text.replace(self._secret, "<API key>") if self._secret else text

    def _refused_locally(self, exc: BaseException) -> bool:
        """A connection refused by this machine: no server listens on that port, and none will within a backoff."""
        return self.loopback and isinstance(exc, openai.APIConnectionError) and describe(exc, self.timeout) == "connection refused"

    def _default_hint(self, status: int) -> str:
        if status in (401, 403):
            return f"; check the API key: config key {self.caller}.api_key_env names the environment variable it is read from"
        if status == 404:
            return f"; check the base URL (config key {self.caller}.base_url) and the model name"
        return ""

    def _retryable(self, exc: BaseException, timeouts: list[int]) -> bool:
        """Whether to send again after `exc`; `timeouts` counts this request's timeouts so far (one item, updated)."""
        if isinstance(exc, NOT_A_COMPLETION):
            self._count("not_completions")
            if self.not_completions >= MAX_NOT_COMPLETIONS:
                return False
        if isinstance(exc, openai.APITimeoutError):
            timeouts[0] += 1
            if timeouts[0] >= MAX_TIMEOUTS:
                return False
        return is_retryable(exc) and not self.stopping.is_set() and self.exited() is None and not self._refused_locally(exc)

    def _log_retry(self, state: RetryCallState) -> None:
        self._count("retried")
        exc = state.outcome.exception()
        most = min(self.retries + 1, MAX_TIMEOUTS) if isinstance(exc, openai.APITimeoutError) else self.retries + 1
        log.warning("%s: %s (%s, attempt %d of at most %d), retrying in %.1f s", self.url, self._redact(describe(exc, self.timeout)),
                    type(exc).__name__, state.attempt_number, most, state.upcoming_sleep)

    def complete(self, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        """One chat completion, retried on transport faults; a failure raises an EndpointError naming the URL."""
        return self.call(self._once, model, messages, params, structured="response_format" in params)

    def embed(self, model: str, texts: list[str], params: dict[str, Any], tokens: int) -> Embedded:
        """One embeddings request for `texts` (`params`: e.g. `dimensions`), vectors asked for as JSON floats (what every
        OpenAI-compatible server speaks), counted, rate-limited (`tokens`, its expected input tokens, against the
        tokens-per-minute limit) and retried like a completion; a failure raises an EndpointError naming the URL."""

        def once() -> Embedded:
            self.limiter.wait(self.stopping)
            self.token_limiter.wait(self.stopping, tokens)
            if self.stopping.is_set():
                raise Interrupted(f"{self.url}: interrupted before the request was sent")
            self._count("requests")
            start = time.perf_counter()
            response = self.client.embeddings.create(model=model, input=texts, encoding_format="float", **params)
            if isinstance(response, str):  # a body that is not JSON (an HTML page): the openai client returns its text
                raise MalformedResponse(f"text, not an embeddings object: {' '.join(response.split())[:60]!r}")
            if not isinstance(getattr(response, "data", None), list):
                raise MalformedResponse("no data in the response")
            usage = getattr(response, "usage", None)
            return Embedded([(getattr(item, "index", None), getattr(item, "embedding", None)) for item in response.data],
                            getattr(usage, "prompt_tokens", None), time.perf_counter() - start)

        return self.call(once, answers="an embeddings answer")

    def api(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Another request to the endpoint (the Batch API's files and batches: `call` is a method of `self.client`),
        counted, rate-limited and retried like a completion; a failure raises an EndpointError naming the URL."""

        def once() -> Any:
            self.limiter.wait(self.stopping)
            if self.stopping.is_set():
                raise Interrupted(f"{self.url}: interrupted before the request was sent")
            self._count("requests")
            return call(*args, **kwargs)

        return self.call(once)

    def call(self, once: Callable[..., Any], *args: Any, structured: bool = False, answers: str = "a chat completion") -> Any:
        """`once(*args)` retried on transport faults; a failure raises an EndpointError naming the URL (`answers`: what
        a 200 should have held, for the error when it did not)."""
        timeouts = [0]
        retrying = Retrying(
            retry=retry_if_exception(lambda exc: self._retryable(exc, timeouts)),
            wait=self.wait,
            stop=stop_any(stop_after_attempt(self.retries + 1), stop_when_event_set(self.stopping)),
            sleep=self.stopping.wait,
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(once, *args)
        except EndpointError:
            raise
        except Exception as exc:
            if not (is_retryable(exc) or isinstance(exc, openai.APIStatusError)):
                raise  # not a transport fault: a bug, with its own traceback
            raise self._failure(exc, retrying.statistics.get("attempt_number", 1), structured, answers) from exc

    def _failure(self, exc: Exception, attempts: int, structured: bool = False, answers: str = "a chat completion") -> EndpointError:
        """The error that leaves the client: the URL first, then what happened, how often, the exception type, and the
        config key to change."""
        code, name, what = self.exited(), type(exc).__name__, self._redact(describe(exc, self.timeout))
        if self.stopping.is_set():
            return Interrupted(f"{self.url}: interrupted ({name})")
        if code is not None:
            return EndpointError(f"{self.url}: the local llama.cpp server exited with code {code}; {what}, not retried ({name})")
        if isinstance(exc, NOT_A_COMPLETION):
            return EndpointError(f"{self.url}: not {answers}: HTTP 200 with {what}; {self.not_completions} such answers, "
                                 f"not asked again (each may be billed) ({name}); check {self.caller}.base_url: the API's base "
                                 f"URL, e.g. https://api.openai.com/v1")
        if self._refused_locally(exc):
            return EndpointError(f"{self.url}: connection refused, not retried: nothing listens on this port of this machine "
                                 f"({name}); is the server running? {self.caller}.base_url names it")
        if isinstance(exc, openai.APIStatusError) and not is_retryable(exc):
            message, hint = server_message(exc), ""
            field = refused_field(message) if exc.status_code == 400 else None
            if field not in (None, "response_format"):
                hint = f" (the request's field {field} comes from the config: a key of that name under {self.caller})"
            elif structured and exc.status_code == 400:
                hint = (" (generation.answer_format: json sends response_format with a JSON schema; set answer_format: "
                        "numbered for an endpoint or model without structured outputs)")
            answer = f"HTTP {exc.status_code}: {self._redact(message)}"
            return RequestRejected(f"{self.url}: the endpoint rejected the request with {answer}{hint}"
                                   f"{self.rejected_hint(exc.status_code)}", answer)
        if isinstance(exc, openai.RateLimitError):
            advice = (f"config key {self.caller}.requests_per_minute sets how fast requests start, {self.caller}.retries "
                      f"(now {self.retries}) how often one is sent")
        else:
            advice = (f"config keys {self.caller}.timeout (now {self.timeout:g} s) and {self.caller}.retries (now "
                      f"{self.retries}) set how long a request is waited for and how often it is sent")
        return EndpointError(f"{self.url}: {what} after {attempts} {'attempt' if attempts == 1 else 'attempts'} ({name}); {advice}")

    def _once(self, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        self.limiter.wait(self.stopping)
        if self.stopping.is_set():
            raise Interrupted(f"{self.url}: interrupted before the request was sent")
        self._count("requests")
        start = time.perf_counter()
        response = self.client.chat.completions.create(model=model, messages=messages, **params)
        latency = time.perf_counter() - start
        if isinstance(response, str):  # a body that is not JSON (an HTML page): the openai client returns its text
            raise MalformedResponse(f"text, not a chat completion object: {' '.join(response.split())[:60]!r}")
        if not response.choices:
            raise MalformedResponse("no choices in the response")
        choice = response.choices[0]
        usage = response.usage
        timings = (response.model_extra or {}).get("timings") or {}
        return Completion(
            text=choice.message.content or "",
            finish_reason=choice.finish_reason,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            latency_s=latency,
            drafted=timings.get("draft_n"),
            accepted=timings.get("draft_n_accepted"),
        )
