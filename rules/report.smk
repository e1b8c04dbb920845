# Stage report (clsd.report): Table 2 with exact intervals, paired comparisons and its figure; the validation table;
# one MTEB-shaped record per model and dataset; each dataset as a Hugging Face datasets folder; the opt-in MTEB
# evaluation. Aggregations take keyed inputs (clsd.core.paths.keyed).


def table2_labels():
    """The model and dataset labels Table 2 prints."""
    return {
        "models": model_labels(),
        "datasets": {
            name: config["datasets"][name]["label"] for name in sorted(DATASETS)
        },
    }


def directions_by_dataset():
    return {name: config["datasets"][name]["directions"] for name in sorted(DATASETS)}


def table2_inputs(wildcards):
    return scores_of(*VIEWS) | candidates_of()


def validation_reports(wildcards):
    return {
        input_name("report", d, lang): paths.VALIDATION_REPORT.format(
            dataset=d, lang=lang
        )
        for d in DATASETS
        for lang in config["datasets"][d]["languages"]
    }


def mteb_inputs(wildcards):
    """A model's score files and the candidate tables of every view of a dataset, keyed by view."""
    return score_files(wildcards) | view_candidates(wildcards)


def view_candidates(wildcards):
    return {
        input_name("candidates", v): paths.CANDIDATES.format(
            dataset=wildcards.dataset, view=v
        )
        for v in VIEWS
    }


def score_files(wildcards):
    return {
        input_name("scores", v): paths.SCORES.format(
            model=wildcards.model, dataset=wildcards.dataset, view=v
        )
        for v in VIEWS
    }


def card_params(wildcards):
    """What a dataset's exported card takes from the config: its label, license and source kind and ids."""
    spec = dataset_spec(wildcards)
    source = {
        key: spec["source"][key]
        for key in ("kind", "test_set", "langpair")
        if key in spec["source"]
    }
    return {"label": spec["label"], "license": spec["license"], "source": source}


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
        labels=table2_labels(),
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
