"""Benchmark: generation throughput against the test server (fixed 200 ms latency) at concurrency 1 vs 8,
as a ratio to the ideal N × latency / concurrency (target >= 0.8), and the seconds from Ctrl-C (SIGINT to the
job and its local server) or SIGTERM (to the job) to the job's exit with a stand-in local server
(tests/gen_worker.py), and whether the server outlived the job. With --llama N, the real local default
(Qwen2.5-Coder-1.5B Q4_K_M behind llama-server) on the first N German sample sentences per answer format and
slot count (completion tokens/s of wall time, seconds per item, share of items with four valid distractors at
the first ask), the CPU variant that ran, and the same interrupt figures with the real server.

Usage: python bench/generate.py [--n 200] [--llama 8] [--threads 2]
Prints and writes bench/results/generate.json, with the CPU's instruction sets.
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

from clsd.core.client import ChatClient  # noqa: E402
from clsd.generate import llm  # noqa: E402
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


LLAMA_CONFIGS = (("numbered", 1), ("json", 1), ("json", 2), ("json", 4), ("json", 8))


def sample_sentences(n: int, lang: str = "de") -> list[tuple[int, str]]:
    """The first `n` sentences of the project's sample in `lang` (the default run's sentences)."""
    import polars as pl

    column = {"de": "German", "fr": "French"}[lang]
    table = pl.read_csv(ROOT / "resources/sample/clsd_sample.csv")
    return list(zip(table["Index"].to_list()[:n], table[column].to_list()[:n]))


def llama_run(gguf: Path, items: list[tuple[int, str]], answer_format: str, slots: int, threads: int, store: Path) -> dict:
    """One configuration on a fresh server and store: the paper's prompt at T = 1, one ask per item (so the share
    generated is the share with four valid distractors at the first ask, by the validator's rules)."""
    from clsd.generate.server import LlamaServer
    from clsd.validate.rules import Validator

    settings = Settings(model="qwen", template=TEMPLATE, endpoint="gguf:bench", concurrency=slots, max_attempts=1,
                        answer_format=answer_format)
    server = LlamaServer(gguf, threads=threads, slots=slots)
    with server as base_url:
        generator = llm.Generator(settings, ResponseStore(store), lambda: ChatClient(base_url=base_url, api_key="local", timeout=600,
                                                                                     retries=0, requests_per_minute=None),
                                  Validator("de"))
        start = time.perf_counter()
        _, report = llm.generate(items, "de", generator, {}, "bench")
        seconds = time.perf_counter() - start
    figures = {"answer_format": answer_format, "slots": slots, "threads": threads, "cpu_variant": server.variant,
               "items": len(items), "requests": report["http_requests"], "seconds": round(seconds, 1),
               "seconds_per_item": round(seconds / len(items), 2),
               "completion_tokens": report["new_completion_tokens"],
               "tokens_per_s": round(report["new_completion_tokens"] / seconds, 1),
               "four_valid_at_first_ask": f"{report['generated']} of {len(items)}",
               "share_four_valid_at_first_ask": round(report["generated"] / len(items), 2),
               "rejects": report["rejects"]}
    log.info("llama-server (%s), %s, %d slot(s), %d threads: %.1f completion tokens/s, %.1f s/item, four valid at first ask %s",
             server.variant, answer_format, slots, threads, figures["tokens_per_s"], figures["seconds_per_item"],
             figures["four_valid_at_first_ask"])
    return figures


def llama_figures(n: int, threads: int) -> dict:
    """The local default (Qwen2.5-Coder-1.5B Q4_K_M behind llama-server) per answer format and slot count."""
    gguf = Path("~/.cache/clsd/models/qwen2.5-coder-1.5b-instruct-q4_k_m/model.gguf").expanduser()
    items = sample_sentences(n)
    build = json.loads((Path(sys.executable).parent / "llama-server").resolve().with_name("build.json").read_text())
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, (answer_format, slots) in enumerate(LLAMA_CONFIGS):
            runs.append(llama_run(gguf, items, answer_format, slots, threads, Path(tmp) / f"{number}.sqlite"))
    return {"server": "llama-server", "build": {k: build[k] for k in ("source", "variants")}, "runs": runs}


def stored(store: Path) -> int:
    """Responses in the store so far (0 while the worker is still creating it)."""
    try:
        return sqlite3.connect(f"file:{store}?mode=ro", uri=True).execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def interrupt_seconds(signum: signal.Signals, to_group: bool, store: Path, real: bool) -> dict:
    """Start a 40-item local run (the stand-in server answering in 0.3 s, or with `real` llama-server and the real
    model), signal it once 2 answers are stored, and time its exit."""
    command = [sys.executable, str(ROOT / "tests/gen_worker.py"), "llama" if real else "local", str(store), "40", "2", "0.3"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while stored(store) < 2:
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


def interrupt_figures(real: bool = False) -> dict:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, signum, to_group in (("sigint_to_group", signal.SIGINT, True), ("sigterm_to_job", signal.SIGTERM, False)):
            results[name] = interrupt_seconds(signum, to_group, Path(tmp) / f"{name}.sqlite", real)
            log.info("local run (%s), %s: exit %.2f s after the signal, server outlived the job: %s",
                     "llama-server" if real else "stand-in server", name, results[name]["seconds_to_exit"],
                     results[name]["server_outlived_job"])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--llama", type=int, default=0, help="German sample sentences per configuration of the local LLM (0: skip)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="threads of the local LLM")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/generate.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    for noisy in ("httpx2", "httpx", "aiohttp.access", "clsd"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    from clsd.core.provenance import cpu_features

    result = {"cpu": cpu_features(), "test_server": fault_server_figures(args.n, args.latency), "interrupt": interrupt_figures()}
    if args.llama:
        result["llama_cpp"] = llama_figures(args.llama, args.threads)
        result["interrupt_llama_server"] = interrupt_figures(real=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
