# Aggregation: Table 2 in Markdown/LaTeX/CSV and one MTEB-shaped JSON per model and dataset.


rule mteb_json:
    input:
        candidates="results/candidates/{dataset}/direct.parquet",
        scores=score_files,
    output:
        "results/mteb/{model}/{dataset}.json",
    log:
        "results/logs/mteb_json/{model}/{dataset}.log",
    conda:
        "../envs/report.yaml"
    params:
        views=VIEWS,
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
        directions=config["directions"],
        uncertainty=config["table2"],
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
    script:
        "../workflow/scripts/validation_table.py"
