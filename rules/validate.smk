# Stage validate (clsd.validate): every distractor set, generated or published, checked on its way to the candidates
# (rules that reject only what certainly keeps the meaning, the optional LLM judge); a report per set.
# Inputs and params: clsd.validate.jobs, and the LLM endpoint's clsd.generate.jobs (the judge asks it).

import clsd.generate.jobs as generate_jobs
import clsd.validate.jobs as validate_jobs
from clsd.validate.judge import judge_request_settings


rule validate_distractors:
    input:
        parallel=paths.PARALLEL,
        distractors=paths.DISTRACTORS,
        judge_prompt=generate_jobs.judge_prompt_input(config),
        model=(
            generate_jobs.llm_model_input(config)
            if config["validation"]["judge"]
            else []
        ),
        gguf=(
            generate_jobs.local_gguf_input(config)
            if config["validation"]["judge"]
            else []
        ),
    output:
        distractors=paths.VALIDATED,
        report=paths.VALIDATION_REPORT,
    log:
        "results/logs/validate_distractors/{dataset}/{lang}.log",
    # a small local job, unless the judge asks an LLM (then it is placed like generation)
    localrule: not config["validation"]["judge"]
    conda:
        "../envs/generate.yaml"
    threads:
        generate_jobs.llm_threads(config, workflow.cores)
        if config["validation"]["judge"]
        else 1
    resources:
        llm=1 if config["validation"]["judge"] else 0,
    params:
        validation=lambda w: validate_jobs.validation_params(config, w.dataset),
        kind=lambda w: validate_jobs.distractor_kind(config, w.dataset),
        judge=(
            judge_request_settings(
                config["generation"], config["validation"]["judge_per"]
            )
            if config["validation"]["judge"]
            else None
        ),
        code=code("validate_distractors.py"),
    script:
        "../workflow/scripts/validate_distractors.py"


# Stage validate, by people (clsd.validate.annotation): a stratified sample of each validated set to annotate (page
# and sheet), the annotators' verdict files back into a table, and the sets the candidates take (with the verdicts
# recorded, and applied when annotation.apply). Nothing here runs while annotation.sample is 0.


rule annotation_sheet:
    input:
        parallel=paths.PARALLEL,
        distractors=paths.VALIDATED,
    output:
        page=paths.ANNOTATION_PAGE,
        sheet=paths.ANNOTATION_SHEET,
        design=paths.ANNOTATION_DESIGN,
    log:
        "results/logs/annotation_sheet/{dataset}/{lang}.log",
    localrule: True
    # word segmentation (icu4py) for the highlighted differences, the seeded draw (numpy/scipy)
    conda:
        "../envs/analysis.yaml"
    params:
        annotation=validate_jobs.annotation_design(config),
        source_lang=lambda w: validate_jobs.source_language(config, w.dataset, w.lang),
        code=code("annotation_sheet.py"),
    script:
        "../workflow/scripts/annotation_sheet.py"


rule annotated_distractors:
    input:
        unpack(lambda w: validate_jobs.annotation_files(config, w.dataset, w.lang)),
        distractors=paths.VALIDATED,
        design=paths.ANNOTATION_DESIGN,
    output:
        paths.ANNOTATED,
    log:
        "results/logs/annotated_distractors/{dataset}/{lang}.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        apply=config["annotation"]["apply"],
        annotators=lambda w: validate_jobs.annotator_names(
            config["annotation"]["files"][w.dataset][w.lang]
        ),
        code=code("annotated_distractors.py"),
    script:
        "../workflow/scripts/annotated_distractors.py"


rule annotation_report:
    input:
        unpack(lambda w: validate_jobs.annotation_report_inputs(config)),
    output:
        md=report(
            fill(paths.TABLE, name="annotation", ext="md"),
            caption="../report/annotation.rst",
            category="Validation",
        ),
        csv=fill(paths.TABLE, name="annotation", ext="csv"),
    log:
        "results/logs/annotation_report.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        annotators=validate_jobs.annotators(config),
        code=code("annotation_report.py"),
    script:
        "../workflow/scripts/annotation_report.py"
