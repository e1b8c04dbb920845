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
