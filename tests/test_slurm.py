"""The SLURM profile against a real single-node SLURM (tests/slurm/cluster.sh), compared with a local run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT
from test_workflow import MINILM, MODEL_STORE, SAMPLE, snakemake, write_config

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
CLUSTER = ROOT / "tests/slurm/cluster.sh"
SLURM_DIR = Path(os.environ.get("CLSD_SLURM_DIR", "/tmp/clsd-slurm"))


@pytest.fixture(scope="module")
def slurm() -> dict[str, str]:
    """A running SLURM: reuse one that answers, else start ours (stopped afterwards)."""
    if shutil.which("slurmctld") is None or shutil.which("sbatch") is None:
        pytest.skip("SLURM is not installed (bash tests/slurm/cluster.sh install, as root)")
    env = {**os.environ, "SLURM_CONF": str(SLURM_DIR / "slurm.conf"), "CLSD_SLURM_DIR": str(SLURM_DIR)}
    running = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True).stdout.split()
    started = "idle" not in running and "mixed" not in running
    if started:
        subprocess.run(["bash", str(CLUSTER), "start"], env=env, check=True, capture_output=True)
    yield {"SLURM_CONF": env["SLURM_CONF"]}
    if started:
        subprocess.run(["bash", str(CLUSTER), "stop"], env=env, check=True)


def tiny_config(folder: Path) -> None:
    write_config(folder, {
        "model_store": str(MODEL_STORE),
        "resources": {"embed_gpu": 0},  # this CPU node has no GPU: the profile's GPU request is overridden
        "datasets": {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
        "models": {"minilm": MINILM},
    })


def test_profile_submits_heavy_jobs_through_slurm_and_matches_a_local_run(tmp_path, slurm):
    cluster, local = tmp_path / "cluster", tmp_path / "local"
    for folder in (cluster, local):
        folder.mkdir()
        tiny_config(folder)
    result = snakemake(cluster, "--profile", str(ROOT / "profiles/slurm"), env=slurm)
    job_ids = re.findall(r"submitted with SLURM jobid (\d+)", result.stdout + result.stderr)
    assert len(job_ids) == 1  # the one embedding job; small rules run on the submit host (localrules)
    shown = subprocess.run(["scontrol", "show", "job", job_ids[0]], env={**os.environ, **slurm}, capture_output=True, text=True, check=True).stdout
    assert "JobState=COMPLETED" in shown and "embed" in shown
    snakemake(local)
    for name in ("results/tables/table2.csv", "results/tables/table3.csv"):
        assert pl.read_csv(cluster / name).equals(pl.read_csv(local / name))
    scores = "results/scores/minilm/sample/direct.parquet"
    assert pl.read_parquet(cluster / scores).equals(pl.read_parquet(local / scores))
