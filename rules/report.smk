# Stage report (clsd.report): Table 2 with exact intervals, paired comparisons and its figure; the validation table;
# one MTEB-shaped record per model and dataset; each dataset as a Hugging Face datasets folder; the opt-in MTEB
# evaluation. Aggregations take keyed inputs (clsd.core.paths.keyed).
# Inputs and params: clsd.report.jobs; mteb_evaluate loads its model as the embedding job does (clsd.embed.jobs).

import clsd.analysis.jobs as analysis_jobs
import clsd.embed.jobs as embed_jobs
import clsd.report.jobs as report_jobs
from clsd.analysis.jobs import profile_reference
from clsd.embed.spec import model_identity, model_spec


rule table2:
    input:
        unpack(lambda w: report_jobs.table2_inputs(config, VIEWS)),
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
        labels=report_jobs.table2_labels(config),
        directions=report_jobs.directions_by_dataset(config),
        uncertainty=config["table2"],
        code=code("table2.py"),
    script:
        "../workflow/scripts/table2.py"


rule generator_check:
    input:
        unpack(lambda w: report_jobs.generator_check_inputs(config)),
    output:
        md=report(
            fill(paths.TABLE, name="generator_check", ext="md"),
            caption="../report/generator_check.rst",
            category="Tables",
        ),
        csv=fill(paths.TABLE, name="generator_check", ext="csv"),
    log:
        "results/logs/generator_check.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        pairs=report_jobs.generator_check_pairs(config),
        models=analysis_jobs.model_labels(config),
        reference=profile_reference(config),
        code=code("generator_check.py"),
    script:
        "../workflow/scripts/generator_check.py"


rule validation_table:
    input:
        unpack(lambda w: report_jobs.validation_reports(config)),
        profile=fill(paths.TABLE, name="closeness_profile", ext="md"),
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
        unpack(lambda w: report_jobs.mteb_inputs(w.model, w.dataset, VIEWS)),
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
        unpack(lambda w: report_jobs.view_candidates(w.dataset, VIEWS)),
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
        card=lambda w: report_jobs.card_params(config, w.dataset),
        code=code("hf_export.py"),
    script:
        "../workflow/scripts/hf_export.py"


rule mteb_evaluate:
    input:
        unpack(lambda w: report_jobs.score_files(w.model, w.dataset, VIEWS)),
        dataset=paths.HF_EXPORT,
        model=lambda w: embed_jobs.model_input(config, w.model),
        export=lambda w: embed_jobs.export_input(config, w.model),
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
        model=lambda w: model_identity(config, w.model),
        spec=lambda w: model_spec(config, w.model),
        store=embed_jobs.embedding_store(config),
        backend=lambda w: embed_jobs.backend_code(config, w.model),
        code=code("mteb_evaluate.py"),
    script:
        "../workflow/scripts/mteb_evaluate.py"
