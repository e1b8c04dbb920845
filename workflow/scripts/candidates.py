"""Rule `candidates`: every text of the direct view (originals and distractors) in long form."""

from clsd import candidates, logs
from clsd.io import read_meta, read_table, write_table

logs.to_file(snakemake.log[0])
parallel = read_table(snakemake.input.parallel)
distractors = [read_table(path) for path in snakemake.input.distractors]
table = candidates.build(parallel, distractors, snakemake.params.languages)
write_table(table, snakemake.output[0], {"view": "direct", "parallel": read_meta(snakemake.input.parallel)})
