"""The device a model runs on, from the config's `device` (shared by the embedding and translation stages)."""

from __future__ import annotations


def resolve_device(device: str) -> str:
    """`auto` → cuda when present, else mps, else cpu; anything else is passed through (an explicit device is
    never second-guessed)."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"
