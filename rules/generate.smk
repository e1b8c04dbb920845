# Stage generate (clsd.generate): distractor sets written by an LLM behind an OpenAI-compatible endpoint (a local
# llama.cpp server by default), or by the rule-based baseline. One job per dataset and language, with its own
# concurrency; every response is stored before it is parsed.

from clsd.config import llm_datasets, repo_file, uses_llm
from clsd.core.languages import language
from clsd.generate.settings import request_settings


def distractor_label(wildcards):
    return dataset_spec(wildcards)["distractors"]["generator"]


def rule_lexicon(wildcards):
    """The rule-based baseline's word lists of a language (the registry's `rules`; checked at start-up)."""
    return repo_file(f"resources/rules/{language(wildcards.lang).rules}")


# ---- the LLM endpoint, shared with the judge of rules/validate.smk ---------------------------------------------


def judge_prompt_input():
    """The judge's template, an input only when the judge is on."""
    validation = config["validation"]
    return [validation["judge_prompt"]] if validation["judge"] else []


def llm_model_input():
    """The GGUF manifest when a local server is started from a PyPI recipe."""
    generation = config["generation"]
    if (
        not uses_llm(config)
        or generation["base_url"] is not None
        or generation["local"]["gguf"] is not None
    ):
        return []
    return [paths.MODEL_MANIFEST.format(recipe=generation["local"]["recipe"])]


def local_gguf_input():
    """A GGUF file named in the config is an input: replacing it reruns generation."""
    generation = config["generation"]
    if (
        uses_llm(config)
        and generation["base_url"] is None
        and generation["local"]["gguf"] is not None
    ):
        return [generation["local"]["gguf"]]
    return []


def llm_threads():
    """A local server uses every core given to Snakemake; a remote endpoint needs one."""
    return workflow.cores if config["generation"]["base_url"] is None else 1


# ---- what generation depends on --------------------------------------------------------------------------------


def generation_validation():
    """What generation needs from the validation settings."""
    return {key: config["validation"][key] for key in ("rules", "judge")}


def generation_settings():
    """What generation's requests and outputs depend on (clsd.generate.settings.request_settings); the job reads
    the prompt (an input), prices, store, GGUF path and operational settings from the config.
    """
    return request_settings(config["generation"])


rule generate_distractors:
    input:
        parallel=paths.PARALLEL,
        prompt=config["generation"]["prompt"],
        judge_prompt=judge_prompt_input(),
        model=llm_model_input(),
        gguf=local_gguf_input(),
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
