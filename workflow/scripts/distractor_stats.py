"""Rule `distractor_stats`: Jaccard, Levenshtein and single-word statistics of every distractor set, the list of
distractors that copy their true target, and every set's closeness profile beside the reference's."""

import logging
from pathlib import Path

import polars as pl
from clsd.analysis import distractor_stats, profile
from clsd.core import logs, render
from clsd.core.io import read_table
from clsd.core.languages import names
from clsd.core.paths import keyed

logs.to_file(snakemake.log[0])
tables = {dataset: read_table(path) for (dataset,), path in keyed(snakemake.input, "candidates").items()}
rows = [{"Dataset": dataset, **record} for dataset, table in tables.items() for record in distractor_stats.stats(table)]
if len(tables) > 1:
    pooled = pl.concat([table.with_columns(pl.lit(dataset).alias("dataset")) for dataset, table in tables.items()])
    rows += [{"Dataset": "all", **record} for record in distractor_stats.stats(pooled)]
table = distractor_stats.stats_table(rows).with_columns(pl.col("lang").replace(names()).alias("lang"))
copies = pl.concat([distractor_stats.target_copies(table).with_columns(pl.lit(dataset).alias("dataset")) for dataset, table in tables.items()])
for row in copies.iter_rows(named=True):
    logging.warning("%s item %s (%s) distractor %s copies its true target: %r", row["dataset"], row["id"], row["lang"], row["k"], row["distractor"])
copies.select("dataset", "id", "lang", "k", "target", "distractor").write_csv(snakemake.output.copies)

reference = profile.reference_of(snakemake.params.reference, tables, snakemake.params.labels)
sets = {snakemake.params.labels[dataset]: profile.profiles(table) for dataset, table in tables.items() if table.height}
frame = profile.profile_table(sets, reference, names())
notes = [f"Share of kept distractors (%) per Levenshtein ratio to the true target; gaps to {reference.label}: the largest "
         f"bin's in points, the median's; matches: every bin within {profile.BIN_GAP:g} points and the median within "
         f"{profile.MEDIAN_GAP:g}."]
render.write(frame, snakemake.output.profile_md, snakemake.output.profile_tex, snakemake.output.profile_csv, notes=notes)
# the statistics; in Markdown the profile beside the reference's under them (results/tables/closeness_profile.md)
render.write(table, snakemake.output.md, snakemake.output.tex, snakemake.output.csv)
profile_notes = ["Closeness profile of the kept distractors:", render.markdown(frame, notes=notes).strip()]
Path(snakemake.output.md).write_text(render.markdown(table, notes=profile_notes), encoding="utf-8")
