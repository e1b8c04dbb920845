"""Rule `shift_figures`: X-Change and M-Change figures (paper Figures 2 and 3) and their numbers."""

import polars as pl

from clsd.analysis import shifts

from clsd.core import logs

from clsd.report import figures
from clsd.core.io import read_table

logs.to_file(snakemake.log[0])
params = snakemake.params
data = shifts.pos_groups(pl.concat([read_table(p) for p in snakemake.input]), params.min_group)
summaries = []
for kind, pdf, png in (("x_shift", snakemake.output.x_pdf, snakemake.output.x_png), ("m_shift", snakemake.output.m_pdf, snakemake.output.m_png)):
    summary = shifts.summary(data, kind, params.bootstrap, params.seed)
    figures.shift_figure(summary, kind, pdf, png)
    summaries.append(summary.with_columns(pl.lit(kind).alias("shift")))
pl.concat(summaries).write_csv(snakemake.output.summary)
