"""Rule `table2`: the paper's Table 2 (P@1 per model × dataset × direction, a block per view), with the
number of items scored per column and a footnote for items left out."""

from clsd import logs
from clsd.io import read_meta
from clsd.report import ScoreFile, not_scored_notes, table2, write_table2

logs.to_file(snakemake.log[0])
files = [ScoreFile(**entry, path=path) for entry, path in zip(snakemake.params.entries, snakemake.input.scores)]
table, counts = table2(files, snakemake.params.directions)
notes = not_scored_notes([(label, read_meta(path)) for label, path in zip(snakemake.params.dataset_labels, snakemake.input.candidates)])
write_table2(table, counts, notes, snakemake.output.md, snakemake.output.tex, snakemake.output.csv)
