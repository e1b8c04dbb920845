"""Rule `cost_estimate`: what every paid request of the config will send and cost, before any is sent — the LLM's
(rule generation_estimate's table, as it is) and each embedding endpoint's per dataset and view (clsd.embed.served:
the texts the vector store lacks, their requests, tokens and price). Nothing contacts an endpoint.

Texts not written yet are stood in for, and said so: an LLM's distractors by four copies of the sentence they are
written about (as long as it, in its language), translations for the pivot view by the direct view's texts.
"""

import logging
from pathlib import Path

import polars as pl

from clsd.embed.jobs import embedding_store
from clsd.core import logs, render
from clsd.core.io import read_table
from clsd.core.items import N_DISTRACTORS
from clsd.core.paths import keyed
from clsd.embed import served
from clsd.embed.spec import model_spec
from clsd.embed.token_counts import TokenCounter
from clsd.embed.vectors import VectorStore

logs.to_file(snakemake.log[0])
config = snakemake.config
parallel = {dataset: path for (dataset,), path in keyed(snakemake.input, "parallel").items()}
written = keyed(snakemake.input, "distractors")
tokenizers = {model: path for (model,), path in keyed(snakemake.input, "tokenizer").items()}
found = []
store = VectorStore(embedding_store(config)) if parallel else None
for name in snakemake.params.models:
    model = model_spec(config, name)
    counter = TokenCounter(tokenizers.get(name), *store.chars_per_token(model.endpoint, model.name))
    embedder = served.Embedder(model, store, counter, served.connector(model))
    for dataset, path in parallel.items():
        pairs, languages = read_table(path), config["datasets"][dataset]["languages"]
        known = [text for lang in languages for text in pairs[lang].to_list()]
        assumed, notes = [], []
        if all((dataset, lang) in written for lang in languages):
            known += [text for lang in languages for text in
                      read_table(written[(dataset, lang)]).filter(pl.col("id").is_in(pairs["id"].implode()))["text"].to_list()]
            notes.append("distractors as written (before validation, which may only remove some)")
        else:
            assumed = [text for lang in languages for text in pairs[lang].to_list() for _ in range(N_DISTRACTORS)]
            notes.append(f"the LLM's distractors are not written yet: {N_DISTRACTORS} per item and language, each as long as "
                         "its sentence, none in the vector store")
        found.append(served.estimate(embedder, dataset, "direct", known, assumed, notes))
        if "pivot" in snakemake.params.views:
            found.append(served.estimate(embedder, dataset, "pivot", [], known + assumed, [
                "translations are not made yet: one per text of the direct view, each as long as its original, none in "
                "the vector store"]))
        for line in served.log_lines(found[-1]):
            logging.info(line)
if store is not None:
    store.close()

generation = pl.read_csv(snakemake.input.generation_csv, schema_overrides={"cost": pl.Float64})
embedding = pl.DataFrame([estimate.row() for estimate in found],
                         schema={"model": pl.String, "dataset": pl.String, "view": pl.String, "texts": pl.Int64,
                                 "stored": pl.Int64, "requests": pl.Int64, "tokens": pl.Int64, "cost": pl.Float64})
costs = [cost for cost in [*generation["cost"].to_list(), *embedding["cost"].to_list()] if cost is not None]
total = f"USD {sum(costs):.2f}" if costs else "no prices set"
assumed = dict.fromkeys(f"{estimate.model}: {line}" for estimate in found for line in estimate.assumptions)
embedding_md = render.markdown(
    embedding.rename({"model": "Model", "dataset": "Dataset", "view": "View", "texts": "Texts", "stored": "In the vector store",
                      "requests": "Requests to send", "tokens": "Input tokens", "cost": "Cost (USD)"}),
    digits=2, notes=["Nothing was sent. Texts in the vector store cost nothing. Assumed:\n" + "\n".join(f"- {line}" for line in assumed)],
) if found else "No model is served behind an endpoint.\n"
sections = [f"# What this configuration will pay for\n\nTotal: {total} (the LLM's generation and judge, and the embedding "
            "endpoints; rows without prices count nothing).\n",
            "## LLM: distractor generation and the judge\n\n" + (Path(snakemake.input.generation_md).read_text(encoding="utf-8")
                                                                 if generation.height else "No dataset's distractors come from an LLM.\n"),
            "## Embedding models served behind an endpoint\n\n" + embedding_md]
Path(snakemake.output.md).write_text("\n".join(sections), encoding="utf-8")
rows = [{"stage": "generation", "model": config["generation"]["model"], "dataset": row["dataset"], "part": row["lang"],
         "requests": row["requests"] + row["judge_requests"],
         "tokens": row["prompt_tokens"] + row["completion_tokens"] + row["judge_prompt_tokens"] + row["judge_completion_tokens"],
         "cost": row["cost"]} for row in generation.iter_rows(named=True)]
rows += [{"stage": "embedding", "model": row["model"], "dataset": row["dataset"], "part": row["view"], "requests": row["requests"],
          "tokens": row["tokens"], "cost": row["cost"]} for row in embedding.iter_rows(named=True)]
pl.DataFrame(rows, schema={"stage": pl.String, "model": pl.String, "dataset": pl.String, "part": pl.String,
                           "requests": pl.Int64, "tokens": pl.Int64, "cost": pl.Float64}).write_csv(snakemake.output.csv)
