"""Rule mteb_evaluate's script, run as Snakemake runs it (a `snakemake` object with config, wildcards, input, output,
params and log) on the 22 sample items with all-MiniLM-L6-v2: the model loads from the validated config as in the
embedding job, and mteb's result, the item check and the results cache are written."""

from __future__ import annotations

import json
import logging
import runpy
import sys
from types import SimpleNamespace

import pytest
from clsd import config as cfg
from clsd.core.io import write_table
from clsd.embed import loaded, tables
from clsd.embed.spec import model_spec
from clsd.report.hf_export import export
from clsd.score import precision
from snakemake.iocontainers import InputFiles
from conftest import ROOT
from test_hf_export import offline, sample_view  # noqa: F401 (offline is a fixture)

pytestmark = pytest.mark.slow
SCRIPT = ROOT / "workflow" / "scripts" / "mteb_evaluate.py"
DIRECTIONS = ["de-fr", "fr-de"]


@pytest.fixture
def job_logging(monkeypatch):
    """The script sends logging and stderr to its log file (clsd.core.logs.to_file): undone after the test."""
    root = logging.getLogger()
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    yield
    logging.captureWarnings(False)


def test_the_script_loads_the_model_from_its_spec_and_agrees_with_clsds_scores(minilm_folder, tmp_path, offline, job_logging):
    """The model comes as the rule's spec param (clsd.embed.spec.ModelSpec), device and mteb results cache from the
    validated config, and the score files keyed by view, as the rule gives them, so a model entry that changes shape
    cannot break the job silently."""
    view = sample_view()
    export(tmp_path / "hf", [view], DIRECTIONS, dataset="sample", label="Sample")
    config = cfg.validate({
        "device": "cpu", "mteb": {"evaluate": True, "cache": str(tmp_path / "mteb-cache")},
        "datasets": {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "sample.csv"}}},
        "models": {"minilm": {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "local", "path": str(minilm_folder)}}})
    spec = model_spec(config, "minilm")
    model, _ = loaded.load_model(spec, "cpu")
    texts = view.table["text"].unique(maintain_order=True).to_list()
    scores = precision.score(view.table, tables.embedding_table(texts, "", loaded.encode(model, spec, texts)), "", DIRECTIONS)
    write_table(scores, tmp_path / "scores.parquet", {})
    output = SimpleNamespace(result=str(tmp_path / "result.json"), check=str(tmp_path / "check.json"))
    snakemake = SimpleNamespace(
        config=config, wildcards=SimpleNamespace(model="minilm", dataset="sample"), params=SimpleNamespace(spec=spec),
        input=InputFiles(fromdict={"dataset": str(tmp_path / "hf"), "scores|direct": str(tmp_path / "scores.parquet"),
                                   "model": [], "export": []}),  # the rule's keyed inputs (clsd.report.jobs.score_files)
        output=output, log=[str(tmp_path / "job.log")])

    runpy.run_path(str(SCRIPT), init_globals={"snakemake": snakemake})

    result = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    check = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    assert result["task_name"] == "CLSD-sample"
    assert {entry["hf_subset"] for entry in result["scores"]["test"]} == {"direct-de-fr", "direct-fr-de"}
    assert [(row["subset"], row["agree"], row["n_mteb"]) for row in check] == [("direct-de-fr", True, 22), ("direct-fr-de", True, 22)]
    assert list((tmp_path / "mteb-cache").rglob("CLSD-sample.json"))  # saved where the config says
    assert "saved in the mteb results cache" in (tmp_path / "job.log").read_text(encoding="utf-8")
