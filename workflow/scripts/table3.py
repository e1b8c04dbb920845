"""Rule `table3`: successful distractors by Levenshtein bin, per model and target language (paper Table 3)."""

import polars as pl
from clsd.analysis import table3
from clsd.core import logs, render
from clsd.core.io import read_table
from clsd.core.languages import names
from clsd.core.paths import keyed

logs.to_file(snakemake.log[0])
labels = snakemake.params.labels
candidates = {dataset: read_table(path) for (dataset,), path in keyed(snakemake.input, "candidates").items()}
scores = {(labels[model], dataset): path for (_, model, dataset), path in keyed(snakemake.input, "scores").items()}
successful = table3.successful_of(scores)
binned = pl.concat(
    [
        table3.with_similarity(successful.filter(pl.col("dataset") == dataset).select("model", "id", "lang", "k"), table)
        for dataset, table in candidates.items()
    ]
)
everything = pl.concat([table3.all_distractor_bins(c).select("lang", "bin") for c in candidates.values()])
result = table3.table3(binned.select("model", "lang", "bin"), everything, list(labels.values()), names())
render.write(result, snakemake.output.md, snakemake.output.tex, snakemake.output.csv)
