"""Rule `candidates`: every text of the direct view (originals and distractors) in long form.

Items without a full set of distractors in every language (generations that failed after all attempts,
recorded in the generation report) are left out here, logged, and listed in the file's provenance.
"""

import logging

from clsd import candidates, logs
from clsd.datasets import N_DISTRACTORS
from clsd.io import read_meta, read_table, write_table

logs.to_file(snakemake.log[0])
languages = snakemake.params.languages
distractors = [read_table(path) for path in snakemake.input.distractors]
parallel, dropped = candidates.complete_items(read_table(snakemake.input.parallel), distractors, languages, N_DISTRACTORS)
if dropped:
    shown = ", ".join(map(str, dropped[:20])) + (", ..." if len(dropped) > 20 else "")
    logging.warning("%d item(s) lack %d distractors in every language and are left out: %s", len(dropped), N_DISTRACTORS, shown)
table = candidates.build(parallel, [d.filter(d["id"].is_in(parallel["id"].implode())) for d in distractors], languages)
write_table(
    table,
    snakemake.output[0],
    {"view": "direct", "parallel": read_meta(snakemake.input.parallel), "dropped_items": dropped,
     "generators": [read_meta(path).get("generator") for path in snakemake.input.distractors]},
)
