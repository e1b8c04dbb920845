"""Rule `score`: per-item cosines and strict Precision@1 outcomes for every direction of one view, and the true
pairs' median cosine against pairs shifted by one item (clsd.score.pairs: a warning where they do not stand apart)."""

import logging

from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.score import pairs, precision

logs.to_file(snakemake.log[0])
embeddings_meta = read_meta(snakemake.input.embeddings)
texts, embeddings = read_table(snakemake.input.texts), read_table(snakemake.input.embeddings)
prefix = embeddings_meta["model"]["row_key_prefix"] or ""
scores = precision.score(texts, embeddings, prefix, snakemake.params.directions)
# true pairs against pairs shifted by one item: a warning where they do not stand apart (misaligned sides?)
aligned = pairs.check_pairs(texts, embeddings, prefix, snakemake.params.directions, snakemake.wildcards.model)
for direction, p1 in precision.summary(scores).items():
    logging.info("%s P@1 = %.2f", direction, p1)
write_table(scores, snakemake.output[0], {"model": embeddings_meta["model"], "view": snakemake.wildcards.view,
                                          "encode_seconds": embeddings_meta.get("encode_seconds"), "true_vs_shifted": aligned})
