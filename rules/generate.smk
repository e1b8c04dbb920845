# Stage generate (clsd.generate): distractor sets written by an LLM behind an OpenAI-compatible endpoint (a local
# llama.cpp server by default), or by the rule-based baseline. One job per dataset and language, with its own
# concurrency; every response is stored before it is parsed. `snakemake generation_estimate` says what it will send
# and cost first, contacting nothing.


rule generate_distractors:
    input:
        parallel=paths.PARALLEL,
        prompt=config["generation"]["prompt"],
        judge_prompt=judge_prompt_input(),
        model=llm_model_input(),
        gguf=local_gguf_input(),
        batch_output=batch_output_input,
    output:
        distractors=paths.DISTRACTORS,
        report=report(
            paths.GENERATION_REPORT,
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
        parallel=paths.PARALLEL,
        lexicon=rule_lexicon,
    output:
        distractors=paths.DISTRACTORS,
        report=paths.GENERATION_REPORT,
    log:
        "results/logs/rule_distractors/{dataset}/{lang}.log",
    wildcard_constraints:
        dataset=alternatives(datasets_with_distractors(("rules",))),
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        label=distractor_label,
        code=code("rule_distractors.py"),
    script:
        "../workflow/scripts/rule_distractors.py"


rule generation_requests:
    input:
        parallel=paths.PARALLEL,
        prompt=config["generation"]["prompt"],
        judge_prompt=judge_prompt_input(),
        model=llm_model_input(),
        gguf=local_gguf_input(),
        store=stored_input(),
    output:
        paths.REQUESTS,
    log:
        "results/logs/generation_requests/{dataset}/{lang}.log",
    wildcard_constraints:
        dataset=alternatives(llm_datasets(config)),
    localrule: True
    conda:
        "../envs/generate.yaml"
    params:
        settings=generation_settings(),
        validation=generation_validation(),
        code=code("generation_requests.py"),
    script:
        "../workflow/scripts/generation_requests.py"


rule generation_estimate:
    input:
        unpack(estimate_inputs),
        prompt=config["generation"]["prompt"],
        judge_prompt=judge_prompt_input(),
    output:
        md="results/generation/estimate.md",
        csv="results/generation/estimate.csv",
    log:
        "results/logs/generation_estimate.log",
    localrule: True
    conda:
        "../envs/generate.yaml"
    params:
        settings=generation_settings(),
        prices=config["generation"]["prices"],
        batch=config["generation"]["batch"],
        code=code("generation_estimate.py"),
    script:
        "../workflow/scripts/generation_estimate.py"
