"""Where every result lives: the path templates of the rules (rules/*.smk), in one place, and the keys under which
aggregation rules receive their inputs.

An aggregation rule (Table 2, Table 3, shifts, ...) takes many files of the same kind; it receives them as named
inputs (`unpack`), each named by what it holds (`scores|direct|minilm|wmt19`), and its script looks them up by
that key (`keyed`), never by position: reordering models or datasets in the config cannot attach one model's
numbers to another's label, and tables come out in one canonical order (sorted keys).
"""

from __future__ import annotations

import re
from typing import Any

PARALLEL = "results/data/{dataset}/parallel.parquet"
DISTRACTORS = "results/distractors/{dataset}/{lang}.parquet"
GENERATION_REPORT = "results/generation/{dataset}/{lang}.json"
REQUESTS = "results/generation/{dataset}/{lang}.requests.jsonl"  # what an offline batch runner answers next
VALIDATED = "results/validated/{dataset}/{lang}.parquet"
VALIDATION_REPORT = "results/validation/{dataset}/{lang}.json"
ANNOTATION_PAGE = "results/annotation/{dataset}/{lang}.html"
ANNOTATION_SHEET = "results/annotation/{dataset}/{lang}.csv"
ANNOTATION_DESIGN = "results/annotation/{dataset}/{lang}.design.parquet"
ANNOTATED = "results/annotated/{dataset}/{lang}.parquet"
CANDIDATES = "results/candidates/{dataset}/{view}.parquet"
PIVOT = "results/pivot/{dataset}.parquet"
CT2 = "results/translators/ct2"
MODEL_MANIFEST = "results/models/{recipe}.json"
EXPORT = "results/exports/{model}.json"
SENTINEL = "results/sources/{kind}/{name}.json"
EMBEDDINGS = "results/embeddings/{model}/{dataset}/{view}.parquet"
EMBEDDING_REPORT = "results/embeddings/{model}/{dataset}/{view}.json"  # an endpoint model's: what it sent and paid
SCORES = "results/scores/{model}/{dataset}/{view}.parquet"
MTEB_RECORD = "results/mteb/{model}/{dataset}.json"
HF_EXPORT = "results/hf/{dataset}"
MTEB_EVALUATE = "results/mteb-evaluate/{model}/{dataset}.json"
SINGLE_WORD = "results/analysis/{dataset}/single_word.parquet"
SHIFTS = "results/analysis/shifts/{model}.parquet"
TABLE = "results/tables/{name}.{ext}"
FIGURE = "results/figures/{name}.{ext}"

def fill(template: str, **values: str) -> str:
    """A path template with some wildcards filled in and the others kept for Snakemake:
    fill(CANDIDATES, view="direct") == "results/candidates/{dataset}/direct.parquet"."""
    return re.sub(r"\{(\w+)\}", lambda match: str(values.get(match.group(1), match.group(0))), template)


#: Separates the kind of an input from the parts of its key in an input's name.
SEPARATOR = "|"


def input_name(kind: str, *parts: str) -> str:
    """The name of a keyed input: `scores|direct|minilm|wmt19`."""
    return SEPARATOR.join((kind, *parts))


def keyed(named: Any, kind: str) -> dict[tuple[str, ...], Any]:
    """The inputs of one kind by key, in sorted key order: {("direct", "minilm", "wmt19"): path, ...}; `named` is a
    rule's named inputs (`snakemake.input`, anything with `items()`)."""
    prefix = kind + SEPARATOR
    found = {tuple(name[len(prefix):].split(SEPARATOR)): value for name, value in named.items() if name.startswith(prefix)}
    return dict(sorted(found.items()))
