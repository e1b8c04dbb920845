"""Rule `examples`: a seeded sample of successful distractors with the models they tricked and who checked each
distractor (paper Table 5)."""

from clsd.analysis import examples, table3
from clsd.core import logs, render
from clsd.core.io import read_table
from clsd.core.paths import keyed

logs.to_file(snakemake.log[0])
labels = snakemake.params.labels
candidates = {dataset: read_table(path) for (dataset,), path in keyed(snakemake.input, "candidates").items()}
scores = {(labels[model], dataset): path for (_, model, dataset), path in keyed(snakemake.input, "scores").items()}
checked = examples.checked_by({key: read_table(path) for key, path in keyed(snakemake.input, "distractors").items()})
sample = examples.table5(examples.tricked(table3.successful_of(scores), candidates), snakemake.params.n, snakemake.params.seed,
                         checked)
render.write(sample, snakemake.output.md, snakemake.output.tex, notes=[examples.CHECKED_NOTE])
