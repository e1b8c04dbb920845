"""What the jobs of stage validate (rules/validate.smk) depend on, from the validated config: their params, as plain
functions of the config (the rules call them while Snakemake plans). The judge's inputs and threads are the LLM
endpoint's (clsd.generate.jobs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Config = Mapping[str, Any]


def distractor_kind(config: Config, dataset: str) -> str:
    """Where a dataset's distractors come from: from_source, published_csv, llm or rules."""
    return config["datasets"][dataset]["distractors"]["kind"]


def validation_params(config: Config, dataset: str) -> dict[str, Any]:
    """The validation settings a set's job uses: rules and judge, and apply_to_published only for published sets
    (a generated set does not rerun when it changes). The judge's template is an input (its content counts, not
    its path); the number of examples shown is the validation table's display setting.
    """
    settings = {key: config["validation"][key] for key in ("rules", "judge")}
    if distractor_kind(config, dataset) not in ("llm", "rules"):
        settings["apply_to_published"] = config["validation"]["apply_to_published"]
    return settings
