"""Rule `table2`: the paper's Table 2 (P@1 per model × dataset × direction, a block per view)."""

from clsd import logs
from clsd.report import ScoreFile, table2, write_table2

logs.to_file(snakemake.log[0])
files = [ScoreFile(**entry, path=path) for entry, path in zip(snakemake.params.entries, snakemake.input.scores)]
write_table2(table2(files, snakemake.params.directions), snakemake.output.md, snakemake.output.tex, snakemake.output.csv)
