#!/usr/bin/env bash
# Install clsd and its pinned dependencies into .venv (CPU torch; CUDA users: docs/guides/paper.md, "CUDA torch"), and build llama.cpp's
# llama-server for the local LLM (clsd.serving.server_build: the llama.cpp source inside the pinned
# llama-cpp-python sdist on PyPI, CPU variants chosen at run time; skipped when already built for this CPU).
# The build runs while pip installs (it needs only the standard library); its log is .venv/llama-server-build.log.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# The build needs a C++ compiler, cmake and ninja; PyPI has the last two where the system lacks them.
if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
    .venv/bin/python -m pip install --quiet "cmake==4.4.4" "ninja==1.13.2"
fi
PATH="$PWD/.venv/bin:$PATH" PYTHONPATH="$PWD/workflow" .venv/bin/python -m clsd.serving.server_build --prefix .venv \
    > .venv/llama-server-build.log 2>&1 &
build=$!
# torch first and pinned: an unpinned torch would pull a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[dev]"
if ! wait "$build"; then
    tail -n 40 .venv/llama-server-build.log >&2
    echo "building llama-server failed; the whole log is .venv/llama-server-build.log" >&2
    exit 1
fi
tail -n 1 .venv/llama-server-build.log
# Each CPU variant runs once on a tiny model: one that faults on this machine (a CPU advertising what it cannot run)
# is recorded in build.json and never loaded here (clsd.serving.server_variants).
.venv/bin/python -m clsd.serving.server_variants --prefix .venv
echo "clsd installed in .venv"
