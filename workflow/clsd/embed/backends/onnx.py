"""The ONNX Runtime backend: a sentence-transformers model whose transformer runs in ONNX Runtime.

sentence-transformers' own ONNX backend (`backend="onnx"`, `export_dynamic_quantized_onnx_model`) goes
through optimum-onnx, which requires transformers < 4.58 and cannot be installed next to the transformers 5
this project pins. So the transformer module is exported with PyTorch's own exporter (`torch.onnx.export`,
dynamo) and optionally quantised with ONNX Runtime's own quantiser; at encode time only the transformer's
forward pass runs in ONNX Runtime — tokenisation, prompts, pooling, dense layers and normalisation stay
sentence-transformers' own modules, so a model's outputs keep their meaning.

float32 is float32: ONNX Runtime's CPU provider computes a float32 graph in float32 on x86 (no bf16 fast
path is switched on). int8 is ONNX Runtime's MatMulNBits: int8 weights in blocks of 32 and `accuracy_level` 4,
which means int8 *activations* too: each MatMul quantises its input to int8 per block of 32 at run time and
multiplies in int8 (on a CPU with an int8 kernel for it; AVX512-VNNI here); everything outside the MatMuls stays
float32. Per-tensor dynamic activation quantisation (`quantize_dynamic`) moved EmbeddingGemma's embeddings to a
mean cosine of 0.81 with fp32 here, far too far for a benchmark; the per-block kind keeps them close.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

import torch

from clsd.embed.backends import Placement

log = logging.getLogger(__name__)

FILE = "model.onnx"
PACKAGES = ("torch", "onnx", "onnxscript", "onnxruntime")
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
INT8 = {"bits": 8, "block_size": 32, "is_symmetric": True, "accuracy_level": 4}  # accuracy_level 4: int8 MatMul inputs


def precision_record(quantize: str) -> dict[str, Any]:
    """What the ONNX Runtime session computes in: float32, or for int8 int8 weights and activations in the MatMuls."""
    if quantize == "none":
        return {"weights": "float32", "activations": "float32"}
    return {"weights": f"int8 (MatMulNBits, blocks of {INT8['block_size']})", "accuracy_level": INT8["accuracy_level"],
            "activations": f"int8 in the MatMuls (quantised per block of {INT8['block_size']} at run time), float32 elsewhere"}


class OrtTransformer(torch.nn.Module):
    """Stands in for a Hugging Face model inside sentence-transformers' Transformer module: same `config`,
    `forward(**features)` returning `last_hidden_state`, computed by an ONNX Runtime session on the CPU."""

    def __init__(self, path: str | Path, config: Any, threads: int | None) -> None:
        import onnxruntime as ort

        super().__init__()
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.config = config
        self.device = torch.device("cpu")

    def forward(self, **features: Any) -> dict[str, Any]:
        feeds = {name: features[name].cpu().numpy() for name in self.input_names}
        hidden = self.session.run(None, feeds)[0]
        return {"last_hidden_state": torch.from_numpy(hidden)}


def transformer_module(model: Any) -> Any:
    """The sentence-transformers Transformer module (the first module) of a model."""
    module = model[0]
    if not hasattr(module, "model") or not hasattr(module, "tokenizer"):
        raise ValueError(f"the first module of the model is {type(module).__name__}, not a Transformer: no ONNX export")
    return module


def place(device: str, dtype: str) -> Placement:
    """The CPU, in `dtype` (float32: the only precision the registry offers it); `device` is the torch backend's."""
    return Placement("cpu", dtype, "float32")


def load(model: Any, exported: Path | None, dtype: str, quantize: str) -> None:
    """Run the model's transformer in ONNX Runtime from the exported file (in place), with torch's thread count."""
    if exported is None:
        raise ValueError("the onnx backend runs from its export")
    module = transformer_module(model)
    module.model = OrtTransformer(exported, module.model.config, torch.get_num_threads())  # the torch weights are released


def describe(model: Any, dtype: str, quantize: str) -> dict[str, Any]:
    """The precision record of the `quantize` variant (fixed by the export: ONNX Runtime reports nothing more)."""
    return precision_record(quantize)


def build(onnx_file: Path, folder: Path, quantize: str) -> dict[str, Any]:
    """The float32 export itself (the graph and its external data `<file>.data`, linked, or copied across file
    systems), or its int8 quantisation."""
    if quantize == "int8":
        return {"quantization": quantize_int8(onnx_file, folder / FILE)}
    for produced in sorted(onnx_file.parent.glob(f"{onnx_file.name}*")):
        try:
            os.link(produced, folder / produced.name)
        except OSError:
            shutil.copy2(produced, folder / produced.name)
    return {}


def export_onnx(model: Any, path: Path) -> dict[str, Any]:
    """Export the model's transformer to `path` (weights in `path`.data) with dynamic batch and sequence axes."""
    module = transformer_module(model)
    network = module.model.eval()
    sample = module.tokenizer(["Ein kurzer Satz.", "Une phrase un peu plus longue que la première."], padding=True, return_tensors="pt")
    names = [name for name in INPUTS if name in sample]

    class Forward(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, input_ids, attention_mask, token_type_ids=None):  # noqa: ANN001, ANN201 (traced)
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                features["token_type_ids"] = token_type_ids
            return self.network(**features, return_dict=True).last_hidden_state

    path.parent.mkdir(parents=True, exist_ok=True)
    batch, length = torch.export.Dim("batch"), torch.export.Dim("sequence")
    with torch.no_grad():
        program = torch.onnx.export(Forward(), (), kwargs={name: sample[name] for name in names}, input_names=names,
                                    output_names=["last_hidden_state"], dynamic_shapes={name: {0: batch, 1: length} for name in names},
                                    dynamo=True, external_data=True)
    program.save(str(path), external_data=True)
    return {"exporter": f"torch.onnx.export (dynamo), torch {torch.__version__}", "inputs": names}


def quantize_int8(source: Path, target: Path) -> dict[str, Any]:
    """int8 copy of an exported model (ONNX Runtime's MatMulNBits quantiser): int8 weights, and int8 activations
    in the MatMuls at run time (accuracy_level 4)."""
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )

    quantizer = MatMulNBitsQuantizer(onnx.load(str(source)), algo_config=DefaultWeightOnlyQuantConfig(**INT8), **INT8)
    quantizer.process()
    quantizer.model.save_model_to_file(str(target), use_external_data_format=True)
    return {"method": "onnxruntime MatMulNBits", **INT8, "activations": precision_record("int8")["activations"]}
