"""The llama-server backend: the model converted to GGUF and served by llama.cpp's `llama-server --embeddings` on
127.0.0.1 for the embedding job, which asks it through the one OpenAI-compatible client (clsd.serving.client).

Measured faster than bare torch at equal P@1 on a 2-core AMD EPYC (bench/embed_server.py, docs/benchmarks.md):
EmbeddingGemma 1.68× in float16, all-MiniLM-L6-v2 1.02-1.21×. Unlike the other backends it stands in for the whole
model, not its transformer only: llama.cpp tokenises, pools and normalises (the conversion keeps the model's
sentence-transformers Dense modules; the named prompt and the prefix are still applied by clsd, as text). Its vectors
agree with torch's to a cosine of 0.99999 in float16 (llama.cpp computes GELU from a float16 table), 0.999 in int8.

The export (rule export_model) converts the model's folder with llama.cpp's own `convert_hf_to_gguf.py`, which ships
in the pinned llama-cpp-python sdist that install.sh builds the server from (clsd.serving.server_build): float16
weights (`f16`), or `q8_0` for `quantize: int8` (8-bit weights in blocks of 32, activations quantised to 8 bits per
block at run time). The server is started when the model loads, with the job's threads and one slot per text of a
batch, and stopped when the job ends (Ctrl-C and SIGTERM included).
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from clsd.core import stopping
from clsd.embed.backends import Placement

log = logging.getLogger(__name__)

FILE = "model.gguf"
PACKAGES = ("torch", "transformers", "safetensors", "numpy")  # what the converter runs on (its own code is the pinned sdist's)
OUTTYPES = {"none": "f16", "int8": "q8_0"}
#: What the converter needs from the sdist's vendor/llama.cpp.
CONVERTER = ("convert_hf_to_gguf.py", "conversion/", "gguf-py/")
#: Texts a request carries, and the server's slots: a batch is embedded at once (measured faster than 4 slots).
BATCH = 32
#: Tokens of a slot: a text is embedded in one physical batch of llama.cpp (512 tokens); a longer one fails.
SLOT_TOKENS = 512


def converter(workdir: Path) -> Path:
    """llama.cpp's vendor folder under `workdir`, holding only the converter and the packages it imports, from the
    pinned llama-cpp-python sdist (`pip download`: free from pip's cache after the install)."""
    from clsd.serving.server_build import download_sdist

    with tarfile.open(download_sdist(workdir)) as archive:
        members = [m for m in archive.getmembers() if "/vendor/llama.cpp/" in m.name
                   and m.name.split("/vendor/llama.cpp/", 1)[1].startswith(CONVERTER)]
        archive.extractall(workdir, members=members, filter="data")
    return next(workdir.glob("llama_cpp_python-*/vendor/llama.cpp"))


def convert(folder: Path, outfile: Path, outtype: str, vendor: Path) -> Path:
    """`folder` (a Hugging Face / sentence-transformers model) written as GGUF `outfile` in `outtype` (f32, f16, q8_0),
    with the model's sentence-transformers Dense modules (EmbeddingGemma's two projections after pooling: without them
    its vectors are not the model's)."""
    result = subprocess.run([sys.executable, str(vendor / "convert_hf_to_gguf.py"), str(folder), "--outfile", str(outfile),
                             "--outtype", outtype, "--sentence-transformers-dense-modules"],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(vendor / "gguf-py")})
    if result.returncode != 0:
        raise RuntimeError(f"converting {folder} to GGUF failed: {result.stderr.strip()[-2000:]}")
    return outfile


def build(source: Path, folder: Path, quantize: str) -> dict[str, Any]:
    """The GGUF of the model folder `source` in `folder` (f16, or q8_0 for int8)."""
    from clsd.serving.server_build import SDIST

    with tempfile.TemporaryDirectory(prefix="clsd-gguf-") as work:
        convert(source, folder / FILE, OUTTYPES[quantize], converter(Path(work)))
    return {"converter": f"convert_hf_to_gguf.py of {SDIST}", "outtype": OUTTYPES[quantize]}


def place(device: str, dtype: str) -> Placement:
    """The CPU (the server built by install.sh runs there), in float16; PyTorch loads the model in float32 for its
    prompts and settings only."""
    if device not in ("auto", "cpu"):
        log.warning("the llama-server backend runs on the CPU, not %s (a GPU build: source endpoint with your own server)", device)
    return Placement("cpu", dtype, "float32")


class Served:
    """The running server of the job: started once, stopped at exit (SIGTERM and SIGHUP are taken as Ctrl-C so that exit runs)."""

    def __init__(self, gguf: Path, threads: int) -> None:
        from clsd.serving.server import LlamaServer, server_program

        program = [str(server_program()), "--embeddings", "--pooling", "mean"]
        self.server = LlamaServer(gguf, n_ctx=SLOT_TOKENS, threads=threads, slots=BATCH, program=program)
        if threading.current_thread() is threading.main_thread():  # before the start, which may test CPU variants
            stopping.install()
        atexit.register(self.server.stop)
        self.base_url = self.server.__enter__()


def load(model: Any, exported: Path | None, dtype: str, quantize: str) -> None:
    """Serve the GGUF `exported` and make `model.encode` ask the server: the prompt (given, named, or the model's
    default) before each text as sentence-transformers places it, unit vectors back in order. A text over SLOT_TOKENS
    tokens fails (sentence-transformers would cut it at max_seq_length)."""
    import torch

    from clsd.serving.client import ChatClient

    served = Served(Path(exported), torch.get_num_threads())
    client = ChatClient(base_url=served.base_url, api_key="none", timeout=600, retries=2, requests_per_minute=None,
                        exited=served.server.exit_code)

    def encode(sentences: list[str], prompt_name: str | None = None, prompt: str | None = None, **_: Any) -> np.ndarray:
        prompt = prompt if prompt is not None else model.prompts.get(prompt_name or model.default_prompt_name, "")
        vectors = []
        for start in range(0, len(sentences), BATCH):
            texts = [prompt + text for text in sentences[start:start + BATCH]]
            answer = client.embed("served", texts, {}, 0)
            by_index = dict(answer.data)
            vectors += [by_index[i] for i in range(len(texts))]
        return np.asarray(vectors, dtype=np.float32)

    model.encode = encode
    model.llama_server = served


def describe(model: Any, dtype: str, quantize: str) -> dict[str, Any]:
    """Weights in float16 (activations converted to it for each product), or q8_0 (activations quantised per block)."""
    if quantize == "int8":
        return {"weights": "int8 (GGUF q8_0, blocks of 32)", "activations": "int8 per block of 32 in the matrix products",
                "server": model.llama_server.server.info()}
    return {"weights": "float16 (GGUF f16)", "activations": "float16 in the matrix products (GELU from a float16 table)",
            "server": model.llama_server.server.info()}
