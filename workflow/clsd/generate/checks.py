"""Config checks of stage generate: the LLM endpoint or local server, its prompts and response store, the
rule-based baseline's word lists.

Called by clsd.config.check while the Snakefile is parsed, so a bad config fails before any job starts, naming
the key."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from clsd.core.errors import InputError
from clsd.core.languages import language
from clsd.core.workflow import root
from clsd.generate.jobs import llm_datasets, uses_llm
from clsd.serving.checks import check_server_installed, check_store_path, check_url
from clsd.serving.model_store import RECIPES


def default_generator_label(config: dict[str, Any], kind: str) -> str:
    """Label recorded with generated distractors when the config names none."""
    return {"llm": f"llm:{config['generation']['model']}", "rules": "rules-v1"}.get(kind, "published")


def check_word_lists(dataset: str, lang: str) -> None:
    """The rule-based baseline needs the language's word lists (the registry's `rules`), valid against their schema."""
    from clsd.core.languages import registry_file
    from clsd.generate.rules_based import read_word_lists

    entry = language(lang)
    if entry.rules is None:
        raise InputError(f"config key datasets.{dataset}.distractors.kind: the rule-based baseline has no word lists for "
                         f"{lang} ({entry.name}); use llm or a published CSV, or add them: write resources/rules/{lang}.yaml "
                         f"(cycles, antonyms, negation: schema workflow/schemas/rules.schema.yaml, e.g. resources/rules/"
                         f"de.yaml) and set `rules: {lang}.yaml` in the entry of {lang} in {registry_file()}")
    read_word_lists(root() / "resources" / "rules" / entry.rules)


def check_generation(config: dict[str, Any]) -> None:
    """LLM generation must have a prompt file and an endpoint or a local model; the judge its prompt file."""
    if not uses_llm(config):
        return
    generation = config["generation"]
    if llm_datasets(config):
        check_template(generation["prompt"], "generation.prompt", ("{language}", "{sentence}"))
    if config["validation"]["judge"]:
        placeholder = "{distractors}" if config["validation"]["judge_per"] == "item" else "{distractor}"
        check_template(config["validation"]["judge_prompt"], "validation.judge_prompt", ("{language}", "{target}", placeholder))
    check_store_path(generation["store"], "config key generation.store")
    if generation["base_url"] is not None:
        check_url(generation["base_url"], "config key generation.base_url")
        check_remote_endpoint(config)
    elif generation["batch"] and llm_datasets(config):
        raise InputError("config key generation.batch: a Batch API needs a remote endpoint; set generation.base_url "
                         "(e.g. https://api.openai.com/v1), or batch: false for the local llama.cpp server")
    elif generation["batch_output"] is not None and llm_datasets(config):
        raise InputError("config key generation.batch_output: set generation.base_url to the endpoint the batch runner "
                         "serves the model as (e.g. http://localhost:8000/v1): it is part of every request key")
    if generation["batch_output"] is not None and not all(p in generation["batch_output"] for p in ("{dataset}", "{lang}")):
        raise InputError(f"config key generation.batch_output: {generation['batch_output']!r} lacks {{dataset}} or {{lang}}: "
                         "each job reads its own output file (e.g. vllm/{dataset}.{lang}.output.jsonl)")
    local = generation["local"]
    if generation["base_url"] is None:
        if local["gguf"] is not None and not Path(os.path.expanduser(local["gguf"])).is_file():
            raise InputError(f"config key generation.local.gguf: {local['gguf']!r} not found")
        if local["gguf"] is None and local["recipe"] not in RECIPES:
            raise InputError(f"config key generation.local.recipe: unknown recipe {local['recipe']!r}")
        if local["server"] is not None and not Path(os.path.expanduser(local["server"])).is_file():
            raise InputError(f"config key generation.local.server: {local['server']!r} not found")
        if llm_datasets(config):
            check_server_installed(local["server"])


def check_remote_endpoint(config: dict[str, Any]) -> None:
    """A base_url on this machine (a local vLLM or llama.cpp server) has no Batch API, which is a hosted service. (API
    keys are checked once the jobs to run are known: clsd.core.api_keys, from the workflow's onstart.)"""
    from clsd.core.urls import on_this_machine

    generation = config["generation"]
    if on_this_machine(generation["base_url"]) and generation["batch"] and llm_datasets(config):
        raise InputError(f"config key generation.batch: generation.base_url {generation['base_url']} is on this machine, "
                         "and a Batch API is a hosted service (OpenAI's Files and Batches); set batch: false, or write "
                         "the requests for vLLM's run_batch (rule generation_requests) and read its output with "
                         "generation.batch_output")


def check_template(path: str, key: str, placeholders: tuple[str, ...]) -> None:
    """A prompt template must exist and hold each of its placeholders: without `{sentence}` every request would
    ask about nothing, without `{language}` it would not say which language to answer in."""
    template = Path(path)
    if not template.is_file():
        raise InputError(f"config key {key}: template {path!r} not found")
    missing = [name for name in placeholders if name not in template.read_text(encoding="utf-8")]
    if missing:
        raise InputError(f"config key {key}: template {path!r} lacks the placeholder(s) {', '.join(missing)} "
                         f"(it must hold {', '.join(placeholders)})")
