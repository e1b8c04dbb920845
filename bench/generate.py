"""Benchmark: generation throughput against the test server (fixed 200 ms latency) at concurrency 1 vs 8,
as a ratio to the ideal N × latency / concurrency (target >= 0.8), and the seconds from Ctrl-C (SIGINT to the
job and its local server) or SIGTERM (to the job) to the job's exit with a stand-in local server
(tests/gen_worker.py), and whether the server outlived the job.

With --llama N, the real local default (Qwen2.5-Coder-1.5B Q4_K_M behind llama-server) on the first N sentences of
each language (--items: the hand-written sample, or real news, the published WMT19/WMT21 sets' first items; with
--quoting only targets that hold a straight double quote), setting
by setting on the same items in one run: each --settings entry names a prompt file, llama.cpp's own sampling (XTC or
none), a speculative decoding (see SAMPLING, SPECULATIVE) and optionally the candidates per answer and how quotes are shown
(generation.prompt_quotes)
(generation.candidates: above four, each item keeps the four closest to GPT-4's profile); --format and --slots apply to all. The default compares
today's shipped setting with the paper's prompt. Each setting starts its own server and store and runs the default
run's loop (re-asked up to --attempts times, validated by the rules, closeness included), and reports the seconds of
generation, seconds per item-language, completion tokens/s, drafted and accepted tokens, items with four valid
distractors at the first ask, copies and duplicates, the unknown words of the non_word rejects by kind
(bench/non_words.py: a word of the target broken, two run together, other), the share of every sentence written below
validation.min_closeness and below the Levenshtein ratio 0.6, the same for the kept distractors, the kept
distractors' closeness profile (share per Levenshtein-ratio bin, clsd.analysis.profile) with its gaps to GPT-4's
published sets (and, on news items, GPT-4's profile of the same items), and the share valid of all written; then the
interrupt figures with the real server.

Usage: python bench/generate.py [--n 200] [--llama 12 [--items wmt19 [--quoting]]
       [--settings paper-v1:none:none,local-v3:xtc-dry-8:none:6:curly] [--attempts 4] [--mend] [--fallbacks-wait]
       [--stores DIR]]
Prints and writes bench/results/generate.json, with the CPU's instruction sets. Run it on an otherwise idle machine:
llama.cpp falls to a few tokens/s when other processes compete for its cores.
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
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from _common import log_to_stdout, write_figures
from non_words import kinds as non_word_kinds

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from clsd.serving.client import ChatClient  # noqa: E402
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


#: Where `--items` takes its sentences: the project's hand-written sample (the default run's), or real news, the first
#: items of the authors' published WMT sets (../shared/data/clsd-published-sample), whose GPT-4 distractors give the
#: same items' reference profile.
ITEMS = {"sample": ROOT / "resources/sample/clsd_sample.csv",
         "wmt19": ROOT.parent / "shared/data/clsd-published-sample/CLSD_wmt2019_adversarial_dataset.head50.csv",
         "wmt21": ROOT.parent / "shared/data/clsd-published-sample/CLSD_wmt2021_adversarial_dataset.head50.csv"}
COLUMN = {"de": "German", "fr": "French"}
#: The reference profile kept distractors are measured against, and chosen by with more candidates than four.
REFERENCE = "resources/profiles/gpt-4-0613-wmt.yaml"


def item_rows(n: int, lang: str, items: str, quoting: bool = False) -> list[dict]:
    """The first `n` rows of the `items` set (ITEMS), with `quoting` only those whose sentence in `lang` holds a
    straight double quote (the targets a JSON answer must escape a quote of)."""
    import polars as pl

    table = pl.read_csv(ITEMS[items])
    if quoting:
        table = table.filter(pl.col(COLUMN[lang]).str.contains('"', literal=True))
    return table.head(n).to_dicts()


def sample_sentences(n: int, lang: str = "de", items: str = "sample", quoting: bool = False) -> list[tuple[int, str]]:
    """The first `n` sentences in `lang` of the `items` set (ITEMS; `quoting`: item_rows)."""
    return [(row["Index"], row[COLUMN[lang]]) for row in item_rows(n, lang, items, quoting)]


def published_profiles(n: int, langs: list[str], items: str, quoting: bool = False) -> dict:
    """The closeness profile of GPT-4's published distractors of the same items (item_rows), per language (none for
    the sample, which has no GPT-4 distractors)."""
    from clsd.analysis import profile
    from clsd.analysis.table3 import similarity

    if items == "sample":
        return {}
    return {lang: profile.record(profile.profile([similarity(row[COLUMN[lang]], row[f"{lang}_adv{k}"])
                                                  for row in item_rows(n, lang, items, quoting) for k in range(1, 5)]), None)
            for lang in langs}


def kept_profiles(kept: list[tuple[str, str, str]]) -> dict:
    """The closeness profile of the kept distractors per language, with its gaps to GPT-4's published full sets."""
    from clsd.analysis import profile
    from clsd.analysis.table3 import similarity

    reference = profile.read_reference(ROOT / REFERENCE)
    by_lang: dict[str, list[float]] = {}
    for lang, target, text in kept:
        by_lang.setdefault(lang, []).append(similarity(target, text))
    return {lang: profile.record(profile.profile(ratios), reference.languages.get(lang)) for lang, ratios in by_lang.items()}


#: Speculative settings by name (`--speculative`): generation.local.speculative values.
SPECULATIVE = {"none": {"type": "none"}, "simple-3-16": {"type": "ngram-simple", "lookup": 3, "draft": 16},
               "simple-3-8": {"type": "ngram-simple", "lookup": 3, "draft": 8},
               "simple-2-8": {"type": "ngram-simple", "lookup": 2, "draft": 8},
               "map-k-2-12": {"type": "ngram-map-k", "lookup": 2, "draft": 12}}


#: llama.cpp's own sampling parameters by name (`--settings`): generation.local.sampling values.
XTC = {"xtc_probability": 0.5, "xtc_threshold": 0.1}
#: DRY: a token that would extend a run of more than `dry_allowed_length` tokens already in the context (the target
#: sentence in the prompt, an earlier variant) is penalised, more the longer the run.
DRY = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_penalty_last_n": 4096}
SAMPLING = {"none": {}, "xtc-0.5-0.1": XTC, "xtc-0.3-0.15": {"xtc_probability": 0.3, "xtc_threshold": 0.15},
            "xtc-dry-8": XTC | DRY | {"dry_allowed_length": 8}, "xtc-dry-6": XTC | DRY | {"dry_allowed_length": 6},
            "xtc-dry-12": XTC | DRY | {"dry_allowed_length": 12},
            # the penalty grows by 1.3 a token, not 1.75: small inside a word, whose end the model is sure of,
            # large only a few tokens on (a misspelling is where a steep penalty lands mid-word)
            "xtc-dry-8-base-1.3": XTC | DRY | {"dry_allowed_length": 8, "dry_base": 1.3},
            # a flat penalty (base 1: every token past the allowed run is penalised by the multiplier, 3 logits)
            "xtc-dry-8-flat-3": XTC | DRY | {"dry_allowed_length": 8, "dry_base": 1.0, "dry_multiplier": 3.0}}
#: The shipped setting (local-v3, six candidates, XTC and DRY, no drafting) against its predecessor and the paper's
#: prompt: the comparisons in docs/benchmarks.md.
DEFAULT_SETTINGS = "paper-v1:none:none,local-v3:xtc-0.5-0.1:simple-3-16:6,local-v3:xtc-dry-8:none:6"


@dataclass(frozen=True)
class LlamaSetting:
    """One configuration of the local LLM: prompt file (resources/prompts/<prompt>.txt), llama.cpp sampling,
    speculative decoding, answer format and slots."""

    prompt: str
    sampling: str = "none"
    speculative: str = "none"
    answer_format: str = "json"
    slots: int = 1
    candidates: int = 4
    prompt_quotes: str = "as_written"
    max_tokens: int = 512
    constrain_script: bool = False

    @classmethod
    def parse(cls, spec: str, answer_format: str, slots: int) -> LlamaSetting:
        """`prompt:sampling:speculative[:candidates[:prompt_quotes[:max_tokens[:script]]]]` (names of SAMPLING and
        SPECULATIVE; generation.candidates, 4 when left out; generation.prompt_quotes, as_written when left out;
        generation.max_tokens, 512 when left out; `script`: generation.constrain_script), e.g.
        `local-v1:xtc-0.5-0.1:simple-3-16` or `local-v3:xtc-dry-8:none:8:curly:768:script`."""
        prompt, sampling, speculative, *rest = spec.split(":")
        if (sampling not in SAMPLING or speculative not in SPECULATIVE or len(rest) > 4
                or not all(r.isdigit() for r in rest[:1] + rest[2:3]) or rest[1:2] not in ([], ["as_written"], ["curly"])
                or rest[3:] not in ([], ["script"])):
            raise SystemExit(f"--settings {spec!r}: sampling one of {', '.join(SAMPLING)}, speculative one of "
                             f"{', '.join(SPECULATIVE)}, then optionally the candidates per answer, as_written or curly, "
                             f"max_tokens and script")
        return cls(prompt, sampling, speculative, answer_format, slots, int(rest[0]) if rest else 4,
                   rest[1] if len(rest) > 1 else "as_written", int(rest[2]) if len(rest) > 2 else 512, rest[3:] == ["script"])

    @property
    def name(self) -> str:
        return (f"{self.prompt}, sampling {self.sampling}, speculative {self.speculative}, {self.answer_format}, "
                f"{self.slots} slot(s), {self.candidates} candidates, quotes {self.prompt_quotes}, max_tokens {self.max_tokens}"
                + (", script constrained" if self.constrain_script else ""))


def closeness_figures(pairs: list[tuple[str, str, str]]) -> dict:
    """Of (lang, target, sentence) pairs: how many, the share below validation.min_closeness (clsd.validate.closeness)
    and below the Levenshtein (character) ratio 0.6, and the median ratio."""
    from rapidfuzz.distance import Indel

    from clsd.validate.closeness import MIN_CLOSENESS, closeness

    if not pairs:
        return {"n": 0}
    ratios = sorted(Indel.normalized_similarity(target, text) for _, target, text in pairs)
    return {"n": len(pairs),
            "below_min_closeness": round(sum(closeness(t, d, lang) < MIN_CLOSENESS for lang, t, d in pairs) / len(pairs), 3),
            "below_ratio_0_6": round(sum(r < 0.6 for r in ratios) / len(pairs), 3),
            "median_ratio": round(ratios[len(ratios) // 2], 3)}


def llama_run(gguf: Path, langs: list[str], n: int, setting: LlamaSetting, threads: int, attempts: int, store: Path,
              item_set: str = "sample", quoting: bool = False, mend: bool = False, fallbacks_wait: bool = False) -> dict:
    """One setting on a fresh server and store: the first `n` sentences of `item_set` per language at T = 1,
    re-asked up to `attempts` times as the default run does, validated by the validator's rules (closeness included),
    with generation.mend_broken_words (`mend`) and generation.fallbacks_wait as given."""
    from clsd.analysis import profile
    from clsd.serving.server import LlamaServer
    from clsd.validate.validator import Validator

    template = (ROOT / "resources/prompts" / f"{setting.prompt}.txt").read_text(encoding="utf-8")
    settings = Settings(model="qwen", template=template, endpoint="gguf:bench", concurrency=setting.slots,
                        max_attempts=attempts, max_tokens=setting.max_tokens, answer_format=setting.answer_format,
                        extra=tuple(sorted(SAMPLING[setting.sampling].items())), candidates=setting.candidates,
                        prompt_quotes=setting.prompt_quotes, mend_broken_words=mend, fallbacks_wait=fallbacks_wait,
                        constrain_script=setting.constrain_script)
    reference = profile.read_reference(ROOT / REFERENCE)
    server = LlamaServer(gguf, threads=threads, slots=setting.slots, speculative=SPECULATIVE[setting.speculative])
    started = time.perf_counter()
    per_lang, kept, written, broken = {}, [], [], Counter()
    with server as base_url:
        server_start = time.perf_counter() - started
        for lang in langs:
            items = sample_sentences(n, lang, item_set, quoting)
            targets = dict(items)
            generator = llm.Generator(settings, ResponseStore(store), lambda: ChatClient(base_url=base_url, api_key="local", timeout=600,
                                                                                         retries=0, requests_per_minute=None),
                                      Validator(lang), reference_shares=profile.shares_for(reference, lang))
            start = time.perf_counter()
            table, report = llm.generate(items, lang, generator, {}, "bench")
            per_lang[lang] = report | {"seconds": time.perf_counter() - start, "items": len(items)}
            kept += [(lang, targets[item], text) for item, text in zip(table["id"].to_list(), table["text"].to_list())]
            written += [(lang, targets[row["id"]], row["text"]) for row in report["rejected"]]
            broken.update(non_word_kinds([(targets[row["id"]], row["text"]) for row in report["rejected"]
                                          if row["reason"] == "non_word"], lang))
    written += kept
    reports = per_lang.values()
    total = lambda key: sum(r[key] for r in reports)  # noqa: E731
    seconds = total("seconds")
    rejects = sum((Counter(r["rejects"]) for r in reports), Counter())
    item_langs = total("items")  # n per language, or fewer where --quoting finds fewer
    figures = {"setting": setting.name, "prompt": setting.prompt, "sampling": SAMPLING[setting.sampling],
               "speculative": SPECULATIVE[setting.speculative],
               "answer_format": setting.answer_format, "slots": setting.slots, "candidates": setting.candidates,
               "max_tokens": setting.max_tokens, "constrain_script": setting.constrain_script, "threads": threads,
               "mend_broken_words": mend, "fallbacks_wait": fallbacks_wait, "mended": sum(r["sentences"]["mended"] for r in reports),
               "cpu_variant": server.variant, "server_start_seconds": round(server_start, 1), "item_languages": item_langs,
               "requests": total("new_responses"), "seconds": round(seconds, 1),
               "seconds_per_item_language": round(seconds / item_langs, 2),
               "completion_tokens": total("new_completion_tokens"),
               "tokens_per_s": round(total("new_completion_tokens") / seconds, 1),
               "drafted_tokens": total("drafted_tokens"), "accepted_tokens": total("accepted_tokens"),
               "four_valid_at_first_ask": total("generated_at_first_ask"), "four_valid": total("generated"),
               "share_four_valid_at_first_ask": round(total("generated_at_first_ask") / item_langs, 2),
               "copies": rejects["copy"], "duplicates": rejects["duplicate"], "rejects": dict(rejects),
               "non_word_kinds": dict(broken),
               "written": closeness_figures(written), "kept": closeness_figures(kept),
               "kept_profile": kept_profiles(kept),
               "share_valid_of_written": round(sum(r["sentences"]["valid"] for r in reports)
                                               / max(1, sum(r["sentences"]["written"] for r in reports)), 3)}
    log.info("%s: %.0f s for %d item-languages (%.1f s each, %d requests), %.1f completion tokens/s, %d of %d drafted "
             "tokens accepted, four valid at first ask %d of %d, kept below ratio 0.6 %.0f%%, written below closeness "
             "%.0f%%, copies %d, duplicates %d", setting.name, seconds, item_langs, figures["seconds_per_item_language"],
             figures["requests"], figures["tokens_per_s"], figures["accepted_tokens"], figures["drafted_tokens"],
             figures["four_valid_at_first_ask"], item_langs, 100 * figures["kept"].get("below_ratio_0_6", 0),
             100 * figures["written"].get("below_min_closeness", 0), figures["copies"], figures["duplicates"])
    return figures


def llama_figures(n: int, threads: int, attempts: int, settings: list[LlamaSetting], langs: list[str], item_set: str,
                  stores: Path | None = None, quoting: bool = False, mend: bool = False, fallbacks_wait: bool = False) -> dict:
    """The local default (Qwen2.5-Coder-1.5B Q4_K_M behind llama-server), setting by setting on the same items; each
    setting's response store is kept as `stores`/<number>.sqlite when `stores` is given, to read what it wrote."""
    gguf = Path("~/.cache/clsd/models/qwen2.5-coder-1.5b-instruct-q4_k_m/model.gguf").expanduser()
    build = json.loads((Path(sys.executable).parent / "llama-server").resolve().with_name("build.json").read_text())
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = stores or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for number, setting in enumerate(settings):
            store = folder / f"{number}.sqlite"
            if store.exists():
                raise SystemExit(f"--stores {folder}: {store.name} exists; a bench run starts from empty stores")
            runs.append(llama_run(gguf, langs, n, setting, threads, attempts, store, item_set, quoting, mend, fallbacks_wait))
    return {"server": "llama-server", "build": {k: build[k] for k in ("source", "variants")}, "attempts": attempts,
            "languages": langs, "items": item_set, "only_quoting_items": quoting, "items_per_language": n,
            "gpt4_profile_same_items": published_profiles(n, langs, item_set, quoting), "runs": runs}


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
    parser.add_argument("--llama", type=int, default=0,
                        help="sentences per language for each setting of the local LLM (0: skip; 12: the default run's)")
    parser.add_argument("--settings", default=DEFAULT_SETTINGS,
                        help="comma-separated prompt:sampling:speculative[:candidates[:prompt_quotes[:max_tokens[:script]]]] settings (resources/prompts/<prompt>.txt; "
                             f"sampling {', '.join(SAMPLING)}; speculative {', '.join(SPECULATIVE)})")
    parser.add_argument("--format", default="json", help="answer format of every setting")
    parser.add_argument("--slots", type=int, default=1, help="slots of every setting")
    parser.add_argument("--langs", default="de,fr", help="languages of the sample to generate")
    parser.add_argument("--items", choices=sorted(ITEMS), default="sample",
                        help="sentences: the hand-written sample, or real news (the published WMT19/WMT21 sets' first items)")
    parser.add_argument("--quoting", action="store_true",
                        help="only items whose target holds a straight double quote (each language its own first --llama)")
    parser.add_argument("--attempts", type=int, default=3, help="asks per item at most (the default run's max_attempts)")
    parser.add_argument("--mend", action="store_true", help="every setting mends broken copies (generation.mend_broken_words)")
    parser.add_argument("--fallbacks-wait", action="store_true", help="every setting holds fallbacks to the last ask (generation.fallbacks_wait)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="threads of the local LLM")
    parser.add_argument("--skip-test-server", action="store_true", help="only the local LLM's settings")
    parser.add_argument("--stores", type=Path, help="keep each setting's response store here (<number>.sqlite)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/generate.json")
    args = parser.parse_args()
    log_to_stdout("httpx2", "httpx", "aiohttp.access", "clsd")
    from clsd.core.provenance import cpu_features

    result: dict = {"cpu": cpu_features()}
    if not args.skip_test_server:
        result |= {"test_server": fault_server_figures(args.n, args.latency), "interrupt": interrupt_figures()}
    if args.llama:
        settings = [LlamaSetting.parse(spec, args.format, args.slots) for spec in args.settings.split(",")]
        result["llama_cpp"] = llama_figures(args.llama, args.threads, args.attempts, settings, args.langs.split(","), args.items,
                                          args.stores, args.quoting, args.mend, args.fallbacks_wait)
        if not args.skip_test_server:
            result["interrupt_llama_server"] = interrupt_figures(real=True)
    write_figures(args.out, result)


if __name__ == "__main__":
    main()
