"""Encoding with a real model (all-MiniLM-L6-v2 from PyPI): keys, prefixes, prompts, device choice."""

import numpy as np
import pytest

from clsd import embed


@pytest.mark.parametrize(
    ("cuda", "mps", "expected"), [(True, True, "cuda"), (True, False, "cuda"), (False, True, "mps"), (False, False, "cpu")]
)
def test_device_auto_prefers_cuda_then_mps_then_cpu(monkeypatch, cuda, mps, expected):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    assert embed.resolve_device("auto") == expected
    assert embed.resolve_device("cpu") == "cpu"  # an explicit device is never second-guessed


def test_key_covers_the_exact_encoded_text():
    assert embed.text_key("query: ", "Hallo") == embed.text_key("", "query: Hallo")
    assert embed.text_key("query: ", "Hallo") != embed.text_key("", "Hallo")


def test_applied_prefix_combines_prompt_and_prefix():
    spec = embed.ModelSpec(key="k", name="n", load_from="n", prefix="p: ", prompt_name="STS")
    assert embed.applied_prefix(spec, {"STS": "task: sts | "}) == "task: sts | p: "
    plain = embed.ModelSpec(key="k", name="n", load_from="n", prefix="query: ")
    assert embed.applied_prefix(plain, {}) == "query: "


def test_encoding_with_prefix_equals_encoding_the_prefixed_text(minilm, minilm_folder):
    with_prefix = embed.ModelSpec(key="k", name="n", load_from=str(minilm_folder), prefix="query: ", batch_size=2)
    plain = embed.ModelSpec(key="k", name="n", load_from=str(minilm_folder), batch_size=2)
    texts = ["Die Zentralbank hebt den Leitzins an.", "La banque centrale relève son taux."]
    a = embed.encode(minilm, with_prefix, texts)
    b = embed.encode(minilm, plain, ["query: " + t for t in texts])
    c = embed.encode(minilm, plain, texts)
    assert a.dtype == np.float32 and a.shape == (2, 384)
    np.testing.assert_allclose(a, b, atol=1e-5)
    assert not np.allclose(a, c, atol=1e-3)
    table = embed.embedding_table(texts, "query: ", a)
    np.testing.assert_allclose(embed.lookup(table, [embed.text_key("query: ", texts[1])])[0], a[1])


def test_unknown_prompt_name_is_an_error(minilm_folder):
    spec = embed.ModelSpec(key="mini", name="n", load_from=str(minilm_folder), prompt_name="BitextMining")
    with pytest.raises(ValueError, match="model mini: no prompt named 'BitextMining'"):
        embed.load_model(spec, "cpu")


@pytest.mark.parametrize(("dtype", "device", "expected"), [
    ("bfloat16", "cuda", "bfloat16"), ("float16", "cuda", "float16"), ("float32", "cuda", "float32"),
    ("bfloat16", "cpu", "float32"), ("float16", "mps", "float32"), ("float32", "cpu", "float32"),
])
def test_half_precision_only_on_cuda(dtype, device, expected, caplog):
    assert embed.resolve_dtype(dtype, device) == expected
    assert ("used on CUDA only" in caplog.text) == (dtype != expected)


def test_row_keys_of_different_encoders_never_meet():
    tags = {embed.encoder_tag(*settings) for settings in [
        ("torch", "none", "float32"), ("torch", "none", "bfloat16"), ("torch", "none", "float16"),
        ("onnx", "none", "float32"), ("onnx", "int8", "float32"), ("openvino", "none", "float32"), ("openvino", "int8", "float32")]}
    assert len(tags) == 7 and "" in tags  # plain torch float32 keeps the plain key
    keys = {embed.text_key(embed.row_key_prefix(tag, "query: "), "Hallo") for tag in tags}
    assert len(keys) == 7 and embed.text_key("query: ", "Hallo") in keys


def test_auto_device_with_a_cuda_dtype_loads_float32_on_this_cpu(minilm_folder, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    spec = embed.ModelSpec(key="k", name="n", load_from=str(minilm_folder), dtype="bfloat16")
    model, runs_on = embed.load_model(spec, "auto")
    assert runs_on == {"device": "cpu", "dtype": "float32", "backend": "torch", "quantize": "none", "tag": ""}
    assert next(model.parameters()).dtype == torch.float32


def test_an_export_backend_without_its_export_is_an_error(minilm_folder):
    spec = embed.ModelSpec(key="k", name="n", load_from=str(minilm_folder), backend="onnx")
    with pytest.raises(ValueError, match="backend onnx needs its export"):
        embed.load_model(spec, "cpu")
