"""Benchmark: the local LLM's speed on each of llama-server's CPU variants that runs on this machine, side by side.

Why: a VM may list AMX and fault at its first tile instruction; the server then falls to the next variant the
install has (clsd.serving.server_build builds the best without AMX for such CPUs). This measures what that fallback
is worth: the same requests, on a view of the install that holds one variant (clsd.serving.server_variants.view),
variant after variant in alternating rounds, reading prompt and decoding speed from llama-server's own timings.

    python bench/cpu_variants.py [--variants zen4,haswell] [--rounds 2] [--requests 3] [--threads 2]

The variants default to every one installed that has not faulted on this machine (build.json). Run on an idle
machine. Prints and writes bench/results/cpu-variants.json (or --out), with the CPU's instruction sets.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import urllib.request
from pathlib import Path

from _common import log, log_to_stdout, write_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from clsd.core.provenance import cpu_features  # noqa: E402
from clsd.serving.model_store import RECIPES, materialise  # noqa: E402
from clsd.serving.server import LlamaServer, free_port, wait_ready  # noqa: E402
from clsd.serving.server_build import machine_key  # noqa: E402
from clsd.serving.server_variants import faulting, install_folder, variant_files, view  # noqa: E402

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
STORE = Path("~/.cache/clsd/models").expanduser()
# a generation-sized prompt (about 290 tokens) of news German, the kind of sentence the local LLM is asked about
PROMPT = ("Write four German sentences that differ in meaning from the one below but share most of its words. "
          + "Der Stadtrat von Lyon hat am Dienstag den Bau von drei neuen Grundschulen genehmigt, teilte die Stadt mit. " * 6)


def timed_requests(program: Path, gguf: Path, threads: int, requests: int, decoded: int) -> list[dict[str, float]]:
    """llama-server's timings of `requests` greedy completions (each prompt new: no cache), on `program` as it is:
    not through LlamaServer's start, which would leave a view for the install's own choice of variant."""
    port = free_port()
    server = subprocess.Popen(LlamaServer(gguf, threads=threads, program=[str(program)]).command(port),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}/v1", server, timeout=300)
        found = []
        for i in range(requests):
            body = json.dumps({"prompt": f"{PROMPT} ({i})", "n_predict": decoded, "temperature": 0,
                               "cache_prompt": False}).encode()
            request = urllib.request.Request(f"http://127.0.0.1:{port}/completion", body, {"Content-Type": "application/json"})
            timings = json.load(urllib.request.urlopen(request, timeout=600))["timings"]
            found.append({key: timings[key] for key in ("prompt_n", "prompt_per_second", "predicted_n", "predicted_per_second")})
        return found
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", help="comma list (default: every installed variant not faulting here)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=3, help="requests per variant and round")
    parser.add_argument("--decoded", type=int, default=160, help="tokens decoded per request")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/cpu-variants.json")
    args = parser.parse_args()
    log_to_stdout()
    folder = install_folder(Path(sys.executable).parent / "llama-server")
    if folder is None:
        raise SystemExit("no llama-server install beside this Python (bash install.sh builds it)")
    installed = variant_files(folder)
    faults = faulting(folder, machine_key())
    variants = args.variants.split(",") if args.variants else [v for v in installed if v not in faults]
    unknown = [v for v in variants if v not in installed]
    if unknown:
        raise SystemExit(f"not installed: {', '.join(unknown)} (installed: {', '.join(installed)})")
    gguf = materialise(RECIPES[MODEL], STORE / MODEL) / RECIPES[MODEL].weights
    cpu = cpu_features()
    log.info("CPU: %s, %d logical CPUs, %s; faulting here: %s", cpu["model"], cpu["logical_cpus"],
             cpu["instruction_sets"], faults or "none")
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    for round_ in range(args.rounds):
        for variant in variants:
            program = view(folder, [other for other in installed if other != variant])
            runs[variant] += timed_requests(program, gguf, args.threads, args.requests, args.decoded)
            log.info("round %d, %s: %d requests", round_ + 1, variant, len(runs[variant]))
    figures = {"cpu": cpu, "model": MODEL, "threads": args.threads, "faulting": faults, "variants": {}}
    for variant, rows in runs.items():
        prompt = [r["prompt_per_second"] for r in rows]
        decode = [r["predicted_per_second"] for r in rows]
        figures["variants"][variant] = {
            "requests": len(rows), "prompt_tokens": rows[0]["prompt_n"], "decoded_tokens": rows[0]["predicted_n"],
            "prompt_per_second": {"median": statistics.median(prompt), "min": min(prompt), "max": max(prompt)},
            "decoded_per_second": {"median": statistics.median(decode), "min": min(decode), "max": max(decode)}}
        log.info("%-14s prompt %.1f tokens/s (%.1f-%.1f), decoding %.1f tokens/s (%.1f-%.1f)", variant,
                 statistics.median(prompt), min(prompt), max(prompt), statistics.median(decode), min(decode), max(decode))
    write_figures(args.out, figures)


if __name__ == "__main__":
    main()
