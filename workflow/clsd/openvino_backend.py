"""The OpenVINO backend: a sentence-transformers model whose transformer runs in OpenVINO on the CPU.

sentence-transformers' own OpenVINO backend needs optimum-intel, which cannot be installed next to the
transformers 5 this project pins; OpenVINO reads the ONNX export (clsd.onnx_backend) directly. int8 is NNCF's
data-free weight compression (INT8_ASYM); activations stay in float32.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from clsd.onnx_backend import transformer_module


class OvTransformer(torch.nn.Module):
    """Stands in for a Hugging Face model inside sentence-transformers' Transformer module (see OrtTransformer)."""

    def __init__(self, path: str | Path, config: Any, threads: int | None) -> None:
        import openvino as ov

        super().__init__()
        core = ov.Core()
        settings = {"INFERENCE_NUM_THREADS": threads} if threads else {}
        self.compiled = core.compile_model(core.read_model(str(path)), "CPU", settings)
        self.input_names = [port.get_any_name() for port in self.compiled.inputs]
        self.config = config
        self.device = torch.device("cpu")

    def forward(self, **features: Any) -> dict[str, Any]:
        result = self.compiled({name: features[name].cpu().numpy() for name in self.input_names})
        return {"last_hidden_state": torch.from_numpy(result[self.compiled.outputs[0]])}


def use_openvino(model: Any, path: str | Path, threads: int | None = None) -> None:
    """Run the model's transformer in OpenVINO from the converted file `path` (in place)."""
    module = transformer_module(model)
    module.model = OvTransformer(path, module.model.config, threads)


def convert(onnx_path: Path, target: Path, quantize: str) -> dict[str, Any]:
    """OpenVINO IR (`target` .xml + .bin) of an ONNX export, weights int8-compressed when asked."""
    import openvino as ov

    network = ov.convert_model(str(onnx_path))
    done: dict[str, Any] = {"converter": f"openvino.convert_model, openvino {ov.__version__}"}
    if quantize == "int8":
        import nncf

        network = nncf.compress_weights(network, mode=nncf.CompressWeightsMode.INT8_ASYM)
        done["quantization"] = {"method": f"nncf.compress_weights INT8_ASYM (weight-only), nncf {nncf.__version__}"}
    ov.save_model(network, str(target), compress_to_fp16=False)
    return done
