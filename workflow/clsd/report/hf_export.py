"""A CLSD set as a Hugging Face datasets folder in MTEB's retrieval-with-candidates layout, with its dataset card.

One folder per dataset, laid out as `datasets`' `push_to_hub` lays out a dataset with several configs (one
`{config}/test-00000-of-00001.parquet` per config, declared under `configs:` in README.md), so `hf upload` of the
folder publishes exactly what `load_dataset` reads here. Every view and direction is a subset
`{view}-{direction}` (the `hf_subset` of clsd's MTEB record, so both results name the same subsets) made of the
four configs mteb 2.x's `RetrievalDatasetLoader` reads for a reranking task:

- `{subset}-queries` (id, text): the source sentence of every item, id `{item}-{src}`;
- `{subset}-corpus` (id, text): the true target and the distractors of every item, id `{item}-{tgt}-{slot}`
  (slot 0 = the true target);
- `{subset}-qrels` (query-id, corpus-id, score): the true target of every query, score 1;
- `{subset}-top_ranked` (query-id, corpus-ids): the candidates of every query, its true target and its
  distractors, so a model ranks only the item's own candidates (CLSD's Precision@1), not the whole corpus.

The true target's id sorts before its distractors' (`…-0` < `…-1`): trec_eval, and mteb's metrics with it, break a
tie of scores by the larger document id, so a tie with a distractor counts as a failure there too, as in the paper.
A default config `items` holds the direct view's items in the published CLSD column layout (id, one column per
language, `{lang}_adv1..k`), so a bare `load_dataset(folder)` reads them. `clsd.json` is the manifest
`clsd.mteb_task` builds its task from (task name, content revision, subsets and their languages).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import yaml
from datasets import Dataset, Features, List, Value

from clsd.core.errors import InputError
from clsd.core.items import split_direction
from clsd.core.languages import language
from clsd.data.candidates import dropped_detail
from clsd.report.mteb_record import dataset_revision, subset_languages, view_texts
from clsd.score.precision import direction_texts

log = logging.getLogger(__name__)

SPLIT = "test"
MANIFEST = "clsd.json"
CARD = "README.md"
ITEMS_CONFIG = "items"
#: Columns and types of the four configs of a subset (what mteb's RetrievalDatasetLoader casts them to).
PARTS = {
    "queries": Features({"id": Value("string"), "text": Value("string")}),
    "corpus": Features({"id": Value("string"), "text": Value("string")}),
    "qrels": Features({"query-id": Value("string"), "corpus-id": Value("string"), "score": Value("int64")}),
    "top_ranked": Features({"query-id": Value("string"), "corpus-ids": List(Value("string"))}),
}
PAPER_URL = "https://arxiv.org/abs/2502.08638"
PAPER_BIBTEX = """@inproceedings{michail-etal-2025-examining,
    title = "Examining Multilingual Embedding Models Cross-Lingually Through {LLM}-Generated Adversarial Examples",
    author = "Michail, Andrianos and Clematide, Simon and Sennrich, Rico",
    booktitle = "Findings of the Association for Computational Linguistics: EMNLP 2025",
    year = "2025",
    address = "Suzhou, China",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2025.findings-emnlp.115/",
    pages = "2161--2170"
}"""
#: Hub size categories: (upper bound, name), by the number of items.
SIZES = [(10**3, "n<1K"), (10**4, "1K<n<10K"), (10**5, "10K<n<100K"), (10**6, "100K<n<1M"), (10**7, "1M<n<10M")]
#: Counts a validated distractor set records (clsd.validate.validator), shown in the card when present.
VALIDATION_COUNTS = ("written", "checked", "valid", "kept", "flagged", "removed", "reasked", "reorder_suspect",
                     "non_word_suspect")


@dataclass(frozen=True)
class ViewTable:
    """One view of a dataset to export: its candidate table and the table's provenance record."""

    view: str
    table: pl.DataFrame
    meta: dict[str, Any]


def subset_name(view: str, direction: str) -> str:
    """`direct`, `de-fr` → `direct-de-fr` (clsd.report.mteb_record.mteb_result's hf_subset)."""
    return f"{view}-{direction}"


def config_name(subset: str, part: str) -> str:
    """The config holding one part of a subset, as mteb's loader names it: `direct-de-fr-corpus`."""
    return f"{subset}-{part}"


def data_file(config: str) -> str:
    """Path of a config's single Parquet file inside the folder (push_to_hub's naming)."""
    return f"{config}/{SPLIT}-00000-of-00001.parquet"


def query_id(item: int, lang: str) -> str:
    """Query id of an item's source sentence in `lang`."""
    return f"{item}-{lang}"


def item_of(identifier: str) -> int:
    """The item id of a query or candidate id (`12-de`, `12-fr-3` → 12)."""
    return int(identifier.split("-", 1)[0])


def document_id(item: int, lang: str, slot: int) -> str:
    """Candidate id; the true target (slot 0) sorts before its distractors, so trec_eval ranks a tie against it."""
    return f"{item}-{lang}-{slot}"


def subset_parts(table: pl.DataFrame, direction: str) -> dict[str, pl.DataFrame]:
    """The queries, corpus, qrels and top_ranked tables of one direction of a candidate table (InputError when an
    item lacks its target or distractors, from clsd.score.precision.direction_texts)."""
    src, tgt = split_direction(direction)
    ids, query_texts, candidate_texts = direction_texts(table, direction)
    queries = [query_id(int(item), src) for item in ids]
    documents = [[document_id(int(item), tgt, slot) for slot in range(len(texts))] for item, texts in zip(ids, candidate_texts)]
    text = {"id": pl.String, "text": pl.String}
    return {
        "queries": pl.DataFrame({"id": queries, "text": query_texts}, schema=text),
        "corpus": pl.DataFrame({"id": [d for row in documents for d in row], "text": [t for row in candidate_texts for t in row]},
                               schema=text),
        "qrels": pl.DataFrame({"query-id": queries, "corpus-id": [row[0] for row in documents], "score": [1] * len(queries)},
                              schema={"query-id": pl.String, "corpus-id": pl.String, "score": pl.Int64}),
        "top_ranked": pl.DataFrame({"query-id": queries, "corpus-ids": documents},
                                   schema={"query-id": pl.String, "corpus-ids": pl.List(pl.String)}),
    }


def items_table(table: pl.DataFrame, languages: list[str]) -> pl.DataFrame:
    """One row per item in the published CLSD column layout: id, the original per language, then `{lang}_adv{k}`
    per language and slot."""
    wide = table.with_columns(
        pl.when(pl.col("slot") == 0).then(pl.col("lang")).otherwise(pl.format("{}_adv{}", "lang", "slot")).alias("column")
    ).pivot(on="column", index="id", values="text", sort_columns=False)
    distractors = sorted((c for c in wide.columns if "_adv" in c),
                         key=lambda c: (languages.index(c.split("_adv")[0]), int(c.split("_adv")[1])))
    return wide.select("id", *[lang for lang in languages if lang in wide.columns], *distractors).sort("id")


def size_category(n_items: int) -> str:
    """The hub's size category for a number of items."""
    return next((name for bound, name in SIZES if n_items < bound), "n>10M")


def file_name(source: dict[str, Any]) -> str:
    """A source file as the card shows it: its URL, or its file name (local paths stay private), and checksum."""
    shown = source.get("url") or Path(source.get("path", "?")).name
    return f"`{shown}` (sha256 `{source.get('sha256', 'not recorded')}`)"


def selection_text(parallel: dict[str, Any], source: dict[str, Any] | None) -> list[str]:
    """The card's lines on where the pairs come from and how they were selected."""
    kind = parallel.get("kind") or (source or {}).get("kind", "not recorded")
    selection = parallel.get("selection") or {}
    lines = []
    if kind == "sacrebleu" and source:
        lines.append(f"- Corpus: the WMT test set `{source.get('test_set')}` ({source.get('langpair')}) through sacrebleu.")
    else:
        described = {"published_csv": "a CSV in the published CLSD layout", "files": "line-aligned parallel files"}
        lines.append(f"- Corpus: {described.get(kind, kind)}.")
    lines += [f"- Source file: {file_name(item)}" for item in parallel.get("sources", [])]
    if "min_words" in selection:
        rule = f"pairs whose `{selection.get('lang')}` side has at least {selection['min_words']} words, in corpus order"
        if "n_selected" in selection:
            rule += f" ({selection['n_selected']} of {selection['n_raw']} pairs)"
    else:
        rule = "every item of the file, in file order"
    if selection.get("limit"):
        rule += f"; the first {selection['limit']} kept"
    lines.append(f"- Selection: {rule}.")
    return lines


def distractor_text(meta: dict[str, Any]) -> list[str]:
    """The card's lines on one language's distractor set: generator, and what determines its texts."""
    lines = [f"- Generator: `{meta.get('generator', 'not recorded')}`"]
    settings = meta.get("settings")
    if settings:
        endpoint = str(settings.get("endpoint", ""))
        if endpoint.startswith("gguf:"):
            kind = f"a local llama.cpp server (GGUF weights sha256 `{endpoint.removeprefix('gguf:')}`)"
        else:
            kind = f"an OpenAI-compatible endpoint (`{endpoint or 'not recorded'}`)"
        sampling = {key: value for key, value in settings.items() if key not in ("model", "endpoint", "response_format")}
        answers = ("a JSON object of exactly four sentences (response_format with a JSON schema)" if settings.get("response_format")
                   else "a numbered list, read from free text")
        lines += [f"- LLM: `{settings.get('model', 'not recorded')}`, asked through {kind}",
                  f"- Prompt sha256: `{meta.get('prompt_sha256', 'not recorded')}`",
                  "- Sampling: " + (", ".join(f"{key} {value}" for key, value in sorted(sampling.items())) or "not recorded"),
                  f"- Answers asked as: {answers}"]
    if meta.get("source"):
        lines.append(f"- Published file: {file_name(meta['source'])}")
    validation = meta.get("validation") or {}
    counts = [f"{key.replace('_', ' ')} {validation[key]}" for key in VALIDATION_COUNTS if key in validation]
    if counts or validation.get("action"):
        lines.append(f"- Validation ({validation.get('action', 'not recorded')}): " + (", ".join(counts) or "no counts recorded"))
        reasons = validation.get("reasons") or {}
        if reasons:
            lines.append("- Caught, by reason: " + ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items())))
    else:
        lines.append("- Validation: not recorded")
    return lines + human_validation_text(meta.get("human_validation"))


def human_validation_text(record: dict[str, Any] | None) -> list[str]:
    """The card's line on the people who checked a sample of the set (clsd.validate.annotation): how many, how
    much, the share valid of the whole set with its 95% interval, and what was done with their verdicts."""
    if not record:
        return []
    share = "no verdict given" if record["share_valid"] is None else (
        f"share valid of the whole set {100 * record['share_valid']:.1f}% "
        f"(95% interval {100 * record['low']:.1f}–{100 * record['high']:.1f}%)")
    used = (f"the {record['removed']} distractor(s) they judged same meaning or not a sentence were removed"
            if record.get("applied") else "their verdicts were not applied to the set")
    return [f"- Checked by people: {record['annotators']} annotator(s) judged {record['annotated']} of "
            f"{record['sample']} distractors of a stratified sample (sample `{record['sample_id']}`); {share}; {used}. "
            f"Method: {record['method']}"]


def config_entry(config: str, revision: str) -> dict[str, Any]:
    """A config as the card's `configs:` declares it. Its description names the content revision: `datasets` keys
    its cache of a local folder by the folder's name and these declarations only, so without it a folder
    exported again with other texts would load the first export's cached tables."""
    return {"config_name": config, "data_files": [{"split": SPLIT, "path": f"{config}/{SPLIT}-*"}],
            "description": f"CLSD {config}, content revision {revision}"}


def dataset_card(manifest: dict[str, Any], direct_meta: dict[str, Any], view_metas: dict[str, dict[str, Any]],
                 source: dict[str, Any] | None) -> str:
    """README.md of the folder: the YAML header the hub reads (languages, license, size, task category, configs)
    and prose on the items, their provenance, the layout, MTEB evaluation, pushing and the paper to cite."""
    languages = manifest["languages"]
    translated = sorted({(meta.get("translator") or {}).get("target_lang") for meta in view_metas.values()} - {None})
    subsets = manifest["subsets"]
    names = [ITEMS_CONFIG] + [config_name(subset, part) for subset in subsets for part in PARTS]
    configs = [config_entry(name, manifest["revision"]) | ({"default": True} if name == ITEMS_CONFIG else {}) for name in names]
    header = {
        "pretty_name": f"CLSD {manifest['label']}",
        "language": languages + [lang for lang in translated if lang not in languages],
        "license": manifest["license"],
        "multilinguality": "translation",
        "size_categories": [size_category(manifest["items"])],
        "task_categories": ["text-ranking"],
        "tags": ["mteb", "clsd", "cross-lingual", "semantic-discrimination", "adversarial"],
        "configs": configs,
    }
    title = " – ".join(language(lang).name for lang in languages)
    lines = [
        "---", yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
        f"# CLSD {manifest['label']} ({title})", "",
        "A **Cross-Lingual Semantic Discrimination** (CLSD) set, built by the clsd workflow after Michail, Clematide and "
        f"Sennrich (EMNLP 2025 Findings, [arXiv 2502.08638]({PAPER_URL})). Each item is a source sentence, its true "
        "translation and distractors in the target language: sentences written to look lexically and structurally like "
        "the translation while meaning something else. A model succeeds on an item when the cosine of the source to the "
        "true translation is **strictly greater** than to every distractor; **Precision@1** is the share of items it "
        "succeeds on (a tie is a failure).", "",
        f"{manifest['items']} items; content revision `{manifest['revision']}` (the `dataset_revision` of clsd's MTEB "
        "results on these texts: it changes exactly when a text, item or language does).", "",
        "## Subsets", "",
        "| subset | query | candidates | items | candidates per item | languages (MTEB) |", "|---|---|---|---|---:|---|",
    ]
    for subset, entry in subsets.items():
        src, tgt = split_direction(entry["direction"])
        into = f" (in {language(entry['translated_to']).name})" if entry.get("translated_to") else ""
        lines.append(f"| `{subset}` | {language(src).name}{into} | {language(tgt).name}{into} | {entry['items']} | "
                     f"{entry['candidates']} | {', '.join(entry['languages'])} |")
    for skipped in manifest["not_exported"]:
        lines.append(f"| `{skipped['subset']}` | – | – | 0 | – | not exported: {skipped['reason']} |")
    lines += ["", "Each subset is four configs, MTEB's retrieval layout with a candidate list per query:",
              "`{subset}-queries` (id, text), `{subset}-corpus` (id, text: the true target has id `{item}-{lang}-0`, "
              "distractors `{item}-{lang}-1..`), `{subset}-qrels` (query-id, corpus-id, score) and `{subset}-top_ranked` "
              "(query-id, corpus-ids: the item's own candidates). The default config `items` holds the items in the "
              "published CLSD column layout (one column per language, distractors in `{lang}_adv1..`).", "",
              "```python", "from datasets import load_dataset", "",
              'items = load_dataset("<this folder or repo>")["test"]',
              *[f'queries = load_dataset("<this folder or repo>", "{config_name(subset, "queries")}", split="test")'
                for subset in list(subsets)[:1]],
              "```", "",
              "## Evaluate a model with MTEB", "",
              "The clsd package builds an MTEB task from this folder (no hub access) whose main score, "
              "`strict_precision_at_1`, is the paper's Precision@1 with its tie rule; mteb's own retrieval metrics "
              "(`precision_at_1`, `ndcg_at_k`, `mrr_at_k`, ...) are reported beside it:", "",
              "```python", "import mteb", "from clsd.mteb_task import clsd_task", "",
              'task = clsd_task("<this folder>")',
              'results = mteb.evaluate(mteb.get_model("sentence-transformers/all-MiniLM-L6-v2"), tasks=[task])',
              "```", "",
              "## How it was built", "", "### Pairs", ""]
    lines += selection_text(direct_meta.get("parallel") or {}, source)
    dropped = direct_meta.get("dropped") or []
    if dropped:
        lines.append(f"- Left out: {len(dropped)} of {direct_meta.get('items')} items ({dropped_detail(dropped)}).")
    for meta in direct_meta.get("distractors") or []:
        lang = meta.get("lang", "?")
        lines += ["", f"### {language(lang).name if lang != '?' else lang} distractors", ""] + distractor_text(meta)
    for view, meta in view_metas.items():
        if meta.get("translator"):
            spec = ", ".join(f"{key} {value}" for key, value in sorted(meta["translator"].items()))
            lines += ["", f"### The `{view}` view", "", f"- Every text machine-translated: {spec}"]
    lines += ["", "## Publish", "", "With a Hugging Face token (`hf auth login`, or `HF_TOKEN` in the environment):", "",
              "```bash", "hf upload <user>/<dataset name> <this folder> . --repo-type dataset", "```", "",
              "## Citation", "", "```bibtex", PAPER_BIBTEX, "```", ""]
    return "\n".join(lines)


def write_config(frame: pl.DataFrame, features: Features | None, folder: Path, config: str) -> None:
    """Write one config's Parquet file with `datasets` (its features stored in the file, as push_to_hub does)."""
    path = folder / data_file(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    Dataset.from_polars(frame, features=features).to_parquet(str(path))


def export(
    folder: str | Path,
    views: list[ViewTable],
    directions: list[str],
    *,
    dataset: str,
    label: str,
    license_id: str = "unknown",
    source: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the datasets folder of one CLSD set (see the module docstring) and return its manifest.

    `views` holds the direct view first (its provenance names the pairs, distractors and validation the card
    describes) and any translated view after it; `source` is the dataset's `source` config entry (names a sacrebleu
    test set). A direction without items (every item left out) has no subset: mteb cannot evaluate an empty one;
    the manifest and the card list it with the reason. The folder must not hold files yet (a stale config of an
    earlier export would otherwise stay beside the new ones).
    """
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise InputError("the export folder is not empty; remove it first", path=folder)
    if not views or views[0].view != "direct":
        raise ValueError("the direct view comes first")
    direct = views[0]
    languages = (direct.meta.get("parallel") or {}).get("languages") or sorted(direct.table["lang"].unique().to_list())
    subsets, not_exported = {}, []
    for entry in views:
        translated_to = (entry.meta.get("translator") or {}).get("target_lang")
        for direction in directions:
            name = subset_name(entry.view, direction)
            parts = subset_parts(entry.table, direction)
            n_items = parts["queries"].height
            if n_items == 0:
                reason = dropped_detail(direct.meta.get("dropped") or []) or "no items selected"
                not_exported.append({"subset": name, "reason": reason})
                log.warning("%s: subset %s has no items (%s) and is not exported", dataset, name, reason)
                continue
            for part, frame in parts.items():
                write_config(frame, PARTS[part], folder, config_name(name, part))
            sizes = parts["top_ranked"]["corpus-ids"].list.len()
            subsets[name] = {"view": entry.view, "direction": direction, "translated_to": translated_to,
                             "languages": subset_languages(direction, translated_to), "items": n_items,
                             "candidates": int(sizes.max())}
    items = items_table(direct.table, languages)
    write_config(items, None, folder, ITEMS_CONFIG)
    manifest = {
        "task_name": f"CLSD-{dataset}",
        "dataset": dataset,
        "label": label,
        "license": license_id,
        "languages": languages,
        "items": items.height,
        "split": SPLIT,
        "revision": dataset_revision({entry.view: view_texts(entry.table, entry.meta) for entry in views}),
        "subsets": subsets,
        "not_exported": not_exported,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    card = dataset_card(manifest, direct.meta, {entry.view: entry.meta for entry in views}, source)
    (folder / CARD).write_text(card, encoding="utf-8")
    log.info("%s: %d items, subsets %s, revision %s written to %s", dataset, items.height, ", ".join(subsets) or "none",
             manifest["revision"], folder)
    return manifest
