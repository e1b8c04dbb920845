"""What the jobs of stage data (rules/data.smk) read and depend on, from the validated config: their input files
and params, as plain functions of the config (rules/data.smk calls them while Snakemake plans).

A local file a job reads is an input (its content counts); a URL, an id or a sha256 pin is a param. The file
references are shared with the translate stage (an English pivot file covers a published CSV).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clsd.core import paths
from clsd.core.paths import input_name
from clsd.data.corpora import is_url

Config = Mapping[str, Any]
#: A file a job reads, as the config names it: {path (a local file or a URL), sha256 (a pin, or None)}.
Reference = dict[str, Any]


def is_local(reference: Reference | None) -> bool:
    """Whether a file reference is a local file (an input), not a URL (a param) nor absent."""
    return reference is not None and not is_url(reference["path"])


def reference_params(reference: Reference | None) -> dict[str, Any] | None:
    """A file reference as a param: a URL and its sha256 pin, or only the pin of a local file (an input)."""
    if reference is None:
        return None
    return {"url": None if is_local(reference) else reference["path"], "sha256": reference.get("sha256")}


def source_reference(spec: Mapping[str, Any]) -> Reference | None:
    """The published CSV a dataset's pairs come from, or None for other sources."""
    source = spec["source"]
    return {"path": source["path"], "sha256": source.get("sha256")} if source["kind"] == "published_csv" else None


def published_distractors(config: Config, dataset: str) -> Reference | None:
    """The published CSV ({path, sha256}) the dataset's distractors come from, or None when generated."""
    spec = config["datasets"][dataset]
    origin = spec["distractors"]
    if origin["kind"] == "from_source":
        return source_reference(spec)
    if origin["kind"] == "published_csv":
        return {"path": origin["path"], "sha256": origin.get("sha256")}
    return None


def datasets_with_distractors(config: Config, kinds: tuple[str, ...]) -> list[str]:
    """The datasets whose distractors are of one of `kinds` (from_source, published_csv, llm, rules)."""
    return [name for name, spec in config["datasets"].items() if spec["distractors"]["kind"] in kinds]


def parallel_inputs(config: Config, dataset: str) -> dict[str, str]:
    """The local files a dataset's pairs are read from, named by what they are (`file|de`, `csv`)."""
    spec = config["datasets"][dataset]
    source = spec["source"]
    if source["kind"] == "files":
        return {input_name("file", lang): source["files"][lang] for lang in spec["languages"]}
    reference = source_reference(spec)
    return {"csv": reference["path"]} if is_local(reference) else {}


def parallel_params(config: Config, dataset: str) -> dict[str, Any]:
    """What the pairs depend on besides their files: the source kind and ids, URL and pins, selection, languages."""
    spec = config["datasets"][dataset]
    source = {key: value for key, value in spec["source"].items() if key not in ("path", "files")}
    return {
        "source": source | {"reference": reference_params(source_reference(spec))},
        "select": spec["select"],
        "languages": spec["languages"],
    }


def published_distractors_input(config: Config, dataset: str) -> dict[str, str]:
    """The published CSV of a dataset's distractors, when it is a local file."""
    reference = published_distractors(config, dataset)
    return {"csv": reference["path"]} if is_local(reference) else {}


def published_distractors_params(config: Config, dataset: str) -> dict[str, Any]:
    """What published distractor sets depend on besides their file: its URL and pin, kind, generator, languages."""
    spec = config["datasets"][dataset]
    return {
        "csv": reference_params(published_distractors(config, dataset)),
        "kind": spec["distractors"]["kind"],
        "generator": spec["distractors"]["generator"],
        "languages": spec["languages"],
    }


def annotated(config: Config, dataset: str, lang: str) -> bool:
    """Whether annotators' verdict files are configured for a dataset's language (config `annotation.files`)."""
    return bool(config["annotation"]["files"].get(dataset, {}).get(lang))


def scored_sets(config: Config, dataset: str) -> list[str]:
    """The distractor sets a dataset's candidate table is built from, one per language: the validated set, or with
    verdict files the annotated one (the verdicts recorded for the card, and applied when annotation.apply)."""
    return [(paths.ANNOTATED if annotated(config, dataset, lang) else paths.VALIDATED).format(dataset=dataset, lang=lang)
            for lang in config["datasets"][dataset]["languages"]]
