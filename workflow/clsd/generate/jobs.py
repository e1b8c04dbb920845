"""What the jobs of stage generate (rules/generate.smk) read and depend on, from the validated config: their input
files, params and threads, as plain functions of the config (the rules call them while Snakemake plans).

The LLM endpoint's inputs and threads serve the judge of rules/validate.smk too: it asks the same endpoint.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clsd.core import paths
from clsd.core.paths import input_name
from clsd.core.languages import language
from clsd.core.workflow import repo_file
from clsd.generate.store import unusable_stamp
from clsd.serving.locations import model_store
from clsd.serving.model_store import RECIPES

Config = Mapping[str, Any]


def distractor_label(config: Config, dataset: str) -> str:
    """The generator label recorded with a dataset's distractors."""
    return config["datasets"][dataset]["distractors"]["generator"]


def rule_lexicon(lang: str) -> str:
    """The rule-based baseline's word lists of a language (the registry's `rules`; checked at start-up)."""
    return repo_file(f"resources/rules/{language(lang).rules}")


def judge_prompt_input(config: Config) -> list[str]:
    """The judge's template, an input only when the judge is on."""
    validation = config["validation"]
    return [validation["judge_prompt"]] if validation["judge"] else []


def llm_model_input(config: Config) -> list[str]:
    """The GGUF manifest when a local server is started from a PyPI recipe."""
    generation = config["generation"]
    if not uses_llm(config) or generation["base_url"] is not None or generation["local"]["gguf"] is not None:
        return []
    return [paths.MODEL_MANIFEST.format(recipe=generation["local"]["recipe"])]


def local_gguf_input(config: Config) -> list[str]:
    """A GGUF file named in the config is an input: replacing it reruns generation."""
    generation = config["generation"]
    if uses_llm(config) and generation["base_url"] is None and generation["local"]["gguf"] is not None:
        return [generation["local"]["gguf"]]
    return []


def llm_threads(config: Config, cores: int) -> int:
    """A local server uses every core given to Snakemake (`cores`); a remote endpoint needs one."""
    return cores if config["generation"]["base_url"] is None else 1


def generation_validation(config: Config) -> dict[str, Any]:
    """What generation needs from the validation settings (how the judge asks, only when it is on)."""
    validation = config["validation"]
    keys = ("rules", "min_closeness", "judge", "judge_per") if validation["judge"] else ("rules", "min_closeness", "judge")
    return {key: validation[key] for key in keys}


def batch_output_input(config: Config, dataset: str, lang: str) -> list[str]:
    """The offline batch runner's output file of a job (generation.batch_output), when one is configured."""
    pattern = config["generation"]["batch_output"]
    return [] if pattern is None else [pattern.format(dataset=dataset, lang=lang)]


def stored_input(config: Config) -> list[str]:
    """The response store when it exists (its answers decide what is still to send)."""
    store = response_store(config)
    return [str(store)] if store.exists() else []


def unusable_to_reask(config: Config, dataset: str, lang: str) -> str:
    """With `generation.reask_unusable`, the unusable answers the store holds for a job (a param: the job is run
    again, and asks them again, while there are new ones; "" otherwise, and without reask_unusable)."""
    if not config["generation"]["reask_unusable"]:
        return ""
    return unusable_stamp(response_store(config), dataset, lang)


def estimate_inputs(config: Config) -> dict[str, str]:
    """The parallel pairs of every LLM-generated dataset, by dataset and language; the response store when it
    exists (what it answers is free, so the estimate is redone when it changes)."""
    inputs = {input_name("parallel", d, lang): paths.PARALLEL.format(dataset=d)
              for d in llm_datasets(config) for lang in config["datasets"][d]["languages"]}
    return inputs | {"store": path for path in stored_input(config)}


def llm_datasets(config: Config) -> list[str]:
    return [name for name, d in config["datasets"].items() if d["distractors"]["kind"] == "llm"]


def uses_llm(config: Config) -> bool:
    """Whether any job asks the generation endpoint: LLM distractors, or the validation judge."""
    return bool(llm_datasets(config)) or config["validation"]["judge"]


def response_store(config: Config) -> Path:
    """The LLM response store (outside results/), as an absolute path."""
    return Path(os.path.expanduser(config["generation"]["store"])).resolve()


def local_gguf(config: Config) -> Path | None:
    """The GGUF served locally when generation.base_url is null."""
    generation = config["generation"]
    if generation["base_url"] is not None:
        return None
    if generation["local"]["gguf"] is not None:
        return Path(os.path.expanduser(generation["local"]["gguf"]))
    recipe = RECIPES[generation["local"]["recipe"]]
    return model_store(config) / recipe.name / recipe.weights
