"""The Hugging Face datasets export of a CLSD set: it loads back with `datasets` and mteb's own retrieval loader,
names the subsets, languages and revision of clsd's MTEB record, and its card says how the set was made."""

from __future__ import annotations

import json

import polars as pl
import pytest
import yaml
from clsd.core.errors import InputError
from clsd.core.io import read_meta, write_table
from clsd.data import candidates
from clsd.data import corpora as clsd_datasets
from clsd.report import mteb_record
from clsd.report.hf_export import (
    PARTS,
    ViewTable,
    config_name,
    export,
    items_table,
    subset_parts,
)
from conftest import ROOT

SAMPLE = ROOT / "resources" / "sample" / "clsd_sample.csv"
GGUF = "9" * 64
PROMPT = "f" * 64


@pytest.fixture
def offline(monkeypatch):
    """No hub: everything a test reads must come from local folders (a hub request fails in offline mode)."""
    import datasets
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)


def llm_meta(lang: str, endpoint: str = f"gguf:{GGUF}") -> dict:
    """The provenance a validated LLM distractor set carries (generate_distractors, then validate_distractors)."""
    return {"dataset": "sample", "lang": lang, "generator": "llm:qwen2.5-coder-1.5b-instruct",
            "settings": {"model": "qwen2.5-coder-1.5b-instruct", "endpoint": endpoint, "temperature": 1.0, "top_p": 1.0,
                         "max_tokens": 512},
            "prompt_sha256": PROMPT, "failed": [],
            "validation": {"rules": True, "judge": False, "examples": 3, "action": "re-asked", "checked": 51, "valid": 48,
                           "flagged": 0, "removed": 0, "reasked": 3, "reasons": {"non_word": 2, "reorder": 1}}}


def sample_view(limit: int | None = None, distractor_meta=llm_meta) -> ViewTable:
    """The direct view of the project's 22 hand-written German–French items (or the first `limit`), with the provenance
    the `candidates` rule writes."""
    published = clsd_datasets.read_published_csv(SAMPLE, ["de", "fr"])
    if limit:
        published = published.head(limit)
    source = clsd_datasets.Source.of(SAMPLE)
    parallel = clsd_datasets.parallel_from_published(published, ["de", "fr"])
    sets = [clsd_datasets.distractors_from_published(published, lang, generator="hand", source=source) for lang in ("de", "fr")]
    table = candidates.build(parallel, sets, ["de", "fr"])
    meta = {"view": "direct", "items": parallel.height, "dropped": [],
            "parallel": {"dataset": "sample", "kind": "published_csv", "languages": ["de", "fr"], "sources": [source.as_dict()],
                         "selection": {"limit": limit}},
            "distractors": [distractor_meta(lang) for lang in ("de", "fr")], "content_sha256": candidates.content_sha256(table)}
    return ViewTable("direct", table, meta)


def pivot_of(view: ViewTable) -> ViewTable:
    """A (fake) English pivot view of `view`: every text prefixed, the translator recorded as the pivot rule does."""
    table = view.table.with_columns(pl.concat_str(pl.lit("EN "), pl.col("text")).alias("text"))
    return ViewTable("pivot", table, {"view": "pivot", "translator": {"backend": "ctranslate2", "model": "m2m100_1.2B", "target_lang": "en"}})


def read_manifest_revision(folder) -> str:
    return json.loads((folder / "clsd.json").read_text(encoding="utf-8"))["revision"]


def card_parts(folder):
    """The YAML header and the prose of an exported card."""
    _, header, prose = (folder / "README.md").read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(header), prose


def test_export_round_trips_through_load_dataset_and_mtebs_loader(tmp_path, offline):
    from datasets import load_dataset
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader

    view = sample_view()
    folder = tmp_path / "hf" / "sample"
    manifest = export(folder, [view], ["de-fr", "fr-de"], dataset="sample", label="Sample")
    assert list(manifest["subsets"]) == ["direct-de-fr", "direct-fr-de"]
    # the bare folder loads: the default config holds the items in the published column layout
    items = load_dataset(str(folder))["test"].to_polars()
    published = clsd_datasets.read_published_csv(SAMPLE, ["de", "fr"])
    assert items.equals(items_table(view.table, ["de", "fr"]))
    assert items.columns == ["id", "de", "fr", *[f"{lang}_adv{k}" for lang in ("de", "fr") for k in range(1, 5)]]
    assert items["de"].to_list() == published["German"].to_list() and items["fr_adv3"].to_list() == published["fr_adv3"].to_list()
    # every config reads back as written
    for subset, direction in (("direct-de-fr", "de-fr"), ("direct-fr-de", "fr-de")):
        for part, frame in subset_parts(view.table, direction).items():
            loaded = load_dataset(str(folder), config_name(subset, part), split="test").to_polars()
            assert loaded.equals(frame), (subset, part)
    # mteb's own loader reads a subset: the query, its one true target and its own five candidates
    data = RetrievalDatasetLoader(hf_repo=str(folder), revision=manifest["revision"], config="direct-de-fr").load()
    assert data["queries"]["id"][:2] == ["0-de", "1-de"] and data["queries"]["text"][0] == published["German"][0]
    assert data["relevant_docs"]["0-de"] == {"0-fr-0": 1} and len(data["relevant_docs"]) == 22
    assert data["top_ranked"]["0-de"] == [f"0-fr-{slot}" for slot in range(5)]
    corpus = dict(zip(data["corpus"]["id"], data["corpus"]["text"]))
    assert corpus["0-fr-0"] == published["French"][0] and corpus["0-fr-4"] == published["fr_adv4"][0]
    assert len(corpus) == 22 * 5


def test_a_new_export_under_the_same_folder_name_is_read_anew(tmp_path, offline):
    """`datasets` caches a local folder by its name and card: another export under the same name must not load the
    first one's cached tables (the content revision in every config's description tells them apart)."""
    from datasets import load_dataset

    view = sample_view(limit=2)
    first = export(tmp_path / "one" / "sample", [view], ["de-fr"], dataset="sample", label="Sample")
    assert load_dataset(str(tmp_path / "one" / "sample"), "direct-de-fr-queries", split="test")["text"][0].startswith("Der Stadtrat")
    changed = ViewTable("direct", view.table.with_columns(pl.concat_str(pl.lit("Heute: "), pl.col("text")).alias("text")), view.meta)
    second = export(tmp_path / "two" / "sample", [changed], ["de-fr"], dataset="sample", label="Sample")
    assert second["revision"] != first["revision"]
    assert load_dataset(str(tmp_path / "two" / "sample"), "direct-de-fr-queries", split="test")["text"][0].startswith("Heute: Der Stadtrat")
    assert load_dataset(str(tmp_path / "two" / "sample"))["test"]["de"][0].startswith("Heute: ")


def test_card_holds_the_hub_header_and_how_the_set_was_made(tmp_path):
    view = sample_view(limit=12)
    view.meta["dropped"] = [{"id": 7, "reason": "fr: 3 valid distractors after 3 attempts"}]
    folder = tmp_path / "sample"
    export(folder, [view], ["de-fr", "fr-de"], dataset="sample", label="Sample", license_id="cc-by-4.0")
    header, prose = card_parts(folder)
    assert header["language"] == ["de", "fr"] and header["license"] == "cc-by-4.0"
    assert header["size_categories"] == ["n<1K"] and header["task_categories"] == ["text-ranking"]
    configs = {entry["config_name"]: entry for entry in header["configs"]}
    assert configs["items"]["default"] is True and len(configs) == 1 + 2 * len(PARTS)
    assert configs["direct-fr-de-top_ranked"]["data_files"] == [{"split": "test", "path": "direct-fr-de-top_ranked/test-*"}]
    assert read_manifest_revision(folder) in configs["direct-fr-de-top_ranked"]["description"]
    # source corpus and selection rule
    assert f"`clsd_sample.csv` (sha256 `{clsd_datasets.Source.of(SAMPLE).sha256}`)" in prose
    assert "the first 12 kept" in prose and "Left out: 1 of 12 items (1 × fr: 3 valid distractors after 3 attempts)" in prose
    # generator model, endpoint kind, prompt checksum, sampling parameters, validation counts
    assert "`qwen2.5-coder-1.5b-instruct`, asked through a local llama.cpp server" in prose and GGUF in prose
    assert f"Prompt sha256: `{PROMPT}`" in prose
    assert "Sampling: max_tokens 512, temperature 1.0, top_p 1.0" in prose
    assert "Validation (re-asked): checked 51, valid 48, flagged 0, removed 0, reasked 3" in prose
    assert "Caught, by reason: non_word 2, reorder 1" in prose
    # the paper to cite, and the push command
    assert "@inproceedings{michail-etal-2025-examining" in prose and "arXiv 2502.08638" in prose
    assert "hf upload <user>/<dataset name> <this folder> . --repo-type dataset" in prose
    # local paths stay private
    assert str(ROOT) not in (folder / "README.md").read_text(encoding="utf-8")


def test_card_names_a_remote_endpoint_and_a_published_file(tmp_path):
    def published(lang):
        return {"lang": lang, "generator": "GPT-4 (published)", "source": {"path": "/data/x.csv", "sha256": "ab" * 32,
                                                                             "url": "https://example.org/x.csv"},
                "validation": {"action": "flagged", "checked": 88, "valid": 86, "flagged": 2, "reasons": {"non_word": 2}}}

    export(tmp_path / "published", [sample_view(limit=2, distractor_meta=published)], ["de-fr"], dataset="p", label="P")
    _, prose = card_parts(tmp_path / "published")
    assert f"Published file: `https://example.org/x.csv` (sha256 `{'ab' * 32}`)" in prose
    assert "Validation (flagged): checked 88, valid 86, flagged 2" in prose and "/data/x.csv" not in prose
    export(tmp_path / "remote", [sample_view(limit=2, distractor_meta=lambda lang: llm_meta(lang, "https://api.openai.com/v1"))],
           ["de-fr"], dataset="r", label="R")
    assert "an OpenAI-compatible endpoint (`https://api.openai.com/v1`)" in card_parts(tmp_path / "remote")[1]


def test_task_name_subsets_languages_and_revision_are_those_of_clsds_mteb_record(tmp_path):
    direct = sample_view(limit=3)
    pivot = pivot_of(direct)
    folder = tmp_path / "hf"
    manifest = export(folder, [direct, pivot], ["de-fr", "fr-de"], dataset="sample", label="Sample")
    scores = pl.DataFrame({"id": [0, 1, 2] * 2, "direction": ["de-fr"] * 3 + ["fr-de"] * 3, "cos_true": [0.9] * 6,
                           "cos_d1": [0.5] * 6, "correct": [True] * 6})
    candidates_path = tmp_path / "direct.parquet"
    write_table(direct.table, candidates_path, direct.meta)
    record = mteb_record.mteb_result(
        dataset="sample", candidates_meta=read_meta(candidates_path),
        texts_by_view={entry.view: mteb_record.view_texts(entry.table, entry.meta) for entry in (direct, pivot)},
        model_meta={"name": "m"}, scores_by_view={"direct": scores, "pivot": scores}, directions=["de-fr", "fr-de"],
        evaluation_time=None)
    assert manifest["task_name"] == record["task_name"] == "CLSD-sample"
    assert manifest["revision"] == record["dataset_revision"]
    assert {subset: entry["languages"] for subset, entry in manifest["subsets"].items()} == {
        entry["hf_subset"]: entry["languages"] for entry in record["scores"]["test"]}
    assert manifest["subsets"]["pivot-de-fr"]["languages"] == ["eng-Latn"]
    header, prose = card_parts(folder)
    assert header["language"] == ["de", "fr", "en"] and "machine-translated: backend ctranslate2" in prose


def test_directions_without_items_are_listed_not_exported(tmp_path):
    view = sample_view(limit=2)
    view = ViewTable("direct", view.table.head(0), view.meta | {"dropped": [{"id": 0, "reason": "not in x.csv"},
                                                                           {"id": 1, "reason": "not in x.csv"}]})
    manifest = export(tmp_path / "empty", [view], ["de-fr", "fr-de"], dataset="empty", label="Empty")
    assert manifest["subsets"] == {} and manifest["items"] == 0
    assert manifest["not_exported"] == [{"subset": "direct-de-fr", "reason": "2 × not in x.csv"},
                                        {"subset": "direct-fr-de", "reason": "2 × not in x.csv"}]
    assert "| `direct-de-fr` | – | – | 0 | – | not exported: 2 × not in x.csv |" in card_parts(tmp_path / "empty")[1]


def test_export_refuses_a_folder_that_holds_files_and_an_incomplete_item(tmp_path):
    folder = tmp_path / "used"
    folder.mkdir()
    (folder / "old.parquet").write_bytes(b"")
    with pytest.raises(InputError, match="not empty") as error:
        export(folder, [sample_view(limit=2)], ["de-fr"], dataset="s", label="S")
    assert str(folder) in str(error.value)
    view = sample_view(limit=2)
    short = ViewTable("direct", view.table.filter(~((pl.col("id") == 1) & (pl.col("lang") == "fr") & (pl.col("slot") == 4))), view.meta)
    with pytest.raises(InputError, match="item id 1 lacks its fr target or some of its 4 distractors"):
        export(tmp_path / "short", [short], ["de-fr"], dataset="s", label="S")
