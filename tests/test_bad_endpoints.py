"""Bad endpoints, one row each: what the endpoint does → the exact message, or the report's figures.

Everything runs against the fault-injecting OpenAI-compatible server on 127.0.0.1 (tests/fault_server.py), a
stand-in local server process and a real SQLite store. A new failure path is one more row.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
from clsd.serving.client import ChatClient, EndpointError
from clsd.core.errors import InputError
from clsd.generate import forget, llm
from clsd.generate.llm_endpoint import open_endpoint
from clsd.serving.server import LlamaServer
from clsd.generate.settings import Settings
from clsd.generate.store import ResponseStore, Selection
from conftest import ROOT, group_alive
from fault_server import REFUSAL, FaultServer, distractors_for, job_config

TEMPLATE = (ROOT / "resources/prompts/paper-v1.txt").read_text()
KEY = "sk-test-secret-" + "x" * 20
STAND_IN = [sys.executable, str(ROOT / "tests/fault_server.py")]


def sentence(name: str) -> str:
    return f"Der Stadtrat {name} hat am Dienstag den Bau von drei neuen Grundschulen genehmigt."


def client_for(base_url: str, **overrides: Any) -> ChatClient:
    options = {"api_key": KEY, "timeout": 0.5, "retries": 2, "requests_per_minute": None, "backoff_initial": 0.01, "backoff_max": 0.05}
    return ChatClient(base_url=base_url, **options | overrides)


def generator(client: Callable[[], ChatClient], store: ResponseStore, endpoint: str, **options: Any) -> llm.Generator:
    settings = Settings(model="fault", template=TEMPLATE, endpoint=endpoint, max_attempts=3, concurrency=2)
    return llm.Generator(settings, store, client, dataset="d", lang="de", **options)


def closed_port() -> int:
    """A port on 127.0.0.1 that nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---- errors: endpoint behaviour → the exact message ------------------------------------------------


@dataclass(frozen=True)
class ErrorCase:
    id: str
    endpoint: str  # "server": the fault server with `plan`; "closed": a closed port; "dead-local": a local server that exited
    expected: str  # the exact message, {url} standing for the endpoint's base URL
    plan: tuple[str, ...] = ()
    requests: int | None = None  # HTTP requests the fault server saw


HINT_BASE_URL = "check generation.base_url: the API's base URL, e.g. https://api.openai.com/v1"
HINT_KEY = "; check the API key: config key generation.api_key_env names the environment variable it is read from"
HINT_WAIT = ("; config keys generation.timeout (now 0.5 s) and generation.retries (now 2) set how long a request is waited "
             "for and how often it is sent")
ERRORS = [
    ErrorCase("closed port on this machine", "closed", "{url}: connection refused, not retried: nothing listens on this port "
              "of this machine (APIConnectionError); is the server running? generation.base_url names it"),
    ErrorCase("401", "server", "{url}: the endpoint rejected the request with HTTP 401: injected 401" + HINT_KEY, ("401",), requests=1),
    ErrorCase("401 echoing the key", "server",
              "{url}: the endpoint rejected the request with HTTP 401: Incorrect API key provided: <API key>" + HINT_KEY,
              ("401_echo",), requests=1),
    ErrorCase("400", "server", "{url}: the endpoint rejected the request with HTTP 400: injected 400", ("400",), requests=1),
    ErrorCase("500 every time", "server", "{url}: HTTP 500: injected 500 after 3 attempts (InternalServerError)" + HINT_WAIT,
              ("500",) * 3, requests=3),
    ErrorCase("429 every time", "server", "{url}: HTTP 429: slow down after 3 attempts (RateLimitError); config key "
              "generation.requests_per_minute sets how fast requests start, generation.retries (now 2) how often one is sent",
              ("429",) * 3, requests=3),
    # a hanging endpoint is waited for twice, not once per retry
    ErrorCase("no answer", "server", "{url}: no answer within 0.5 s after 2 attempts (APITimeoutError)" + HINT_WAIT,
              ("hang",) * 3, requests=2),
    # a 200 that is no chat completion arrived (and may be billed): asked once more, then the job stops
    ErrorCase("not JSON", "server",
              "{url}: not a chat completion: HTTP 200 with unreadable response: Expecting value: line 1 column 25 (char 24); "
              "2 such answers, not asked again (each may be billed) (JSONDecodeError); " + HINT_BASE_URL,
              ("malformed",) * 3, requests=2),
    ErrorCase("JSON that is no chat completion", "server",
              "{url}: not a chat completion: HTTP 200 with unreadable response: no choices in the response; 2 such answers, "
              "not asked again (each may be billed) (MalformedResponse); " + HINT_BASE_URL, ("not_completion",) * 3, requests=2),
    ErrorCase("an HTML page", "server",
              "{url}: not a chat completion: HTTP 200 with unreadable response: text, not a chat completion object: "
              "'<!doctype html><html><body>Welcome</body></html>'; 2 such answers, not asked again (each may be billed) "
              "(MalformedResponse); " + HINT_BASE_URL, ("html",) * 3, requests=2),
    ErrorCase("local server exited", "dead-local",
              "{url}: the local llama.cpp server exited with code -9; connection refused, not retried (APIConnectionError)"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[case.id for case in ERRORS])
def test_a_failed_request_names_the_endpoint(case: ErrorCase, tmp_path):
    store = ResponseStore(tmp_path / "store.sqlite")
    with ExitStack() as stack:
        if case.endpoint == "closed":
            client = client_for(f"http://127.0.0.1:{closed_port()}/v1")
        elif case.endpoint == "server":
            server = stack.enter_context(FaultServer(plans={"Stadtrat X ": list(case.plan)}, hang_seconds=2.0))
            client = client_for(server.base_url)
        else:  # the local server as the generation job starts it (the endpoint factory), then killed before the first request
            servers: list[LlamaServer] = []

            def start(*args: Any, **kwargs: Any) -> LlamaServer:
                servers.append(LlamaServer(*args, program=STAND_IN, **kwargs))
                return servers[-1]

            (tmp_path / "model.gguf").write_bytes(b"weights")
            config = job_config(tmp_path / "store.sqlite", None, tmp_path / "model.gguf", timeout=5)
            client = stack.enter_context(open_endpoint(config, [], 1, os.devnull, server=start)).client()
            servers[0].process.kill()
            servers[0].process.wait()
        start_time = time.monotonic()
        with pytest.raises(EndpointError) as raised:
            llm.generate([(0, sentence("X"))], "de", generator(lambda: client, store, "e"), {}, "llm:fault")
        seconds = time.monotonic() - start_time
        assert str(raised.value) == case.expected.format(url=client.url)
        assert KEY not in str(raised.value)
        if case.requests is not None:
            assert len(server.seen) == case.requests
    assert store.count() == 0
    assert seconds < 5  # the dead local server: no backoff against it (6 retries take ~40 s)


def test_a_server_on_this_machine_needs_no_api_key(tmp_path, monkeypatch):
    monkeypatch.delenv("CLSD_TEST_UNSET_KEY", raising=False)
    with FaultServer() as server:
        config = job_config(tmp_path / "store.sqlite", server.base_url, api_key_env="CLSD_TEST_UNSET_KEY")
        with open_endpoint(config, [], 1, os.devnull) as endpoint:
            table, _ = llm.generate([(0, sentence("X"))], "de", generator(endpoint.client, endpoint.store, endpoint.id), {}, "llm:fault")
    assert table.height == 4 and [seen.authorization for seen in server.seen] == ["Bearer local"]


# ---- answers and resumes: endpoint behaviour → the report's figures ---------------------------------


@dataclass
class Scenario:
    """Generation runs against one fault server and one store; `runs` records each run's report."""

    server: FaultServer
    store: ResponseStore
    items: list[tuple[int, str]] = field(default_factory=lambda: [(0, sentence("X")), (1, sentence("Y"))])
    runs: list[dict[str, Any]] = field(default_factory=list)

    def run(self, **options: Any) -> dict[str, Any]:
        gen = generator(lambda: client_for(self.server.base_url), self.store, self.server.base_url,
                        run=self.store.start_run("d", "de", self.server.base_url, "fault"), **options)
        table, report = llm.generate(self.items, "de", gen, {"prompt_per_1k": 1.0, "completion_per_1k": 1.0}, "llm:fault")
        self.runs.append(report | {"texts": table.filter(table["id"] == 0)["text"].to_list()})
        return report


def refusals_then_fixed_then_forget(scenario: Scenario) -> dict[str, Any]:
    scenario.run()  # X gets three refusals (HTTP 200), Y four distractors
    replay = scenario.run()  # the endpoint is fixed, but every refusal is replayed from the store
    assert replay["new_responses"] == 0 and replay["failed"] == scenario.runs[0]["failed"]
    assert scenario.runs[0]["failed_on_replayed_answers"] == [] and replay["failed_on_replayed_answers"] == [0]
    forgotten = forget.forget(scenario.store, Selection(dataset="d"))
    assert [r.text for r in forgotten.rows] == [REFUSAL] * 3
    scenario.run()
    return {"forgotten": len(forgotten.rows)}


def refusals_then_fixed_with_reask(scenario: Scenario) -> dict[str, Any]:
    scenario.run()
    scenario.run(reask_unusable=True)
    again = scenario.run(reask_unusable=True)  # now usable: nothing is asked again
    return {"second run re-asked": scenario.runs[1]["reasked_unusable"], "third run's new responses": again["new_responses"]}


def a_store_from_before_usability_then_fixed(scenario: Scenario) -> dict[str, Any]:
    scenario.run()
    scenario.store.close()
    db = sqlite3.connect(scenario.store.path)  # back to the previous schema: no usability, asker, superseded or runs
    for statement in ("ALTER TABLE responses DROP COLUMN usable", "ALTER TABLE responses DROP COLUMN dataset",
                      "ALTER TABLE responses DROP COLUMN lang", "DROP TABLE superseded", "DROP TABLE runs"):
        db.execute(statement)
    db.commit()
    db.close()
    scenario.store = ResponseStore(scenario.store.path)  # migrated in place
    before = forget.forget(scenario.store, Selection(dataset="d"))
    scenario.run()  # replays every answer (no request) and decides their usability
    forgotten = forget.forget(scenario.store, Selection(dataset="d"))
    scenario.run()
    return {"before a replay": (len(before.rows), before.undecided), "forgotten": len(forgotten.rows)}


SCENARIOS = [
    # id, plan of sentence X, scenario, expected: last report's fields, then the scenario's own figures
    ("refusals, endpoint fixed, forget, rerun", ["refusal"] * 3, refusals_then_fixed_then_forget,
     {"failed": [], "new_responses": 1, "reasked_unusable": 0, "cache_hits": 1,
      "all_runs": {"runs": 3, "unfinished_runs": 0, "new_responses": 5, "http_requests": 5, "new_prompt_tokens": 250,
                   "new_completion_tokens": 200, "estimated_cost": 0.45},
      "forgotten": 3, "superseded": 3, "responses": 2}),
    ("refusals, endpoint fixed, reask_unusable", ["refusal"] * 3, refusals_then_fixed_with_reask,
     {"failed": [], "new_responses": 0, "reasked_unusable": 0, "cache_hits": 2,
      "all_runs": {"runs": 3, "unfinished_runs": 0, "new_responses": 5, "http_requests": 5, "new_prompt_tokens": 250,
                   "new_completion_tokens": 200, "estimated_cost": 0.45},
      "second run re-asked": 1, "third run's new responses": 0, "superseded": 1, "responses": 4}),
    ("a store from before usability was recorded", ["refusal"] * 3, a_store_from_before_usability_then_fixed,
     {"failed": [], "new_responses": 1, "reasked_unusable": 0, "cache_hits": 1,
      "all_runs": {"runs": 2, "unfinished_runs": 0, "new_responses": 1, "http_requests": 1, "new_prompt_tokens": 50,
                   "new_completion_tokens": 40, "estimated_cost": pytest.approx(0.09)},
      "before a replay": (0, 4), "forgotten": 3, "superseded": 3, "responses": 2}),
]


@pytest.mark.parametrize("plan, scenario, expected", [row[1:] for row in SCENARIOS], ids=[row[0] for row in SCENARIOS])
def test_unusable_answers_can_be_asked_again_and_every_run_is_paid_for(plan, scenario, expected, tmp_path):
    with FaultServer(plans={"Stadtrat X ": list(plan)}) as server:
        bench = Scenario(server, ResponseStore(tmp_path / "store.sqlite"))
        own = scenario(bench)
        first, last = bench.runs[0], bench.runs[-1]
        assert first["failed"] == [{"id": 0, "lang": "de", "rejected": {"refusal": 3},
                                    "reason": "0 valid distractors after 3 attempts (3 refused: “I'm sorry, but I can't "
                                              "help with creating …”)"}]
        assert last["texts"] == distractors_for(sentence("X"), "German")
        db = sqlite3.connect(tmp_path / "store.sqlite")
        figures = {key: last[key] for key in ("failed", "new_responses", "reasked_unusable", "cache_hits", "all_runs")} | own | {
            "superseded": db.execute("SELECT COUNT(*) FROM superseded").fetchone()[0],
            "responses": db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]}
        assert figures == expected
        # nothing usable was ever superseded, and every stored answer knows whether it was usable
        assert db.execute("SELECT COUNT(*) FROM superseded WHERE usable != 0").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM responses WHERE usable IS NULL OR dataset IS NULL").fetchone()[0] == 0


#: A generation job's script as far as its terminal goes: its log (clsd.core.logs), then a run (argv: store, log, base URL).
REPLAY = """
import sys
from types import SimpleNamespace
from clsd.core import logs
from clsd.generate.store import ResponseStore
from test_bad_endpoints import Scenario

logs.to_file(sys.argv[2])
Scenario(SimpleNamespace(base_url=sys.argv[3]), ResponseStore(sys.argv[1])).run()
"""


def test_a_run_failing_on_replayed_refusals_says_so_in_the_terminal(tmp_path):
    log = tmp_path / "results/logs/generate_distractors/d/de.log"
    with FaultServer(plans={"Stadtrat X ": ["refusal"] * 3}) as server:
        Scenario(server, ResponseStore(tmp_path / "store.sqlite")).run()
        job = subprocess.run([sys.executable, "-c", REPLAY, str(tmp_path / "store.sqlite"), str(log), server.base_url],
                             cwd=ROOT / "tests", capture_output=True, text=True, timeout=120)
        assert len(server.seen) == 4  # the rerun asked nothing: the refusals were replayed
    assert job.returncode == 0, job.stderr[-3000:]
    terminal = [line for line in job.stderr.splitlines() if line.startswith("WARNING generate_distractors/d/de: ")]
    assert terminal[0] == ("WARNING generate_distractors/d/de: 1 of 2 items failed: 1 × 0 valid distractors after 3 attempts "
                           "(3 refused: “I'm sorry, but I can't help with creating …”)")
    assert "failed on answers replayed from the response store" in terminal[1]
    assert "clsd-forget --store" in terminal[1] and "generation.reask_unusable: true" in terminal[1]
    assert "generate de" not in job.stderr  # the progress bar stays in the log
    assert terminal[1].split(": ", 1)[1] in log.read_text(encoding="utf-8")


# ---- the job is killed or interrupted: signal → how fast it stops, what it paid --------------------


def worker(store: Path, n: int, base_url: str = "local", latency: float = 0.3) -> subprocess.Popen:
    """tests/gen_worker.py in its own session (its own process group, like a Snakemake job with its server)."""
    command = [sys.executable, str(ROOT / "tests/gen_worker.py"), base_url, str(store), str(n), "2", str(latency)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def wait_for_rows(store: Path, rows: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if sqlite3.connect(f"file:{store}?mode=ro", uri=True).execute("SELECT COUNT(*) FROM responses").fetchone()[0] >= rows:
                return
        except sqlite3.OperationalError:  # the worker is still creating the store
            pass
        time.sleep(0.05)
    raise AssertionError(f"the worker stored fewer than {rows} responses: {process.communicate()[1][-2000:]}")


INTERRUPTS = [
    # id, how the signal is sent, the most seconds from signal to exit (the old code: ~40 s of retries for SIGINT;
    # for SIGTERM it died at once but left the local server running)
    ("Ctrl-C: SIGINT to the job and its server", lambda p: os.killpg(p.pid, signal.SIGINT), 5.0),
    ("SIGTERM to the job (Snakemake, SLURM)", lambda p: p.send_signal(signal.SIGTERM), 5.0),
]


@pytest.mark.parametrize("send, limit", [row[1:] for row in INTERRUPTS], ids=[row[0] for row in INTERRUPTS])
def test_an_interrupted_local_run_stops_at_once_and_stops_its_server(send, limit, tmp_path):
    store = tmp_path / "store.sqlite"
    process = worker(store, 40)
    wait_for_rows(store, 4, process)
    start = time.monotonic()
    send(process)
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError("the interrupted job was still running 30 s after the signal") from None
    seconds = time.monotonic() - start
    survived = group_alive(process.pid)
    if survived:
        os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == -signal.SIGINT, stderr[-2000:]  # KeyboardInterrupt, whichever the signal
    assert seconds < limit, f"{seconds:.1f} s from signal to exit"
    assert not survived, "the local server outlived its job"
    db = sqlite3.connect(store)
    assert db.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]
    assert db.execute("SELECT COUNT(*) = COUNT(DISTINCT key) FROM responses").fetchone()[0] == 1


def test_a_resume_after_kill_9_reports_what_both_runs_paid(tmp_path):
    store = tmp_path / "store.sqlite"
    n = 12
    with FaultServer(latency=0.2) as server:
        process = worker(store, n, server.base_url)
        wait_for_rows(store, 4, process)
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        paid_before = sqlite3.connect(store).execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        resumed = subprocess.run([sys.executable, str(ROOT / "tests/gen_worker.py"), server.base_url, str(store), str(n), "2"],
                                 cwd=ROOT, capture_output=True, text=True, check=True)
        report = json.loads(resumed.stdout)
        assert report["new_responses"] == n - paid_before and report["rows"] == 4 * n
        assert report["all_runs"] == {"runs": 2, "unfinished_runs": 1, "new_responses": n, "http_requests": n - paid_before,
                                      "new_prompt_tokens": 50 * n, "new_completion_tokens": 40 * n,
                                      "estimated_cost": pytest.approx(n * 90 / 1000)}


# ---- the forget command -----------------------------------------------------------------------------


def test_forget_command_dry_run_then_forget_never_usable_answers(tmp_path, caplog):
    path = tmp_path / "store.sqlite"
    with FaultServer(plans={"Stadtrat X ": ["refusal"] * 3}) as server:
        Scenario(server, ResponseStore(path)).run()

    def command(*args: str) -> list[str]:
        caplog.clear()
        with caplog.at_level("INFO", logger="clsd.generate.forget"):
            assert forget.main(["--store", str(path), *args]) == 0
        return [r.getMessage() for r in caplog.records if r.name == "clsd.generate.forget"]

    assert command("--dataset", "d", "--lang", "de", "--dry-run") == [
        "would forget 3 unusable answer(s)", f"  3 × dataset d, lang de, model fault, endpoint {server.base_url}: e.g. {REFUSAL!r}"]
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM superseded").fetchone()[0] == 0
    assert command("--dataset", "other") == ["forgot 0 unusable answer(s)"]
    assert command("--endpoint", server.base_url + "/")[0] == "forgot 3 unusable answer(s)"
    db = sqlite3.connect(path)
    assert db.execute("SELECT usable, COUNT(*) FROM responses GROUP BY usable").fetchall() == [(1, 1)]
    assert db.execute("SELECT reason, COUNT(*) FROM superseded GROUP BY reason").fetchall() == [("forget", 3)]


def test_forget_names_a_missing_store(tmp_path):
    with pytest.raises(InputError, match=rf"^file {tmp_path / 'none.sqlite'}: no response store here \(generation.store\)$"):
        forget.main(["--store", str(tmp_path / "none.sqlite")])
