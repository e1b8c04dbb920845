#!/usr/bin/env bash
# Snakemake runs this inside the generate environment it creates (--sdm conda): clsd is installed from this
# checkout, as in every environment (install-clsd.sh), and llama.cpp's llama-server is built into the environment
# for the local LLM (clsd.serving.server_build, with the environment's compilers, cmake and ninja).
set -euo pipefail
bash "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/install-clsd.sh"
python -m clsd.serving.server_build --prefix "$CONDA_PREFIX"
