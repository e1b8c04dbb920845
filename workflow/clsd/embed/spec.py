"""One spec for every embedding model, wherever it runs: loaded here (hub, pypi, local) or served behind an
OpenAI-compatible endpoint (`source: endpoint`).

The rules build it once from the validated config while Snakemake plans and hand it to the job whole, as the param
`spec`; the job reads nothing of the raw config. Its rerun trigger is the param `model`, the spec's `identity()`:
what the vectors depend on. Snakemake compares only params of plain types (str, dict, ...), so the spec object itself
(with the folder the model loads from, a path on this machine, and the endpoint's operational settings) reruns
nothing. Light (no numpy, no client): the rules import it while planning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clsd.embed.backends import REFERENCE
from clsd.serving.locations import model_folder

#: What a loaded model's vectors depend on, in the order of its identity (the rule param `model`).
LOADED_IDENTITY = ("key", "name", "prefix", "prompt_name", "trust_remote_code", "revision", "batch_size", "max_length",
                   "backend", "quantize", "dtype")
#: The settings an export depends on (prompts, prefix, batch size or dtype change the embeddings, not the export).
EXPORT_SETTINGS = ("name", "revision", "trust_remote_code", "backend", "quantize")
#: A served model's settings under `endpoint:` in the config, besides `base_url` and `prices`.
ENDPOINT_SETTINGS = ("dimensions", "api_key_env", "inputs_per_request", "tokens_per_request", "max_input_tokens",
                     "truncate", "tokenizer", "concurrency", "requests_per_minute", "tokens_per_minute", "timeout", "retries")


@dataclass(frozen=True)
class ModelSpec:
    """What the workflow needs to load and call one embedding model, or to ask an endpoint for its vectors.

    Every model has `key` (its config key), `name` (hub id, recipe's name, display name or the served model's name),
    `source` and `prefix`. A loaded model also has where it loads from and how it runs (prompt, backend, precision,
    batch); a served one its endpoint and what only changes how fast it goes or what it costs (limits, concurrency,
    timeouts, price)."""

    key: str
    name: str
    source: str = "hub"
    load_from: str = ""
    prefix: str = ""
    # loaded here (hub, pypi, local)
    prompt_name: str | None = None
    trust_remote_code: bool = False
    revision: str | None = None
    batch_size: int = 32
    max_length: int | None = None
    backend: str = REFERENCE
    quantize: str = "none"
    dtype: str = "float32"
    # served (source: endpoint)
    base_url: str = ""
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
    def from_config(cls, key: str, model: Mapping[str, Any], folder: Path | None = None) -> "ModelSpec":
        """From a validated config entry; `folder` is a loaded model's local copy (None: load `name` from the hub)."""
        if model["source"] == "endpoint":
            endpoint = model["endpoint"]
            return cls(key=key, name=model["name"], source="endpoint", prefix=model["prefix"], base_url=endpoint["base_url"],
                       input_per_1k=endpoint["prices"]["input_per_1k"],
                       **{setting: endpoint[setting] for setting in ENDPOINT_SETTINGS})
        return cls(key=key, name=model["name"], source=model["source"],
                   load_from=str(folder) if folder is not None else model["name"],
                   **{setting: model[setting] for setting in LOADED_IDENTITY if setting not in ("key", "name")})

    @property
    def served(self) -> bool:
        """Whether an endpoint computes the vectors (rule embed_endpoint) rather than a job here (rule embed)."""
        return self.source == "endpoint"

    @property
    def endpoint(self) -> str:
        """Who answers, as it enters every vector key: the base URL without a trailing slash."""
        return self.base_url.rstrip("/")

    def identity(self) -> dict[str, Any]:
        """What the vectors depend on (the embedding rules' param `model`, the MTEB record's model).

        Served: the model's name, the endpoint (also as its revision), the dimensions, the prefix and the truncation;
        operational settings (key, limits, concurrency, timeouts, prices) change how fast it goes or what it costs,
        never a vector. Loaded: every setting but the folder it loads from, a path on this machine (a moved run reruns
        nothing), and, for a `local` model, its `name`, a display name there (renaming it reruns nothing). The content
        of a pypi or local model's folder is an input through its manifest or checksum sentinel; a hub model's `name`
        is its id, and stays."""
        if self.served:
            return {"key": self.key, "name": self.name, "source": "endpoint", "base_url": self.endpoint,
                    "revision": self.endpoint, "dimensions": self.dimensions, "prefix": self.prefix,
                    "truncate_to": self.max_input_tokens if self.truncate else None}
        return {setting: getattr(self, setting) for setting in LOADED_IDENTITY
                if not (setting == "name" and self.source == "local")}

    def export_identity(self) -> dict[str, Any]:
        """What the model's export depends on (the export rule's param `model`): the EXPORT_SETTINGS of its identity."""
        identity = self.identity()
        return {setting: identity[setting] for setting in EXPORT_SETTINGS if setting in identity}

    def params(self) -> dict[str, Any]:
        """What every request to a served model sends besides the model and its inputs."""
        return {} if self.dimensions is None else {"dimensions": self.dimensions}

    def cost(self, tokens: float) -> float | None:
        """USD for `tokens` input tokens at a served model's `prices.input_per_1k` (None without a price)."""
        return None if self.input_per_1k is None else tokens / 1000 * self.input_per_1k


def model_spec(config: Mapping[str, Any], key: str) -> ModelSpec:
    """The spec of model `key` of a validated config: its entry and, for a loaded model, where it loads from here."""
    model = config["models"][key]
    return ModelSpec.from_config(key, model, None if model["source"] == "endpoint" else model_folder(config, key))


def model_identity(config: Mapping[str, Any], key: str) -> dict[str, Any]:
    """ModelSpec.identity of model `key`: its embedding jobs' rerun trigger."""
    return model_spec(config, key).identity()


def export_identity(config: Mapping[str, Any], key: str) -> dict[str, Any]:
    """ModelSpec.export_identity of model `key`: its export job's rerun trigger."""
    return model_spec(config, key).export_identity()
