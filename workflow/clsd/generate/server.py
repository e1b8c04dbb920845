"""A local llama.cpp server (llama-cpp-python) on 127.0.0.1, started for a generation job and always stopped."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

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


class LlamaServer:
    """Context manager: `with LlamaServer(gguf) as base_url:` serves the model and stops it on exit."""

    def __init__(self, gguf: str | Path, *, n_ctx: int = 2048, threads: int | None = None, log_path: str | Path | None = None,
                 startup_timeout: float = 180.0) -> None:
        self.gguf = Path(gguf)
        self.n_ctx = n_ctx
        self.threads = threads
        self.log_path = log_path
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> str:
        if not self.gguf.is_file():
            raise FileNotFoundError(f"GGUF model not found: {self.gguf}")
        port = free_port()
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.gguf), "--host", "127.0.0.1",
                   "--port", str(port), "--n_ctx", str(self.n_ctx)]
        if self.threads:
            command += ["--n_threads", str(self.threads)]
        output = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        log.info("starting llama.cpp server on 127.0.0.1:%d with %s", port, self.gguf.name)
        self.process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            wait_ready(base_url, self.process, self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        return base_url

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
