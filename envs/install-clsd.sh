#!/usr/bin/env bash
# Snakemake runs <env>.post-deploy.sh (links to this file) inside each conda environment it creates (--sdm conda):
# the clsd package is installed from this checkout, so every rule imports it one way, as an installed package.
set -euo pipefail
python -m pip install --quiet --no-deps --editable "$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
