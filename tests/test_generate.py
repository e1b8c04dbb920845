"""LLM generation against a real fault-injecting HTTP server on 127.0.0.1, and a real local LLM when present."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from typing import Any

import pytest
from clsd.serving.client import ChatClient, Interrupted, RequestRejected
from clsd.core.detect import detect
from clsd.generate import llm, parse, rules_based
from clsd.generate.llm_endpoint import open_endpoint
from clsd.serving.server import LlamaServer
from clsd.generate.settings import Settings, generation_settings, request_settings
from clsd.generate.store import ResponseStore, request_key
from clsd.validate.judge import Judge, judge_request_settings, judge_settings
from clsd.validate.validator import Validator
from conftest import ROOT
from fault_server import FaultServer, broken, distractors_for, fronted, job_config

TEMPLATE = (ROOT / "resources/prompts/paper-v1.txt").read_text()


def generator(server: FaultServer, store: ResponseStore, *, timeout: float = 3.0, attempts: int = 3, concurrency: int = 4,
              endpoint: str | None = None) -> llm.Generator:
    settings = Settings(model="fault", template=TEMPLATE, endpoint=endpoint or server.base_url, max_attempts=attempts,
                            concurrency=concurrency)
    return llm.Generator(settings, store, lambda: ChatClient(base_url=server.base_url, api_key="test-key", timeout=timeout,
                                                             retries=4, requests_per_minute=None, backoff_initial=0.05, backoff_max=0.2))


SENTENCES = {
    "A": ("429", "ok"), "B": ("500", "500", "ok"), "C": ("hang", "ok"), "D": ("malformed", "ok"),
    "E": ("three", "ok"), "F": ("preamble",), "G": ("wrong_language",) * 3, "H": ("ok",),
}


def item(letter: str) -> str:
    return f"Der Stadtrat {letter} hat am Dienstag den Bau von drei neuen Grundschulen genehmigt."


def test_faults_cost_exactly_the_minimum_requests_and_a_rerun_costs_none(tmp_path):
    plans = {f"Stadtrat {letter} ": list(steps) for letter, steps in SENTENCES.items()}
    items = [(i, item(letter)) for i, letter in enumerate(SENTENCES)]
    with FaultServer(plans=plans, hang_seconds=8.0, retry_after="1") as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        table, report = llm.generate(items, "de", generator(server, store), {"prompt_per_1k": 0.03, "completion_per_1k": 0.06}, "llm:fault")
        minimum = sum(len(steps) for steps in SENTENCES.values())
        assert len(server.seen) == minimum == 16
        # every item generated or failed with its reason
        assert sorted(table["id"].unique()) == [0, 1, 2, 3, 4, 5, 7]
        assert report["failed"] == [{"id": 6, "lang": "de", "reason": "0 valid distractors after 3 attempts",
                                     "rejected": {"wrong_language": 12, "short_answer": 3}}]
        assert report["rejects"]["wrong_language"] == 12
        assert report["rejects"]["short_answer"] == 4  # E's three-item answer and G's three English ones
        assert report["new_responses"] == 11  # transport failures store nothing; 11 answers were paid for
        assert report["retries"] == 5 and report["http_requests"] == 16
        assert report["estimated_cost"] == pytest.approx(11 * (50 * 0.03 + 40 * 0.06) / 1000)
        # Retry-After honoured: the retry of A came a second after the 429
        a = server.requests_for("Stadtrat A ")
        assert a[1].time - a[0].time >= 0.95
        # E: three valid items from attempt 0, the fourth from attempt 1
        e = table.filter(table["id"] == 4)["text"].to_list()
        assert e == distractors_for(item("E"), "German")
        store.close()

        seen_before = len(server.seen)
        store = ResponseStore(tmp_path / "store.sqlite")
        again, second = llm.generate(items, "de", generator(server, store), {}, "llm:fault")
        assert len(server.seen) == seen_before  # zero requests
        assert second["http_requests"] == 0 and second["cache_hits"] == 11
        assert again.equals(table)


def test_client_errors_are_not_retried(tmp_path):
    for status in ("400", "401"):
        with FaultServer(plans={"Stadtrat": [status]}) as server:
            store = ResponseStore(tmp_path / f"{status}.sqlite")
            with pytest.raises(RequestRejected, match=f"HTTP {status}"):
                llm.generate([(0, item("X"))], "de", generator(server, store), {}, "llm:fault")
            assert len(server.seen) == 1 and store.count() == 0


def test_kill_9_mid_run_loses_nothing_and_duplicates_nothing(tmp_path):
    store_path = tmp_path / "store.sqlite"
    n, concurrency = 40, 4
    with FaultServer(latency=0.2) as server:
        worker = [sys.executable, str(ROOT / "tests/gen_worker.py"), server.base_url, str(store_path), str(n), str(concurrency)]
        process = subprocess.Popen(worker, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(server.seen) < 12 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        requests_at_kill = len(server.seen)
        db = sqlite3.connect(store_path)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM responses").fetchone()
        db.close()
        assert stored[0] == stored[1] and 0 < stored[0] < n
        assert requests_at_kill <= stored[0] + concurrency  # at most the in-flight requests were lost

        finished = json.loads(subprocess.run(worker, cwd=ROOT, capture_output=True, text=True, check=True).stdout)
        new_responses, rows = finished["new_responses"], finished["rows"]
        assert rows == 4 * n and new_responses == n - stored[0]
        assert len(server.seen) == requests_at_kill + new_responses  # only missing requests were re-asked
        assert len(server.seen) <= n + concurrency
    db = sqlite3.connect(store_path)
    assert db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM responses").fetchone() == (n, n)


def test_identical_requests_in_flight_are_sent_once(tmp_path):
    sentence = item("R")  # the published sets repeat sentences: three items, one sentence
    with FaultServer(latency=0.5) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        table, report = llm.generate([(0, sentence), (1, item("S")), (2, sentence), (3, sentence)], "de",
                                     generator(server, store, concurrency=4), {}, "llm:fault")
        assert len(server.requests_for("Stadtrat R ")) == 1 and len(server.seen) == 2
        assert report["new_responses"] == 2 and report["shared_in_flight"] == 2
        texts = {i: table.filter(table["id"] == i)["text"].to_list() for i in (0, 2, 3)}
        assert texts[0] == texts[2] == texts[3] == distractors_for(sentence, "German")


def test_a_reordered_distractor_is_re_asked_and_recorded(tmp_path):
    sentence = item("Q")
    with FaultServer(plans={"Stadtrat Q ": ["reorder"]}) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        gen = generator(server, store)
        gen.validator = Validator("de")
        table, report = llm.generate([(0, sentence)], "de", gen, {}, "llm:fault")
        assert len(server.seen) == 2  # the reorder cost one more request
        assert table["text"].to_list() == distractors_for(sentence, "German")[1:] + distractors_for(sentence, "German")[:1]
        # the re-ask repeats the three distractors already kept: repeats of the item, caught by generation's own filter
        assert report["rejects"] == {"reorder": 1, "duplicate": 3} and report["failed"] == []
        assert report["rejected"] == [{"id": 0, "lang": "de", "text": fronted(sentence), "reason": "reorder", "caught_by": "validation"}] + [
            {"id": 0, "lang": "de", "text": text, "reason": "duplicate", "caught_by": "generation"}
            for text in distractors_for(sentence, "German")[1:]]
        # every sentence written is counted: 4 kept, the reorder and the 3 repeats rejected
        assert report["sentences"] == {"written": 8, "valid": 4, "kept": 4, "unused": 0, "share_valid": 0.5, "mended": 0}
        # without the rules, the reorder is accepted from the stored answer and nothing is asked
        again, _ = llm.generate([(0, sentence)], "de", generator(server, store), {}, "llm:fault")
        assert len(server.seen) == 2 and again["text"][0] == fronted(sentence)


def test_a_broken_copy_of_a_target_word_is_put_back_only_with_mend_and_listed(tmp_path):
    """generation.mend_broken_words: a sentence whose only unknown word is a target word broken while copied
    (Grundschuulen) is kept as mended, in its place, and listed with what was written; without it, the same stored
    answer's sentence holds a capitalised word nothing attests (non_word_suspect), kept only as the last resort."""
    sentence = item("M")
    written = broken(distractors_for(sentence, "German")[0])
    with FaultServer(plans={"Stadtrat M ": ["broken", "ok"]}) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        gen = generator(server, store)
        gen.settings = replace(gen.settings, mend_broken_words=True)
        gen.validator = Validator("de")
        table, report = llm.generate([(0, sentence)], "de", gen, {}, "llm:fault")
        assert len(server.seen) == 1 and "Grundschuulen" in written
        assert table["text"].to_list() == distractors_for(sentence, "German")
        assert report["mended"] == [{"id": 0, "lang": "de", "text": distractors_for(sentence, "German")[0],
                                     "written": written, "mends": "Grundschuulen → Grundschulen"}]
        assert report["rejects"] == {} and report["sentences"]["mended"] == 1
        plain = generator(server, store)
        plain.validator = Validator("de")
        again, unmended = llm.generate([(0, sentence)], "de", plain, {}, "llm:fault")
        assert len(server.seen) == 1 and unmended["mended"] == [] and unmended["sentences"]["mended"] == 0
        assert again["text"].to_list() == distractors_for(sentence, "German")[1:] + [written]


def test_a_mended_sentence_equal_to_another_of_its_answer_is_a_duplicate(tmp_path):
    """The answer holds a variant broken while copied and, after it, the variant as it should read: mended, the first
    is the second, so the item keeps it once and asks again for its fourth."""
    sentence = item("W")
    variants = distractors_for(sentence, "German")
    with FaultServer(plans={"Stadtrat W ": ["broken_and_whole", "ok"]}) as server:
        gen = generator(server, ResponseStore(tmp_path / "store.sqlite"))
        gen.settings = replace(gen.settings, mend_broken_words=True)
        gen.validator = Validator("de")
        table, report = llm.generate([(0, sentence)], "de", gen, {}, "llm:fault")
    assert len(server.seen) == 2 and table["text"].to_list() == variants
    assert report["rejects"] == {"duplicate": 4} and report["sentences"]["mended"] == 1
    assert [row["text"] for row in report["mended"]] == [variants[0]]


def test_an_answer_cut_at_max_tokens_never_gives_its_last_sentence(tmp_path, caplog):
    """Scripts that cost many tokens per word (Bengali, Hindi) hit max_tokens: the cut-off fourth sentence is
    rejected as `truncated` and asked again, never scored as a distractor."""
    sentence = item("T")
    with FaultServer(plans={"Stadtrat T ": ["length"]}) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        table, report = llm.generate([(0, sentence)], "de", generator(server, store), {}, "llm:fault")
        assert len(server.seen) == 2
        assert table["text"].to_list() == distractors_for(sentence, "German")
        # the re-ask repeats the three sentences kept from the cut answer: repeats, counted as written
        assert report["rejects"] == {"truncated": 1, "short_answer": 1, "duplicate": 3}
        assert report["sentences"] == {"written": 8, "valid": 4, "kept": 4, "unused": 0, "share_valid": 0.5, "mended": 0}
        assert "cut at max_tokens=512" in caplog.text
        assert parse.parse_answer("1. Eins zwei drei.\n2. Vier fünf se", sentence, "de", truncated=True).rejected == [
            ("Vier fünf se", "truncated")]


def test_judged_paraphrases_are_re_asked_and_verdicts_come_from_the_store(tmp_path):
    sentence = item("J")
    template = (ROOT / "resources/prompts/judge-v2.txt").read_text()

    def run(server: FaultServer, store: ResponseStore) -> tuple:
        gen = generator(server, store)
        judge = llm.Generator(judge_settings({"model": "fault", "seed": None, "concurrency": 4}, template, server.base_url),
                              store, lambda: gen.client)
        gen.validator = Validator("de", judge=Judge(judge, template, "de"))
        return llm.generate([(0, sentence)], "de", gen, {"prompt_per_1k": 1.0, "completion_per_1k": 1.0}, "llm:fault", judge)

    with FaultServer(equivalent=("heute",)) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        table, report = run(server, store)
        judged = [s for s in server.seen if s.behaviour == "judge"]
        # attempt 0: four judged, "heute" equivalent; attempts 1 and 2 answer the same: only "heute" is judged
        # again (from the store), the three kept ones are duplicates
        assert len(judged) == 4 and len(server.seen) == 4 + 3
        # each re-ask repeats the three distractors already kept: repeats, counted with everything written
        assert report["rejects"] == {"judged_equivalent": 3, "duplicate": 6}
        assert report["failed"] == [{"id": 0, "lang": "de", "reason": "3 valid distractors after 3 attempts", "rejected": {"judged_equivalent": 3, "duplicate": 6}}]
        assert report["judge"]["new_responses"] == 4 and report["judge"]["cache_hits"] == 2
        assert report["estimated_cost"] == pytest.approx((3 + 4) * 90 / 1000)  # generation and judge tokens
        stored = [json.loads(row[0]) for row in sqlite3.connect(tmp_path / "store.sqlite").execute("SELECT params FROM responses")]
        assert sorted(p["temperature"] for p in stored) == [0.0] * 4 + [1.0] * 3
        seen = len(server.seen)
        again, second = run(server, store)
        assert len(server.seen) == seen and second["judge"]["new_responses"] == 0 and again.equals(table)


def test_the_endpoint_is_part_of_the_request_key(tmp_path):
    """The same model name behind another endpoint (or another GGUF file) is asked again, not answered from the store."""
    with FaultServer() as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        for endpoint in ("https://api.example.org/v1", "gguf:" + "a" * 64, "gguf:" + "b" * 64, "gguf:" + "a" * 64):
            llm.generate([(0, item("K"))], "de", generator(server, store, endpoint=endpoint), {}, "llm:fault")
        assert len(server.seen) == 3 and store.count() == 3


def test_a_store_from_before_endpoint_keys_opens_and_its_rows_are_not_reused(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, messages TEXT NOT NULL, params TEXT NOT NULL,"
               " attempt INTEGER NOT NULL, text TEXT NOT NULL, finish_reason TEXT, prompt_tokens INTEGER, completion_tokens INTEGER,"
               " latency_s REAL, created_at TEXT NOT NULL)")
    db.execute("INSERT INTO responses VALUES ('k0', 'fault', '[]', '{}', 0, '1. x', 'stop', 1, 1, 0.1, '2026-01-01')")
    db.commit()
    db.close()
    store = ResponseStore(path)
    assert store.count() == 1 and store.unkeyed() == 1
    with FaultServer() as server:
        llm.generate([(0, item("L"))], "de", generator(server, store), {}, "llm:fault")
        assert len(server.seen) == 1
    assert store.count() == 2 and store.unkeyed() == 1


# ---- one endpoint factory for every job; what generation and the judge depend on --------------------


JUDGE_TEMPLATE = (ROOT / "resources/prompts/judge-v2.txt").read_text()


def test_the_endpoint_factory_connects_on_first_need_and_closes_everything(tmp_path):
    """open_endpoint as the generate job uses it, with a stand-in local server: the server starts on the first
    request only and generation and judge share it; the run is recorded; on exit nothing is contacted any more,
    the server is stopped, the store closed and SIGTERM handled as before. An error kills the server at once and
    leaves the store open for answers still in flight."""
    servers: list[LlamaServer] = []

    def start(*args: Any, **kwargs: Any) -> LlamaServer:
        servers.append(LlamaServer(*args, program=[sys.executable, str(ROOT / "tests/fault_server.py")], **kwargs))
        return servers[-1]

    (tmp_path / "model.gguf").write_bytes(b"weights")
    config = job_config(tmp_path / "store.sqlite", None, tmp_path / "model.gguf")
    sigterm = signal.getsignal(signal.SIGTERM)

    def job(judge_template: str) -> tuple[Any, dict[str, Any]]:
        with open_endpoint(config, [], 1, tmp_path / "server.log", server=start) as endpoint:
            assert signal.getsignal(signal.SIGTERM) is not sigterm
            run = endpoint.start_run("d", "de")
            judge = Judge.asking(endpoint, judge_template, "de", dataset="d", run=run)
            settings = generation_settings(config["generation"], TEMPLATE, endpoint.id)
            gen = endpoint.generator(settings, Validator("de", judge=judge), dataset="d", lang="de", run=run)
            _, report = llm.generate([(0, item("F"))], "de", gen, {}, "llm:fault", judge.generator)
        return endpoint, report

    endpoint, first = job(JUDGE_TEMPLATE)
    assert endpoint.id == "gguf:" + hashlib.sha256(b"weights").hexdigest()
    assert len(servers) == 1 and servers[0].exit_code() is not None
    assert first["new_responses"] == 1 and first["judge"]["new_responses"] == 4 and first["http_requests"] == 5
    assert signal.getsignal(signal.SIGTERM) is sigterm
    with pytest.raises(Interrupted):
        endpoint.client()
    with pytest.raises(sqlite3.ProgrammingError):
        endpoint.store.count()

    _, second = job(JUDGE_TEMPLATE)  # every answer stored: no server is started
    assert len(servers) == 1 and second["http_requests"] == 0 and second["judge"]["cache_hits"] == 4
    # a new judge prompt: only the judge asks, through the server it starts, and its requests are counted
    new_prompt = JUDGE_TEMPLATE.replace("Answer with one digit:", "Reply with one digit:")
    assert new_prompt != JUDGE_TEMPLATE
    _, third = job(new_prompt)
    assert len(servers) == 2 and third["new_responses"] == 0 and third["http_requests"] == 4
    runs = sqlite3.connect(tmp_path / "store.sqlite").execute("SELECT status, new_responses, http_requests FROM runs").fetchall()
    assert runs == [("done", 5, 5), ("done", 0, 0), ("done", 4, 4)]

    with pytest.raises(KeyboardInterrupt), open_endpoint(config, [], 1, os.devnull, server=start) as endpoint:
        endpoint.client()
        raise KeyboardInterrupt
    assert servers[-1].exit_code() == -signal.SIGKILL
    assert endpoint.store.count() == 9
    endpoint.store.close()


def test_request_settings_are_exactly_what_requests_depend_on(tmp_path):
    """The rules' params: a changed prompt path, price, store, GGUF path, recipe, context size or operational
    setting reruns nothing; whatever a request or its key carries does. The judge does not depend on the
    generation prompt, temperature or attempts."""
    base = job_config(tmp_path / "store.sqlite", "https://api.example.org/v1")["generation"]

    def changed(**edits: Any) -> dict[str, Any]:
        return {**base, **edits}

    unchanged = [changed(prompt="elsewhere/prompt.txt"), changed(prices={"prompt_per_1k": 1.0, "completion_per_1k": 2.0}),
                 changed(store="/elsewhere/store.sqlite"), changed(local={"gguf": "/elsewhere/model.gguf", "recipe": "other", "n_ctx": 4096}),
                 changed(api_key_env="OTHER_KEY"), changed(timeout=5), changed(retries=0), changed(requests_per_minute=10),
                 changed(concurrency=16), changed(base_url="https://api.example.org/v1/")]
    assert all(request_settings(generation) == request_settings(base) for generation in unchanged)
    rerun = [changed(model="other"), changed(base_url="https://other.example.org/v1"), changed(base_url=None),
             changed(temperature=0.5), changed(top_p=0.9), changed(max_tokens=256), changed(seed=7), changed(max_attempts=5),
             changed(reask_unusable=True), changed(mend_broken_words=not base["mend_broken_words"]),
             changed(fallbacks_wait=not base["fallbacks_wait"]), changed(constrain_script=not base["constrain_script"])]
    assert all(request_settings(generation) != request_settings(base) for generation in rerun)
    # what is sent with every request is in the params, as sent
    sent = generation_settings(changed(seed=7), TEMPLATE, "e")
    assert request_settings(changed(seed=7)).items() >= (sent.sampling() | {"model": sent.model}).items()

    judge_unchanged = unchanged + [changed(temperature=0.5), changed(top_p=0.9), changed(max_tokens=256), changed(max_attempts=5),
                                   changed(reask_unusable=True)]
    assert all(judge_request_settings(generation) == judge_request_settings(base) for generation in judge_unchanged)
    judge_rerun = [changed(model="other"), changed(base_url="https://other.example.org/v1"), changed(base_url=None), changed(seed=7)]
    assert all(judge_request_settings(generation) != judge_request_settings(base) for generation in judge_rerun)
    for per in ("item", "distractor"):
        judged = judge_settings(base, JUDGE_TEMPLATE, "e", per=per)
        assert judge_request_settings(base, per).items() >= (judged.sampling() | {"model": judged.model}).items()
    assert judge_request_settings(base, "item") != judge_request_settings(base, "distractor")
    # per item, the answer's JSON schema is sent only with answer_format json
    other_format = changed(answer_format="numbered" if base["answer_format"] == "json" else "json")
    assert judge_request_settings(other_format, "item") != judge_request_settings(base, "item")
    assert judge_request_settings(other_format, "distractor") == judge_request_settings(base, "distractor")


def test_a_local_servers_own_sampling_is_sent_and_keyed_only_where_it_answers(tmp_path):
    """generation.local.sampling (llama.cpp's XTC) goes into the JSON of every request to the local server and into
    its key; a remote endpoint never gets it, and without it the requests (and the store's keys) are as before."""
    remote = job_config(tmp_path / "store.sqlite", "https://api.example.org/v1")["generation"]
    xtc = {"xtc_probability": 0.5, "xtc_threshold": 0.1}
    local = {**remote, "base_url": None, "local": {**remote["local"], "sampling": xtc}}
    assert generation_settings(local, TEMPLATE, "e").sampling()["extra_body"] == xtc
    assert "extra_body" not in generation_settings({**remote, "local": local["local"]}, TEMPLATE, "e").sampling()
    plain = {**local, "local": {**local["local"], "sampling": {}}}
    assert "extra_body" not in generation_settings(plain, TEMPLATE, "e").sampling()
    assert request_settings(local) != request_settings(plain)
    sentence = item("X")
    with FaultServer() as server:
        settings = generation_settings({**local, "model": "fault"}, TEMPLATE, server.base_url, concurrency=1)
        gen = llm.Generator(settings, ResponseStore(tmp_path / "store.sqlite"),
                            lambda: ChatClient(base_url=server.base_url, api_key="local", timeout=3, retries=0,
                                               requests_per_minute=None))
        llm.generate([(0, sentence)], "de", gen, {}, "llm:fault")
        assert server.seen[0].body["xtc_probability"] == 0.5 and server.seen[0].body["xtc_threshold"] == 0.1


def test_the_paper_prompts_request_keys_are_those_of_the_stores_earlier_answers(tmp_path):
    """A local server with the paper's prompt and no local sampling sends what it sent before speculative decoding,
    XTC and the local prompt existed: the same key (computed by the code of commit e34e094), so stored answers replay."""
    generation = job_config(tmp_path / "store.sqlite", None, gguf=tmp_path / "m.gguf")["generation"]
    generation = {**generation, "model": "qwen2.5-coder-1.5b-instruct"}
    settings = generation_settings(generation, TEMPLATE, "gguf:abc")
    messages = llm.messages_for(TEMPLATE, "de", "Der Rat hat den Bau genehmigt.")
    assert request_key("gguf:abc", settings.model, messages, settings.sampling(), 0) == (
        "e8fcd706504acd58fe9d121c82cbbef358c3063dde2d42d0c4230eed36e83876")


LATER_STAGES = ("validate", "translate", "embed", "score", "analysis", "report")


def test_stage_generate_imports_no_later_stage():
    """clsd.generate imports clsd.core, clsd.data, itself and the config only (a validator is a Protocol there)."""
    found = []
    for path in sorted((ROOT / "workflow/clsd/generate").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            found += [f"{path.name}: {name}" for name in names if name.split(".")[:2] in (["clsd", stage] for stage in LATER_STAGES)]
    assert found == []


# ---- parsing -------------------------------------------------------------------------------------


ORIGINAL = "Der Stadtrat hat den Bau genehmigt."


def test_parse_tolerates_preambles_styles_and_remarks():
    answer = (
        "Natürlich! Hier sind vier Sätze:\n\n1) Der Stadtrat hat den Bau abgelehnt.\n\n"
        "2. **Der Gemeinderat hat den Bau genehmigt.**\n3: „Der Stadtrat hat den Abriss genehmigt.“\n"
        "- 4. Der Stadtrat hat den Bau nicht genehmigt.\nDiese Sätze sind ähnlich."
    )
    parsed = parse.parse_answer(answer, ORIGINAL, "de")
    assert parsed.accepted == [
        "Der Stadtrat hat den Bau abgelehnt.", "Der Gemeinderat hat den Bau genehmigt.",
        "Der Stadtrat hat den Abriss genehmigt.", "Der Stadtrat hat den Bau nicht genehmigt.",
    ]
    assert parsed.rejected == []


def test_parse_rejects_copies_duplicates_empty_and_wrong_language():
    answer = (
        "1. Der Stadtrat hat den Bau genehmigt\n2. Der Stadtrat hat den Bau abgelehnt.\n3. der stadtrat hat den bau abgelehnt\n"
        "4. **  **\n5. The city council approved the construction.\n6. Le conseil municipal a approuvé la construction."
    )
    parsed = parse.parse_answer(answer, ORIGINAL, "de")
    assert parsed.accepted == ["Der Stadtrat hat den Bau abgelehnt."]
    assert [reason for _, reason in parsed.rejected] == ["copy", "duplicate", "empty", "wrong_language", "wrong_language"]
    # a copy up to case, whitespace and final punctuation would tie with the true target: rejected too
    assert parse.parse_answer("1. der  Stadtrat hat den BAU genehmigt!", ORIGINAL, "de").rejected == [
        ("der  Stadtrat hat den BAU genehmigt!", "copy")]


def test_language_detection():
    assert detect("Die Zentralbank hat den Leitzins angehoben.", low_accuracy=True) == "de"
    assert detect("La banque centrale a relevé son taux directeur.", low_accuracy=True) == "fr"


# ---- rule-based baseline -----------------------------------------------------------------------


def test_rule_based_edits_are_deterministic_and_change_meaning():
    de = rules_based.Lexicon.load(ROOT / "resources/rules/de.yaml")
    sentence = "Der Stadtrat von Lyon hat am Dienstag den Bau von drei neuen Grundschulen genehmigt."
    edits = rules_based.perturb(sentence, de)
    assert edits == rules_based.perturb(sentence, de) and len(edits) == 4 and sentence not in edits
    assert "Der Stadtrat von Lyon hat am Mittwoch den Bau von drei neuen Grundschulen genehmigt." in edits
    assert rules_based.negate("Der Rat hat den Bau genehmigt.", de) == "Der Rat hat nicht den Bau genehmigt."
    fr = rules_based.Lexicon.load(ROOT / "resources/rules/fr.yaml")
    assert rules_based.negate("Le conseil a approuvé le projet.", fr) == "Le conseil n'a pas approuvé le projet."
    assert rules_based.negate("Le conseil va approuver le projet.", fr) == "Le conseil ne va pas approuver le projet."
    assert rules_based.change_number("bis 2027 mit 0,25") == "bis 2037 mit 0,25"
    assert rules_based.antonym_swap("Le prix a augmenté.", fr) == "Le prix a diminué."
    assert rules_based.antonym_swap("Le prix a diminué.", fr) == "Le prix a augmenté."  # reverse direction


def test_rule_based_failures_are_reported():
    de = rules_based.Lexicon.load(ROOT / "resources/rules/de.yaml")
    table, failures = rules_based.generate([(0, "Ein ganz schlichter Satz ohne Anker."), (1, "Am Montag hat Berlin 2 neue Schulen eröffnet.")], "de", de, "rules-v1")
    assert failures == [{"id": 0, "lang": "de", "reason": "only 0 rule-based edits apply"}]
    assert sorted(set(table["id"])) == [1]
