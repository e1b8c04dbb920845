"""Benchmark: what the validation judge costs per 100 distractors on the local llama.cpp default (requests,
seconds, tokens), and what it says about the default run's distractors (share judged equivalent).

The distractors are those of the embedded default run (results/validated/sample/*.parquet: run `snakemake
--cores 2` first); the judge asks through the jobs' endpoint factory with a fresh response store, so every
request is a real one.

Usage: python bench/judge.py [--limit 100]
Prints and writes bench/results/judge.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from clsd.core.io import read_table  # noqa: E402
from clsd.generate.endpoint import open_endpoint  # noqa: E402
from clsd.validate.judge import Judge, judge_settings  # noqa: E402

log = logging.getLogger("bench.judge")
GGUF = Path("~/.cache/clsd/models/qwen2.5-coder-1.5b-instruct-q4_k_m/model.gguf").expanduser()


def pairs(limit: int) -> list[tuple[str, str, str]]:
    """(lang, target, distractor) of the default run's validated distractors, both languages, first `limit`."""
    parallel = read_table(ROOT / "results/data/sample/parallel.parquet")
    rows = []
    for lang in ("de", "fr"):
        targets = dict(zip(parallel["id"].to_list(), parallel[lang].to_list()))
        distractors = read_table(ROOT / f"results/validated/sample/{lang}.parquet")
        rows += [(lang, targets[i], text) for i, text in distractors.select("id", "text").iter_rows()]
    return rows[:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/judge.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    for noisy in ("httpx", "httpx2", "clsd"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    template = (ROOT / "resources/prompts/judge-v2.txt").read_text(encoding="utf-8")
    work = pairs(args.limit)
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        generation = {"model": "qwen2.5-coder-1.5b-instruct", "base_url": None, "local": {"gguf": str(GGUF), "n_ctx": 2048},
                      "store": str(Path(tmp) / "judge.sqlite"), "seed": None, "concurrency": 1, "timeout": 120, "retries": 0,
                      "requests_per_minute": None}
        with open_endpoint({"generation": generation}, [], 2, None) as endpoint:
            generator = endpoint.generator(judge_settings(generation, template, endpoint.id))
            judges = {lang: Judge(generator, template, lang) for lang in ("de", "fr")}
            endpoint.client()  # the local server starts before the clock does
            start = time.perf_counter()
            for lang, target, distractor in work:
                verdicts.append(judges[lang](target, distractor))
            seconds = time.perf_counter() - start
    tally = generator.tally
    per_100 = 100 / len(work)
    result = {
        "distractors": len(work), "model": "qwen2.5-coder-1.5b-instruct-q4_k_m (llama.cpp, 2 threads)",
        "requests": tally.new_responses, "seconds": round(seconds, 1),
        "per_100_distractors": {"requests": round(tally.new_responses * per_100, 1), "seconds": round(seconds * per_100, 1),
                                "prompt_tokens": round(tally.new_prompt_tokens * per_100), "completion_tokens": round(tally.new_completion_tokens * per_100)},
        "judged_equivalent": sum(v is True for v in verdicts), "judged_different": sum(v is False for v in verdicts),
        "unclear": sum(v is None for v in verdicts),
    }
    log.info("judge on %d distractors: %d requests in %.1f s; per 100 distractors %.1f requests, %.1f s; "
             "equivalent %d, different %d, unclear %d", len(work), result["requests"], seconds,
             result["per_100_distractors"]["requests"], result["per_100_distractors"]["seconds"],
             result["judged_equivalent"], result["judged_different"], result["unclear"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
