"""Rule `table3`: successful distractors by Levenshtein bin, per model and target language (paper Table 3)."""

import polars as pl

from clsd import logs, render, table3
from clsd.datasets import LANGUAGE_NAMES
from clsd.io import read_table

logs.to_file(snakemake.log[0])
candidates = {d: read_table(p) for d, p in zip(snakemake.params.datasets, snakemake.input.candidates)}
successful = []
for entry, path in zip(snakemake.params.entries, snakemake.input.scores):
    picks = table3.successful_distractors(read_table(path))
    picks = picks.with_columns(pl.col("direction").str.split("-").list.get(1).alias("lang"))
    rows = table3.with_similarity(picks.select("id", "lang", "k"), candidates[entry["dataset"]])
    successful.append(rows.select(pl.lit(entry["model"]).alias("model"), "lang", "bin"))
everything = pl.concat([table3.all_distractor_bins(c).select("lang", "bin") for c in candidates.values()])
models = list(dict.fromkeys(entry["model"] for entry in snakemake.params.entries))
result = table3.table3(pl.concat(successful), everything, models, LANGUAGE_NAMES)
render.write(result, snakemake.output.md, snakemake.output.tex, snakemake.output.csv)
