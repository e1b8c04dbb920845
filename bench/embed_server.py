"""Benchmark: llama.cpp's `llama-server --embeddings` as a local embedding backend, against bare torch.

For each model (all-MiniLM-L6-v2, EmbeddingGemma-300m with its BitextMining prompt sent as text) and each GGUF type
(f16, q8_0; converted from the model store's folder with the converter of the pinned llama-cpp-python sdist,
tests/llama_gguf.py, once into --gguf-dir), in one run on the same texts: bare torch `encode` throughput on `--n`
distinct WMT19 sentences, the served model's throughput through the workflow's own endpoint path
(clsd.embed.endpoint: requests of 32 texts into a new vector store, so every text is sent), the lowest cosine of its
vectors with torch's, and P@1 on the 100 published sample items of config/wmt-local.yaml (first 50 of WMT19 and
WMT21, both directions) against torch's. The server runs on `--threads` threads with 4 slots; the result records the
CPU's instruction sets and the CPU variant ggml loaded.

Convert first (not timed, slow for EmbeddingGemma), then measure on an idle machine:
    python bench/embed_server.py --convert-only
    python bench/embed_server.py [--models all-MiniLM-L6-v2,embeddinggemma-300m] [--types f16,q8_0] [--n 1000]
Prints and writes bench/results/embed-server.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

from clsd.core.provenance import cpu_features  # noqa: E402
from clsd.data import candidates  # noqa: E402
from clsd.embed import endpoint, models  # noqa: E402
from clsd.embed.model_store import RECIPES, materialise  # noqa: E402
from clsd.embed.served import EndpointModel  # noqa: E402
from clsd.embed.tokens import TokenCounter  # noqa: E402
from clsd.embed.vectors import VectorStore  # noqa: E402
from clsd.generate.server import LlamaServer, server_program  # noqa: E402
from clsd.score import precision  # noqa: E402
from embed import STORE, bare_encode, published_items, sentences  # noqa: E402
from llama_gguf import convert, converter  # noqa: E402

log = logging.getLogger("bench.embed_server")
PROMPTS = {"embeddinggemma-300m": "BitextMining", "all-MiniLM-L6-v2": None}


def p1(tables: list[pl.DataFrame], encode) -> float:
    """Mean P@1 (percent) over both samples and both directions, `encode(texts)` giving unit vectors."""
    values = []
    for table in tables:
        texts = candidates.distinct_texts(table)
        keyed = models.embedding_table(texts, "", encode(texts))
        values += list(precision.summary(precision.score(table, keyed, "", ["de-fr", "fr-de"])).values())
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
    model = EndpointModel(key="bench", name="bench", base_url=base_url, prefix=prefix, inputs_per_request=32, concurrency=1,
                          timeout=600)
    embedder = endpoint.Embedder(model, VectorStore(store), TokenCounter(), endpoint.connector(model))

    def encode(texts: list[str]) -> np.ndarray:
        vectors = embedder.embed(texts)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    return encode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="all-MiniLM-L6-v2,embeddinggemma-300m")
    parser.add_argument("--types", default="f16,q8_0")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--gguf-dir", type=Path, default=Path(tempfile.gettempdir()) / "clsd-bench-gguf")
    parser.add_argument("--convert-only", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/embed-server.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    for noisy in ("clsd", "httpx", "httpx2", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    args.gguf_dir.mkdir(parents=True, exist_ok=True)
    names, types = args.models.split(","), args.types.split(",")
    folders = {name: materialise(RECIPES[name], STORE / RECIPES[name].name) for name in names}
    ggufs = {(name, outtype): gguf_of(name, outtype, folders[name], args.gguf_dir) for name in names for outtype in types}
    if args.convert_only:
        return
    texts, tables, cpu = sentences(args.n), published_items(), cpu_features()
    log.info("CPU: %s, %d logical CPUs, %s", cpu["model"], cpu["logical_cpus"], cpu["instruction_sets"])
    results = []
    for name in names:
        spec = models.ModelSpec(key=name, name=RECIPES[name].hf_name, load_from=str(folders[name]), prompt_name=PROMPTS[name],
                                batch_size=32)
        model, _ = models.load_model(spec, "cpu")
        prefix = models.applied_prefix(spec, model.prompts)
        bare_encode(model, spec, texts[:32])  # warm-up
        seconds, reference = bare_encode(model, spec, texts)
        torch_p1 = p1(tables, lambda batch: bare_encode(model, spec, batch)[1])
        row = {"model": name, "backend": "torch float32 (bare encode)", "texts_per_s": len(texts) / seconds, "p1": torch_p1}
        results.append(row)
        log.info("%s torch: %.1f texts/s, P@1 %.2f", name, row["texts_per_s"], torch_p1)
        del model
        for outtype in types:
            program = [str(server_program()), "--embeddings", "--pooling", "mean"]
            local = LlamaServer(ggufs[(name, outtype)], n_ctx=512, threads=args.threads, slots=4, program=program)
            with tempfile.TemporaryDirectory() as work, local as base_url:
                encode = served_encoder(base_url, prefix, Path(work) / "warm.sqlite")
                encode(texts[-32:])  # warm-up, texts not timed below
                encode = served_encoder(base_url, prefix, Path(work) / "timed.sqlite")
                start = time.perf_counter()
                vectors = encode(texts)
                seconds = time.perf_counter() - start
                served_p1 = p1(tables, served_encoder(base_url, prefix, Path(work) / "p1.sqlite"))
            row = {"model": name, "backend": f"llama-server {outtype}", "texts_per_s": len(texts) / seconds, "p1": served_p1,
                   "min_cosine_to_torch": float((vectors * reference).sum(axis=1).min()), "cpu_variant": local.variant}
            results.append(row)
            log.info("%s llama-server %s: %.1f texts/s, P@1 %.2f, lowest cosine with torch %.5f", name, outtype,
                     row["texts_per_s"], served_p1, row["min_cosine_to_torch"])
    for row in results:
        base = next(r for r in results if r["model"] == row["model"] and r["backend"].startswith("torch"))
        row["ratio_to_bare_torch"] = row["texts_per_s"] / base["texts_per_s"]
        row["p1_change_points"] = row["p1"] - base["p1"]
        row["faster_at_equal_p1"] = row["ratio_to_bare_torch"] > 1 and row["p1_change_points"] >= 0
    result = {"cpu": cpu, "threads": args.threads, "slots": 4, "n_texts": len(texts), "p1_items": 100, "results": results}
    for row in results:
        log.info("%-20s %-28s %7.1f texts/s  x%.2f  P@1 %.2f (%+.2f)", row["model"], row["backend"], row["texts_per_s"],
                 row["ratio_to_bare_torch"], row["p1"], row["p1_change_points"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
