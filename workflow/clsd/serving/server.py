"""A local llama.cpp `llama-server` on 127.0.0.1, started for a generation job and always stopped.

When the job is interrupted (Ctrl-C, SIGTERM or SIGHUP: clsd.core.stopping) the server is killed at once
rather than left to finish the request it is computing.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from clsd.serving.server_variants import (FAULT_SIGNALS, checked_program, died_of, ggml_choice, install_folder,
                                          no_variant_message, probe, record_faults, view)

log = logging.getLogger(__name__)


class ServerDied(RuntimeError):
    """llama-server died of a fault signal (FAULT_SIGNALS) before it was ready or on its first request: a CPU variant
    that faults. `variant`: the one it had loaded, when it died after it was ready (else None: ggml's choice)."""

    def __init__(self, signal_name: str, variant: str | None) -> None:
        super().__init__(f"llama-server died of {signal_name} before it answered")
        self.signal = signal_name
        self.variant = variant


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(base_url: str, process: subprocess.Popen, timeout: float) -> None:
    """Poll `/models` until it answers 200; fail early if the process dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited with code {process.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise TimeoutError(f"llama-server not ready after {timeout:.0f} s")


SLOTS_BY_THREADS = ((2, 1),)  # (up to this many threads, slots): measured by bench/generate.py (docs/benchmarks.md)
MAX_AUTO_SLOTS = 4
LOADED_VARIANT = re.compile(r"libggml-cpu-([\w.]+)\.so")


def server_program(configured: str | None = None) -> Path:
    """The llama-server binary: `generation.local.server` when set, else the one install.sh built into this
    environment (beside its python), else `llama-server` on PATH."""
    if configured:
        path = Path(os.path.expanduser(configured))
        if not path.is_file():
            raise FileNotFoundError(f"config key generation.local.server: no llama-server at {path}")
        return path
    beside = Path(sys.executable).parent / "llama-server"
    if beside.is_file():
        return beside
    found = shutil.which("llama-server")
    if found is None:
        raise FileNotFoundError("llama-server not found: run `bash install.sh` (it builds it into .venv), or set "
                                "generation.local.server to a llama.cpp llama-server binary")
    return Path(found)


def speculative_args(speculative: Mapping[str, object] | None) -> list[str]:
    """llama-server's arguments for `generation.local.speculative` ({type, lookup, draft}; None or type none: off).

    Model-free speculative decoding (prompt lookup): the server drafts the tokens that followed the last `lookup`
    tokens where they occurred before in the context, and verifies them in one batch with the request's own sampler.
    A distractor repeats most of its target, which is in the prompt, and of the distractors before it. The types
    accepted are the config schema's enum."""
    if not speculative or speculative["type"] == "none":
        return []
    kind = speculative["type"]
    return ["--spec-type", str(kind), f"--spec-{kind}-size-n", str(speculative["lookup"]),
            f"--spec-{kind}-size-m", str(speculative["draft"])]


def auto_slots(threads: int) -> int:
    """Requests a local server decodes at once when `generation.local.slots` is null: one on 2 cores, where
    decoding is compute-bound and more slots gave no more tokens/s (bench/generate.py); more on larger machines,
    one per two threads up to MAX_AUTO_SLOTS, where one stream leaves cores idle."""
    for max_threads, slots in SLOTS_BY_THREADS:
        if threads <= max_threads:
            return slots
    return min(MAX_AUTO_SLOTS, threads // 2)


class LlamaServer:
    """Context manager: `with LlamaServer(gguf) as base_url:` serves the model with llama.cpp's llama-server and
    stops it on exit.

    `slots` requests are decoded at once (continuous batching), each with a context of `n_ctx` tokens;
    `speculative` ({type, lookup, draft}, `speculative_args`) turns on prompt-lookup drafting. `program` is the
    command before the server's arguments (llama-server; the tests give a stand-in that accepts the same
    arguments). Once ready, `info()` says what runs: program, slots, threads, speculative decoding and the CPU
    variant ggml loaded.
    """

    def __init__(self, gguf: str | Path, *, n_ctx: int = 2048, threads: int | None = None, slots: int = 1,
                 log_path: str | Path | None = None, startup_timeout: float = 180.0,
                 program: Sequence[str] | None = None, speculative: Mapping[str, object] | None = None) -> None:
        self.gguf = Path(gguf)
        self.n_ctx = n_ctx
        self.threads = threads
        self.slots = slots
        self.log_path = Path(log_path) if log_path else None
        self.startup_timeout = startup_timeout
        self.program = list(program) if program is not None else [str(server_program())]
        self.speculative = dict(speculative) if speculative and speculative["type"] != "none" else None
        self.process: subprocess.Popen | None = None
        self.returncode: int | None = None
        self.variant: str | None = None
        self.faulted: dict[str, str] = {}

    def command(self, port: int) -> list[str]:
        """The server's command line: the model on 127.0.0.1:`port`, `slots` parallel sequences sharing a context
        of slots × n_ctx tokens, `threads` for decoding and prompts, speculative decoding when set, no web page."""
        command = [*self.program, "--model", str(self.gguf), "--host", "127.0.0.1", "--port", str(port),
                   "--ctx-size", str(self.n_ctx * self.slots), "--parallel", str(self.slots), "--no-webui"]
        if self.threads:
            command += ["--threads", str(self.threads), "--threads-batch", str(self.threads)]
        return command + speculative_args(self.speculative)

    def __enter__(self) -> str:
        if not self.gguf.is_file():
            raise FileNotFoundError(f"GGUF model not found: {self.gguf}")
        folder = install_folder(self.program[0])
        if folder is None:  # a user's own server, or a test's stand-in: started as it is
            return self._start(probe=False)
        program, self.faulted = checked_program(folder)
        pending: dict[str, str] = {}  # faulted in this job, recorded once the next variant has run the same model
        while True:
            self.program[0] = str(program)
            try:
                base_url = self._start(probe=True)
            except ServerDied as died:
                variant = died.variant or ggml_choice(folder, self.faulted | pending)
                pending[variant] = died.signal
                following = ggml_choice(folder, self.faulted | pending)
                if following is None:
                    raise RuntimeError(f"llama-server died of {died.signal} on every CPU variant left here: a fault of the "
                                       f"model or the program, not of a variant (nothing was recorded). "
                                       + no_variant_message(folder, self.faulted | pending)) from died
                log.warning("llama-server's CPU variant %s died of %s on this machine; restarting on %s", variant,
                            died.signal, following)
                program = view(folder, self.faulted | pending)
                continue
            if pending:
                record_faults(folder, pending)
                log.warning("recorded in %s: CPU variant(s) %s fault on this machine and are not loaded here again",
                            folder / "build.json", ", ".join(pending))
                self.faulted |= pending
            return base_url

    def _start(self, probe: bool) -> str:
        """Start the server and wait until it answers; with `probe`, ask it once (a few tokens, or one embedding)
        so that a CPU variant that faults in its kernels does so now. A server that dies of a fault signal
        meanwhile raises ServerDied."""
        port = free_port()
        log.info("starting llama-server on 127.0.0.1:%d with %s (%d slot(s), %s threads)", port, self.gguf.name, self.slots,
                 self.threads or "default")
        output = self.log_path.open("ab") if self.log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(self.command(port), stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if self.log_path:
            output.close()  # the server holds its own copy
        base_url = f"http://127.0.0.1:{port}/v1"
        self.variant = None
        try:
            wait_ready(base_url, self.process, self.startup_timeout)
            self.variant = self._loaded_variant()  # while it lives: the variant a fault below is held against
            if probe:
                self._probe(base_url)
        except BaseException as exc:
            signal_name = died_of(self.process.poll())  # before stop(), whose kill would read as a signal too
            self.stop(at_once=True)
            if isinstance(exc, KeyboardInterrupt) or signal_name is None:
                raise
            if signal_name in FAULT_SIGNALS:
                raise ServerDied(signal_name, self.variant) from exc
            raise RuntimeError(f"llama-server was ended by {signal_name} before it answered (out of memory, or stopped "
                               "from outside?)") from exc
        return base_url

    def _probe(self, base_url: str) -> None:
        """One small request (clsd.serving.server_variants.probe). A server that dies of it raises RuntimeError; one
        that lives but answers with an error is left to the job's own requests, which report it."""
        try:
            probe(base_url, "--embeddings" in self.program, self.startup_timeout)
        except (OSError, ValueError) as exc:
            try:  # a fault while answering ends the process just after the connection
                self.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                log.debug("llama-server's first answer failed (%s); it runs on", exc)
                return
            raise RuntimeError(f"llama-server exited with code {self.process.returncode} on its first request") from exc

    def _loaded_variant(self) -> str | None:
        """The CPU backend variant ggml loaded (`libggml-cpu-zen4.so` -> `zen4`), from the libraries the server
        process has mapped (Linux; None elsewhere, or for a build with a single CPU backend)."""
        try:
            maps = Path(f"/proc/{self.process.pid}/maps").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        match = LOADED_VARIANT.search(maps)
        return match.group(1) if match else None

    def info(self) -> dict[str, object]:
        """What serves the requests, for the generation report."""
        return {"server": Path(self.program[0]).name, "slots": self.slots, "threads": self.threads,
                "speculative": self.speculative, "cpu_variant": self.variant, "cpu_variants_faulting": self.faulted}

    def exit_code(self) -> int | None:
        """The server's exit code once its process has ended (crashed, killed, or stopped), else None."""
        if self.process is not None:
            return self.process.poll()
        return self.returncode

    def stop(self, *, at_once: bool = False) -> None:
        """Terminate the server (kill it after 15 s), or kill it at once (`at_once`: the job is being interrupted)."""
        if self.process is not None and self.process.poll() is None:
            if at_once:
                self.process.kill()
            else:
                self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            self.returncode = self.process.returncode
            log.info("llama-server stopped (exit code %s)", self.returncode)
        self.process = None

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        self.stop(at_once=exc_type is not None)
