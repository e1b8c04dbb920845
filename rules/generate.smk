# Generated distractor sets: an LLM behind an OpenAI-compatible endpoint (a local llama.cpp server by
# default), or the rule-based baseline. One job per dataset and language, with its own concurrency.
# Every set, generated or published, then passes validation (clsd.validate.rules) on its way to the candidates.


rule generate_distractors:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
        prompt=config["generation"]["prompt"],
        judge_prompt=judge_prompt_input(),
        model=llm_model_input(),
        gguf=local_gguf_input(),
    output:
        distractors="results/distractors/{dataset}/{lang}.parquet",
        report=report(
            "results/generation/{dataset}/{lang}.json",
            caption="../report/generation.rst",
            category="Generation",
        ),
    log:
        "results/logs/generate_distractors/{dataset}/{lang}.log",
    wildcard_constraints:
        dataset=alternatives(llm_datasets(config)),
    conda:
        "../envs/generate.yaml"
    threads: llm_threads()
    resources:
        llm=1,
    params:
        settings=generation_settings(),
        validation=generation_validation(),
        label=distractor_label,
        code=code("generate_distractors.py"),
    script:
        "../workflow/scripts/generate_distractors.py"


rule rule_distractors:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
        lexicon=rule_lexicon,
    output:
        distractors="results/distractors/{dataset}/{lang}.parquet",
        report="results/generation/{dataset}/{lang}.json",
    log:
        "results/logs/rule_distractors/{dataset}/{lang}.log",
    wildcard_constraints:
        dataset=alternatives(rule_datasets()),
    conda:
        "../envs/data.yaml"
    params:
        label=distractor_label,
        code=code("rule_distractors.py"),
    script:
        "../workflow/scripts/rule_distractors.py"


rule validate_distractors:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
        distractors="results/distractors/{dataset}/{lang}.parquet",
        judge_prompt=judge_prompt_input(),
        model=llm_model_input() if config["validation"]["judge"] else [],
        gguf=local_gguf_input() if config["validation"]["judge"] else [],
    output:
        distractors="results/validated/{dataset}/{lang}.parquet",
        report="results/validation/{dataset}/{lang}.json",
    log:
        "results/logs/validate_distractors/{dataset}/{lang}.log",
    conda:
        "../envs/generate.yaml"
    threads: llm_threads() if config["validation"]["judge"] else 1
    resources:
        llm=1 if config["validation"]["judge"] else 0,
    params:
        validation=validation_params,
        kind=distractor_kind,
        generation=generation_settings() if config["validation"]["judge"] else None,
        code=code("validate_distractors.py"),
    script:
        "../workflow/scripts/validate_distractors.py"
