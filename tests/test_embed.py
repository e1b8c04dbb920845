"""Encoding with a real model (all-MiniLM-L6-v2 from PyPI): keys, prefixes, prompts, device choice, and the
precision each backend really computes in (float32 means float32; bfloat16 only when asked, and labelled)."""

import copy
import json

import numpy as np
import polars as pl
import pytest

from clsd import config as cfg
from clsd.embed import exports, models
from clsd.embed.backends import onnx as onnx_backend, openvino as openvino_backend
from clsd.core.errors import InputError
from clsd.embed.model_store import RECIPES
from conftest import ROOT


@pytest.mark.parametrize(
    ("cuda", "mps", "expected"), [(True, True, "cuda"), (True, False, "cuda"), (False, True, "mps"), (False, False, "cpu")]
)
def test_device_auto_prefers_cuda_then_mps_then_cpu(monkeypatch, cuda, mps, expected):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    assert models.resolve_device("auto") == expected
    assert models.resolve_device("cpu") == "cpu"  # an explicit device is never second-guessed


def test_key_covers_the_exact_encoded_text():
    assert models.text_key("query: ", "Hallo") == models.text_key("", "query: Hallo")
    assert models.text_key("query: ", "Hallo") != models.text_key("", "Hallo")


def test_applied_prefix_combines_prompt_and_prefix():
    spec = models.ModelSpec(key="k", name="n", load_from="n", prefix="p: ", prompt_name="STS")
    assert models.applied_prefix(spec, {"STS": "task: sts | "}) == "task: sts | p: "
    plain = models.ModelSpec(key="k", name="n", load_from="n", prefix="query: ")
    assert models.applied_prefix(plain, {}) == "query: "


def test_encoding_with_prefix_equals_encoding_the_prefixed_text(minilm, minilm_folder):
    with_prefix = models.ModelSpec(key="k", name="n", load_from=str(minilm_folder), prefix="query: ", batch_size=2)
    plain = models.ModelSpec(key="k", name="n", load_from=str(minilm_folder), batch_size=2)
    texts = ["Die Zentralbank hebt den Leitzins an.", "La banque centrale relève son taux."]
    a = models.encode(minilm, with_prefix, texts)
    b = models.encode(minilm, plain, ["query: " + t for t in texts])
    c = models.encode(minilm, plain, texts)
    assert a.dtype == np.float32 and a.shape == (2, 384)
    np.testing.assert_allclose(a, b, atol=1e-5)
    assert not np.allclose(a, c, atol=1e-3)
    table = models.embedding_table(texts, "query: ", a)
    np.testing.assert_allclose(models.lookup(table, [models.text_key("query: ", texts[1])])[0], a[1])


def test_unknown_prompt_name_is_an_error(minilm_folder):
    spec = models.ModelSpec(key="mini", name="n", load_from=str(minilm_folder), prompt_name="BitextMining")
    with pytest.raises(ValueError, match="model mini: no prompt named 'BitextMining'"):
        models.load_model(spec, "cpu")


@pytest.mark.parametrize(("dtype", "device", "expected"), [
    ("bfloat16", "cuda", "bfloat16"), ("float16", "cuda", "float16"), ("float32", "cuda", "float32"),
    ("bfloat16", "cpu", "float32"), ("float16", "cpu", "float32"), ("float16", "mps", "float32"), ("float32", "cpu", "float32"),
])
def test_half_precision_only_on_cuda(dtype, device, expected, caplog):
    """torch computes half precision on CUDA only: on this CPU (AVX512-BF16, no AMX) its bfloat16 ran at 0.72x of
    float32 and OpenVINO's float16 at 0.76x, so float16 is not offered on the CPU and bfloat16 only by openvino."""
    assert models.resolve_dtype(dtype, device) == expected
    assert ("used on CUDA only" in caplog.text) == (dtype != expected)


def test_openvino_runs_bfloat16_on_the_cpu_when_asked_and_onnx_only_float32(caplog):
    assert models.resolve_dtype("bfloat16", "cpu", "openvino") == "bfloat16"
    assert models.resolve_dtype("float32", "cpu", "openvino") == "float32"
    assert "CUDA only" not in caplog.text  # no fallback for the export backends: what is asked runs, or nothing
    with pytest.raises(ValueError, match="backend onnx runs in float32, not bfloat16"):
        models.resolve_dtype("bfloat16", "cpu", "onnx")
    with pytest.raises(ValueError, match="backend openvino runs in float32 or bfloat16, not float16"):
        models.resolve_dtype("float16", "cpu", "openvino")


@pytest.mark.parametrize(("settings", "message"), [
    ({"backend": "openvino", "dtype": "bfloat16"}, None),
    ({"backend": "openvino", "dtype": "bfloat16", "quantize": "int8"}, None),
    ({"backend": "onnx", "dtype": "bfloat16"}, r"models\.m\.dtype: bfloat16 is for the torch backend on CUDA or the openvino backend"),
    ({"backend": "openvino", "dtype": "float16"}, r"models\.m\.dtype: float16 is for the torch backend on CUDA; openvino runs in float32"),
])
def test_config_allows_bfloat16_for_openvino_only_among_export_backends(settings, message):
    model = {"name": "all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2", "quantize": "none", **settings}
    if message is None:
        cfg.check_model("m", copy.deepcopy(model))
    else:
        with pytest.raises(InputError, match=message):
            cfg.check_model("m", model)


def test_row_keys_of_different_encoders_never_meet():
    tags = {models.encoder_tag(*settings) for settings in [
        ("torch", "none", "float32"), ("torch", "none", "bfloat16"), ("torch", "none", "float16"),
        ("onnx", "none", "float32"), ("onnx", "int8", "float32"), ("openvino", "none", "float32"), ("openvino", "int8", "float32"),
        ("openvino", "none", "bfloat16"), ("openvino", "int8", "bfloat16")]}
    assert len(tags) == 9 and "" in tags  # plain torch float32 keeps the plain key
    assert {"openvino", "openvino-bfloat16", "openvino-int8-bfloat16"} <= tags
    keys = {models.text_key(models.row_key_prefix(tag, "query: "), "Hallo") for tag in tags}
    assert len(keys) == 9 and models.text_key("query: ", "Hallo") in keys


def test_cpu_features_name_the_instruction_sets_that_decide_speed_and_precision(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Some Xeon\nflags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16 amx_bf16 "
                       "amx_int8 avx512_vnni\n\nprocessor\t: 1\nmodel name\t: Some Xeon\nflags\t\t: fpu sse2\n", encoding="utf-8")
    found = models.cpu_features(cpuinfo)
    assert found["model"] == "Some Xeon"
    assert found["instruction_sets"] == ["amx_bf16", "amx_int8", "avx2", "avx512_bf16", "avx512_vnni", "avx512f", "fma"]
    assert found["torch_capability"] and found["logical_cpus"] >= 1
    assert models.cpu_features(tmp_path / "absent")["instruction_sets"] is None  # unknown, not "none"


def test_openvino_fails_rather_than_mislabel_a_precision_it_did_not_use():
    """OpenVINO keeps f32 without a word when a CPU cannot do the bf16 asked for: the job must not call it bf16."""
    with pytest.raises(RuntimeError, match="compiled the model in f32, not the bfloat16 asked for.*use dtype float32"):
        openvino_backend.precision_record("bfloat16", "none", "f32", 0, ["FP32", "INT8"])
    record = openvino_backend.precision_record("float32", "int8", "f32", 32, ["FP32", "BF16"])
    assert record["activations"].startswith("int8") and record["weights"].startswith("int8")
    assert openvino_backend.settings("float32", "none", 2) == {
        "INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0, "INFERENCE_NUM_THREADS": 2}


def test_auto_device_with_a_cuda_dtype_loads_float32_on_this_cpu(minilm_folder, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    spec = models.ModelSpec(key="k", name="n", load_from=str(minilm_folder), dtype="bfloat16")
    model, runs_on = models.load_model(spec, "auto")
    assert {key: runs_on[key] for key in ("device", "dtype", "backend", "quantize", "tag")} == {
        "device": "cpu", "dtype": "float32", "backend": "torch", "quantize": "none", "tag": ""}
    assert runs_on["precision"] == {"weights": "float32", "activations": "float32", "float32_matmul_precision": "highest"}
    assert runs_on["cpu"] == models.cpu_features()
    assert next(model.parameters()).dtype == torch.float32


def test_an_export_backend_without_its_export_is_an_error(minilm_folder):
    spec = models.ModelSpec(key="k", name="n", load_from=str(minilm_folder), backend="onnx")
    with pytest.raises(ValueError, match="backend onnx needs its export"):
        models.load_model(spec, "cpu")


def sample_texts(n: int = 20) -> list[str]:
    """Real sentences: the first `n` German and `n` French originals of the project's sample."""
    sample = pl.read_csv(ROOT / "resources/sample/clsd_sample.csv")
    return sample["German"].head(n).to_list() + sample["French"].head(n).to_list()


@pytest.fixture(scope="module")
def minilm_exports(tmp_path_factory, minilm_folder):
    """all-MiniLM-L6-v2 exported for onnx (float32, int8) and openvino by clsd.embed.exports into a temporary store."""
    store = tmp_path_factory.mktemp("store")
    source = {"weights_sha256": RECIPES["all-MiniLM-L6-v2"].weights_sha256}
    spec = models.ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from=str(minilm_folder))
    files = {}
    for backend, quantize in (("onnx", "none"), ("onnx", "int8"), ("openvino", "none")):
        folder, _, _ = exports.ensure(store, "minilm", backend, quantize, source, lambda: models.load_model(spec, "cpu")[0])
        files[backend, quantize] = folder / exports.FILES[backend]
    return files


def encode_with(folder, backend: str, quantize: str, dtype: str, exported, texts: list[str]):
    spec = models.ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from=str(folder), backend=backend, quantize=quantize,
                           dtype=dtype, batch_size=8)
    model, runs_on = models.load_model(spec, "cpu", str(exported) if exported else None)
    vectors = models.encode(model, spec, texts)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), runs_on


def test_float32_backends_compute_in_float32_like_torch(minilm_folder, minilm_exports):
    """ONNX Runtime and OpenVINO "float32" give torch's vectors on real sentences (cosine >= 0.99999 for every
    text; float32 rounding differs by ~1e-7, bf16 by ~1e-4), and say so in their record. On a CPU with bf16
    instructions, OpenVINO's default precision is bf16: without the explicit hint its vectors miss this bound."""
    texts = sample_texts()
    reference, torch_runs = encode_with(minilm_folder, "torch", "none", "float32", None, texts)
    assert torch_runs["precision"]["activations"] == "float32"
    for backend in ("onnx", "openvino"):
        vectors, runs_on = encode_with(minilm_folder, backend, "none", "float32", minilm_exports[backend, "none"], texts)
        cosines = (vectors * reference).sum(axis=1)
        assert cosines.min() >= 0.99999, (backend, float(cosines.min()))
        assert runs_on["tag"] == backend and runs_on["dtype"] == "float32"
        assert runs_on["precision"]["activations"] == "float32" and runs_on["precision"]["weights"] == "float32"
    assert runs_on["precision"]["inference_precision"] == "f32"  # what the compiled OpenVINO model reports


def test_openvino_bfloat16_is_labelled_and_really_bfloat16(minilm_folder, minilm_exports):
    """bfloat16 on the CPU, only when asked: another row-key tag, the compiled model's precision recorded, vectors
    that differ from float32's by bf16 rounding (and still close to torch's)."""
    import openvino as ov

    texts = sample_texts()
    if "BF16" not in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"):
        with pytest.raises(RuntimeError, match="not the bfloat16 asked for"):
            encode_with(minilm_folder, "openvino", "none", "bfloat16", minilm_exports["openvino", "none"], texts)
        return
    reference, _ = encode_with(minilm_folder, "openvino", "none", "float32", minilm_exports["openvino", "none"], texts)
    vectors, runs_on = encode_with(minilm_folder, "openvino", "none", "bfloat16", minilm_exports["openvino", "none"], texts)
    assert runs_on["tag"] == "openvino-bfloat16" and runs_on["dtype"] == "bfloat16"
    assert runs_on["precision"]["inference_precision"] == "bf16" and runs_on["precision"]["activations"] == "bfloat16"
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() > 0.999 and cosines.min() < 0.99999  # bf16 keeps 8 bits of mantissa: visible, small


def test_onnx_int8_record_states_the_activation_precision_of_its_file(minilm_exports):
    """accuracy_level 4 in every MatMulNBits node of the int8 export: int8 activations, as its record says."""
    import onnx

    graph = onnx.load(str(minilm_exports["onnx", "int8"]), load_external_data=False).graph
    levels = {attribute.i for node in graph.node if node.op_type == "MatMulNBits"
              for attribute in node.attribute if attribute.name == "accuracy_level"}
    record = onnx_backend.precision_record("int8")
    assert levels == {record["accuracy_level"]} == {4}
    assert record["activations"].startswith("int8 in the MatMuls")
    export = json.loads((minilm_exports["onnx", "int8"].parent / exports.RECORD).read_text(encoding="utf-8"))
    assert export["quantization"]["activations"] == record["activations"] and "weight-only" not in export["quantization"]["method"]
