# clsd: Cross-Lingual Semantic Discrimination benchmarks (arXiv 2502.08638).
# Thin entry point: configuration, validation, the rule files (one per stage, each mirrored by a subpackage of
# workflow/clsd/) and the final targets. Small rules declare `localrule: True` and run on the submitting host;
# on a cluster only generation, translation, export, embedding and MTEB evaluation jobs are submitted.
from snakemake.utils import min_version

# clsd is imported one way everywhere: as an installed package (install.sh: pip install -e .; conda environments
# install it from this checkout in envs/<env>.post-deploy.sh). The workflow's data (resources/: the language registry,
# word lists, prompts) is this checkout's, whichever checkout the package was installed from (one environment may
# serve several): named here for clsd and every job (clsd.core.workflow).
import clsd.core.workflow

clsd.core.workflow.use(workflow.basedir)

import clsd.config

min_version("9.0")


# config.yaml is the embedded default; a --configfile given on the command line replaces it (Snakemake
# would otherwise merge the two, mixing the default's datasets and models into e.g. config/paper.yaml).
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


config.update(clsd.config.validate(config))


include: "rules/common.smk"


wildcard_constraints:
    dataset=alternatives(config["datasets"]),
    model=alternatives(config["models"]),
    view=alternatives(VIEWS),
    recipe=alternatives(RECIPES),
    lang="[a-z]{2,3}",


include: "rules/data.smk"
include: "rules/generate.smk"
include: "rules/validate.smk"
include: "rules/translate.smk"
include: "rules/embed.smk"
include: "rules/score.smk"
include: "rules/analysis.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        final_targets() + annotation_targets(),
    localrule: True
