# Why models fail (direct view): Table 3, single-word pairs with POS, normalised shifts and their
# figures, correlations, Table 5 examples, distractor statistics and direct-vs-pivot failures.


rule single_word_pairs:
    input:
        candidates="results/candidates/{dataset}/direct.parquet",
        stanza=stanza_sentinel(),
    output:
        "results/analysis/{dataset}/single_word.parquet",
    log:
        "results/logs/single_word_pairs/{dataset}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        tagger=config["analysis"]["tagger"],
        code=code("single_word_pairs.py"),
    script:
        "../workflow/scripts/single_word_pairs.py"


rule distractor_stats:
    input:
        candidates=expand(
            "results/candidates/{dataset}/direct.parquet", dataset=config["datasets"]
        ),
    output:
        md="results/tables/distractor_stats.md",
        tex="results/tables/distractor_stats.tex",
        csv="results/tables/distractor_stats.csv",
        copies="results/tables/distractor_copies.csv",
    log:
        "results/logs/distractor_stats.log",
    conda:
        "../envs/analysis.yaml"
    params:
        datasets=list(config["datasets"]),
        code=code("distractor_stats.py"),
    script:
        "../workflow/scripts/distractor_stats.py"


rule table3:
    input:
        scores=analysis_scores("direct"),
        candidates=expand(
            "results/candidates/{dataset}/direct.parquet", dataset=config["datasets"]
        ),
    output:
        md=report(
            "results/tables/table3.md",
            caption="../report/table3.rst",
            category="Tables",
        ),
        tex="results/tables/table3.tex",
        csv="results/tables/table3.csv",
    log:
        "results/logs/table3.log",
    conda:
        "../envs/analysis.yaml"
    params:
        entries=analysis_entries(),
        datasets=list(config["datasets"]),
        code=code("table3.py"),
    script:
        "../workflow/scripts/table3.py"


rule shifts:
    input:
        embeddings=expand(
            "results/embeddings/{{model}}/{dataset}/direct.parquet",
            dataset=config["datasets"],
        ),
        candidates=expand(
            "results/candidates/{dataset}/direct.parquet", dataset=config["datasets"]
        ),
        pairs=expand(
            "results/analysis/{dataset}/single_word.parquet",
            dataset=config["datasets"],
        ),
        parallel=expand(
            "results/data/{dataset}/parallel.parquet", dataset=config["datasets"]
        ),
    output:
        "results/analysis/shifts/{model}.parquet",
    log:
        "results/logs/shifts/{model}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        datasets=list(config["datasets"]),
        languages=[spec["languages"] for spec in config["datasets"].values()],
        seed=config["analysis"]["seed"],
        label=model_label,
        code=code("shifts.py"),
    script:
        "../workflow/scripts/shifts.py"


rule shift_figures:
    input:
        expand("results/analysis/shifts/{model}.parquet", model=config["models"]),
    output:
        x_pdf="results/figures/x_change.pdf",
        x_png=report(
            "results/figures/x_change.png",
            caption="../report/x_change.rst",
            category="Figures",
        ),
        m_pdf="results/figures/m_change.pdf",
        m_png=report(
            "results/figures/m_change.png",
            caption="../report/m_change.rst",
            category="Figures",
        ),
        summary="results/tables/shift_summary.csv",
    log:
        "results/logs/shift_figures.log",
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
        expand("results/analysis/shifts/{model}.parquet", model=config["models"]),
    output:
        md=report(
            "results/tables/correlations.md",
            caption="../report/correlations.rst",
            category="Tables",
        ),
        tex="results/tables/correlations.tex",
        csv="results/tables/correlations.csv",
    log:
        "results/logs/correlations.log",
    conda:
        "../envs/analysis.yaml"
    params:
        min_group=config["analysis"]["min_group"],
        code=code("correlations.py"),
    script:
        "../workflow/scripts/correlations.py"


rule examples:
    input:
        scores=analysis_scores("direct"),
        candidates=expand(
            "results/candidates/{dataset}/direct.parquet", dataset=config["datasets"]
        ),
    output:
        md=report(
            "results/tables/table5.md",
            caption="../report/table5.rst",
            category="Tables",
        ),
        tex="results/tables/table5.tex",
    log:
        "results/logs/examples.log",
    conda:
        "../envs/analysis.yaml"
    params:
        entries=analysis_entries(),
        datasets=list(config["datasets"]),
        n=config["analysis"]["examples"],
        seed=config["analysis"]["seed"],
        code=code("examples.py"),
    script:
        "../workflow/scripts/examples.py"


rule pivot_failures:
    input:
        direct=analysis_scores("direct"),
        pivot=analysis_scores("pivot"),
        candidates=expand(
            "results/candidates/{dataset}/direct.parquet", dataset=config["datasets"]
        ),
    output:
        md=report(
            "results/tables/pivot_failures.md",
            caption="../report/pivot_failures.rst",
            category="Tables",
        ),
        csv="results/tables/pivot_failures.csv",
    log:
        "results/logs/pivot_failures.log",
    conda:
        "../envs/analysis.yaml"
    params:
        entries=analysis_entries(),
        datasets=list(config["datasets"]),
        code=code("pivot_failures.py"),
    script:
        "../workflow/scripts/pivot_failures.py"
