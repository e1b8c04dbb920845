"""Benchmark: the validation judge per item against per distractor on the local llama.cpp default — what each costs
per 100 distractors (requests, seconds, prompt and completion tokens) and whether they give the same verdicts.

The items alternate between the sample's (four hand-written distractors that change the meaning) and the hand-made
validation pairs grouped by target (copies, surface edits and harmless reorders keep the meaning). Both judges ask through the jobs' endpoint factory with a fresh
response store, so every request is a real one. A 1.5B model is a weak judge: a strong model must be measured by
its user (the same script with another endpoint).

Usage: python bench/judge.py [--limit 60]
Prints and writes bench/results/judge.json (with the CPU it ran on).
"""

from __future__ import annotations

import argparse
import csv
import logging
import sys
import tempfile
import time
from pathlib import Path

from _common import log_to_stdout, write_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from clsd.core.provenance import cpu_features  # noqa: E402
from clsd.generate.llm_endpoint import open_endpoint  # noqa: E402
from clsd.validate.judge import ItemJudge, Judge, judge_settings  # noqa: E402
from clsd.validate.reliability import hand_made  # noqa: E402

log = logging.getLogger("bench.judge")
GGUF = Path("~/.cache/clsd/models/qwen2.5-coder-1.5b-instruct-q4_k_m/model.gguf").expanduser()
#: True verdicts of a distractor that keeps its target's meaning.
SAME = {"copy", "surface_only", "reorder"}


def items(limit: int) -> list[tuple[str, str, list[str], list[bool]]]:
    """(lang, target, distractors, keeps the meaning) of whole items, the first `limit` distractors in all: the
    sample's items (resources/sample/clsd_sample.csv: four hand-written distractors each, all of them changes of
    meaning), in turn with the hand-made pairs (resources/validation/{de,fr}.yaml) grouped by target, where copies,
    surface edits and harmless reorders keep the meaning (misspellings and other languages left out: no judge
    question)."""
    sample = []
    with (ROOT / "resources/sample/clsd_sample.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            for lang, column in (("de", "German"), ("fr", "French")):
                texts = [row[f"{lang}_adv{k}"] for k in range(1, 5)]
                sample.append((lang, row[column], texts, [False] * 4))
    grouped: dict[tuple[str, str], list[tuple[str, bool]]] = {}
    for lang in ("de", "fr"):
        for case in hand_made(lang):
            if case["verdict"] not in ("non_word", "wrong_language"):
                group = grouped.setdefault((lang, case["target"]), [])
                if len(group) < 4:
                    group.append((case["distractor"], case["verdict"] in SAME))
    hand = [(lang, target, [t for t, _ in group], [same for _, same in group]) for (lang, target), group in grouped.items()]
    chosen, total = [], 0
    for item in (item for pair in zip(sample, hand) for item in pair):
        if total >= limit:
            break
        chosen.append(item)
        total += len(item[2])
    return chosen


def run(per: str, work: list[tuple[str, str, list[str], list[bool]]], template: str, tmp: Path) -> dict:
    """Judge every distractor of `work` per item or per distractor; its figures and verdicts."""
    generation = {"model": "qwen2.5-coder-1.5b-instruct", "base_url": None, "local": {"gguf": str(GGUF), "n_ctx": 2048,
                  "slots": 1, "server": None}, "store": str(tmp / f"{per}.sqlite"), "seed": None, "concurrency": 1,
                  "timeout": 300, "retries": 0, "requests_per_minute": None, "answer_format": "json"}
    with open_endpoint({"generation": generation}, [], 2, None) as endpoint:
        generator = endpoint.generator(judge_settings(generation, template, endpoint.id, per=per))
        judges = {lang: (ItemJudge(generator, template, lang, json_answer=True) if per == "item"
                         else Judge(generator, template, lang)) for lang in ("de", "fr")}
        endpoint.client()  # the local server starts before the clock does
        start = time.perf_counter()
        verdicts = []
        for lang, target, distractors, _ in work:
            judge = judges[lang]
            verdicts += judge(target, distractors) if per == "item" else [judge(target, text) for text in distractors]
        seconds = time.perf_counter() - start
    tally, n = generator.tally, len(verdicts)
    truth = [same for *_, keeps in work for same in keeps]
    return {
        "requests": tally.new_responses, "seconds": round(seconds, 1),
        "per_100_distractors": {"requests": round(100 * tally.new_responses / n, 1), "seconds": round(100 * seconds / n, 1),
                                "prompt_tokens": round(100 * tally.new_prompt_tokens / n),
                                "completion_tokens": round(100 * tally.new_completion_tokens / n)},
        "unclear": sum(v is None for v in verdicts),
        "right": sum(v is not None and v == same for v, same in zip(verdicts, truth)),
        "verdicts": verdicts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/judge.json")
    args = parser.parse_args()
    log_to_stdout("httpx", "httpx2", "clsd")
    work = items(args.limit)
    n = sum(len(distractors) for _, _, distractors, _ in work)
    result = {"distractors": n, "items": len(work), "model": "qwen2.5-coder-1.5b-instruct-q4_k_m (llama.cpp, 2 threads)",
              "cpu": cpu_features()}
    with tempfile.TemporaryDirectory() as tmp:
        for per, prompt in (("distractor", "judge-v2.txt"), ("item", "judge-item-v1.txt")):
            template = (ROOT / "resources/prompts" / prompt).read_text(encoding="utf-8")
            result[per] = run(per, work, template, Path(tmp))
            figures = result[per]["per_100_distractors"]
            log.info("per %s: %d requests in %.1f s; per 100 distractors %.1f requests, %.1f s, %d prompt and %d "
                     "completion tokens; %d of %d right, %d unclear", per, result[per]["requests"], result[per]["seconds"],
                     figures["requests"], figures["seconds"], figures["prompt_tokens"], figures["completion_tokens"],
                     result[per]["right"], n, result[per]["unclear"])
    pairs = list(zip(result["item"].pop("verdicts"), result["distractor"].pop("verdicts")))
    result["same_verdict"] = sum(a == b for a, b in pairs)
    log.info("the two judges agree on %d of %d distractors", result["same_verdict"], n)
    write_figures(args.out, result)


if __name__ == "__main__":
    main()
