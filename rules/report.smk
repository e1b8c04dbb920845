# Stage report (clsd.report): Table 2 with exact intervals, paired comparisons and its figure; the validation table;
# one MTEB-shaped record per model and dataset; each dataset as a Hugging Face datasets folder; the opt-in MTEB
# evaluation. Aggregations take keyed inputs (clsd.core.paths.keyed).


rule table2:
    input:
        unpack(table2_inputs),
    output:
        md=report(
            fill(paths.TABLE, name="table2", ext="md"),
            caption="../report/table2.rst",
            category="Tables",
        ),
        tex=fill(paths.TABLE, name="table2", ext="tex"),
        csv=fill(paths.TABLE, name="table2", ext="csv"),
        pairs_md=report(
            fill(paths.TABLE, name="table2_pairs", ext="md"),
            caption="../report/table2_pairs.rst",
            category="Tables",
        ),
        pairs_csv=fill(paths.TABLE, name="table2_pairs", ext="csv"),
        figure_pdf=fill(paths.FIGURE, name="table2", ext="pdf"),
        figure_png=report(
            fill(paths.FIGURE, name="table2", ext="png"),
            caption="../report/table2_figure.rst",
            category="Figures",
        ),
    log:
        "results/logs/table2.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        views=VIEWS,
        labels=labels(),
        directions=directions_by_dataset(),
        uncertainty=config["table2"],
        code=code("table2.py"),
    script:
        "../workflow/scripts/table2.py"


rule validation_table:
    input:
        unpack(validation_reports),
    output:
        md=report(
            fill(paths.TABLE, name="validation", ext="md"),
            caption="../report/validation.rst",
            category="Validation",
        ),
        csv=fill(paths.TABLE, name="validation", ext="csv"),
    log:
        "results/logs/validation_table.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        examples=config["validation"]["examples"],
        code=code("validation_table.py"),
    script:
        "../workflow/scripts/validation_table.py"


rule mteb_json:
    input:
        unpack(mteb_inputs),
    output:
        paths.MTEB_RECORD,
    log:
        "results/logs/mteb_json/{model}/{dataset}.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        directions=dataset_directions,
        code=code("mteb_json.py"),
    script:
        "../workflow/scripts/mteb_json.py"


rule hf_export:
    input:
        unpack(view_candidates),
    output:
        report(
            directory(paths.HF_EXPORT),
            patterns=["{card}.md"],
            caption="../report/hf_dataset.rst",
            category="Datasets",
        ),
    log:
        "results/logs/hf_export/{dataset}.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        directions=dataset_directions,
        card=card_params,
        code=code("hf_export.py"),
    script:
        "../workflow/scripts/hf_export.py"


rule mteb_evaluate:
    input:
        unpack(score_files),
        dataset=paths.HF_EXPORT,
        model=model_input,
        export=export_input,
    output:
        result=paths.MTEB_EVALUATE,
        check=paths.MTEB_EVALUATE.replace(".json", ".check.json"),
    log:
        "results/logs/mteb_evaluate/{model}/{dataset}.log",
    benchmark:
        "results/benchmarks/mteb_evaluate/{model}/{dataset}.tsv"
    conda:
        "../envs/mteb.yaml"
    threads: threads("mteb_evaluate")
    resources:
        mem_mb=config["resources"]["embed_mem_mb"],
        runtime=config["resources"]["embed_runtime"],
        gpu=config["resources"]["embed_gpu"],
    params:
        model=model_params,
        backend=backend_code,
        code=code("mteb_evaluate.py"),
    script:
        "../workflow/scripts/mteb_evaluate.py"
