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
