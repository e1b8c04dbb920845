"""Rule `examples`: a seeded sample of successful distractors with the models they tricked (paper Table 5)."""

from clsd.analysis import examples, table3

from clsd.core import logs, render
from clsd.core.io import read_table

logs.to_file(snakemake.log[0])
candidates = {d: read_table(p) for d, p in zip(snakemake.params.datasets, snakemake.input.candidates)}
successful = table3.successful_of(snakemake.params.entries, snakemake.input.scores)
sample = examples.table5(examples.tricked(successful, candidates), snakemake.params.n, snakemake.params.seed)
render.write(sample, snakemake.output.md, snakemake.output.tex)
