"""Rule `shift_figures`: X-Change and M-Change figures (paper Figures 2 and 3) and their numbers."""

import polars as pl
from clsd.analysis import figures, shifts
from clsd.core import logs
from clsd.core.io import read_table
from clsd.core.paths import keyed

logs.to_file(snakemake.log[0])
params = snakemake.params
data = shifts.pos_groups(pl.concat([read_table(path) for path in keyed(snakemake.input, "shifts").values()]), params.min_group)
summaries = []
for kind, pdf, png in (("x_shift", snakemake.output.x_pdf, snakemake.output.x_png), ("m_shift", snakemake.output.m_pdf, snakemake.output.m_png)):
    summary = shifts.summary(data, kind, params.bootstrap, params.seed)
    figures.shift_figure(summary, kind, pdf, png)
    summaries.append(summary.with_columns(pl.lit(kind).alias("shift")))
pl.concat(summaries).write_csv(snakemake.output.summary)
