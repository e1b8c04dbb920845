"""The settings of an embedding model served behind an OpenAI-compatible endpoint (`source: endpoint`), read from the
config: what its vectors depend on (its identity, the rules' params) and what only changes how fast it goes or what
it costs. Light (no client, no numpy): the rules read the identity while Snakemake plans; clsd.embed.endpoint asks
the endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EndpointModel:
    """What the embedding job needs to ask an endpoint for one model's vectors (a `source: endpoint` model)."""

    key: str
    name: str
    base_url: str
    prefix: str = ""
    dimensions: int | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    inputs_per_request: int = 32
    tokens_per_request: int | None = None
    max_input_tokens: int | None = None
    truncate: bool = False
    tokenizer: str | None = None
    concurrency: int = 2
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    timeout: float = 60.0
    retries: int = 6
    input_per_1k: float | None = None

    @classmethod
    def from_config(cls, key: str, model: Mapping[str, Any]) -> "EndpointModel":
        """From a validated config entry (`source: endpoint`)."""
        endpoint = model["endpoint"]
        settings = {name: endpoint[name] for name in (
            "dimensions", "api_key_env", "inputs_per_request", "tokens_per_request", "max_input_tokens", "truncate",
            "tokenizer", "concurrency", "requests_per_minute", "tokens_per_minute", "timeout", "retries")}
        return cls(key=key, name=model["name"], base_url=endpoint["base_url"], prefix=model["prefix"],
                   input_per_1k=endpoint["prices"]["input_per_1k"], **settings)

    @property
    def endpoint(self) -> str:
        """Who answers, as it enters every vector key: the base URL without a trailing slash."""
        return self.base_url.rstrip("/")

    def identity(self) -> dict[str, Any]:
        """What the vectors depend on (the embedding rule's params; the MTEB record's model): the model's name, the
        endpoint (also as its revision), the dimensions, the prefix and the truncation. Operational settings (key,
        limits, concurrency, timeouts, prices) change how fast it goes or what it costs, never a vector."""
        return {"key": self.key, "name": self.name, "source": "endpoint", "base_url": self.endpoint, "revision": self.endpoint,
                "dimensions": self.dimensions, "prefix": self.prefix,
                "truncate_to": self.max_input_tokens if self.truncate else None}

    def params(self) -> dict[str, Any]:
        """What every request sends besides the model and its inputs."""
        return {} if self.dimensions is None else {"dimensions": self.dimensions}

    def cost(self, tokens: float) -> float | None:
        """USD for `tokens` input tokens at `prices.input_per_1k` (None without a price)."""
        return None if self.input_per_1k is None else tokens / 1000 * self.input_per_1k
