"""Rule `embed_endpoint`: each distinct text of a dataset view embedded once by a model served behind an endpoint
(clsd.embed.served), through the vector store: Parquet keyed by text hash like any model's, and a report of what
the job expected to send, what it sent and what it paid (this run, and every run of the model, dataset and view).

The direct view also embeds the original sentences of parallel pairs that are not scored, as rule `embed` does. A
view without any item to score sends nothing and writes an empty table.
"""

import json
import logging
import time
from pathlib import Path

from clsd.core import logs, stopping
from clsd.core.io import read_meta, read_table, write_table
from clsd.core.provenance import package_versions
from clsd.data import candidates
from clsd.embed import served, tables
from clsd.embed.token_counts import TokenCounter
from clsd.embed.vectors import VectorStore

logs.to_file(snakemake.log[0])
stopping.install()  # SIGTERM and SIGHUP stop the job as Ctrl-C does: answers in flight stored, the run marked
dataset, view = snakemake.wildcards.dataset, snakemake.wildcards.view
model = snakemake.params.spec  # clsd.embed.spec.ModelSpec, built once while Snakemake planned
table = read_table(snakemake.input.texts)
texts = candidates.distinct_texts(table)
if table.height and snakemake.input.parallel:
    texts = candidates.with_originals(texts, read_table(snakemake.input.parallel[0]), snakemake.params.languages)
store = VectorStore(snakemake.params.store)
counter = TokenCounter(model.tokenizer, *store.chars_per_token(model.endpoint, model.name))
run = store.start_run(model.endpoint, model.name, dataset, view)
embedder = served.Embedder(model, store, counter, served.connector(model), run)
expected = served.estimate(embedder, dataset, view, texts)
for line in served.log_lines(expected):
    logging.info(line)
if not texts:
    logging.warning("no item of %s (%s view) can be scored: nothing embedded, %s not asked", dataset, view, model.endpoint)
status, start = "failed", time.perf_counter()
try:
    vectors = embedder.embed(texts)
    status = "done"
except KeyboardInterrupt:
    status = "interrupted"
    raise
except Exception as exc:
    status = f"failed: {exc}"
    raise
finally:
    store.finish_run(run, status, embedder.sent.http_requests, embedder.sent.retries)
seconds = time.perf_counter() - start
sent, paid = embedder.sent.record(), store.run_totals(run)
store.close()
report = {
    "model": snakemake.params.model, "dataset": dataset, "view": view, "texts": len(set(texts)),
    "estimate": expected.row() | {"assumptions": expected.assumptions},
    "sent": sent | {"cost": model.cost(sent["prompt_tokens"] + sent["uncounted_tokens"])},
    "all_runs": paid | {"cost": model.cost(paid["prompt_tokens"])},
}
logging.info("%d texts: %d requests answered with %d texts and %d input tokens (USD %s) in %.1f s; every run of this job: %s",
             report["texts"], sent["requests"], sent["texts"], sent["prompt_tokens"], report["sent"]["cost"], seconds, paid)
meta = {
    "model": {**snakemake.params.model, "applied_prefix": model.prefix if texts else None,
              "row_key_prefix": model.prefix if texts else None, "dimension": int(vectors.shape[1]) if texts else None},
    "runs_on": {"backend": "endpoint", "endpoint": model.endpoint, "model": model.name, "dimensions": model.dimensions},
    "parallel": read_meta(snakemake.input.parallel[0]) if snakemake.input.parallel else None,
    "texts": read_meta(snakemake.input.texts),
    "packages": package_versions(),
    "n_texts": len(texts),
    "encode_seconds": round(seconds, 3),
    "sent": report["sent"],
    "all_runs": report["all_runs"],
}
if texts:
    write_table(tables.embedding_table(texts, model.prefix, vectors), snakemake.output.embeddings, meta)
else:
    write_table(tables.empty_embedding_table(), snakemake.output.embeddings, meta)
Path(snakemake.output.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
