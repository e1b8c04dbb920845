#!/usr/bin/env bash
# Install clsd and its pinned dependencies into .venv (CPU torch; CUDA users see README).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first and pinned: an unpinned torch would pull a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0"
# llama-cpp-python builds from source (~8 min on 2 cores, cached by pip afterwards): a lean portable build.
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON}"
.venv/bin/python -m pip install --quiet -e ".[dev]"
echo "clsd installed in .venv"
