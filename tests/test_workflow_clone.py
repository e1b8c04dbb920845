"""A finished run inside its own checkout, as users have it: moving the checkout plans nothing, and editing a clsd
module replans exactly the rules whose scripts import it.

This is the fast tier's one real Snakemake run (`pytest -m "not slow"`): the whole default DAG on the 22 sample items
with all-MiniLM-L6-v2 (under a minute on 2 cores). Every other real run is marked slow."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import MODEL_STORE, ROOT

pytestmark = pytest.mark.workflow


def checkout(target: Path) -> Path:
    """A copy of the project's files (tracked and new, not ignored), as a fresh clone would hold them."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            destination.symlink_to(source.readlink())
        else:
            shutil.copy2(source, destination)
    return target


def run(clone: Path, *args: str) -> str:
    """Snakemake with the clone's own Snakefile and the clone as working folder (the clone's clsd first on the path)."""
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(clone / "Snakefile"), "--directory", str(clone), "--cores", "2", *args]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(clone / "workflow")})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result.stdout


def planned_rules(clone: Path) -> set[str]:
    output = run(clone, "--dry-run")
    if "Nothing to be done" in output:
        return set()
    return {line.split()[1].rstrip(":") for line in output.splitlines() if line.startswith(("rule ", "localrule "))}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A checkout with the sample dataset and all-MiniLM-L6-v2 run to the end inside it."""
    clone = checkout(tmp_path_factory.mktemp("moves") / "clsd")
    config = {
        "model_store": str(MODEL_STORE),
        "datasets": {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "resources/sample/clsd_sample.csv"},
                                "distractors": {"kind": "from_source", "generator": "handwritten"}}},
        "models": {"minilm": {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}},
    }
    (clone / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    run(clone)
    return clone


def moved(finished: Path, tmp_path: Path) -> Path:
    target = tmp_path / "elsewhere" / "deeper" / "clsd"
    shutil.copytree(finished, target, symlinks=True)
    return target


def test_a_moved_checkout_plans_nothing(finished, tmp_path):
    assert planned_rules(finished) == set()
    assert planned_rules(moved(finished, tmp_path)) == set()


def test_editing_the_scoring_module_replans_scoring_and_what_follows_only(finished, tmp_path):
    clone = moved(finished, tmp_path)
    module = clone / "workflow/clsd/score/precision.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# a fix\n", encoding="utf-8")
    rules = planned_rules(clone)
    assert {"score", "table2", "mteb_json", "table3", "examples"} <= rules
    assert not rules & {"parallel", "distractors", "validate_distractors", "candidates", "materialise_model", "embed", "single_word_pairs"}


def test_where_a_model_loads_from_is_in_its_job_s_spec_not_in_its_rerun_trigger(finished, tmp_path):
    """The embedding job gets its whole ModelSpec from the rule (param `spec`, with the folder it loads from) and reruns
    on its identity (param `model`) only: a copy of the model store elsewhere plans nothing, and a job run again loads
    the model from where the config now says."""
    clone = moved(finished, tmp_path)
    store = tmp_path / "another" / "store"
    shutil.copytree(MODEL_STORE / "all-MiniLM-L6-v2", store / "all-MiniLM-L6-v2")
    config = yaml.safe_load((clone / "config.yaml").read_text(encoding="utf-8")) | {"model_store": str(store)}
    (clone / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    assert planned_rules(clone) == set()
    run(clone, "--forcerun", "results/embeddings/minilm/sample/direct.parquet", "--until", "embed")
    log = (clone / "results/logs/embed/minilm/sample/direct.log").read_text(encoding="utf-8")
    assert f"with {store / 'all-MiniLM-L6-v2'} (torch backend" in log
