"""Rule `single_word_pairs`: one-token swaps/additions of a dataset's distractors, with the changed word's UPOS."""

import logging

from clsd.analysis import pos, swaps
from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table

logs.to_file(snakemake.log[0])
pairs = swaps.find_pairs(read_table(snakemake.input.candidates))
tagged = pos.tag_pairs(pairs, pos.tagger_factory(snakemake.params.tagger, snakemake.config["analysis"]["stanza_dir"]))
for (lang,), part in tagged.group_by("lang", maintain_order=True):
    logging.info("%s: %d single-word pairs (%s)", lang, part.height, ", ".join(sorted(set(part["tagger"]))))
write_table(tagged, snakemake.output[0], {"candidates": read_meta(snakemake.input.candidates)})
