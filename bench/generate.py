"""Benchmark: generation throughput against the test server (fixed 200 ms latency) at concurrency 1 vs 8,
as a ratio to the ideal N × latency / concurrency (target >= 0.8); with --llama also tokens/s and
requests/min of the local llama.cpp default at 1 vs 2 concurrent requests; and the seconds from Ctrl-C
(SIGINT to the job and its local server) or SIGTERM (to the job) to the job's exit, with a stand-in local
server (tests/gen_worker.py), and whether the server outlived the job.

Usage: python bench/generate.py [--n 200] [--llama 6]
Prints and writes bench/results/generate.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from clsd.generate import llm  # noqa: E402
from clsd.generate.client import ChatClient  # noqa: E402
from clsd.generate.settings import Settings  # noqa: E402
from clsd.generate.store import ResponseStore  # noqa: E402

log = logging.getLogger("bench.generate")
TEMPLATE = (ROOT / "resources/prompts/paper-v1.txt").read_text(encoding="utf-8")


def run(base_url: str, model: str, items: list[tuple[int, str]], concurrency: int, store: Path, timeout: float = 60) -> dict:
    settings = Settings(model=model, template=TEMPLATE, endpoint=base_url, concurrency=concurrency, max_attempts=1)
    generator = llm.Generator(settings, ResponseStore(store), lambda: ChatClient(base_url=base_url, api_key="bench", timeout=timeout,
                                                                                 retries=0, requests_per_minute=None))
    start = time.perf_counter()
    _, report = llm.generate(items, "de", generator, {}, "bench")
    seconds = time.perf_counter() - start
    return {"concurrency": concurrency, "requests": report["http_requests"], "seconds": seconds,
            "completion_tokens": report["new_completion_tokens"]}


def fault_server_figures(n: int, latency: float) -> dict:
    from fault_server import FaultServer

    items = [(i, f"Der Stadtrat Nummer {i} hat den Bau genehmigt.") for i in range(n)]
    results = {}
    with FaultServer(latency=latency) as server, tempfile.TemporaryDirectory() as tmp:
        for concurrency in (1, 8):
            figures = run(server.base_url, "fault", items, concurrency, Path(tmp) / f"c{concurrency}.sqlite")
            ideal = n * latency / concurrency
            figures |= {"ideal_seconds": ideal, "ratio_to_ideal": ideal / figures["seconds"]}
            log.info("test server, %d requests, concurrency %d: %.2f s (ideal %.2f s, ratio %.2f, target >= 0.8)",
                     n, concurrency, figures["seconds"], ideal, figures["ratio_to_ideal"])
            results[f"concurrency_{concurrency}"] = figures
    return results


def llama_figures(n: int) -> dict:
    from clsd.generate.server import LlamaServer

    gguf = Path("~/.cache/clsd/models/qwen2.5-coder-1.5b-instruct-q4_k_m/model.gguf").expanduser()
    sentences = (ROOT.parent / "shared/data/wmt/newstest2019.de-fr.src.de").read_text(encoding="utf-8").splitlines()
    results = {}
    with LlamaServer(gguf) as base_url, tempfile.TemporaryDirectory() as tmp:
        for concurrency in (1, 2):
            items = [(i, s) for i, s in enumerate(sentences[concurrency * n : (concurrency + 1) * n])]
            figures = run(base_url, "qwen", items, concurrency, Path(tmp) / f"l{concurrency}.sqlite", timeout=300)
            figures |= {"tokens_per_s": figures["completion_tokens"] / figures["seconds"],
                        "requests_per_min": 60 * figures["requests"] / figures["seconds"]}
            log.info("llama.cpp, %d requests, concurrency %d: %.1f completion tokens/s, %.1f requests/min",
                     figures["requests"], concurrency, figures["tokens_per_s"], figures["requests_per_min"])
            results[f"concurrency_{concurrency}"] = figures
    return results


def stored(store: Path) -> int:
    """Responses in the store so far (0 while the worker is still creating it)."""
    try:
        return sqlite3.connect(f"file:{store}?mode=ro", uri=True).execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def interrupt_seconds(signum: signal.Signals, to_group: bool, store: Path) -> dict:
    """Start a 40-item local run (stand-in server answering in 0.3 s), signal it once 4 answers are stored, and time
    its exit."""
    command = [sys.executable, str(ROOT / "tests/gen_worker.py"), "local", str(store), "40", "2", "0.3"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while stored(store) < 4:
        time.sleep(0.05)
    start = time.perf_counter()
    if to_group:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)
    process.wait()
    seconds = time.perf_counter() - start
    try:
        os.killpg(process.pid, signal.SIGKILL)  # whatever outlived the job
        survived = True
    except ProcessLookupError:
        survived = False
    return {"seconds_to_exit": round(seconds, 2), "server_outlived_job": survived}


def interrupt_figures() -> dict:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, signum, to_group in (("sigint_to_group", signal.SIGINT, True), ("sigterm_to_job", signal.SIGTERM, False)):
            results[name] = interrupt_seconds(signum, to_group, Path(tmp) / f"{name}.sqlite")
            log.info("local run, %s: exit %.2f s after the signal, server outlived the job: %s", name,
                     results[name]["seconds_to_exit"], results[name]["server_outlived_job"])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--llama", type=int, default=0, help="requests per concurrency level on the local LLM (0: skip)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/generate.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    for noisy in ("httpx2", "httpx", "aiohttp.access", "clsd"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    result = {"test_server": fault_server_figures(args.n, args.latency), "interrupt": interrupt_figures()}
    if args.llama:
        result["llama_cpp"] = llama_figures(args.llama)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
