"""The OpenVINO backend: a sentence-transformers model whose transformer runs in OpenVINO on the CPU.

sentence-transformers' own OpenVINO backend needs optimum-intel, which cannot be installed next to the
transformers 5 this project pins; OpenVINO reads the ONNX export (clsd.embed.backends.onnx) directly.

Precision is set explicitly, never left to OpenVINO's CPU defaults: on a CPU with bf16 instructions
(AVX512-BF16, AMX) its default inference precision is bf16, so a model "in float32" would silently run in bf16.
`dtype` float32 sets the f32 hint, bfloat16 the bf16 hint; the precision the compiled model reports is recorded
and must be the one asked for. int8 is NNCF's weight compression (INT8_ASYM); at run time the CPU plugin then
also quantises the activations of those layers to int8, per group of DYNAMIC_GROUP values (set explicitly, as
ONNX Runtime's MatMulNBits does per block of 32), which is what makes int8 fast on CPUs with VNNI or AMX.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from clsd.embed.backends import Placement
from clsd.embed.backends.onnx import transformer_module

FILE = "model.xml"
PACKAGES = ("torch", "onnx", "onnxscript", "openvino", "nncf")
HINTS = {"float32": "f32", "bfloat16": "bf16"}
DYNAMIC_GROUP = 32
log = logging.getLogger(__name__)


def settings(dtype: str, quantize: str, threads: int | None) -> dict[str, Any]:
    """Compile settings: the inference precision of `dtype`, int8 activations per group for int8 weights only."""
    if dtype not in HINTS:
        raise ValueError(f"the openvino backend runs in {' or '.join(HINTS)}, not {dtype}")
    chosen: dict[str, Any] = {"INFERENCE_PRECISION_HINT": HINTS[dtype],
                              "DYNAMIC_QUANTIZATION_GROUP_SIZE": DYNAMIC_GROUP if quantize == "int8" else 0}
    if threads:
        chosen["INFERENCE_NUM_THREADS"] = threads
    return chosen


def precision_record(dtype: str, quantize: str, reported: str, group: int, capabilities: list[str]) -> dict[str, Any]:
    """What the compiled model computes in, from the precision it reports; fails when it is not `dtype`'s (OpenVINO
    keeps f32 without a word when the CPU cannot run the bf16 asked for: one without AVX-512). bf16 on a CPU whose
    capabilities lack BF16 (AVX-512 without AVX512-BF16 or AMX) is emulated: really bf16, and an order of magnitude
    slower than float32 (MiniLM on an Intel Xeon with AVX-512 VNNI: 1.07 s a batch of 8 against 0.06 s); the record
    says which, and a warning too."""
    if reported != HINTS[dtype]:
        raise RuntimeError(f"OpenVINO compiled the model in {reported}, not the {dtype} asked for: this CPU offers "
                           f"{capabilities}; use dtype float32")
    activations = dtype if quantize == "none" else f"int8 in the weight-compressed layers (per group of {group}), {dtype} elsewhere"
    record = {"inference_precision": reported, "weights": "int8 (NNCF INT8_ASYM)" if quantize == "int8" else "float32",
              "activations": activations, "dynamic_quantization_group_size": group, "cpu_capabilities": capabilities}
    if dtype == "bfloat16":
        record["bf16_in_hardware"] = "BF16" in capabilities
        if not record["bf16_in_hardware"]:
            log.warning("OpenVINO runs bfloat16 emulated on this CPU (its capabilities %s lack BF16: no AVX512-BF16 or "
                        "AMX), an order of magnitude slower than float32; use dtype float32 here", capabilities)
    return record


class OvTransformer(torch.nn.Module):
    """Stands in for a Hugging Face model inside sentence-transformers' Transformer module (see OrtTransformer).
    `precision` records what the compiled model computes in."""

    def __init__(self, path: str | Path, config: Any, threads: int | None, dtype: str = "float32", quantize: str = "none") -> None:
        import openvino as ov
        import openvino.properties as props

        super().__init__()
        core = ov.Core()
        self.compiled = core.compile_model(core.read_model(str(path)), "CPU", settings(dtype, quantize, threads))
        self.precision = precision_record(dtype, quantize, self.compiled.get_property(props.hint.inference_precision()).get_type_name(),
                                          int(self.compiled.get_property(props.hint.dynamic_quantization_group_size())),
                                          list(core.get_property("CPU", props.device.capabilities())))
        self.input_names = [port.get_any_name() for port in self.compiled.inputs]
        self.config = config
        self.device = torch.device("cpu")

    def forward(self, **features: Any) -> dict[str, Any]:
        result = self.compiled({name: features[name].cpu().numpy() for name in self.input_names})
        return {"last_hidden_state": torch.from_numpy(result[self.compiled.outputs[0]])}


def place(device: str, dtype: str) -> Placement:
    """The CPU, in `dtype` (float32 or bfloat16); `device` is the torch backend's."""
    return Placement("cpu", dtype, "float32")


def load(model: Any, exported: Path | None, dtype: str, quantize: str) -> None:
    """Run the model's transformer in OpenVINO from the converted file (in place), in `dtype`, with int8 activations
    when `quantize` is int8, with torch's thread count."""
    if exported is None:
        raise ValueError("the openvino backend runs from its export")
    module = transformer_module(model)
    module.model = OvTransformer(exported, module.model.config, torch.get_num_threads(), dtype, quantize)


def describe(model: Any, dtype: str, quantize: str) -> dict[str, Any]:
    """The precision record of the compiled model (checked against `dtype` when it was compiled)."""
    return transformer_module(model).model.precision


def build(onnx_file: Path, folder: Path, quantize: str) -> dict[str, Any]:
    """OpenVINO IR (FILE .xml + .bin in `folder`) of the float32 ONNX export, weights int8-compressed when asked.
    The IR keeps float32 weights (no compression to f16): the precision is chosen when it is compiled, not here."""
    import openvino as ov

    network = ov.convert_model(str(onnx_file))
    done: dict[str, Any] = {"converter": f"openvino.convert_model, openvino {ov.__version__}"}
    if quantize == "int8":
        import nncf

        network = nncf.compress_weights(network, mode=nncf.CompressWeightsMode.INT8_ASYM)
        done["quantization"] = {"method": f"nncf.compress_weights INT8_ASYM (the weights; activations are set when compiled), "
                                          f"nncf {nncf.__version__}"}
    ov.save_model(network, str(folder / FILE), compress_to_fp16=False)
    return {"conversion": done}
