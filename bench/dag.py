"""Benchmark: dry-run planning time and job count for 10 models × 4 datasets × 2 views.

The models are fake local folders (planning never loads them); the pivot view uses the published
backend. Prints the figures and writes bench/results/dag.json.
"""

from __future__ import annotations

import argparse
import logging
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from _common import log_to_stdout, write_figures

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("bench.dag")


def config(folder: Path, n_models: int, n_datasets: int) -> dict:
    sample = str(ROOT / "resources/sample/clsd_sample.csv")
    models = {}
    for i in range(n_models):
        model = folder / f"model{i}"
        model.mkdir()
        (model / "config.json").write_text("{}")
        (model / "modules.json").write_text("[]")
        models[f"model{i}"] = {"name": f"fake/model{i}", "source": "local", "path": str(model)}
    datasets = {f"set{i}": {"label": f"Set{i}", "source": {"kind": "published_csv", "path": sample}, "pivot_csv": sample}
                for i in range(n_datasets)}
    return {"views": ["direct", "pivot"], "pivot": {"backend": "published"}, "datasets": datasets, "models": models}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--datasets", type=int, default=4)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/dag.json")
    args = parser.parse_args()
    log_to_stdout()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "config.yaml").write_text(yaml.safe_dump(config(folder, args.models, args.datasets)))
        command = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--directory", tmp,
                   "--dry-run", "--quiet", "rules", "--cores", "2"]
        start = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
    total = int(re.search(r"^total\s+(\d+)", result.stdout + result.stderr, re.MULTILINE).group(1))
    figures = {"models": args.models, "datasets": args.datasets, "views": 2, "jobs": total, "dry_run_seconds": round(seconds, 2)}
    log.info("%d models x %d datasets x 2 views: %d jobs planned in %.1f s", args.models, args.datasets, total, seconds)
    write_figures(args.out, figures)


if __name__ == "__main__":
    main()
