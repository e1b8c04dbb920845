# Stage validate (clsd.validate): every distractor set, generated or published, checked on its way to the candidates
# (rules that reject only what certainly keeps the meaning, the optional LLM judge); a report per set.


rule validate_distractors:
    input:
        parallel=paths.PARALLEL,
        distractors=paths.DISTRACTORS,
        judge_prompt=judge_prompt_input(),
        model=llm_model_input() if config["validation"]["judge"] else [],
        gguf=local_gguf_input() if config["validation"]["judge"] else [],
    output:
        distractors=paths.VALIDATED,
        report=paths.VALIDATION_REPORT,
    log:
        "results/logs/validate_distractors/{dataset}/{lang}.log",
    # a small local job, unless the judge asks an LLM (then it is placed like generation)
    localrule: not config["validation"]["judge"]
    conda:
        "../envs/generate.yaml"
    threads: llm_threads() if config["validation"]["judge"] else 1
    resources:
        llm=1 if config["validation"]["judge"] else 0,
    params:
        validation=validation_params,
        kind=distractor_kind,
        judge=judge_settings() if config["validation"]["judge"] else None,
        code=code("validate_distractors.py"),
    script:
        "../workflow/scripts/validate_distractors.py"
