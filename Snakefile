# clsd: Cross-Lingual Semantic Discrimination benchmarks (arXiv 2502.08638).
# Thin entry point: configuration, validation, the rule files and the final targets.
from snakemake.utils import min_version

import clsd.config

min_version("9.0")


configfile: "config.yaml"


config.update(clsd.config.validate(config))


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/embed.smk"
include: "rules/score.smk"
include: "rules/report.smk"


rule all:
    input:
        final_targets(),
    default_target: True
