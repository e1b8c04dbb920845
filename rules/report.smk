# Aggregation: Table 2 in Markdown/LaTeX/CSV and one MTEB-shaped JSON per model and dataset.


rule mteb_json:
    input:
        candidates="results/candidates/{dataset}/direct.parquet",
        view_candidates=expand(
            "results/candidates/{{dataset}}/{view}.parquet", view=VIEWS
        ),
        scores=score_files,
    output:
        "results/mteb/{model}/{dataset}.json",
    log:
        "results/logs/mteb_json/{model}/{dataset}.log",
    conda:
        "../envs/report.yaml"
    params:
        views=VIEWS,
        directions=dataset_directions,
        code=code("mteb_json.py"),
    script:
        "../workflow/scripts/mteb_json.py"


rule table2:
    input:
        scores=table2_inputs(),
        candidates=expand(
            "results/candidates/{dataset}/direct.parquet", dataset=config["datasets"]
        ),
    output:
        md=report(
            "results/tables/table2.md",
            caption="../report/table2.rst",
            category="Tables",
        ),
        tex="results/tables/table2.tex",
        csv="results/tables/table2.csv",
        pairs_md=report(
            "results/tables/table2_pairs.md",
            caption="../report/table2_pairs.rst",
            category="Tables",
        ),
        pairs_csv="results/tables/table2_pairs.csv",
        figure_pdf="results/figures/table2.pdf",
        figure_png=report(
            "results/figures/table2.png",
            caption="../report/table2_figure.rst",
            category="Figures",
        ),
    log:
        "results/logs/table2.log",
    conda:
        "../envs/report.yaml"
    params:
        entries=table2_entries(),
        dataset_labels=[spec["label"] for spec in config["datasets"].values()],
        directions={
            name: spec["directions"] for name, spec in config["datasets"].items()
        },
        uncertainty=config["table2"],
        code=code("table2.py"),
    script:
        "../workflow/scripts/table2.py"


rule validation_table:
    input:
        validation_reports(),
    output:
        md=report(
            "results/tables/validation.md",
            caption="../report/validation.rst",
            category="Validation",
        ),
        csv="results/tables/validation.csv",
    log:
        "results/logs/validation_table.log",
    conda:
        "../envs/report.yaml"
    params:
        examples=config["validation"]["examples"],
        code=code("validation_table.py"),
    script:
        "../workflow/scripts/validation_table.py"


rule hf_export:
    input:
        views=expand("results/candidates/{{dataset}}/{view}.parquet", view=VIEWS),
    output:
        report(
            directory("results/hf/{dataset}"),
            patterns=["{card}.md"],
            caption="../report/hf_dataset.rst",
            category="Datasets",
        ),
    log:
        "results/logs/hf_export/{dataset}.log",
    conda:
        "../envs/report.yaml"
    params:
        views=VIEWS,
        directions=dataset_directions,
        card=card_params,
        code=code("hf_export.py"),
    script:
        "../workflow/scripts/hf_export.py"


rule mteb_evaluate:
    input:
        dataset="results/hf/{dataset}",
        scores=score_files,
        model=model_input,
        export=export_input,
    output:
        result="results/mteb-evaluate/{model}/{dataset}.json",
        check="results/mteb-evaluate/{model}/{dataset}.check.json",
    log:
        "results/logs/mteb_evaluate/{model}/{dataset}.log",
    benchmark:
        "results/benchmarks/mteb_evaluate/{model}/{dataset}.tsv"
    conda:
        "../envs/mteb.yaml"
    threads: 2
    resources:
        mem_mb=config["resources"]["embed_mem_mb"],
        runtime=config["resources"]["embed_runtime"],
        gpu=config["resources"]["embed_gpu"],
    params:
        model=model_params,
        device=config["device"],
        views=VIEWS,
        cache=config["mteb"]["cache"],
        code=code("mteb_evaluate.py"),
    script:
        "../workflow/scripts/mteb_evaluate.py"
