"""Rule `annotation_sheet`: a stratified, seeded sample of one validated distractor set (clsd.validate.annotation)
as a self-contained page and a CSV sheet to annotate, and its design (strata, weights; never shown to annotators)."""

import logging
from pathlib import Path

from clsd.core import logs
from clsd.core.io import read_table, write_table
from clsd.validate.annotation import page, sample, sheets

logs.to_file(snakemake.log[0])
dataset, lang = snakemake.wildcards.dataset, snakemake.wildcards.lang
settings, source_lang = snakemake.params.annotation, snakemake.params.source_lang
parallel = read_table(snakemake.input.parallel)
drawn, sample_id = sample.draw(
    read_table(snakemake.input.distractors),
    dict(zip(parallel["id"].to_list(), parallel[lang].to_list())),
    dict(zip(parallel["id"].to_list(), parallel[source_lang].to_list())),
    dataset=dataset, lang=lang, size=settings["sample"], seed=settings["seed"], stratify=settings["stratify"],
    min_per_stratum=settings["min_per_stratum"],
)
if drawn.height == 0:
    logging.warning("%s (%s) has no distractor to annotate: its page and sheet are empty", dataset, lang)
logging.info("sample %s: %d distractors of %s (%s) in %d strata", sample_id, drawn.height, dataset, lang, drawn["stratum"].n_unique())
Path(snakemake.output.page).write_text(page.render(drawn, sample_id, dataset=dataset, lang=lang, source_lang=source_lang),
                                       encoding="utf-8")
sheets.write_sheet(drawn, sample_id, snakemake.output.sheet)
write_table(drawn, snakemake.output.design, {"sample_id": sample_id, "design": settings, "source_lang": source_lang})
