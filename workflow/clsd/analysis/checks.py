"""Config checks of stage analysis: the closeness profile's reference.

Called by clsd.config.check while the Snakefile is parsed, so a bad config fails before any job starts, naming
the key."""

from __future__ import annotations

from typing import Any

from clsd.core.errors import InputError
from clsd.core.workflow import data_file
from clsd.generate.jobs import llm_datasets


def check_profile_reference(config: dict[str, Any]) -> None:
    """`analysis.profile_reference` names a dataset of the run or a readable reference profile file (checked now, not
    after the run's generation)."""
    from clsd.analysis.profile import read_reference

    reference = config["analysis"]["profile_reference"]
    if reference in config["datasets"]:
        if config["generation"]["candidates"] > 4 and llm_datasets(config):
            raise InputError(f"config key generation.candidates: {config['generation']['candidates']} candidates are "
                             f"chosen by a reference profile file, and analysis.profile_reference names the dataset "
                             f"{reference} (whose profile exists only after the run): name a file such as "
                             f"resources/profiles/gpt-4-0613-wmt.yaml, or set generation.candidates: 4")
        return
    if not data_file(reference).is_file():
        raise InputError(f"config key analysis.profile_reference: {reference} is neither a dataset of this config "
                         f"({', '.join(config['datasets'])}) nor a reference profile file")
    read_reference(data_file(reference))
