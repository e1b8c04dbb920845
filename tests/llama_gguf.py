"""A sentence-transformers folder converted to GGUF for llama.cpp's `llama-server --embeddings`, with the converter
that ships in the pinned llama-cpp-python sdist (`vendor/llama.cpp/convert_hf_to_gguf.py`, its `conversion` package
and `gguf-py`), fetched the way install.sh fetches the server's source (clsd.generate.server_build: `pip download`,
free from pip's cache after the install). Used by the real embedding-server tests and bench/embed_server.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

from clsd.generate.server_build import download_sdist

#: What the converter needs from the sdist's vendor/llama.cpp.
CONVERTER = ("convert_hf_to_gguf.py", "conversion/", "gguf-py/")


def converter(workdir: Path) -> Path:
    """llama.cpp's vendor folder under `workdir`, holding only the converter and the packages it imports."""
    sdist = download_sdist(workdir)
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers()
                   if any(f"/vendor/llama.cpp/{part}" in m.name and m.name.split("/vendor/llama.cpp/", 1)[1].startswith(part)
                          for part in CONVERTER)]
        archive.extractall(workdir, members=members, filter="data")
    return next(workdir.glob("llama_cpp_python-*/vendor/llama.cpp"))


def convert(folder: Path, outfile: Path, outtype: str, vendor: Path) -> Path:
    """`folder` (a Hugging Face / sentence-transformers model) written as GGUF `outfile` in `outtype` (f32, f16, q8_0),
    with the model's sentence-transformers Dense modules (EmbeddingGemma's two projections after pooling: without them
    its vectors are not the model's)."""
    subprocess.run([sys.executable, str(vendor / "convert_hf_to_gguf.py"), str(folder), "--outfile", str(outfile), "--outtype", outtype,
                    "--sentence-transformers-dense-modules"],
                   check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(vendor / "gguf-py")})
    return outfile
