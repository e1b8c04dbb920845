"""Rule `table2`: the paper's Table 2 (P@1 per model × dataset × direction, a block per view) with exact 95%
intervals per cell and a paired interval for the Average, items scored per column and footnotes for items
left out; the paired model comparisons; and Table 2 as a figure."""

from clsd.core import logs

from clsd.report import figures, table2
from clsd.core.errors import InputError
from clsd.core.io import read_meta

logs.to_file(snakemake.log[0])
settings, output = snakemake.params.uncertainty, snakemake.output
files = [table2.ScoreFile(**entry, path=path) for entry, path in zip(snakemake.params.entries, snakemake.input.scores)]
outcomes = table2.read_outcomes(files, snakemake.params.directions)
candidates = [(label, read_meta(path)) for label, path in zip(snakemake.params.dataset_labels, snakemake.input.candidates)]
table, counts = table2.table2(outcomes)
if not any(counts.values()):
    raise InputError(table2.nothing_to_score(candidates))
intervals = table2.confidence_intervals(outcomes, settings["bootstrap"], settings["seed"])
notes = table2.not_scored_notes(candidates)
table2.write_table2(table, counts, intervals, notes + table2.average_note(counts), settings["show_ci"], output.md, output.tex, output.csv)
table2.write_pairs(table2.paired_comparisons(outcomes), output.pairs_md, output.pairs_csv)
figures.table2_figure(intervals.filter(intervals["column"] != "Average"), output.figure_pdf, output.figure_png)
