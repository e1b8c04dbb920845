# Stage validate (clsd.validate): every distractor set, generated or published, checked on its way to the candidates
# (rules that reject only what certainly keeps the meaning, the optional LLM judge); a report per set.

from clsd.validate.judge import judge_request_settings


def distractor_kind(wildcards):
    return dataset_spec(wildcards)["distractors"]["kind"]


def validation_params(wildcards):
    """The validation settings a set's job uses: rules and judge, and apply_to_published only for published sets
    (a generated set does not rerun when it changes). The judge's template is an input (its content counts, not
    its path); the number of examples shown is the validation table's display setting.
    """
    settings = {key: config["validation"][key] for key in ("rules", "judge")}
    if distractor_kind(wildcards) not in ("llm", "rules"):
        settings["apply_to_published"] = config["validation"]["apply_to_published"]
    return settings


def judge_settings():
    """What the judge's requests depend on (clsd.validate.judge.judge_request_settings): not the generation
    prompt, temperature or attempts."""
    return judge_request_settings(config["generation"])


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
