# Generated distractor sets: an LLM behind an OpenAI-compatible endpoint (a local llama.cpp server by
# default), or the rule-based baseline. One job per dataset and language, with its own concurrency.


rule generate_distractors:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
        prompt=config["generation"]["prompt"],
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
        gguf=local_gguf_path(),
        label=distractor_label,
    script:
        "../workflow/scripts/generate_distractors.py"


rule rule_distractors:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
        lexicon=f"{workflow.basedir}/resources/rules/{{lang}}.yaml",
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
    script:
        "../workflow/scripts/rule_distractors.py"
