"""Ctrl-C means stop: the real `snakemake` command, with the default profile (profiles/default), runs two
generation jobs (German and French) against the fault server on 127.0.0.1 (tests/fault_server.py); once the first
job is asking, SIGINT goes to Snakemake's process group, as a terminal's Ctrl-C does. No request may reach the
server after the signal, and the run must end soon after it.

Two ways Snakemake may have been started: in a terminal's foreground (Snakemake gets the SIGINT too, and stops), and
as a script's background job (`snakemake ... &` in a non-interactive shell: Snakemake ignores SIGINT, its jobs do
not). In the second the interrupted job is the only one that stops, and with `keep-going` Snakemake started the
queued job of the other language and paid for every one of its requests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import MODEL_STORE, ROOT
from fault_server import FaultServer

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
SAMPLE = ROOT / "resources/sample/clsd_sample.csv"
MINILM = {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}
LANGUAGES = ("de", "fr")


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
