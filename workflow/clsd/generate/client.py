"""Chat completions through the `openai` package against any OpenAI-compatible endpoint.

Transport faults are retried with tenacity: 429, 5xx, timeouts, connection errors and unreadable
responses, with exponential backoff and jitter, honouring `Retry-After`. 400/401/403/404 are not retried:
they raise `RequestRejected` with the server's message. Requests start no faster than the configured
requests-per-minute.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

log = logging.getLogger(__name__)

class MalformedResponse(RuntimeError):
    """A 200 answer without a usable completion (no choices): retried like a transport fault."""


RETRYABLE = (
    MalformedResponse,
    json.JSONDecodeError,  # a 200 whose body is not JSON: the openai client does not wrap it
    openai.RateLimitError,
    openai.InternalServerError,
    openai.APITimeoutError,
    openai.APIConnectionError,
    openai.APIResponseValidationError,
)


class RequestRejected(RuntimeError):
    """The endpoint refused the request for a reason retrying cannot fix (bad request, auth, unknown model)."""


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, RETRYABLE):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


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
    """Spaces request starts to at most `per_minute` a minute (None: no limit)."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        time.sleep(max(0.0, start - now))


class ChatClient:
    """One OpenAI client plus retry and rate policy; counts requests and retries for the report."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str,
        timeout: float,
        retries: int,
        requests_per_minute: float | None,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
    ) -> None:
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
        self.retries = retries
        self.wait = RetryAfterOrBackoff(backoff_initial, backoff_max)
        self.limiter = RateLimiter(requests_per_minute)
        self.requests = 0
        self.retried = 0
        self._lock = threading.Lock()

    def _count(self, field: str) -> None:
        with self._lock:
            setattr(self, field, getattr(self, field) + 1)

    def _log_retry(self, state: RetryCallState) -> None:
        self._count("retried")
        log.warning("retrying after %s (attempt %d)", type(state.outcome.exception()).__name__, state.attempt_number)

    def complete(self, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        """One chat completion, retried on transport faults."""
        retrying = Retrying(
            retry=retry_if_exception(is_retryable),
            wait=self.wait,
            stop=stop_after_attempt(self.retries + 1),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(self._once, model, messages, params)
        except openai.APIStatusError as exc:
            if is_retryable(exc):
                raise
            raise RequestRejected(f"the endpoint rejected the request with HTTP {exc.status_code}: {exc.message}") from exc

    def _once(self, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        self.limiter.wait()
        self._count("requests")
        start = time.perf_counter()
        response = self.client.chat.completions.create(model=model, messages=messages, **params)
        latency = time.perf_counter() - start
        if not response.choices:
            raise MalformedResponse("no choices in the response")
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "",
            finish_reason=choice.finish_reason,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            latency_s=latency,
        )
