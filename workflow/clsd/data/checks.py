"""Config checks of stage data (datasets: sources, languages, directions, selection).

Called by clsd.config.check while the Snakefile is parsed, so a bad config fails before any job starts, naming
the key."""

from __future__ import annotations

from typing import Any

from clsd.core.errors import InputError
from clsd.core.languages import language


def check_selection_keys(config: dict[str, Any]) -> None:
    """A published CSV is taken as it is (its items are the published set's): `select.min_words` and `select.lang`
    select raw pairs only and would be ignored there, so they are refused (read before the schema's defaults)."""
    for name, dataset in (config.get("datasets") or {}).items():
        if not isinstance(dataset, dict) or (dataset.get("source") or {}).get("kind") != "published_csv":
            continue
        for key in ("min_words", "lang"):
            if key in (dataset.get("select") or {}):
                raise InputError(f"config key datasets.{name}.select.{key}: a published_csv source is taken as published "
                                 f"(select applies {key} to files and sacrebleu sources only); keep select.limit, or "
                                 f"select the raw pairs with a files or sacrebleu source")


def check_directions(directions: list[str], key: str) -> None:
    """Directions are `src-tgt` of two different languages, each listed once."""
    seen: set[str] = set()
    for direction in directions:
        src, tgt = direction.split("-")
        if src == tgt:
            raise InputError(f"{key}: direction {direction} has the same source and target language; "
                             "the true target would be the source itself")
        if direction in seen:
            raise InputError(f"{key}: direction {direction} is listed twice")
        seen.add(direction)


def check_dataset_languages(name: str, dataset: dict[str, Any], default_directions: list[str]) -> None:
    """A dataset's languages are registered and distinct, its directions (its own, else the top-level ones) use
    only them, and the selection counts words of one of them. Fills in `directions`."""
    key = f"config key datasets.{name}"
    languages = dataset["languages"]
    for lang in languages:
        language(lang, f"{key}.languages")
    if len(set(languages)) != len(languages):
        raise InputError(f"{key}.languages: {languages} names a language twice")
    own = "directions" in dataset
    directions = dataset.setdefault("directions", list(default_directions))
    check_directions(directions, f"{key}.directions")
    for direction in directions:
        missing = [lang for lang in direction.split("-") if lang not in languages]
        if missing:
            where = f"{key}.directions" if own else f"{key}.languages"
            raise InputError(f"{where}: {languages} lacks {missing} needed by direction {direction}")
    select_lang = dataset["select"].setdefault("lang", languages[0])
    if dataset["source"]["kind"] != "published_csv" and select_lang not in languages:
        raise InputError(f"{key}.select.lang: {select_lang!r} is not a language of this dataset ({languages})")
