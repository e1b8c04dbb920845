"""Rule `table2`: the paper's Table 2 (P@1 per model × dataset × direction, a block per view) with exact 95%
intervals per cell and a paired interval for the Average, items scored per column and footnotes for items
left out and for published duplicates kept; the paired model comparisons; and Table 2 as a figure. Rows and
columns come in one canonical order (views as configured, models and datasets by name), whatever the order of the
config."""

import logging

from clsd.core import logs
from clsd.core.io import read_meta
from clsd.core.paths import keyed
from clsd.report import figures, table2

logs.to_file(snakemake.log[0])
settings, output, labels = snakemake.params.uncertainty, snakemake.output, snakemake.params.labels
scores = keyed(snakemake.input, "scores")
files = [
    table2.ScoreFile(view, labels["models"][model], dataset, labels["datasets"][dataset], path)
    for view in snakemake.params.views
    for (score_view, model, dataset), path in scores.items()
    if score_view == view
]
outcomes = table2.read_outcomes(files, snakemake.params.directions)
candidates = [(labels["datasets"][dataset], read_meta(path)) for (dataset,), path in keyed(snakemake.input, "candidates").items()]
table, counts = table2.table2(outcomes)
notes = table2.not_scored_notes(candidates) + table2.duplicate_notes(candidates)
if not any(counts.values()):  # written all `–`, as a dataset with nothing to score is among others, with what to try
    logging.getLogger("clsd.table2").warning(table2.nothing_to_score(candidates))
    notes += table2.nothing_scored_notes(candidates)
intervals = table2.confidence_intervals(outcomes)
table2.write_table2(table, counts, intervals, notes + table2.average_note(counts), settings["show_ci"], output.md, output.tex, output.csv)
table2.write_pairs(table2.paired_comparisons(outcomes), output.pairs_md, output.pairs_csv)
figures.table2_figure(intervals.filter(intervals["column"] != "Average"), output.figure_pdf, output.figure_png)
