"""Rule `correlations`: Pearson/Spearman of monolingual vs cross-lingual shifts per model, language and POS."""

import polars as pl
from clsd.analysis import shifts
from clsd.core import logs, render
from clsd.core.io import read_table
from clsd.core.languages import names
from clsd.core.paths import keyed

logs.to_file(snakemake.log[0])
data = shifts.pos_groups(pl.concat([read_table(path) for path in keyed(snakemake.input, "shifts").values()]), snakemake.params.min_group)
render.write(shifts.correlations(data, names()), snakemake.output.md, snakemake.output.tex, snakemake.output.csv)
