"""Benchmark: embedding backends (torch, ONNX Runtime, OpenVINO; float32, bfloat16 and int8) against bare torch.

For each backend, in one run on the same texts: bare `model.encode` throughput on `--n` distinct WMT19
sentences (German and French), its ratio to bare torch (target >= 2.5 on CPU for EmbeddingGemma), the
workflow's embedding step (read the candidate Parquet, deduplicate, prefix, key, write) against that bare
backend on `--step-n` of them (target >= 0.95), and P@1 on the 100 published sample items of
config/wmt-local.yaml (first 50 of WMT19 and WMT21, both directions; change in points against torch, target
within 0.5), and the cosine of each backend's vectors with torch's float32 ones (lowest over the texts).
Exports come from clsd.embed.exports into the model store, as the workflow makes them. A backend is named
`backend[-int8][:dtype]` (e.g. openvino:bfloat16); each records the precision it really computed in, the seconds
of its one-time export (when the store did not hold it yet) and how many texts it takes to pay for it against bare
torch, and the result the CPU's instruction sets (clsd.core.provenance.cpu_features): speed, and a runtime's default precision, depend on them.

Usage: python bench/embed.py [--model embeddinggemma-300m|all-MiniLM-L6-v2] [--n 2000] [--step-n 500]
       [--backends torch,onnx,onnx-int8,openvino,openvino-int8,openvino:bfloat16,openvino-int8:bfloat16]
Prints and writes bench/results/embed.json (or --out).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from clsd.core.io import read_table, write_table
from clsd.core.provenance import cpu_features
from clsd.data import candidates, corpora
from clsd.embed import backends, exports, loaded, tables
from clsd.embed.spec import ModelSpec
from clsd.serving.model_store import RECIPES, materialise
from clsd.score import precision

from _common import log_to_stdout, write_figures

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared/data"
STORE = Path("~/.cache/clsd/models").expanduser()
log = logging.getLogger("bench.embed")


def sentences(n: int) -> list[str]:
    """`n` distinct German and French WMT19 sentences (alternating), from ../shared/data."""
    de = (SHARED / "wmt/newstest2019.de-fr.src.de").read_text(encoding="utf-8").splitlines()
    fr = (SHARED / "wmt/newstest2019.de-fr.ref.fr").read_text(encoding="utf-8").splitlines()
    pooled = [t for pair in zip(de, fr) for t in pair]
    return list(dict.fromkeys(pooled))[:n]


def published_items() -> list[pl.DataFrame]:
    """Candidate tables of the two published samples (50 items each, GPT-4 distractors)."""
    tables = []
    for year in (2019, 2021):
        frame = corpora.read_published_csv(SHARED / f"clsd-published-sample/CLSD_wmt{year}_adversarial_dataset.head50.csv", ["de", "fr"])
        parallel = frame.select(pl.col("Index").alias("id"), pl.col("German").alias("de"), pl.col("French").alias("fr"))
        distractors = [
            frame.select(pl.col("Index").alias("id"), pl.lit(lang).alias("lang"), pl.lit(k, dtype=pl.Int64).alias("k"), pl.col(f"{lang}_adv{k}").alias("text"))
            for lang in ("de", "fr") for k in range(1, 5)
        ]
        tables.append(candidates.build(parallel, distractors, ["de", "fr"]))
    return tables


def published_p1(model, spec: ModelSpec, tag: str, tables: list[pl.DataFrame]) -> float:
    """Mean P@1 (percent) over both samples and both directions."""
    values = []
    for table in tables:
        texts = candidates.distinct_texts(table)
        prefix = loaded.row_key_prefix(tag, loaded.applied_prefix(spec, model.prompts))
        keyed = tables.embedding_table(texts, prefix, loaded.encode(model, spec, texts))
        values += list(precision.summary(precision.score(table, keyed, prefix, ["de-fr", "fr-de"])).values())
    return sum(values) / len(values)


def workflow_step(model, spec: ModelSpec, tag: str, texts_path: Path, out: Path) -> float:
    """What the `embed` rule does after loading the model; returns seconds."""
    start = time.perf_counter()
    texts = candidates.distinct_texts(read_table(texts_path))
    vectors = loaded.encode(model, spec, texts)
    prefix = loaded.row_key_prefix(tag, loaded.applied_prefix(spec, model.prompts))
    write_table(tables.embedding_table(texts, prefix, vectors), out, {"bench": True})
    return time.perf_counter() - start


def bare_encode(model, spec: ModelSpec, texts: list[str]) -> tuple[float, np.ndarray]:
    """Seconds of a bare `encode` of `texts`, and the unit vectors."""
    start = time.perf_counter()
    vectors = model.encode(texts, prompt_name=spec.prompt_name, batch_size=spec.batch_size, convert_to_numpy=True)
    seconds = time.perf_counter() - start
    return seconds, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def variant(name: str) -> tuple[str, str, str]:
    """backend[-int8][:dtype] → (backend, quantize, dtype), e.g. openvino-int8:bfloat16."""
    backend_quantize, _, dtype = name.partition(":")
    backend, _, quantize = backend_quantize.partition("-")
    return backend, quantize or "none", dtype or "float32"


def break_even(export_seconds: float | None, torch_per_s: float, backend_per_s: float) -> int | None:
    """Texts to embed before a one-time export has paid for itself against bare torch (None: no export, or a
    backend no faster than torch, which never pays)."""
    if not export_seconds or backend_per_s <= torch_per_s:
        return None
    return round(export_seconds / (1 / torch_per_s - 1 / backend_per_s))


def exported(spec: ModelSpec, manifest: dict) -> str:
    """The export file of `spec`'s backend, built (or reused) in the model store exactly as export_model does."""
    return exports.ensure(STORE, spec, {"weights_sha256": manifest["weights_sha256"]})["file"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embeddinggemma-300m", choices=sorted(RECIPES))
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--step-n", type=int, default=500)
    parser.add_argument("--backends", default="torch,onnx,onnx-int8,openvino,openvino-int8,openvino:bfloat16,openvino-int8:bfloat16")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/embed.json")
    args = parser.parse_args()
    log_to_stdout("clsd", "nncf", "onnxruntime", "sentence_transformers")

    recipe = RECIPES[args.model]
    folder = materialise(recipe, STORE / recipe.name)
    manifest = {"weights_sha256": recipe.weights_sha256}
    prompt = "BitextMining" if args.model == "embeddinggemma-300m" else None
    texts = sentences(args.n)
    tables = published_items()
    cpu = cpu_features()
    log.info("CPU: %s, %d logical CPUs, %s (torch: %s)", cpu["model"], cpu["logical_cpus"], cpu["instruction_sets"], cpu["torch_capability"])
    results = []
    reference = None
    with tempfile.TemporaryDirectory() as tmp:
        texts_path = Path(tmp) / "texts.parquet"
        write_table(pl.DataFrame({"id": range(args.step_n), "lang": "x", "slot": 0, "text": texts[: args.step_n]}), texts_path, {})
        for name in args.backends.split(","):
            backend, quantize, dtype = variant(name)
            spec = ModelSpec(key=args.model, name=recipe.hf_name, load_from=str(folder), prompt_name=prompt, batch_size=16,
                                   backend=backend, quantize=quantize, dtype=dtype)
            start = time.perf_counter()
            export_file = exported(spec, manifest) if backends.needs_export(backend) else None
            export_seconds = time.perf_counter() - start  # near 0 when the store already held the export
            model, runs_on = loaded.load_model(spec, "auto", export_file)
            bare_encode(model, spec, texts[:32])  # warm-up
            bare, vectors = bare_encode(model, spec, texts)
            if name == "torch":
                reference = vectors
            step = workflow_step(model, spec, runs_on["tag"], texts_path, Path(tmp) / "emb.parquet")
            step_bare, _ = bare_encode(model, spec, texts[: args.step_n])
            p1 = published_p1(model, spec, runs_on["tag"], tables)
            cosine = float((vectors * reference).sum(axis=1).min()) if reference is not None else None
            results.append({"backend": name, "device": runs_on["device"], "dtype": runs_on["dtype"], "tag": runs_on["tag"],
                            "precision": runs_on["precision"], "texts_per_s": len(texts) / bare,
                            "export_seconds": round(export_seconds, 1) if export_file else None,
                            "step_ratio_to_bare_backend": step_bare / step, "p1": p1, "min_cosine_to_torch": cosine})
            log.info("%s %s: %.2f texts/s; workflow step %.3f of its bare backend; P@1 %.2f; activations %s; lowest cosine "
                     "with torch %s", args.model, name, results[-1]["texts_per_s"], results[-1]["step_ratio_to_bare_backend"],
                     p1, runs_on["precision"]["activations"], cosine)
            del model
    base = next(r for r in results if r["backend"] == "torch")
    for r in results:
        r["ratio_to_bare_torch"] = r["texts_per_s"] / base["texts_per_s"]
        r["p1_change_points"] = r["p1"] - base["p1"]
        r["meets_targets"] = r["ratio_to_bare_torch"] >= 2.5 and abs(r["p1_change_points"]) <= 0.5
        r["break_even_texts"] = break_even(r.get("export_seconds"), base["texts_per_s"], r["texts_per_s"])
        log.info("%-24s %7.2f texts/s  x%.2f of bare torch  P@1 %+.2f points  step/bare %.3f  cosine >= %s  export %s s, "
                 "pays off after %s texts", r["backend"], r["texts_per_s"], r["ratio_to_bare_torch"], r["p1_change_points"],
                 r["step_ratio_to_bare_backend"], r["min_cosine_to_torch"], r["export_seconds"], r["break_even_texts"])
    within = [r for r in results if abs(r["p1_change_points"]) <= 0.5]
    result = {"model": args.model, "cpu": cpu, "n_texts": len(texts), "step_n_texts": args.step_n, "p1_items": 100,
              "targets": {"ratio_to_bare_torch": 2.5, "p1_change_points": 0.5, "step_ratio_to_bare_backend": 0.95},
              "fastest_within_p1_bound": max(within, key=lambda r: r["texts_per_s"])["backend"], "backends": results}
    log.info("fastest backend with P@1 within 0.5 points: %s", result["fastest_within_p1_bound"])
    write_figures(args.out, result)


if __name__ == "__main__":
    main()
