"""Benchmark: throughput of the workflow's embedding step vs a bare `model.encode` (target ratio >= 0.95).

Both encode the same 500 distinct WMT19 sentences with the same model, batch size and device; the model is
loaded once, outside the timings. The workflow step includes reading the candidate Parquet, deduplication,
prefixing, keying and writing the embedding Parquet. Figures are printed and saved to bench/results/embed.json.

Usage: python bench/embed.py [--model embeddinggemma-300m|all-MiniLM-L6-v2] [--n 500] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from clsd import candidates, embed
from clsd.io import read_table, write_table
from clsd.model_store import RECIPES, materialise

ROOT = Path(__file__).resolve().parents[1]
WMT = ROOT.parent / "shared/data/wmt"
log = logging.getLogger("bench.embed")


def sentences(n: int) -> list[str]:
    """`n` distinct German and French WMT19 sentences (alternating), from ../shared/data."""
    de = (WMT / "newstest2019.de-fr.src.de").read_text(encoding="utf-8").splitlines()
    fr = (WMT / "newstest2019.de-fr.ref.fr").read_text(encoding="utf-8").splitlines()
    pooled = [t for pair in zip(de, fr) for t in pair]
    return list(dict.fromkeys(pooled))[:n]


def workflow_step(model, spec: embed.ModelSpec, texts_path: Path, out: Path) -> float:
    """What the `embed` rule does after loading the model; returns seconds."""
    start = time.perf_counter()
    texts = candidates.distinct_texts(read_table(texts_path))
    vectors = embed.encode(model, spec, texts)
    prefix = embed.applied_prefix(spec, model.prompts)
    write_table(embed.embedding_table(texts, prefix, vectors), out, {"bench": True})
    return time.perf_counter() - start


def bare_encode(model, spec: embed.ModelSpec, texts: list[str]) -> float:
    start = time.perf_counter()
    model.encode(texts, prompt_name=spec.prompt_name, batch_size=spec.batch_size, convert_to_numpy=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embeddinggemma-300m", choices=sorted(RECIPES))
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/embed.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")

    recipe = RECIPES[args.model]
    folder = materialise(recipe, Path("~/.cache/clsd/models").expanduser() / recipe.name)
    prompt = "BitextMining" if args.model == "embeddinggemma-300m" else None
    spec = embed.ModelSpec(key=args.model, name=recipe.hf_name, load_from=str(folder), prompt_name=prompt, batch_size=16)
    model = embed.load_model(spec, "auto")
    texts = sentences(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        texts_path = Path(tmp) / "texts.parquet"
        table = pl.DataFrame({"id": range(len(texts)), "lang": "x", "slot": 0, "text": texts})
        write_table(table, texts_path, {})
        bare_encode(model, spec, texts[:32])  # warm-up
        bare, step = [], []
        for _ in range(args.repeats):
            bare.append(bare_encode(model, spec, texts))
            step.append(workflow_step(model, spec, texts_path, Path(tmp) / "emb.parquet"))
    result = {
        "model": args.model,
        "device": str(model.device),
        "n_texts": len(texts),
        "bare_texts_per_s": len(texts) / min(bare),
        "workflow_texts_per_s": len(texts) / min(step),
        "ratio": min(bare) / min(step),
        "target_ratio": 0.95,
        "bare_seconds": bare,
        "workflow_seconds": step,
    }
    log.info(
        "%s on %s, %d texts: bare %.1f texts/s, workflow step %.1f texts/s, ratio %.3f (target >= 0.95)",
        args.model, result["device"], len(texts), result["bare_texts_per_s"], result["workflow_texts_per_s"], result["ratio"],
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
