# Stage generate (clsd.generate): distractor sets written by an LLM behind an OpenAI-compatible endpoint (a local
# llama.cpp server by default), or by the rule-based baseline. One job per dataset and language, with its own
# concurrency; every response is stored before it is parsed. `snakemake generation_estimate` says what it will send
# and cost first, contacting nothing.
# Inputs and params: clsd.generate.jobs (plain functions of the config, tested without Snakemake).

import clsd.data.jobs as data_jobs
import clsd.generate.jobs as generate_jobs
from clsd.analysis.jobs import profile_reference
from clsd.generate.jobs import llm_datasets
from clsd.generate.settings import request_settings


rule generate_distractors:
    input:
        parallel=paths.PARALLEL,
        prompt=config["generation"]["prompt"],
        judge_prompt=generate_jobs.judge_prompt_input(config),
        model=generate_jobs.llm_model_input(config),
        gguf=generate_jobs.local_gguf_input(config),
        batch_output=lambda w: generate_jobs.batch_output_input(
            config, w.dataset, w.lang
        ),
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
    threads: generate_jobs.llm_threads(config, workflow.cores)
    resources:
        llm=1,
    params:
        settings=request_settings(config["generation"]),
        unusable=lambda w: generate_jobs.unusable_to_reask(config, w.dataset, w.lang),
        validation=generate_jobs.generation_validation(config),
        label=lambda w: generate_jobs.distractor_label(config, w.dataset),
        reference=profile_reference(config),
        code=code("generate_distractors.py"),
    script:
        "../workflow/scripts/generate_distractors.py"


rule rule_distractors:
    input:
        parallel=paths.PARALLEL,
        lexicon=lambda w: generate_jobs.rule_lexicon(w.lang),
    output:
        distractors=paths.DISTRACTORS,
        report=paths.GENERATION_REPORT,
    log:
        "results/logs/rule_distractors/{dataset}/{lang}.log",
    wildcard_constraints:
        dataset=alternatives(data_jobs.datasets_with_distractors(config, ("rules",))),
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        label=lambda w: generate_jobs.distractor_label(config, w.dataset),
        code=code("rule_distractors.py"),
    script:
        "../workflow/scripts/rule_distractors.py"


rule generation_requests:
    input:
        parallel=paths.PARALLEL,
        prompt=config["generation"]["prompt"],
        judge_prompt=generate_jobs.judge_prompt_input(config),
        model=generate_jobs.llm_model_input(config),
        gguf=generate_jobs.local_gguf_input(config),
        store=generate_jobs.stored_input(config),
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
        settings=request_settings(config["generation"]),
        validation=generate_jobs.generation_validation(config),
        code=code("generation_requests.py"),
    script:
        "../workflow/scripts/generation_requests.py"


rule generation_estimate:
    input:
        unpack(lambda w: generate_jobs.estimate_inputs(config)),
        prompt=config["generation"]["prompt"],
        judge_prompt=generate_jobs.judge_prompt_input(config),
    output:
        md="results/generation/estimate.md",
        csv="results/generation/estimate.csv",
    log:
        "results/logs/generation_estimate.log",
    localrule: True
    conda:
        "../envs/generate.yaml"
    params:
        settings=request_settings(config["generation"]),
        prices=config["generation"]["prices"],
        batch=config["generation"]["batch"],
        code=code("generation_estimate.py"),
    script:
        "../workflow/scripts/generation_estimate.py"
