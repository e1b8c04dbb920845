"""Benchmark: llama.cpp's `llama-server --embeddings` as a local embedding backend, against bare torch.

For each model (all-MiniLM-L6-v2, EmbeddingGemma-300m with its BitextMining prompt sent as text) and each GGUF type
(f16, q8_0; converted from the model store's folder with the converter of the pinned llama-cpp-python sdist,
clsd.embed.backends.llama_server, once into --gguf-dir), on the same texts — every distinct text of the 100 published sample
items of config/wmt-local.yaml (first 50 of WMT19 and WMT21: sources, targets and GPT-4 distractors) —: texts/s of
bare torch `encode` (batches of 32) and of the served model through the workflow's own endpoint path
(clsd.embed.served: requests of 32 texts into a new vector store, so every text is sent), P@1 on those items (both
directions) from the same vectors, and the lowest cosine of the served vectors with torch's. The server runs on `--threads` threads with each of `--slots` (sequences
embedded at once); the result records the CPU's instruction sets, the CPU variant ggml loaded, and the CPU time other
processes took while it ran (`other_cpus`, in CPUs: above 0.1 the figures are not those of an idle machine).

Convert first (not timed, slow for EmbeddingGemma), then measure on an idle machine:
    python bench/embed_server.py --convert-only
    python bench/embed_server.py [--models all-MiniLM-L6-v2,embeddinggemma-300m] [--types f16,q8_0] [--slots 4,32]
Prints and writes bench/results/embed-server.json (or --out).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from _common import log_to_stdout, write_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from clsd.core.provenance import cpu_features  # noqa: E402
from clsd.data import candidates  # noqa: E402
from clsd.embed import loaded, served  # noqa: E402
from clsd.embed.tables import embedding_table  # noqa: E402
from clsd.embed.spec import ModelSpec  # noqa: E402
from clsd.serving.model_store import RECIPES, materialise  # noqa: E402
from clsd.embed.token_counts import TokenCounter  # noqa: E402
from clsd.embed.vectors import VectorStore  # noqa: E402
from clsd.serving.server import LlamaServer, server_program  # noqa: E402
from clsd.score import precision  # noqa: E402
from embed import STORE, bare_encode, published_items  # noqa: E402
from clsd.embed.backends.llama_server import convert, converter  # noqa: E402

log = logging.getLogger("bench.embed_server")
PROMPTS = {"embeddinggemma-300m": "BitextMining", "all-MiniLM-L6-v2": None}


def busy_jiffies() -> int:
    """CPU time spent by every process of the machine so far (/proc/stat, in clock ticks)."""
    values = list(map(int, Path("/proc/stat").read_text().splitlines()[0].split()[1:]))
    return sum(values) - values[3] - values[4]


def own_seconds() -> float:
    """CPU seconds of this process and of its children that were waited for (the servers it stopped)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def p1(tables: list[pl.DataFrame], texts: list[str], vectors: np.ndarray) -> float:
    """Mean P@1 (percent) over both samples and both directions, from the vectors of `texts` (every text of them)."""
    keyed = embedding_table(texts, "", vectors)
    values = [p for table in tables for p in precision.summary(precision.score(table, keyed, "", ["de-fr", "fr-de"])).values()]
    return sum(values) / len(values)


def gguf_of(name: str, outtype: str, folder: Path, gguf_dir: Path) -> Path:
    """The GGUF of model `name` in `outtype`, converted once into `gguf_dir`."""
    target = gguf_dir / f"{name}-{outtype}.gguf"
    if not target.is_file():
        with tempfile.TemporaryDirectory() as work:
            log.info("converting %s to %s", name, target)
            convert(folder, target, outtype, converter(Path(work)))
    return target


def served_encoder(base_url: str, prefix: str, store: Path):
    """Texts → unit vectors through the workflow's endpoint path, into a new vector store (every text is sent)."""
    model = ModelSpec(key="bench", name="bench", base_url=base_url, prefix=prefix, inputs_per_request=32, concurrency=1,
                          timeout=600)
    embedder = served.Embedder(model, VectorStore(store), TokenCounter(), served.connector(model))

    def encode(texts: list[str]) -> np.ndarray:
        vectors = embedder.embed(texts)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    return encode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="all-MiniLM-L6-v2,embeddinggemma-300m")
    parser.add_argument("--types", default="f16,q8_0")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--slots", default="4,32", help="server slots to measure (comma list); 32 = one request's inputs at once")
    parser.add_argument("--gguf-dir", type=Path, default=Path(tempfile.gettempdir()) / "clsd-bench-gguf")
    parser.add_argument("--convert-only", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/embed-server.json")
    args = parser.parse_args()
    log_to_stdout("clsd", "httpx", "httpx2", "sentence_transformers")
    args.gguf_dir.mkdir(parents=True, exist_ok=True)
    names, types = args.models.split(","), args.types.split(",")
    folders = {name: materialise(RECIPES[name], STORE / RECIPES[name].name) for name in names}
    ggufs = {(name, outtype): gguf_of(name, outtype, folders[name], args.gguf_dir) for name in names for outtype in types}
    if args.convert_only:
        return
    tables, cpu = published_items(), cpu_features()
    texts = list(dict.fromkeys(text for table in tables for text in candidates.distinct_texts(table)))
    start_busy, start_own, start = busy_jiffies(), own_seconds(), time.perf_counter()
    log.info("CPU: %s, %d logical CPUs, %s", cpu["model"], cpu["logical_cpus"], cpu["instruction_sets"])
    results = []
    for name in names:
        spec = ModelSpec(key=name, name=RECIPES[name].hf_name, load_from=str(folders[name]), prompt_name=PROMPTS[name],
                                batch_size=32)
        model, _ = loaded.load_model(spec, "cpu")
        prefix = loaded.applied_prefix(spec, model.prompts)
        bare_encode(model, spec, texts[:32])  # warm-up
        seconds, reference = bare_encode(model, spec, texts)
        torch_p1 = p1(tables, texts, reference)
        row = {"model": name, "backend": "torch float32 (bare encode)", "texts_per_s": len(texts) / seconds, "p1": torch_p1}
        results.append(row)
        log.info("%s torch: %.1f texts/s, P@1 %.2f", name, row["texts_per_s"], torch_p1)
        del model
        for outtype, slots in ((outtype, int(slots)) for outtype in types for slots in args.slots.split(",")):
            program = [str(server_program()), "--embeddings", "--pooling", "mean"]
            local = LlamaServer(ggufs[(name, outtype)], n_ctx=512, threads=args.threads, slots=slots, program=program)
            with tempfile.TemporaryDirectory() as work, local as base_url:
                served_encoder(base_url, prefix + "warm-up: ", Path(work) / "warm.sqlite")(texts[:32])  # texts not timed below
                encode = served_encoder(base_url, prefix, Path(work) / "timed.sqlite")
                begun = time.perf_counter()
                vectors = encode(texts)
                seconds = time.perf_counter() - begun
            served_p1 = p1(tables, texts, vectors)
            row = {"model": name, "backend": f"llama-server {outtype}, {slots} slots", "texts_per_s": len(texts) / seconds, "p1": served_p1,
                   "min_cosine_to_torch": float((vectors * reference).sum(axis=1).min()), "cpu_variant": local.variant}
            results.append(row)
            log.info("%s %s: %.1f texts/s, P@1 %.2f, lowest cosine with torch %.5f", name, row["backend"],
                     row["texts_per_s"], served_p1, row["min_cosine_to_torch"])
    for row in results:
        base = next(r for r in results if r["model"] == row["model"] and r["backend"].startswith("torch"))
        row["ratio_to_bare_torch"] = row["texts_per_s"] / base["texts_per_s"]
        row["p1_change_points"] = row["p1"] - base["p1"]
        row["faster_at_equal_p1"] = row["ratio_to_bare_torch"] > 1 and row["p1_change_points"] >= 0
    elapsed = time.perf_counter() - start
    other = ((busy_jiffies() - start_busy) / os.sysconf("SC_CLK_TCK") - (own_seconds() - start_own)) / elapsed
    log.info("other processes took %.2f CPUs while this ran (%.0f s)", other, elapsed)
    result = {"cpu": cpu, "threads": args.threads, "n_texts": len(texts), "p1_items": 100, "other_cpus": round(other, 2),
              "seconds": round(elapsed), "results": results}
    for row in results:
        log.info("%-20s %-28s %7.1f texts/s  x%.2f  P@1 %.2f (%+.2f)", row["model"], row["backend"], row["texts_per_s"],
                 row["ratio_to_bare_torch"], row["p1"], row["p1_change_points"])
    write_figures(args.out, result)


if __name__ == "__main__":
    main()
