"""The pivot view in real Snakemake runs: translation by a local model on both backends, a published pivot file and its
edits, a translator that is missing or not configured."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from clsd.core.io import read_meta
from clsd.data import corpora
from conftest import MODEL_STORE, PUBLISHED, require_shared
from workflow_runs import MINILM, SAMPLE, edit, job_set, params_naming_paths, planned_jobs, read_config, snakemake, write_config

pytestmark = [pytest.mark.workflow, pytest.mark.slow]


def pivot_config(folder: Path, pivot: dict, datasets_: dict | None = None) -> dict:
    return {
        "model_store": str(MODEL_STORE),
        "download_cache": str(folder / "downloads"),
        "views": ["direct", "pivot"],
        "pivot": pivot,
        "datasets": datasets_ or {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
        "models": {"minilm": MINILM},
    }


def test_pivot_branch_with_both_model_backends(tmp_path, tiny_m2m):
    settings = {"source": "local", "path": str(tiny_m2m), "model": "tiny-m2m", "beam_size": 1, "max_new_tokens": 10,
                "quantization": "float32"}
    runs = {}
    for backend in ("transformers", "ctranslate2"):
        workdir = tmp_path / backend
        workdir.mkdir()
        write_config(workdir, pivot_config(workdir, {"backend": backend, **settings}) | {"analysis": {"enabled": False}})
        snakemake(workdir)
        runs[backend] = workdir
    hf, ct2 = (pl.read_parquet(runs[b] / "results/candidates/sample/pivot.parquet") for b in ("transformers", "ctranslate2"))
    assert hf.equals(ct2)  # float32 greedy decoding: identical translations
    direct = pl.read_parquet(runs["transformers"] / "results/candidates/sample/direct.parquet")
    assert hf.select("id", "lang", "slot").equals(direct.select("id", "lang", "slot"))
    translations = pl.read_parquet(runs["transformers"] / "results/pivot/sample.parquet")
    assert translations.height == direct.select("lang", "text").n_unique()
    assert read_meta(runs["transformers"] / "results/pivot/sample.parquet")["translator"]["beam_size"] == 1
    assert (runs["ctranslate2"] / "results/translators/ct2/model.bin").is_file()
    table = pl.read_csv(runs["transformers"] / "results/tables/table2.csv")
    assert table["view"].to_list() == ["direct", "pivot", "n"]
    record = json.loads((runs["transformers"] / "results/mteb/minilm/sample.json").read_text())
    assert {s["hf_subset"] for s in record["scores"]["test"]} == {"direct-de-fr", "direct-fr-de", "pivot-de-fr", "pivot-fr-de"}
    assert planned_jobs(runs["transformers"]) == []  # cached: a rerun translates nothing
    assert params_naming_paths(runs["transformers"]) == params_naming_paths(runs["ctranslate2"]) == []


def test_published_pivot_backend(tmp_path):
    require_shared()
    data = {
        "wmt19": {"label": "WMT19", "source": {"kind": "published_csv", "path": str(PUBLISHED / "CLSD_wmt2019_adversarial_dataset.head50.csv")},
                  "pivot_csv": str(PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv")},
    }
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "published"}, data))
    jobs = {rule for rule, _ in planned_jobs(tmp_path)}
    assert "convert_ct2" not in jobs and "translate" in jobs
    snakemake(tmp_path)
    english = corpora.read_published_csv(PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv", ["de", "fr"])
    pivot = pl.read_parquet(tmp_path / "results/candidates/wmt19/pivot.parquet")
    german_sources = pivot.filter((pl.col("lang") == "de") & (pl.col("slot") == 0)).sort("id")["text"]
    assert german_sources.to_list() == english["German"].to_list()
    table = pl.read_csv(tmp_path / "results/tables/table2.csv")
    assert table["view"].to_list() == ["direct", "pivot", "n"]
    # the English-only control does much better once everything is in English
    assert table.filter(pl.col("view") == "pivot")["Average"][0] > table.filter(pl.col("view") == "direct")["Average"][0]
    failures = pl.read_csv(tmp_path / "results/tables/pivot_failures.csv")
    direct = pl.read_parquet(tmp_path / "results/scores/minilm/wmt19/direct.parquet")
    pivot_scores = pl.read_parquet(tmp_path / "results/scores/minilm/wmt19/pivot.parquet")
    expected = direct.join(pivot_scores, on=["id", "direction"]).filter(pl.col("correct") & ~pl.col("correct_right")).height
    assert failures.height == expected


def sample_as_pivot_file(path: Path) -> None:
    """A file in the MT_M2M_* layout (extra unnamed leading column) whose "English" is the sample's own text."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([f",{lines[0]}"] + [f"{i},{line}" for i, line in enumerate(lines[1:])]) + "\n", encoding="utf-8")


def test_pivot_file_edits_and_moves_replan_only_the_pivot_view(tmp_path):
    (tmp_path / "sources").mkdir()
    shutil.copy(SAMPLE, tmp_path / "sources/sample.csv")
    sample_as_pivot_file(tmp_path / "sources/mt.csv")
    data = {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "sources/sample.csv"}, "pivot_csv": "sources/mt.csv"}}
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "published"}, data))
    snakemake(tmp_path)
    assert "8 of 8 anchored items keep" in (tmp_path / "results/logs/translate/sample.log").read_text()
    pivot_only = {("translate", "", "sample", "", ""), ("pivot_candidates", "", "sample", "", ""), ("embed", "minilm", "sample", "pivot", ""),
                  ("score", "minilm", "sample", "pivot", ""), ("mteb_json", "minilm", "sample", "", ""), ("table2", "", "", "", ""),
                  ("pivot_failures", "", "", "", ""), ("hf_export", "", "sample", "", ""), ("all", "", "", "", "")}
    edit(tmp_path / "sources/mt.csv", "Marseille", "Toulouse")
    assert job_set(planned_jobs(tmp_path)) == pivot_only
    snakemake(tmp_path)
    shutil.copy(tmp_path / "sources/mt.csv", tmp_path / "sources/mt-moved.csv")
    config = read_config(tmp_path)
    config["datasets"]["sample"]["pivot_csv"] = {"path": "sources/mt-moved.csv", "sha256": corpora.sha256_file(tmp_path / "sources/mt.csv")}
    write_config(tmp_path, config)
    assert job_set(planned_jobs(tmp_path)) == pivot_only


def test_a_pivot_file_out_of_order_stops_the_pivot_view(tmp_path):
    (tmp_path / "sources").mkdir()
    shutil.copy(SAMPLE, tmp_path / "sources/sample.csv")
    sample_as_pivot_file(tmp_path / "sources/mt.csv")
    frame = pl.read_csv(tmp_path / "sources/mt.csv", infer_schema=False)
    texts = [c for c in frame.columns if c not in ("", "Index")]
    frame.with_columns(pl.col(c).shift(1).fill_null(pl.col(c).last()) for c in texts).write_csv(tmp_path / "sources/mt.csv")
    data = {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "sources/sample.csv"}, "pivot_csv": "sources/mt.csv"}}
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "published"}, data))
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    assert "rows are not in the order of sources/sample.csv" in (tmp_path / "results/logs/translate/sample.log").read_text()
    assert not (tmp_path / "results/scores/minilm/sample/pivot.parquet").exists()


def test_no_pivot_backend_skips_the_pivot_view_cleanly(tmp_path):
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "none"}))
    jobs = planned_jobs(tmp_path)
    assert not [rule for rule, _ in jobs if rule in ("translate", "pivot_candidates", "convert_ct2")]
    assert {w.get("view") for rule, w in jobs if rule == "embed"} == {"direct"}


def test_missing_translation_model_fails_before_any_work(tmp_path):
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "transformers", "source": "local", "path": str(tmp_path / "none")}))
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    assert "config key pivot.path" in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()
