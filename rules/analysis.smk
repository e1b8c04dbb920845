# Stage analysis (clsd.analysis), on the direct view: why models fail. Table 3, single-word pairs with POS,
# normalised shifts and their figures, correlations, Table 5 examples, distractor statistics and the items a model
# gets right directly but wrong through the pivot. Aggregations take keyed inputs (clsd.core.paths.keyed).
# Inputs and params: clsd.analysis.jobs (plain functions of the config, tested without Snakemake).

import clsd.analysis.jobs as analysis_jobs
from clsd.analysis.jobs import profile_reference


rule single_word_pairs:
    input:
        candidates=fill(paths.CANDIDATES, view="direct"),
        stanza=planned_sentinel("stanza", "models"),
    output:
        paths.SINGLE_WORD,
    log:
        "results/logs/single_word_pairs/{dataset}.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        tagger=config["analysis"]["tagger"],
        code=code("single_word_pairs.py"),
    script:
        "../workflow/scripts/single_word_pairs.py"


rule distractor_stats:
    input:
        unpack(lambda w: analysis_jobs.candidates_of(config)),
    output:
        md=fill(paths.TABLE, name="distractor_stats", ext="md"),
        tex=fill(paths.TABLE, name="distractor_stats", ext="tex"),
        csv=fill(paths.TABLE, name="distractor_stats", ext="csv"),
        copies=fill(paths.TABLE, name="distractor_copies", ext="csv"),
        profile_md=report(
            fill(paths.TABLE, name="closeness_profile", ext="md"),
            caption="../report/closeness_profile.rst",
            category="Tables",
        ),
        profile_tex=fill(paths.TABLE, name="closeness_profile", ext="tex"),
        profile_csv=fill(paths.TABLE, name="closeness_profile", ext="csv"),
    log:
        "results/logs/distractor_stats.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        labels=analysis_jobs.dataset_labels(config),
        reference=profile_reference(config),
        code=code("distractor_stats.py"),
    script:
        "../workflow/scripts/distractor_stats.py"


rule table3:
    input:
        unpack(lambda w: analysis_jobs.direct_analysis_inputs(config)),
    output:
        md=report(
            fill(paths.TABLE, name="table3", ext="md"),
            caption="../report/table3.rst",
            category="Tables",
        ),
        tex=fill(paths.TABLE, name="table3", ext="tex"),
        csv=fill(paths.TABLE, name="table3", ext="csv"),
    log:
        "results/logs/table3.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        labels=analysis_jobs.model_labels(config),
        code=code("table3.py"),
    script:
        "../workflow/scripts/table3.py"


rule shifts:
    input:
        unpack(lambda w: analysis_jobs.shift_inputs(config, w.model)),
    output:
        paths.SHIFTS,
    log:
        "results/logs/shifts/{model}.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        languages=analysis_jobs.shift_languages(config),
        seed=config["analysis"]["seed"],
        label=lambda w: config["models"][w.model]["label"],
        code=code("shifts.py"),
    script:
        "../workflow/scripts/shifts.py"


rule shift_figures:
    input:
        unpack(lambda w: analysis_jobs.shifts_of(config)),
    output:
        x_pdf=fill(paths.FIGURE, name="x_change", ext="pdf"),
        x_png=report(
            fill(paths.FIGURE, name="x_change", ext="png"),
            caption="../report/x_change.rst",
            category="Figures",
        ),
        m_pdf=fill(paths.FIGURE, name="m_change", ext="pdf"),
        m_png=report(
            fill(paths.FIGURE, name="m_change", ext="png"),
            caption="../report/m_change.rst",
            category="Figures",
        ),
        summary=fill(paths.TABLE, name="shift_summary", ext="csv"),
    log:
        "results/logs/shift_figures.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        min_group=config["analysis"]["min_group"],
        bootstrap=config["analysis"]["bootstrap"],
        seed=config["analysis"]["seed"],
        code=code("shift_figures.py"),
    script:
        "../workflow/scripts/shift_figures.py"


rule correlations:
    input:
        unpack(lambda w: analysis_jobs.shifts_of(config)),
    output:
        md=report(
            fill(paths.TABLE, name="correlations", ext="md"),
            caption="../report/correlations.rst",
            category="Tables",
        ),
        tex=fill(paths.TABLE, name="correlations", ext="tex"),
        csv=fill(paths.TABLE, name="correlations", ext="csv"),
    log:
        "results/logs/correlations.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        min_group=config["analysis"]["min_group"],
        code=code("correlations.py"),
    script:
        "../workflow/scripts/correlations.py"


rule examples:
    input:
        unpack(lambda w: analysis_jobs.examples_inputs(config)),
    output:
        md=report(
            fill(paths.TABLE, name="table5", ext="md"),
            caption="../report/table5.rst",
            category="Tables",
        ),
        tex=fill(paths.TABLE, name="table5", ext="tex"),
    log:
        "results/logs/examples.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        labels=analysis_jobs.model_labels(config),
        n=config["analysis"]["examples"],
        seed=config["analysis"]["seed"],
        code=code("examples.py"),
    script:
        "../workflow/scripts/examples.py"


rule pivot_failures:
    input:
        unpack(lambda w: analysis_jobs.pivot_failure_inputs(config)),
    output:
        md=report(
            fill(paths.TABLE, name="pivot_failures", ext="md"),
            caption="../report/pivot_failures.rst",
            category="Tables",
        ),
        csv=fill(paths.TABLE, name="pivot_failures", ext="csv"),
    log:
        "results/logs/pivot_failures.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        labels=analysis_jobs.model_labels(config),
        code=code("pivot_failures.py"),
    script:
        "../workflow/scripts/pivot_failures.py"
