"""The real local LLM: llama.cpp's llama-server (built by install.sh) with the real Qwen2.5-Coder-1.5B GGUF.

Slots decode requests at once (checked from the server's own timings), speculative decoding drafts and verifies,
Ctrl-C or SIGTERM stop the job and its server, leaving no process behind, and the default config runs end to end
(its JSON answers are four distractors each, its server reports the CPU variant that ran).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from clsd.serving.client import ChatClient
from clsd.generate import llm
from clsd.generate.parse import json_sentences
from clsd.serving.server import LlamaServer, server_program
from clsd.serving.server_variants import this_cpu
from clsd.generate.settings import Settings, response_format
from clsd.generate.store import ResponseStore
from conftest import MODEL_STORE, ROOT, group_alive, llama_server_with_a_faulty_variant

pytestmark = [pytest.mark.slow, pytest.mark.exclusive]
GGUF = MODEL_STORE / "qwen2.5-coder-1.5b-instruct-q4_k_m" / "model.gguf"
TEMPLATE = (ROOT / "resources/prompts/paper-v1.txt").read_text()
SENTENCES = ["Der Stadtrat von Lyon hat am Dienstag den Bau von drei neuen Grundschulen genehmigt.",
             "Die Zentralbank hat ihren Leitzins um 0,25 Prozentpunkte angehoben, um die Inflation zu bremsen."]


@pytest.fixture(autouse=True)
def real_server_and_weights() -> None:
    if not GGUF.is_file():
        pytest.skip(f"local LLM weights not materialised at {GGUF} (run the default workflow, or .ci/run)")
    try:
        server_program()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def ask(base_url: str, sentence: str, max_tokens: int) -> tuple[dict, float, float]:
    """One chat completion straight over HTTP (greedy, the paper's prompt): the body and the client's start and end."""
    content = TEMPLATE.rstrip("\n").replace("{language}", "German").replace("{sentence}", sentence)
    body = {"model": "qwen", "messages": [{"role": "user", "content": content}], "temperature": 0.0, "max_tokens": max_tokens}
    request = urllib.request.Request(f"{base_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    start = time.monotonic()
    with urllib.request.urlopen(request, timeout=300) as response:
        answer = json.load(response)
    return answer, start, time.monotonic()


def two_at_once(slots: int) -> tuple[float, float]:
    """Two requests sent together to a server with `slots` slots: the wall time until both are answered, and the
    sum of the server's own time on each (prompt + decoding, from its `timings`)."""
    answers: list[tuple[dict, float, float]] = []
    with LlamaServer(GGUF, threads=os.cpu_count(), slots=slots, n_ctx=512) as base_url:
        ask(base_url, SENTENCES[0], 4)  # warm up (first-request allocations), not measured
        threads = [threading.Thread(target=lambda s=s: answers.append(ask(base_url, s, 40))) for s in SENTENCES]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    wall = max(end for _, _, end in answers) - min(start for _, start, _ in answers)
    busy = sum(a["timings"]["prompt_ms"] + a["timings"]["predicted_ms"] for a, _, _ in answers) / 1000
    assert all(a["timings"]["predicted_n"] == 40 for a, _, _ in answers)
    return wall, busy


def test_two_slots_decode_two_requests_at_once_and_one_slot_queues_them():
    wall, busy = two_at_once(slots=2)
    # both requests were in the server at the same time: the server's time on them adds up to more than the wall
    assert wall < 0.8 * busy, f"2 slots: {wall:.1f} s wall for {busy:.1f} s of server time"
    wall, busy = two_at_once(slots=1)
    # the control: one slot answers one request after the other
    assert wall >= 0.95 * busy, f"1 slot: {wall:.1f} s wall for {busy:.1f} s of server time"


def greedy_answers(tmp_path: Path, speculative: dict | None) -> tuple[list[str], dict]:
    """The paper prompt's JSON answers for both sentences at temperature 0, on a server with or without drafting."""
    store = ResponseStore(tmp_path / f"{bool(speculative)}.sqlite")
    settings = Settings(model="qwen", template=TEMPLATE, endpoint="gguf:test", temperature=0.0, max_attempts=1, concurrency=1,
                        max_tokens=400, answer_format="json")
    with LlamaServer(GGUF, threads=os.cpu_count(), slots=1, speculative=speculative) as base_url:
        generator = llm.Generator(settings, store, lambda: ChatClient(base_url=base_url, api_key="local", timeout=300, retries=0,
                                                                      requests_per_minute=None))
        _, report = llm.generate(list(enumerate(SENTENCES)), "de", generator, {}, "test")
    texts = [text for (text,) in sqlite3.connect(store.path).execute("SELECT text FROM responses ORDER BY key")]
    return texts, report


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two texts."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def test_speculative_decoding_drafts_from_the_prompt_and_verifies_every_drafted_token(tmp_path):
    """Prompt-lookup drafting on the paper's prompt, whose answers repeat most of the sentence asked about: the server
    drafts and accepts tokens but rejects some (each drafted token is checked against the request's own sampler and
    JSON grammar), the schema still gives four sentences, and greedy answers start as without drafting. They need not
    be equal to the end: a drafted batch is evaluated in one pass, whose floating-point sums differ from token-by-token
    decoding, so a near tie of a small model can go the other way (measured: the second answer of the 0.5B model
    parts at its second sentence's last word)."""
    plain, without = greedy_answers(tmp_path, None)
    drafted, with_drafting = greedy_answers(tmp_path, {"type": "ngram-simple", "lookup": 3, "draft": 16})
    assert without["drafted_tokens"] == 0
    assert 0 < with_drafting["accepted_tokens"] < with_drafting["drafted_tokens"], with_drafting
    assert all(len(json_sentences(text) or []) == 4 for text in drafted), drafted
    first_sentences = [(json_sentences(a) or [""])[0] for a in plain]
    assert [(json_sentences(d) or [""])[0] for d in drafted] == first_sentences
    assert all(common_prefix(a, d) >= len(first_sentences[i]) + 40 for i, (a, d) in enumerate(zip(plain, drafted))), (plain, drafted)


def test_a_script_constrained_schema_keeps_cyrillic_out_of_a_german_answer_the_prompt_asks_for_in_russian():
    """generation.constrain_script on the real server: llama.cpp turns each sentence's pattern into its grammar. A
    prompt that asks for Russian variants of a German sentence gets Cyrillic without the pattern (the control) and
    none with it, every answer still the schema's four strings, each matching its target's pattern."""
    import regex

    from clsd.generate.script_pattern import sentence_pattern

    template = "Translate this {language} sentence into Russian, in Cyrillic letters, four times in other words:\n{sentence}"
    answers = {}
    with LlamaServer(GGUF, threads=os.cpu_count(), slots=1) as base_url:
        client = ChatClient(base_url=base_url, api_key="local", timeout=300, retries=0, requests_per_minute=None)
        for constrain in (False, True):
            settings = Settings(model="qwen", template=template, endpoint="gguf:test", temperature=0.0, max_attempts=1,
                                concurrency=1, max_tokens=300, answer_format="json", constrain_script=constrain)
            messages = llm.messages_for(template, "de", SENTENCES[0])
            params = settings.item_params(SENTENCES[0], "de")
            answers[constrain] = json_sentences(client.complete("qwen", messages, params).text)
    cyrillic = regex.compile(r"\p{Script=Cyrillic}")
    assert answers[False] and any(cyrillic.search(s) for s in answers[False]), answers[False]  # the control
    assert answers[True] is not None and len(answers[True]) == 4, answers[True]
    assert not any(cyrillic.search(s) for s in answers[True]), answers[True]
    assert all(regex.match(sentence_pattern(SENTENCES[0], "de"), s) for s in answers[True]), answers[True]


def worker(store: Path) -> subprocess.Popen:
    """tests/gen_worker.py with the real server (2 slots), in its own session like a Snakemake job."""
    command = [sys.executable, str(ROOT / "tests/gen_worker.py"), "llama", str(store), "12", "2"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def stored(store: Path) -> int:
    try:
        return sqlite3.connect(f"file:{store}?mode=ro", uri=True).execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


@pytest.mark.parametrize("send", [lambda p: os.killpg(p.pid, signal.SIGINT), lambda p: p.send_signal(signal.SIGTERM)],
                         ids=["Ctrl-C: SIGINT to the job and its server", "SIGTERM to the job (Snakemake, SLURM)"])
def test_an_interrupted_job_stops_llama_server_and_leaves_no_process(send, tmp_path):
    store = tmp_path / "store.sqlite"
    process = worker(store)
    deadline = time.monotonic() + 180
    while stored(store) < 1 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stored(store) >= 1, process.communicate()[1][-2000:]
    send(process)  # while the next requests are being decoded
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError("the job was still running 30 s after the signal") from None
    time.sleep(0.5)
    survived = group_alive(process.pid)
    if survived:
        os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == -signal.SIGINT, stderr[-2000:]
    assert not survived, "llama-server outlived its job"
    assert sqlite3.connect(store).execute("SELECT status FROM runs").fetchall() == [("interrupted",)]


def test_the_default_config_runs_offline_end_to_end(tmp_path):
    """The README's first command on the shipped config.yaml (an empty response store, the hub unreachable): the
    local LLM writes the distractors as JSON through llama-server, and Table 2 scores the items. The server is a copy of
    the installed one with a CPU variant that faults (conftest.llama_server_with_a_faulty_variant), passed by this
    machine's self-test as if its fault showed only under the real model: the job falls back to the next variant, says
    so in one line, and the generation report names the variant that ran and the one that faulted."""
    import yaml

    program = llama_server_with_a_faulty_variant(tmp_path / "env", tested=True)
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["generation"] |= {"prompt": str(ROOT / config["generation"]["prompt"]), "store": str(tmp_path / "store.sqlite")}
    config["generation"]["local"]["server"] = str(program)
    config["model_store"] = str(MODEL_STORE)
    for dataset in config["datasets"].values():
        dataset["source"]["path"] = str(ROOT / dataset["source"]["path"])
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                             "--cores", "2"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    stamp = json.loads(program.resolve().with_name("build.json").read_text())
    assert stamp["machines"][this_cpu()]["variants"]["faulty"] == "SIGILL"  # recorded for this machine: never loaded again
    logs = "".join((tmp_path / f"results/logs/generate_distractors/sample/{lang}.log").read_text() for lang in ("de", "fr"))
    assert re.search(r"CPU variant faulty died of SIGILL on this machine; restarting on \w+", logs)
    for lang in ("de", "fr"):
        report = json.loads((tmp_path / f"results/generation/sample/{lang}.json").read_text())
        assert report["answer_format"] == "json" and report["rejects"].get("short_answer", 0) == 0
        assert report["local_server"]["server"] == "llama-server" and report["local_server"]["cpu_variant"] in stamp["variants"]
        assert report["local_server"]["cpu_variants_faulting"]["faulty"] == "SIGILL"
        assert report["closeness_profile"]["reference"].startswith("GPT-4") and report["closeness_profile"]["n"] > 0
        # the server ran as shipped, without drafting (DRY rejects what drafting copies from the prompt)
        assert config["generation"]["local"]["speculative"] == {"type": "none"}
        assert report["local_server"]["speculative"] is None and report["drafted_tokens"] == 0, report["local_server"]
        assert report["generated"] >= 9, report["failed"]  # of 12; the rest are footnoted in Table 2
        # no kept distractor is unrelated to its target, and every sentence written is counted
        assert report["sentences"]["written"] >= 48 and report["sentences"]["kept"] == 4 * report["generated"]
    # every request asked for the JSON schema of the shipped number of candidates, and every answer is exactly that
    # many sentences: never short, never chatter
    candidates = config["generation"]["candidates"]
    rows = sqlite3.connect(tmp_path / "store.sqlite").execute("SELECT text, params FROM responses").fetchall()
    assert len(rows) >= 24 and all(json.loads(params)["response_format"] == response_format(candidates) for _, params in rows)
    # ... with the shipped sampling of the local server (XTC and DRY), which the server took (it refuses a bad value)
    assert all(json.loads(params)["extra_body"] == config["generation"]["local"]["sampling"] for _, params in rows)
    unparsed = [text for text, _ in rows if json_sentences(text, candidates) is None]
    assert not unparsed, unparsed[:2]
    table = (tmp_path / "results/tables/table2.md").read_text()
    assert "EmbeddingGemma-300m" in table and "all-MiniLM-L6-v2 (English)" in table
