"""The PyTorch backend: the model as sentence-transformers loads it, on the configured device.

Half precision (float16, bfloat16) runs on CUDA only; elsewhere the model computes in float32, with a warning:
torch's bfloat16 was slower than float32 on a CPU with AVX512-BF16 but no AMX (0.72x), and MPS lacks bfloat16
kernels. bfloat16 on the CPU is the openvino backend's.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from clsd.core.device import resolve_device
from clsd.embed.backends import Placement

log = logging.getLogger(__name__)


def place(device: str, dtype: str) -> Placement:
    """The resolved device, and `dtype` on CUDA (the weights are loaded in it), float32 elsewhere."""
    target = resolve_device(device)
    if dtype != "float32" and target != "cuda":
        log.warning("dtype %s is used on CUDA only; loading in float32 on %s (bfloat16 on the CPU: backend openvino)",
                    dtype, target)
        dtype = "float32"
    return Placement(target, dtype, dtype)


def load(model: Any, exported: Path | None, dtype: str, quantize: str) -> None:
    """Nothing to do: PyTorch runs the model as loaded, its weights already in `dtype`."""


def describe(model: Any, dtype: str, quantize: str) -> dict[str, Any]:
    """Weights and activations in `dtype`, and torch's float32 matmul precision (TF32 on CUDA unless "highest")."""
    return {"weights": dtype, "activations": dtype, "float32_matmul_precision": torch.get_float32_matmul_precision()}
