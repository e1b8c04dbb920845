"""Rule `embed`: encode each distinct text of a dataset view once with one model; Parquet keyed by text hash.

The direct view also encodes the original sentences of parallel pairs that are not scored (no full set of
distractors): the shift normaliser N is defined over every parallel pair.
"""

import json
import logging
import time
from pathlib import Path

from clsd import candidates, embed, logs
from clsd.io import read_meta, read_table, write_table
from clsd.report import package_versions

logs.to_file(snakemake.log[0])
spec = embed.ModelSpec(**snakemake.params.model)
export = json.loads(Path(snakemake.input.export[0]).read_text(encoding="utf-8")) if snakemake.input.export else None
model, runs_on = embed.load_model(spec, snakemake.params.device, export["file"] if export else None)
prefix = embed.applied_prefix(spec, model.prompts)
key_prefix = embed.row_key_prefix(runs_on["tag"], prefix)
texts = candidates.distinct_texts(read_table(snakemake.input.texts))
if snakemake.input.parallel:
    texts = candidates.with_originals(texts, read_table(snakemake.input.parallel[0]), snakemake.params.languages)
logging.info("encoding %d distinct texts with %s (%s backend, %s, %s) on %s (prefix %r)", len(texts), spec.load_from,
             runs_on["backend"], runs_on["quantize"], runs_on["dtype"], runs_on["device"], prefix)
start = time.perf_counter()
vectors = embed.encode(model, spec, texts)
seconds = time.perf_counter() - start
logging.info("encoded in %.1f s (%.1f texts/s)", seconds, len(texts) / seconds)
meta = {
    "model": {**snakemake.params.model, "applied_prefix": prefix, "row_key_prefix": key_prefix, "dimension": int(vectors.shape[1])},
    "model_manifest": json.loads(Path(snakemake.input.model[0]).read_text()) if snakemake.input.model else None,
    "export": export,
    "runs_on": runs_on,
    "device": runs_on["device"],
    "n_texts": len(texts),
    "parallel": read_meta(snakemake.input.parallel[0]) if snakemake.input.parallel else None,
    "encode_seconds": round(seconds, 3),
    "texts": read_meta(snakemake.input.texts),
    "packages": package_versions(),
}
write_table(embed.embedding_table(texts, key_prefix, vectors), snakemake.output[0], meta)
