"""Where an embedding model's transformer runs — PyTorch, ONNX Runtime, OpenVINO — as one registry.

A backend is one module implementing `Runtime` (and `Exporter` when it runs from an export) and one line in
`BACKENDS`. Everything that depends on the backend reads this table and names none: the config's choices of
`models.*.backend`, `dtype` and `quantize` and their checks (clsd.config), the export rule (`needs_export`), loading
(clsd.embed.models.load_model) and exporting (clsd.embed.exports). The table imports nothing heavy, since the config
check reads it while the workflow is planned; a backend's module (torch, ONNX Runtime, OpenVINO) is imported when a
job loads or exports a model with it.

Every backend but one encodes through sentence-transformers' own `encode`: a runtime stands in for the transformer
module only, so tokenisation, prompts, pooling and normalisation are the model's own whatever runs it. llama-server
serves the whole model from a GGUF conversion (llama.cpp tokenises, pools and normalises; the prompts stay
sentence-transformers'), measured faster at equal P@1 (clsd.embed.backends.llama_server).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol, cast


@dataclass(frozen=True)
class Backend:
    """What the config check and the rules know of a backend without importing it."""

    module: str  #: the module implementing it (a Runtime; an Exporter when `from_export`)
    from_export: bool  #: runs on the CPU from a one-time export (rule export_model) made from the float32 ONNX export
    dtypes: tuple[str, ...]  #: the precisions it computes in
    quantizations: tuple[str, ...] = ("none",)  #: the weight quantisations its export offers
    from_folder: bool = False  #: its export is converted from the model's own folder, not from the ONNX export


BACKENDS: dict[str, Backend] = {
    "torch": Backend("clsd.embed.backends.torch", from_export=False, dtypes=("float32", "float16", "bfloat16")),
    "onnx": Backend("clsd.embed.backends.onnx", from_export=True, dtypes=("float32",), quantizations=("none", "int8")),
    "openvino": Backend("clsd.embed.backends.openvino", from_export=True, dtypes=("float32", "bfloat16"), quantizations=("none", "int8")),
    "llama-server": Backend("clsd.embed.backends.llama_server", from_export=True, dtypes=("float16",), quantizations=("none", "int8"),
                            from_folder=True),
}

#: The backend that runs a model as sentence-transformers loads it: its float32 embeddings keep plain row keys (any
#: other encoder's carry its tag) and exports are made from its float32 model.
REFERENCE = "torch"


class Placement(NamedTuple):
    """Where a backend runs a model: the device, the precision it computes in, and the precision PyTorch loads the
    weights in (float32 for a backend that runs from an export: those weights are released once it stands in)."""

    device: str
    dtype: str
    torch_dtype: str


class Runtime(Protocol):
    """What a backend's module provides (module-level functions)."""

    def place(self, device: str, dtype: str) -> Placement:
        """Where a model runs for the configured `device` and `dtype` (in the backend's `dtypes`)."""

    def load(self, model: Any, exported: Path | None, dtype: str, quantize: str) -> None:
        """Make `model`, a SentenceTransformer loaded by PyTorch as `place` says, compute in this backend (in place);
        `exported` is the export's file for a backend that runs from one."""

    def describe(self, model: Any, dtype: str, quantize: str) -> dict[str, Any]:
        """The precision the loaded `model` computes in (weights, activations, what the runtime reports)."""


class Exporter(Runtime, Protocol):
    """A backend that runs from an export: its file name, what the export depends on, and how it is made."""

    FILE: str  #: the export's main file, inside its folder
    PACKAGES: tuple[str, ...]  #: the packages whose versions an export depends on

    def build(self, source: Path, folder: Path, quantize: str) -> dict[str, Any]:
        """Write this backend's export into `folder` from `source`, the float32 ONNX export (left as it is), or the
        model's own folder for a backend converted from it (`from_folder`); returns what was done (converter,
        quantiser settings)."""


def backend(name: str) -> Backend:
    """The registry entry of backend `name`; fails naming the known ones."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; known: {sorted(BACKENDS)}") from None


def needs_export(name: str) -> bool:
    """Whether a model with backend `name` runs from an export (rule export_model), an input of its jobs."""
    return backend(name).from_export


def choices() -> dict[str, list[str]]:
    """The values the config may give `backend`, `dtype` and `quantize` (any backend's, in registry order)."""
    return {"backend": list(BACKENDS),
            "dtype": list(dict.fromkeys(dtype for entry in BACKENDS.values() for dtype in entry.dtypes)),
            "quantize": list(dict.fromkeys(q for entry in BACKENDS.values() for q in entry.quantizations))}


def runtime(name: str) -> Runtime:
    """The module implementing backend `name` (imported on first use: torch and the runtimes are heavy)."""
    return cast(Runtime, importlib.import_module(backend(name).module))


def exporter(name: str) -> Exporter:
    """The module implementing backend `name`, which must run from an export."""
    if not needs_export(name):
        raise ValueError(f"backend {name} runs the model as loaded: it has no export")
    return cast(Exporter, importlib.import_module(backend(name).module))
