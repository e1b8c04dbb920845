"""Every way a run is stopped keeps what was paid: the real `snakemake` command, with the default profile
(profiles/default), against fault servers on 127.0.0.1 (tests/fault_server.py for the LLM, tests/embedding_server.py
for a served embedding model). Once a paying job is asking, a signal goes to Snakemake's process group (a terminal's
Ctrl-C, `kill -TERM -PGID`, a closed terminal) or to Snakemake's process alone (`kill PID`, `timeout`, a scheduler's
time limit). No request may reach the server after the signal, the run must end soon after it, answers in flight are
stored, the job's run is marked interrupted in its store's ledger, and a rerun sends only what was not answered.

"After the signal" allows DELIVERY_S for the signal to reach the job: a request already on its way is no new one.

Two ways Snakemake may have been started for Ctrl-C: in a terminal's foreground (Snakemake gets the SIGINT too, and
stops), and as a script's background job (`snakemake ... &` in a non-interactive shell: Snakemake ignores SIGINT, its
jobs do not). In the second the interrupted job is the only one that stops, and with `keep-going` Snakemake started the
queued job of the other language and paid for every one of its requests.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import MODEL_STORE, ROOT
from embedding_server import EmbeddingServer
from fault_server import FaultServer

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
SAMPLE = ROOT / "resources/sample/clsd_sample.csv"
MINILM = {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}
LANGUAGES = ("de", "fr")
DELIVERY_S = 0.25  # from the signal to the job's handler, through Snakemake when it is sent to Snakemake alone
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
SERVED = "results/embeddings/served/gen/direct.parquet"


def ignore_sigint() -> None:
    """What a non-interactive shell does to a command it starts with `&`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


STARTS = {"in a terminal": None, "by a script in the background": ignore_sigint}


@pytest.mark.parametrize("start", list(STARTS))
def test_ctrl_c_stops_the_run_with_no_request_after_it(start, tmp_path):
    with FaultServer(latency=0.3) as server:
        config = {
            "model_store": str(MODEL_STORE),
            "generation": {"model": "fault", "base_url": server.base_url, "store": str(tmp_path / "store.sqlite"),
                           "concurrency": 1, "timeout": 10, "answer_format": "numbered"},
            "datasets": {"gen": {"label": "G", "languages": list(LANGUAGES), "source": {"kind": "published_csv", "path": str(SAMPLE)},
                                 "distractors": {"kind": "llm"}}},
            "models": {"minilm": MINILM},
        }
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        targets = [f"results/generation/gen/{lang}.json" for lang in LANGUAGES]
        command = [str(Path(sys.executable).parent / "snakemake"), "--snakefile", str(ROOT / "Snakefile"),
                   "--directory", str(tmp_path), *targets]
        run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                               preexec_fn=STARTS[start], env={**os.environ, "OPENAI_API_KEY": "sk-test"})
        deadline = time.monotonic() + 120
        while len(server.seen) < 2 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run.poll() is None and len(server.seen) >= 2, "the first generation job never asked"
        signalled = time.monotonic()
        os.killpg(run.pid, signal.SIGINT)
        try:
            output, _ = run.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            output, _ = run.communicate()
        seconds = time.monotonic() - signalled
        after = [seen for seen in server.seen if seen.time > signalled]
    logs = [lang for lang in LANGUAGES if (tmp_path / f"results/logs/generate_distractors/gen/{lang}.log").exists()]
    print(f"Ctrl-C ({start}): exit {run.returncode} after {seconds:.1f} s, {len(after)} requests after the signal")
    assert run.returncode != 0, output[-3000:]
    assert len(after) == 0, f"{len(after)} requests after Ctrl-C:\n{output[-3000:]}"
    assert len(logs) == 1, f"generation jobs started: {logs}"
    assert seconds < 30, f"{seconds:.1f} s from Ctrl-C to exit"


# ---- SIGTERM and SIGHUP, to the group or to Snakemake alone: the same stop as Ctrl-C -------------------------------


def send(run: subprocess.Popen, signum: int, to: str) -> None:
    if to == "group":
        os.killpg(run.pid, signum)
    else:
        os.kill(run.pid, signum)


def finish(run: subprocess.Popen) -> str:
    try:
        output, _ = run.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        output, _ = run.communicate()
    return output


def start(folder: Path, *targets: str) -> subprocess.Popen:
    command = [SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"), "--directory", str(folder), *targets]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "OPENAI_API_KEY": "sk-test"})


def wait_for(condition, run: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 180
    while not condition() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert run.poll() is None and condition(), f"{what}:\n{finish(run)[-3000:]}"


def stop(run: subprocess.Popen, signum: int, to: str, requests: list) -> tuple[str, list]:
    """Send `signum` to `to` and wait for the run to end: it must fail within 30 s, with no request among `requests`
    (what the server saw, each with its `time`) arriving after the signal. Returns the output and those requests."""
    signalled = time.monotonic()
    send(run, signum, to)
    output = finish(run)
    seconds = time.monotonic() - signalled
    first = list(requests)
    late = [request for request in first if request.time > signalled + DELIVERY_S]
    print(f"{signal.Signals(signum).name} to {to}: exit {run.returncode} after {seconds:.1f} s, {len(late)} requests late")
    assert run.returncode != 0 and not late and seconds < 30, output[-3000:]
    return output, first


def ledger(path: Path) -> list[tuple[str | None, str | None]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT status, finished_at FROM runs ORDER BY id").fetchall()


def generation_folder(folder: Path, base_url: str) -> Path:
    config = {
        "model_store": str(MODEL_STORE),
        "generation": {"model": "fault", "base_url": base_url, "store": str(folder / "store.sqlite"), "concurrency": 1,
                       "timeout": 10, "answer_format": "numbered"},
        "datasets": {"gen": {"label": "G", "languages": list(LANGUAGES), "source": {"kind": "published_csv", "path": str(SAMPLE)},
                             "distractors": {"kind": "llm"}}},
        "models": {"minilm": MINILM},
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder


# The two ways a signal arrives (through Snakemake's onstart forwarding, or to the job itself), one real run each;
# SIGTERM and SIGHUP take the same handler (clsd.core.stopping), so the served-embedding test below sends SIGHUP.
@pytest.mark.parametrize("signum,to", [(signal.SIGTERM, "snakemake"), (signal.SIGTERM, "group"), (signal.SIGINT, "snakemake")],
                         ids=["SIGTERM to snakemake", "SIGTERM to the group", "SIGINT to snakemake"])
def test_a_stop_signal_during_generation_stores_what_was_asked_and_the_rerun_asks_the_rest(signum, to, tmp_path):
    target = "results/generation/gen/de.json"
    with FaultServer(latency=0.3) as server:
        folder = generation_folder(tmp_path, server.base_url)
        run = start(folder, target)
        wait_for(lambda: len(server.seen) >= 3, run, "the generation job never asked")
        output, first = stop(run, signum, to, server.seen)
        assert not (folder / target).exists()
        with sqlite3.connect(folder / "store.sqlite") as db:
            stored = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        assert stored == len(first), f"{len(first)} requests answered, {stored} stored:\n{output[-3000:]}"
        assert [status for status, _ in ledger(folder / "store.sqlite")] == ["interrupted"]

        rerun = start(folder, target)
        output = finish(rerun)
        assert rerun.returncode == 0, output[-3000:]
        again = {seen.sentence for seen in server.seen[len(first):]} & {seen.sentence for seen in first}
        assert not again, f"asked again: {sorted(again)[:3]}"
        assert [status for status, _ in ledger(folder / "store.sqlite")] == ["interrupted", "done"]


def served_folder(folder: Path, base_url: str) -> Path:
    endpoint = {"base_url": base_url, "inputs_per_request": 4, "concurrency": 2, "timeout": 10}
    config = {
        "model_store": str(MODEL_STORE), "embedding_store": str(folder / "vectors.sqlite"),
        "generation": {"store": str(folder / "store.sqlite")},
        "datasets": {"gen": {"label": "G", "source": {"kind": "published_csv", "path": str(SAMPLE)},
                             "distractors": {"kind": "from_source", "generator": "handwritten"}}},
        "models": {"served": {"name": "served-model", "source": "endpoint", "endpoint": endpoint}},
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder


@pytest.mark.parametrize("signum,to", [(signal.SIGTERM, "snakemake"), (signal.SIGHUP, "snakemake"), (signal.SIGHUP, "group")],
                         ids=["SIGTERM to snakemake", "SIGHUP to snakemake", "SIGHUP to the group"])
def test_a_stop_signal_during_served_embedding_stores_the_answers_in_flight_and_the_rerun_sends_the_rest(signum, to, tmp_path):
    with EmbeddingServer(latency=0.4) as server:
        folder = served_folder(tmp_path, server.base_url)
        run = start(folder, SERVED)
        wait_for(lambda: len(server.asked) >= 4, run, "the embedding job never asked")
        output, first = stop(run, signum, to, server.asked)
        assert not (folder / SERVED).exists()
        sent = {text for asked in first for text in asked.inputs}
        with sqlite3.connect(folder / "vectors.sqlite") as db:
            stored = {text for (text,) in db.execute("SELECT text FROM vectors")}
        assert stored == sent, f"{len(sent)} texts answered, {len(stored)} stored:\n{output[-3000:]}"
        assert [(status, finished is not None) for status, finished in ledger(folder / "vectors.sqlite")] == [("interrupted", True)]

        rerun = start(folder, SERVED)
        output = finish(rerun)
        assert rerun.returncode == 0, output[-3000:]
        again = {text for asked in server.asked[len(first):] for text in asked.inputs}
        assert again and not again & sent
        assert [status for status, _ in ledger(folder / "vectors.sqlite")] == ["interrupted", "done"]
