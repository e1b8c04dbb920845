"""Rule `embed`: encode each distinct text of a dataset view once with one model; Parquet keyed by text hash.

The direct view also encodes the original sentences of parallel pairs that are not scored (no full set of
distractors): the shift normaliser N is defined over every parallel pair. A view without any item to score
loads no model and writes an empty table (Table 2 shows the dataset's columns as `–`, n = 0).
"""

import json
import logging
import time
from pathlib import Path

from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.core.provenance import package_versions
from clsd.data import candidates
from clsd.embed import loaded, tables

logs.to_file(snakemake.log[0])
spec = snakemake.params.spec  # clsd.embed.spec.ModelSpec, built once while Snakemake planned
table = read_table(snakemake.input.texts)
export = json.loads(Path(snakemake.input.export[0]).read_text(encoding="utf-8")) if snakemake.input.export else None
meta = {
    "model_manifest": json.loads(Path(snakemake.input.model[0]).read_text()) if snakemake.input.model else None,
    "export": export,
    "parallel": read_meta(snakemake.input.parallel[0]) if snakemake.input.parallel else None,
    "texts": read_meta(snakemake.input.texts),
    "packages": package_versions(),
}
if table.height == 0:
    logging.warning("no item of %s (%s view) can be scored: nothing encoded, %s not loaded", snakemake.wildcards.dataset,
                    snakemake.wildcards.view, spec.name)
    meta |= {"model": {**snakemake.params.model, "applied_prefix": None, "row_key_prefix": None}, "n_texts": 0, "encode_seconds": 0.0}
    write_table(tables.empty_embedding_table(), snakemake.output[0], meta)
else:
    model, runs_on = loaded.load_model(spec, snakemake.config["device"], export["file"] if export else None)
    prefix = loaded.applied_prefix(spec, model.prompts)
    key_prefix = loaded.row_key_prefix(runs_on["tag"], prefix)
    texts = candidates.distinct_texts(table)
    if snakemake.input.parallel:
        texts = candidates.with_originals(texts, read_table(snakemake.input.parallel[0]), snakemake.params.languages)
    logging.info("encoding %d distinct texts with %s (%s backend, %s, %s; activations %s) on %s %s (prefix %r)", len(texts),
                 spec.load_from, runs_on["backend"], runs_on["quantize"], runs_on["dtype"], runs_on["precision"]["activations"],
                 runs_on["device"], runs_on["cpu"]["instruction_sets"], prefix)
    start = time.perf_counter()
    vectors = loaded.encode(model, spec, texts)
    seconds = time.perf_counter() - start
    logging.info("encoded in %.1f s (%.1f texts/s)", seconds, len(texts) / seconds)
    meta |= {
        "model": {**snakemake.params.model, "applied_prefix": prefix, "row_key_prefix": key_prefix, "dimension": int(vectors.shape[1])},
        "runs_on": runs_on,
        "device": runs_on["device"],
        "n_texts": len(texts),
        "encode_seconds": round(seconds, 3),
    }
    write_table(tables.embedding_table(texts, key_prefix, vectors), snakemake.output[0], meta)
