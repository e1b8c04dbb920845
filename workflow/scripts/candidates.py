"""Rule `candidates`: every text of the direct view (originals and distractors) in long form.

Items without a full set of distractors in every language (generations that failed after all attempts,
recorded in the generation report, or items a published file does not cover) are left out here, logged,
and listed with their reason in the file's provenance (Table 2 shows them as a footnote).
"""

import logging

from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.core.items import N_DISTRACTORS
from clsd.data import candidates

logs.to_file(snakemake.log[0])
languages = snakemake.params.languages
distractors = [read_table(path) for path in snakemake.input.distractors]
metas = [read_meta(path) for path in snakemake.input.distractors]
parallel_all = read_table(snakemake.input.parallel)
parallel, dropped = candidates.complete_items(parallel_all, distractors, languages, N_DISTRACTORS)
reasons = candidates.dropped_reasons(dropped, distractors, metas, languages, N_DISTRACTORS)
if dropped:
    shown = ", ".join(map(str, dropped[:20])) + (", ..." if len(dropped) > 20 else "")
    logging.warning("%d item(s) lack %d distractors in every language and are left out: %s", len(dropped), N_DISTRACTORS, shown)
if parallel.height == 0:
    logging.warning("no item of %s can be scored: %s", snakemake.wildcards.dataset, candidates.why_none(reasons, parallel_all.height))
table = candidates.build(parallel, [d.filter(d["id"].is_in(parallel["id"].implode())) for d in distractors], languages)
write_table(
    table,
    snakemake.output[0],
    {"view": "direct", "parallel": read_meta(snakemake.input.parallel), "items": parallel_all.height,
     "dropped": reasons, "generators": [meta.get("generator") for meta in metas],
     "distractors": [{key: value for key, value in meta.items() if key != "parallel"} for meta in metas],
     "content_sha256": candidates.content_sha256(table)},
)
