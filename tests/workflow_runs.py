"""Real Snakemake runs for the workflow tests (tests/test_workflow*.py): the command, what a dry run plans, the
config of a run folder, and what every run of them shares (the sample CSV, all-MiniLM-L6-v2 from PyPI)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import yaml
from conftest import ROOT

SAMPLE = ROOT / "resources/sample/clsd_sample.csv"
MINILM = {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2", "batch_size": 64}


def snakemake(workdir: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir), "--cores", "2", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=None if env is None else {**os.environ, **env})
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def planned_jobs(workdir: Path) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run would execute; [] only when Snakemake says nothing is to be done.

    The parsed jobs are checked against the total of Snakemake's own job statistics, so a change in its
    output format fails here instead of making every plan look empty.
    """
    output = snakemake(workdir, "--dry-run").stdout
    if "Nothing to be done" in output:
        return []
    jobs = []
    for block in re.split(r"\n(?=rule |localrule )", output)[1:]:
        rule = block.split()[1].rstrip(":")
        match = re.search(r"^\s+wildcards: (.*)$", block, re.MULTILINE)
        wildcards = dict(part.split("=", 1) for part in match.group(1).split(", ")) if match else {}
        jobs.append((rule, wildcards))
    total = re.search(r"^total\s+(\d+)\s*$", output, re.MULTILINE)
    assert total is not None and int(total.group(1)) == len(jobs) > 0, f"unreadable dry run:\n{output[-3000:]}"
    return jobs


def params_naming_paths(workdir: Path) -> list[tuple[str, str]]:
    """(rule, path) of every rule param recorded by Snakemake that names a file or folder on this machine: none may
    (a moved run, or the same run on another machine, must plan nothing)."""
    found = []
    for record in (json.loads(path.read_text(encoding="utf-8")) for path in (workdir / ".snakemake/metadata").iterdir()):
        for value in record.get("params") or []:
            for candidate in re.findall(r"[~/][\w.\-/]+", value):
                expanded = Path(os.path.expanduser(candidate))
                if expanded.is_absolute() and len(expanded.parts) > 2 and expanded.exists():
                    found.append((record["rule"], candidate))
    return found


#: Table 2 and the validation table: what the tests of validation and scoring read (a run asks only for what its test
#: reads; the whole DAG is checked once, by the module's `workdir`).
TABLES = ("results/tables/table2.md", "results/tables/table2.csv", "results/tables/validation.md", "results/tables/validation.csv")


def write_config(workdir: Path, config: dict) -> None:
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")


def read_config(workdir: Path) -> dict:
    return yaml.safe_load((workdir / "config.yaml").read_text(encoding="utf-8"))


def p1_columns(table: pl.DataFrame) -> pl.DataFrame:
    """Table 2's CSV without its interval columns."""
    return table.select([c for c in table.columns if not c.endswith((" ci_low", " ci_high"))])


def job_set(jobs: list[tuple[str, dict[str, str]]]) -> set[tuple[str, ...]]:
    """(rule, model, dataset, view, lang) of each planned job, "" for a wildcard it does not have."""
    return {(rule, w.get("model", ""), w.get("dataset", ""), w.get("view", ""), w.get("lang", "")) for rule, w in jobs}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
