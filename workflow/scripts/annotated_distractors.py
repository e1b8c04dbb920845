"""Rule `annotated_distractors`: a validated set with its annotators' verdicts (column `people` of each sampled
distractor they judged, for Table 5). The provenance records how many
people judged how many sampled distractors and the share valid with its interval (the dataset card states it);
with annotation.apply the distractors judged same meaning or not a sentence are removed and their items get a
failure record (an item left with fewer than four is not scored; Table 2's footnote names why)."""

import logging

from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.core.paths import keyed
from clsd.validate.annotation import apply, review, sheets

logs.to_file(snakemake.log[0])
lang = snakemake.wildcards.lang
design, sample_id = read_table(snakemake.input.design), read_meta(snakemake.input.design)["sample_id"]
names = snakemake.params.annotators
files = {names[int(index)]: sheets.read_verdicts(path, sample_id, design["item"].to_list())
         for (index,), path in keyed(snakemake.input, "verdicts").items()}
verdicts = review.long_verdicts(files)
distractors, meta = read_table(snakemake.input.distractors), read_meta(snakemake.input.distractors)
distractors = distractors.join(review.people_column(design, verdicts), on=["id", "k"], how="left")
removals = review.removals(design, verdicts)
record = review.card_record(design, verdicts, list(files), sample_id) | {"applied": snakemake.params.apply}
failed = meta.get("failed", [])
if snakemake.params.apply:
    distractors, removed = apply.remove(distractors, removals, lang)
    failed = apply.merge_failures(failed, removed)
    record["removed"] = removals.height
    logging.warning("annotators removed %d distractor(s) of %s (%s) from %d item(s)", removals.height,
                    snakemake.wildcards.dataset, lang, len(removed))
write_table(distractors, snakemake.output[0], {**meta, "human_validation": record, "failed": failed})
