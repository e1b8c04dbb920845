"""Rule `pivot_failures`: items a model gets right directly but wrong through the pivot language."""

from pathlib import Path

import polars as pl
from clsd.analysis import examples
from clsd.core import logs, render
from clsd.core.io import read_table
from clsd.core.paths import keyed

logs.to_file(snakemake.log[0])
labels = snakemake.params.labels
candidates = {dataset: read_table(path) for (dataset,), path in keyed(snakemake.input, "candidates").items()}
scores = keyed(snakemake.input, "scores")
rows = []
for (view, model, dataset), direct in scores.items():
    if view != "direct":
        continue
    items = examples.direct_success_pivot_failure(read_table(direct), read_table(scores[("pivot", model, dataset)]))
    for (direction,), part in items.group_by("direction", maintain_order=True):
        texts = examples.texts_of(candidates[dataset], direction)
        rows.append(part.join(texts, on="id").with_columns(pl.lit(labels[model]).alias("model"), pl.lit(dataset).alias("dataset")))
schema = {"model": pl.String, "dataset": pl.String, "direction": pl.String, "id": pl.Int64, "source": pl.String, "target": pl.String}
listing = pl.concat(rows).select(list(schema)) if rows else pl.DataFrame(schema=schema)
listing.write_csv(snakemake.output.csv)
counts = listing.group_by("model", "dataset", "direction", maintain_order=True).len().rename({"len": "items"})
Path(snakemake.output.md).write_text(render.markdown(counts), encoding="utf-8")
