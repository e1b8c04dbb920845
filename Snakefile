# clsd: Cross-Lingual Semantic Discrimination benchmarks (arXiv 2502.08638).
# Thin entry point: configuration, validation, the rule files and the final targets.
from snakemake.utils import min_version

# clsd is imported one way everywhere: as an installed package (install.sh: pip install -e .; conda environments
# install it from this checkout in envs/<env>.post-deploy.sh).
import clsd.config

min_version("9.0")


# config.yaml is the embedded default; a --configfile given on the command line replaces it (Snakemake
# would otherwise merge the two, mixing the default's datasets and models into e.g. config/paper.yaml).
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


config.update(clsd.config.validate(config))


include: "rules/common.smk"


# Small, fast rules run on the submitting host: on a cluster only embedding, translation, conversion and
# generation jobs are submitted, so scheduling overhead does not dominate.
localrules:
    all,
    parallel,
    distractors,
    rule_distractors,
    candidates,
    pivot_candidates,
    materialise_model,
    score,
    mteb_json,
    table2,
    table3,
    single_word_pairs,
    shifts,
    shift_figures,
    correlations,
    examples,
    pivot_failures,
    distractor_stats,
    validation_table,
    hf_export,
    folder_checksums,


# Validation is a small local job unless the judge asks an LLM (then it is placed like generation).
if not config["validation"]["judge"]:

    localrules:
        validate_distractors,


wildcard_constraints:
    dataset=alternatives(config["datasets"]),
    model=alternatives(config["models"]),
    view=alternatives(VIEWS),
    recipe=alternatives(RECIPES),
    lang="[a-z]{2,3}",


include: "rules/data.smk"
include: "rules/generate.smk"
include: "rules/translate.smk"
include: "rules/embed.smk"
include: "rules/score.smk"
include: "rules/report.smk"
include: "rules/analysis.smk"


rule all:
    default_target: True
    input:
        final_targets(),
