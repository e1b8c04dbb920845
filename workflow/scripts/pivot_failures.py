"""Rule `pivot_failures`: items a model gets right directly but wrong through the English pivot."""

from pathlib import Path

import polars as pl

from clsd.analysis import examples

from clsd.core import logs, render
from clsd.core.io import read_table

logs.to_file(snakemake.log[0])
candidates = {d: read_table(p) for d, p in zip(snakemake.params.datasets, snakemake.input.candidates)}
rows = []
for entry, direct, pivot in zip(snakemake.params.entries, snakemake.input.direct, snakemake.input.pivot):
    items = examples.direct_success_pivot_failure(read_table(direct), read_table(pivot))
    for (direction,), part in items.group_by("direction", maintain_order=True):
        texts = examples.texts_of(candidates[entry["dataset"]], direction)
        rows.append(part.join(texts, on="id").with_columns(pl.lit(entry["model"]).alias("model"), pl.lit(entry["dataset"]).alias("dataset")))
schema = {"model": pl.String, "dataset": pl.String, "direction": pl.String, "id": pl.Int64, "source": pl.String, "target": pl.String}
listing = pl.concat(rows).select(list(schema)) if rows else pl.DataFrame(schema=schema)
listing.write_csv(snakemake.output.csv)
counts = listing.group_by("model", "dataset", "direction", maintain_order=True).len().rename({"len": "items"})
Path(snakemake.output.md).write_text(render.markdown(counts), encoding="utf-8")
