"""Rule `score`: per-item cosines and strict Precision@1 outcomes for every direction of one view."""

import logging

from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.score import precision

logs.to_file(snakemake.log[0])
embeddings_meta = read_meta(snakemake.input.embeddings)
scores = precision.score(
    read_table(snakemake.input.texts),
    read_table(snakemake.input.embeddings),
    embeddings_meta["model"]["row_key_prefix"] or "",
    snakemake.params.directions,
)
for direction, p1 in precision.summary(scores).items():
    logging.info("%s P@1 = %.2f", direction, p1)
write_table(scores, snakemake.output[0], {"model": embeddings_meta["model"], "view": snakemake.wildcards.view,
                                          "encode_seconds": embeddings_meta.get("encode_seconds")})
