"""Rule `table2`: the paper's Table 2 (P@1 per model × dataset × direction, a block per view) with exact 95%
intervals per cell and a paired interval for the Average, items scored per column and footnotes for items
left out; the paired model comparisons; and Table 2 as a figure."""

from clsd import figures, logs, report
from clsd.errors import InputError
from clsd.io import read_meta

logs.to_file(snakemake.log[0])
settings, output = snakemake.params.uncertainty, snakemake.output
files = [report.ScoreFile(**entry, path=path) for entry, path in zip(snakemake.params.entries, snakemake.input.scores)]
outcomes = report.read_outcomes(files, snakemake.params.directions)
candidates = [(label, read_meta(path)) for label, path in zip(snakemake.params.dataset_labels, snakemake.input.candidates)]
table, counts = report.table2(outcomes)
if not any(counts.values()):
    raise InputError(report.nothing_to_score(candidates))
intervals = report.confidence_intervals(outcomes, settings["bootstrap"], settings["seed"])
notes = report.not_scored_notes(candidates)
report.write_table2(table, counts, intervals, notes + report.average_note(counts), settings["show_ci"], output.md, output.tex, output.csv)
report.write_pairs(report.paired_comparisons(outcomes), output.pairs_md, output.pairs_csv)
figures.table2_figure(intervals.filter(intervals["column"] != "Average"), output.figure_pdf, output.figure_png)
