"""Embedding models loaded and run here (hub, pypi, local): a sentence-transformers model on its device, backend and
precision, with its prompt and prefix; the keyed vector tables of every model (served ones too).

An embedding row is keyed by the sha256 of the exact text the model saw (prompt and prefix included), after
a tag of the encoder when it is not plain PyTorch in float32 (`<onnx-int8>`, `<torch-bfloat16>`,
`<openvino-bfloat16>`), so embeddings of different prompts, models, backends or precisions can never be mixed
up, and each distinct text is encoded once. What ran is recorded with the vectors (`runs_on`): device, backend,
the precision of weights and activations, and the CPU's instruction sets, on which speed (and, left to a
runtime's defaults, precision) depends.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from clsd.core.provenance import cpu_features
from clsd.embed import backends
from clsd.embed.spec import ModelSpec

log = logging.getLogger(__name__)


def encoder_tag(backend: str, quantize: str, dtype: str) -> str:
    """Name of the encoder in row keys: "" for the reference backend (PyTorch) in float32, else e.g. onnx-int8,
    torch-bfloat16, openvino-bfloat16 or openvino-int8-bfloat16 (the precision is named whenever it is not float32)."""
    if (backend, quantize, dtype) == (backends.REFERENCE, "none", "float32"):
        return ""
    name = backend if quantize == "none" else f"{backend}-{quantize}"
    return name if dtype == "float32" else f"{name}-{dtype}"


def row_key_prefix(tag: str, applied: str) -> str:
    """What precedes a text in its row key: the encoder tag (if any), then the applied prompt and prefix."""
    return (f"<{tag}>" if tag else "") + applied


def load_model(spec: ModelSpec, device: str, exported: str | None = None):  # -> SentenceTransformer (lazy import: torch is heavy)
    """Load the model exactly as a user would: `SentenceTransformer(name or local folder)`; a backend other than
    PyTorch then runs its transformer (from the exported file `exported`, for a backend that runs from an export),
    in the precision asked for, set explicitly (OpenVINO would otherwise pick bf16 on a CPU with bf16 instructions).

    Returns the model and what runs it: {"device", "dtype", "backend", "quantize", "tag", "precision" (weights,
    activations and what the runtime reports), "cpu" (cpu_features)}.
    """
    import torch
    from sentence_transformers import SentenceTransformer

    entry = backends.backend(spec.backend)
    if spec.dtype not in entry.dtypes:
        raise ValueError(f"backend {spec.backend} runs in {' or '.join(entry.dtypes)}, not {spec.dtype}")
    if entry.from_export and exported is None:
        raise ValueError(f"model {spec.key}: backend {spec.backend} needs its export (rule export_model)")
    runtime = backends.runtime(spec.backend)
    placed = runtime.place(device, spec.dtype)
    model = SentenceTransformer(
        spec.load_from,
        device=placed.device,
        trust_remote_code=spec.trust_remote_code,
        revision=spec.revision,
        model_kwargs=None if placed.torch_dtype == "float32" else {"dtype": getattr(torch, placed.torch_dtype)},
    )
    runtime.load(model, Path(exported) if exported is not None else None, placed.dtype, spec.quantize)
    if spec.prompt_name is not None and spec.prompt_name not in model.prompts:
        raise ValueError(f"model {spec.key}: no prompt named {spec.prompt_name!r}; it has {sorted(model.prompts)}")
    if spec.max_length is not None:
        model.max_seq_length = spec.max_length
    runs_on = {"device": placed.device, "dtype": placed.dtype, "backend": spec.backend, "quantize": spec.quantize,
               "tag": encoder_tag(spec.backend, spec.quantize, placed.dtype),
               "precision": runtime.describe(model, placed.dtype, spec.quantize), "cpu": cpu_features()}
    return model, runs_on


def applied_prefix(spec: ModelSpec, prompts: dict[str, str]) -> str:
    """The exact string placed before every text: the named prompt (if any), then the configured prefix."""
    prompt = prompts[spec.prompt_name] if spec.prompt_name is not None else ""
    return prompt + spec.prefix


def encode(model, spec: ModelSpec, texts: list[str]) -> np.ndarray:
    """Encode `texts` (configured prefix prepended, named prompt applied by sentence-transformers)."""
    return model.encode(
        [spec.prefix + text for text in texts],
        prompt_name=spec.prompt_name,
        batch_size=spec.batch_size,
        show_progress_bar=True,
        convert_to_numpy=True,
    ).astype(np.float32, copy=False)
