"""Config checks of stage report: labels that key the tables, the generator check's pairs.

Called by clsd.config.check while the Snakefile is parsed, so a bad config fails before any job starts, naming
the key."""

from __future__ import annotations

from typing import Any

from clsd.core.errors import InputError


def check_unique_labels(config: dict[str, Any]) -> None:
    """Tables are keyed by labels: two models (rows) or datasets (columns) with one label would overwrite each other."""
    for section in ("models", "datasets"):
        seen: dict[str, str] = {}
        for name, entry in config[section].items():
            label = entry["label"]
            if label in seen:
                raise InputError(
                    f"config key {section}.{name}.label: {label!r} is also the label of {section}.{seen[label]}; "
                    "tables would mix or overwrite their results"
                )
            seen[label] = name


def check_generator_check(config: dict[str, Any]) -> None:
    """Each `generator_check` pair names two datasets of the config with the same languages and directions."""
    for index, pair in enumerate(config["generator_check"]):
        for role in ("reference", "candidate"):
            if pair[role] not in config["datasets"]:
                raise InputError(f"config key generator_check.{index}.{role}: {pair[role]!r} is not a dataset of this config "
                                 f"({', '.join(config['datasets'])})")
        reference, candidate = (config["datasets"][pair[role]] for role in ("reference", "candidate"))
        for key in ("languages", "directions"):
            if reference[key] != candidate[key]:
                raise InputError(f"config key generator_check.{index}: {pair['reference']} and {pair['candidate']} have other "
                                 f"{key} ({reference[key]} and {candidate[key]}); a check compares the same items")
