"""Encoding texts with a sentence-transformers model: device and precision, backend, prompts/prefixes, keyed vectors.

An embedding row is keyed by the sha256 of the exact text the model saw (prompt and prefix included), after
a tag of the encoder when it is not plain PyTorch in float32 (`<onnx-int8>`, `<torch-bfloat16>`), so
embeddings of different prompts, models or backends can never be mixed up, and each distinct text is
encoded once.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelSpec:
    """What the workflow needs to load and call one embedding model."""

    key: str
    name: str
    load_from: str
    prefix: str = ""
    prompt_name: str | None = None
    trust_remote_code: bool = False
    revision: str | None = None
    batch_size: int = 32
    max_length: int | None = None
    backend: str = "torch"
    quantize: str = "none"
    dtype: str = "float32"

    @classmethod
    def from_config(cls, key: str, model: dict[str, Any], folder: Path | None) -> "ModelSpec":
        """Build from a validated config entry; `folder` is the local copy (None: load `name` from the hub)."""
        return cls(
            key=key,
            name=model["name"],
            load_from=str(folder) if folder is not None else model["name"],
            prefix=model["prefix"],
            prompt_name=model["prompt_name"],
            trust_remote_code=model["trust_remote_code"],
            revision=model["revision"],
            batch_size=model["batch_size"],
            max_length=model["max_length"],
            backend=model["backend"],
            quantize=model["quantize"],
            dtype=model["dtype"],
        )


def resolve_device(device: str) -> str:
    """`auto` → cuda when present, else mps, else cpu; anything else is passed through."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def resolve_dtype(dtype: str, device: str) -> str:
    """The precision the torch backend loads in: half precision (float16, bfloat16) on CUDA only; elsewhere
    float32, with a warning (half precision on a CPU is slower, and MPS lacks bfloat16 kernels)."""
    if dtype != "float32" and device != "cuda":
        log.warning("dtype %s is used on CUDA only; loading in float32 on %s", dtype, device)
        return "float32"
    return dtype


def encoder_tag(backend: str, quantize: str, dtype: str) -> str:
    """Name of the encoder in row keys: "" for plain PyTorch in float32, else e.g. onnx-int8 or torch-bfloat16."""
    if backend == "torch":
        return "" if dtype == "float32" else f"torch-{dtype}"
    return backend if quantize == "none" else f"{backend}-{quantize}"


def row_key_prefix(tag: str, applied: str) -> str:
    """What precedes a text in its row key: the encoder tag (if any), then the applied prompt and prefix."""
    return (f"<{tag}>" if tag else "") + applied


def load_model(spec: ModelSpec, device: str, exported: str | None = None):  # -> SentenceTransformer (lazy import: torch is heavy)
    """Load the model exactly as a user would: `SentenceTransformer(name or local folder)`; with the onnx or
    openvino backend its transformer then runs from the exported file `exported` on the CPU.

    Returns the model and what runs it: {"device", "dtype", "backend", "quantize", "tag"}.
    """
    import torch
    from sentence_transformers import SentenceTransformer

    target = resolve_device(device) if spec.backend == "torch" else "cpu"
    dtype = resolve_dtype(spec.dtype, target) if spec.backend == "torch" else "float32"
    model = SentenceTransformer(
        spec.load_from,
        device=target,
        trust_remote_code=spec.trust_remote_code,
        revision=spec.revision,
        model_kwargs={"dtype": getattr(torch, dtype)} if dtype != "float32" else None,
    )
    if spec.backend != "torch":
        if exported is None:
            raise ValueError(f"model {spec.key}: backend {spec.backend} needs its export (rule export_model)")
        threads = torch.get_num_threads()
        if spec.backend == "onnx":
            from clsd.onnx_backend import use_onnx

            use_onnx(model, exported, threads)
        else:
            from clsd.openvino_backend import use_openvino

            use_openvino(model, exported, threads)
    if spec.prompt_name is not None and spec.prompt_name not in model.prompts:
        raise ValueError(f"model {spec.key}: no prompt named {spec.prompt_name!r}; it has {sorted(model.prompts)}")
    if spec.max_length is not None:
        model.max_seq_length = spec.max_length
    runs_on = {"device": target, "dtype": dtype, "backend": spec.backend, "quantize": spec.quantize,
               "tag": encoder_tag(spec.backend, spec.quantize, dtype)}
    return model, runs_on


def applied_prefix(spec: ModelSpec, prompts: dict[str, str]) -> str:
    """The exact string placed before every text: the named prompt (if any), then the configured prefix."""
    prompt = prompts[spec.prompt_name] if spec.prompt_name is not None else ""
    return prompt + spec.prefix


def text_key(prefix: str, text: str) -> str:
    """Row key of an embedding: sha256 of the exact encoded text."""
    return hashlib.sha256((prefix + text).encode("utf-8")).hexdigest()


def encode(model, spec: ModelSpec, texts: list[str]) -> np.ndarray:
    """Encode `texts` (configured prefix prepended, named prompt applied by sentence-transformers)."""
    return model.encode(
        [spec.prefix + text for text in texts],
        prompt_name=spec.prompt_name,
        batch_size=spec.batch_size,
        show_progress_bar=True,
        convert_to_numpy=True,
    ).astype(np.float32, copy=False)


def embedding_table(texts: list[str], prefix: str, vectors: np.ndarray) -> pl.DataFrame:
    """Embeddings keyed by `text_key(prefix, text)`."""
    if len(texts) != len(vectors):
        raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
    return pl.DataFrame(
        {"text_id": [text_key(prefix, text) for text in texts], "embedding": vectors},
        schema={"text_id": pl.String, "embedding": pl.Array(pl.Float32, vectors.shape[1])},
    )


def lookup(table: pl.DataFrame, keys: list[str]) -> np.ndarray:
    """Vectors for `keys` in order; fails naming a missing key (a text the embedding job never saw)."""
    index = {key: row for row, key in enumerate(table["text_id"].to_list())}
    matrix = table["embedding"].to_numpy()
    try:
        rows = [index[key] for key in keys]
    except KeyError as exc:
        raise KeyError(f"no embedding for text key {exc.args[0]}; rerun the embedding job") from exc
    return matrix[rows]
