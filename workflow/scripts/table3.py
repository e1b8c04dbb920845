"""Rule `table3`: successful distractors by Levenshtein bin, per model and target language (paper Table 3)."""

import polars as pl

from clsd.analysis import table3

from clsd.core import logs, render
from clsd.core.languages import names
from clsd.core.io import read_table

logs.to_file(snakemake.log[0])
candidates = {d: read_table(p) for d, p in zip(snakemake.params.datasets, snakemake.input.candidates)}
successful = table3.successful_of(snakemake.params.entries, snakemake.input.scores)
binned = pl.concat(
    [
        table3.with_similarity(successful.filter(pl.col("dataset") == dataset).select("model", "id", "lang", "k"), table)
        for dataset, table in candidates.items()
    ]
)
everything = pl.concat([table3.all_distractor_bins(c).select("lang", "bin") for c in candidates.values()])
models = list(dict.fromkeys(entry["model"] for entry in snakemake.params.entries))
result = table3.table3(binned.select("model", "lang", "bin"), everything, models, names())
render.write(result, snakemake.output.md, snakemake.output.tex, snakemake.output.csv)
