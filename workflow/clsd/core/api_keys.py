"""The API keys of the run, checked once Snakemake knows which jobs will run and before any starts: every job that
will send to a remote endpoint (LLM generation, the judge, a model served behind an endpoint) needs its key in the
environment, and a missing one is found now rather than in a job after minutes of others. Jobs that send nothing
(the cost estimate, an offline batch runner's output read back, a server on this machine) need none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from clsd.core.urls import on_this_machine
from clsd.core.errors import InputError

#: Rules whose jobs ask the generation endpoint: always (generation), or only for the judge.
GENERATING = "generate_distractors"
JUDGING = ("generate_distractors", "validate_distractors", "generation_requests")
#: Rules whose jobs ask an endpoint model (wildcard `model`).
EMBEDDING = ("embed_endpoint", "mteb_evaluate")


@dataclass(frozen=True)
class NeededKey:
    """An environment variable a job will read its API key from, with the config key that names it."""

    variable: str
    config_key: str
    base_url: str


def needed_keys(config: Mapping[str, Any], jobs: Iterable[tuple[str, Mapping[str, str]]]) -> dict[NeededKey, list[str]]:
    """Each API key variable the `jobs` (rule name, wildcards) will read, with the rules that need it."""
    needed: dict[NeededKey, list[str]] = {}
    generation, judge = config["generation"], config["validation"]["judge"]
    for rule, wildcards in jobs:
        key = None
        asks_llm = (rule == GENERATING and generation["batch_output"] is None) or (judge and rule in JUDGING)
        if asks_llm and generation["base_url"] is not None and not on_this_machine(generation["base_url"]):
            key = NeededKey(generation["api_key_env"], "generation.api_key_env", generation["base_url"])
        elif rule in EMBEDDING and "model" in wildcards:
            model = config["models"][wildcards["model"]]
            endpoint = model.get("endpoint") or {}
            if model["source"] == "endpoint" and endpoint.get("api_key_env") and not on_this_machine(endpoint["base_url"]):
                key = NeededKey(endpoint["api_key_env"], f"models.{wildcards['model']}.endpoint.api_key_env", endpoint["base_url"])
        if key is not None and rule not in needed.setdefault(key, []):
            needed[key].append(rule)
    return needed


def check_api_keys(config: Mapping[str, Any], jobs: Iterable[tuple[str, Mapping[str, str]]],
                   environ: Mapping[str, str]) -> None:
    """Raise InputError naming every variable that the jobs to run need and `environ` lacks (or holds empty)."""
    missing = [(key, rules) for key, rules in needed_keys(config, jobs).items() if not environ.get(key.variable)]
    if missing:
        lines = [f"config key {key.config_key}: the environment variable {key.variable} is not set; {key.base_url} needs "
                 f"its API key there for the jobs of {', '.join(rules)} (export {key.variable}=...)" for key, rules in missing]
        raise InputError("; ".join(lines) + ". Nothing was sent. An endpoint on this machine needs no key; the cost "
                         "estimate (snakemake cost_estimate) needs none.")
