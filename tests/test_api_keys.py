"""API keys are checked once Snakemake knows which jobs will run, before any starts: clsd.core.api_keys as a
function of the config and the planned jobs, and the real `snakemake` command (the workflow's onstart hook)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from clsd import config as cfg
from clsd.core.api_keys import check_api_keys, needed_keys
from clsd.core.errors import InputError
from conftest import MODEL_STORE, ROOT

SAMPLE = ROOT / "resources/sample/clsd_sample.csv"
REMOTE = "https://api.example.org/v1"
SERVED = {"name": "text-embedding-3-small", "source": "endpoint",
          "endpoint": {"base_url": REMOTE, "api_key_env": "CLSD_TEST_EMBED_KEY"}}


def config_with(generation: dict | None = None, judge: bool = False, **models: dict) -> dict:
    raw = {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": str(SAMPLE)},
                              "distractors": {"kind": "llm"}}},
           "generation": {"base_url": REMOTE, "api_key_env": "CLSD_TEST_LLM_KEY"} | (generation or {}),
           "validation": {"judge": judge}, "models": models or {"served": SERVED}}
    return cfg.validate(raw)


GENERATE = ("generate_distractors", {"dataset": "s", "lang": "de"})
EMBED = ("embed_endpoint", {"model": "served", "dataset": "s", "view": "direct"})


def test_only_the_jobs_that_will_send_need_a_key():
    config = config_with()
    assert {key.config_key: rules for key, rules in needed_keys(config, [GENERATE, EMBED]).items()} == {
        "generation.api_key_env": ["generate_distractors"], "models.served.endpoint.api_key_env": ["embed_endpoint"]}
    # what sends nothing: the estimates, the requests file without the judge, validation without it, other models
    quiet = [("cost_estimate", {}), ("generation_estimate", {}), ("generation_requests", {"dataset": "s", "lang": "de"}),
             ("validate_distractors", {"dataset": "s", "lang": "de"}), ("embed", {"model": "served", "dataset": "s"})]
    assert needed_keys(config, quiet) == {}
    # the judge asks from validation and the requests file too; a batch runner's output is read, not asked
    judged = config_with({"batch_output": "{dataset}.{lang}.jsonl"}, judge=True)
    assert [rules for rules in needed_keys(judged, [GENERATE, quiet[2], quiet[3]]).values()] == [
        ["generate_distractors", "generation_requests", "validate_distractors"]]
    assert needed_keys(config_with({"batch_output": "{dataset}.{lang}.jsonl"}), [GENERATE]) == {}


def test_a_server_on_this_machine_and_a_model_without_a_key_variable_need_none():
    local = dict(SERVED, endpoint={"base_url": "http://127.0.0.1:8080/v1", "api_key_env": "CLSD_TEST_EMBED_KEY"})
    open_model = dict(SERVED, endpoint={"base_url": REMOTE, "api_key_env": None})
    config = config_with({"base_url": "http://localhost:8000/v1"}, local=local, open=open_model)
    jobs = [GENERATE, ("embed_endpoint", {"model": "local"}), ("mteb_evaluate", {"model": "open"})]
    assert needed_keys(config, jobs) == {}


def test_every_missing_key_is_named_with_its_config_key_and_a_set_one_passes():
    config = config_with()
    with pytest.raises(InputError) as raised:
        check_api_keys(config, [GENERATE, EMBED], {"CLSD_TEST_LLM_KEY": ""})
    message = str(raised.value)
    assert message.startswith(f"config key generation.api_key_env: the environment variable CLSD_TEST_LLM_KEY is not set; "
                              f"{REMOTE} needs its API key there for the jobs of generate_distractors (export "
                              "CLSD_TEST_LLM_KEY=...); config key models.served.endpoint.api_key_env: the environment "
                              "variable CLSD_TEST_EMBED_KEY is not set;")
    assert message.endswith("Nothing was sent. An endpoint on this machine needs no key; the cost estimate (snakemake "
                            "cost_estimate) needs none.")
    check_api_keys(config, [GENERATE, EMBED], {"CLSD_TEST_LLM_KEY": "sk-a", "CLSD_TEST_EMBED_KEY": "sk-b"})


def snakemake(folder: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(folder), *args]
    environ = {name: value for name, value in os.environ.items() if name != "CLSD_TEST_EMBED_KEY"}
    return subprocess.run(command, capture_output=True, text=True, env=environ, timeout=600)


@pytest.mark.workflow
def test_a_remote_embedding_model_without_its_key_stops_the_run_before_any_job(tmp_path):
    config = {"model_store": str(MODEL_STORE), "embedding_store": str(tmp_path / "vectors.sqlite"),
              "datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
              "models": {"served": SERVED | {"endpoint": SERVED["endpoint"] | {"prices": {"input_per_1k": 0.00002}}}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    run = snakemake(tmp_path)
    terminal = run.stdout + run.stderr
    assert run.returncode != 0
    assert ("config key models.served.endpoint.api_key_env: the environment variable CLSD_TEST_EMBED_KEY is not set; "
            f"{REMOTE} needs its API key there for the jobs of embed_endpoint") in terminal, terminal[-3000:]
    # before any job: nothing parsed, no log, no lock left behind for the next run
    assert not (tmp_path / "results").exists()
    assert not any((tmp_path / ".snakemake/locks").glob("*"))
    estimate = snakemake(tmp_path, "cost_estimate")  # sends nothing: no key needed
    assert estimate.returncode == 0, estimate.stderr[-3000:]
    assert (tmp_path / "results/estimate.md").exists()
