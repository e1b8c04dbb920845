# Stage analysis (clsd.analysis), on the direct view: why models fail. Table 3, single-word pairs with POS,
# normalised shifts and their figures, correlations, Table 5 examples, distractor statistics and the items a model
# gets right directly but wrong through the pivot. Aggregations take keyed inputs (clsd.core.paths.keyed).


def model_label(wildcards):
    return config["models"][wildcards.model]["label"]


def direct_analysis_inputs(wildcards):
    return scores_of("direct") | candidates_of()


def pivot_failure_inputs(wildcards):
    return scores_of("direct", "pivot") | candidates_of()


def shifts_of(wildcards):
    """Every model's shift table, keyed `shifts|<model>`."""
    return {input_name("shifts", m): paths.SHIFTS.format(model=m) for m in MODELS}


def candidate_tables(wildcards):
    return candidates_of()


def shift_inputs(wildcards):
    """One model's direct embeddings of every dataset, with the candidates, single-word pairs and parallel pairs."""
    files = {}
    for d in DATASETS:
        files[input_name("embeddings", d)] = paths.EMBEDDINGS.format(
            model=wildcards.model, dataset=d, view="direct"
        )
        files[input_name("candidates", d)] = paths.CANDIDATES.format(
            dataset=d, view="direct"
        )
        files[input_name("pairs", d)] = paths.SINGLE_WORD.format(dataset=d)
        files[input_name("parallel", d)] = paths.PARALLEL.format(dataset=d)
    return files


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
        unpack(candidate_tables),
    output:
        md=fill(paths.TABLE, name="distractor_stats", ext="md"),
        tex=fill(paths.TABLE, name="distractor_stats", ext="tex"),
        csv=fill(paths.TABLE, name="distractor_stats", ext="csv"),
        copies=fill(paths.TABLE, name="distractor_copies", ext="csv"),
    log:
        "results/logs/distractor_stats.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        code=code("distractor_stats.py"),
    script:
        "../workflow/scripts/distractor_stats.py"


rule table3:
    input:
        unpack(direct_analysis_inputs),
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
        labels=model_labels(),
        code=code("table3.py"),
    script:
        "../workflow/scripts/table3.py"


rule shifts:
    input:
        unpack(shift_inputs),
    output:
        paths.SHIFTS,
    log:
        "results/logs/shifts/{model}.log",
    localrule: True
    conda:
        "../envs/analysis.yaml"
    params:
        languages={
            name: spec["languages"]
            for name, spec in sorted(config["datasets"].items())
        },
        seed=config["analysis"]["seed"],
        label=model_label,
        code=code("shifts.py"),
    script:
        "../workflow/scripts/shifts.py"


rule shift_figures:
    input:
        unpack(shifts_of),
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
        unpack(shifts_of),
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
        unpack(direct_analysis_inputs),
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
        labels=model_labels(),
        n=config["analysis"]["examples"],
        seed=config["analysis"]["seed"],
        code=code("examples.py"),
    script:
        "../workflow/scripts/examples.py"


rule pivot_failures:
    input:
        unpack(pivot_failure_inputs),
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
        labels=model_labels(),
        code=code("pivot_failures.py"),
    script:
        "../workflow/scripts/pivot_failures.py"
