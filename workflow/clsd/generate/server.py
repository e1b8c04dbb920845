"""A local llama.cpp server (llama-cpp-python) on 127.0.0.1, started for a generation job and always stopped.

When the job is interrupted (Ctrl-C, or SIGTERM through `sigterm_as_interrupt`) the server is killed at once
rather than left to finish the request it is computing.
"""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

log = logging.getLogger(__name__)


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
            raise RuntimeError(f"llama.cpp server exited with code {process.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise TimeoutError(f"llama.cpp server not ready after {timeout:.0f} s")


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM (Snakemake or SLURM cancelling the job) raises KeyboardInterrupt like Ctrl-C, so
    the same cleanup runs: the local server is stopped and the job exits at once (Python's default for
    SIGTERM is to die on the spot, leaving the server behind)."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


LLAMA_CPP_SERVER = (sys.executable, "-m", "llama_cpp.server")


class LlamaServer:
    """Context manager: `with LlamaServer(gguf) as base_url:` serves the model and stops it on exit.

    `program` is the command before its `--model/--host/--port/--n_ctx` arguments (llama-cpp-python's server;
    the tests give a stand-in that accepts the same arguments).
    """

    def __init__(self, gguf: str | Path, *, n_ctx: int = 2048, threads: int | None = None, log_path: str | Path | None = None,
                 startup_timeout: float = 180.0, program: Sequence[str] = LLAMA_CPP_SERVER) -> None:
        self.gguf = Path(gguf)
        self.n_ctx = n_ctx
        self.threads = threads
        self.log_path = log_path
        self.startup_timeout = startup_timeout
        self.program = list(program)
        self.process: subprocess.Popen | None = None
        self.returncode: int | None = None

    def __enter__(self) -> str:
        if not self.gguf.is_file():
            raise FileNotFoundError(f"GGUF model not found: {self.gguf}")
        port = free_port()
        command = [*self.program, "--model", str(self.gguf), "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.n_ctx)]
        if self.threads:
            command += ["--n_threads", str(self.threads)]
        output = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        log.info("starting llama.cpp server on 127.0.0.1:%d with %s", port, self.gguf.name)
        self.process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        if self.log_path:
            output.close()  # the server holds its own copy
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            wait_ready(base_url, self.process, self.startup_timeout)
        except BaseException:
            self.stop(at_once=True)
            raise
        return base_url

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
            log.info("llama.cpp server stopped (exit code %s)", self.returncode)
        self.process = None

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        self.stop(at_once=exc_type is not None)
