"""The cost estimate before a paid run (clsd.generate.estimate): hand-counted requests and tokens, from defaults
and from a real SQLite store's history, and the rule that writes it without contacting an endpoint."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

import pytest
from clsd.generate import estimate
from clsd.generate.llm import messages_for
from clsd.generate.settings import Settings
from clsd.generate.store import Response, ResponseStore, request_key

TEMPLATE = "Write four {language} sentences unlike: {sentence}"
SETTINGS = Settings(model="gpt-x", template=TEMPLATE, endpoint="https://api.example.org/v1", answer_format="json")
PRICES = {"prompt_per_1k": 0.03, "completion_per_1k": 0.06}
ITEMS = [(0, "Le chat dort."), (1, "Le chien aboie fort."), (2, "Il pleut à Paris.")]


def stored(store: ResponseStore, sentence: str, attempt: int, prompt_tokens: int, completion_tokens: int,
           template: str = TEMPLATE) -> None:
    messages = messages_for(template, "fr", sentence)
    params = SETTINGS.sampling()
    key = request_key(SETTINGS.endpoint, SETTINGS.model, messages, params, attempt)
    store.put(Response(key, SETTINGS.endpoint, SETTINGS.model, messages, params, attempt, "{}", "stop",
                       prompt_tokens, completion_tokens, 0.1))


def test_without_a_history_the_defaults_give_the_hand_counted_figures(tmp_path):
    store = ResponseStore(tmp_path / "store.sqlite")
    found = estimate.estimate("d", "fr", ITEMS, SETTINGS, store, PRICES)
    per_item = 1 + estimate.DEFAULT_REASK_RATE
    chars = [len(messages_for(TEMPLATE, "fr", sentence)[0]["content"]) for _, sentence in ITEMS]
    prompt = per_item * sum(math.ceil(c / 4.0) + estimate.TEMPLATE_TOKENS for c in chars)
    completion = per_item * sum(4 * len(s) / 4.0 + estimate.ANSWER_OVERHEAD_TOKENS for _, s in ITEMS)
    assert (found.items, found.stored_items, found.requests) == (3, 0, pytest.approx(3 * per_item))
    assert found.prompt_tokens == pytest.approx(prompt) and found.completion_tokens == pytest.approx(completion)
    assert found.cost == pytest.approx(round(prompt) / 1000 * 0.03 + round(completion) / 1000 * 0.06)
    assert any("default re-ask rate 0.33" in line for line in found.assumptions)
    assert found.judge_requests == 0
    # six candidates per answer (generation.candidates): half again the completion tokens, and the judge sees six
    six = dataclasses.replace(SETTINGS, candidates=6)
    more = estimate.estimate("d", "fr", ITEMS, six, store, PRICES, judge=("Same? {target} / {distractor}", "distractor"))
    assert more.completion_tokens == pytest.approx(per_item * sum(6 * len(s) / 4.0 + estimate.ANSWER_OVERHEAD_TOKENS
                                                                  for _, s in ITEMS))
    assert more.judge_requests == pytest.approx(6 * more.requests)
    assert any("6 sentences as long as the one asked about" in line for line in more.assumptions)


def test_the_store_answers_are_free_and_its_history_replaces_the_defaults(tmp_path):
    store = ResponseStore(tmp_path / "store.sqlite")
    # item 0 was asked twice (a re-ask), item 1 once: 3 requests for 2 first asks, 1.5 per item
    stored(store, ITEMS[0][1], 0, prompt_tokens=28, completion_tokens=65)
    stored(store, ITEMS[0][1], 1, prompt_tokens=28, completion_tokens=65)
    stored(store, ITEMS[1][1], 0, prompt_tokens=30, completion_tokens=100)
    # a judge's answer of the same model: counts for characters per token, not for completions or re-asks
    stored(store, "x", 0, prompt_tokens=20, completion_tokens=1, template="Same meaning? {target} / {distractor}")
    past = estimate.history(store.path, SETTINGS.endpoint, SETTINGS.model, TEMPLATE)
    assert past.answers == 3 and past.requests_per_item == pytest.approx(1.5)
    sentence_chars = 2 * len(ITEMS[0][1]) + len(ITEMS[1][1])
    assert past.completion_per_char == pytest.approx((65 + 65 + 100) / sentence_chars)
    found = estimate.estimate("d", "fr", ITEMS, SETTINGS, store, PRICES)
    assert found.stored_items == 2 and found.requests == pytest.approx(1.5)  # only item 2 is still to ask
    assert found.completion_tokens == pytest.approx(1.5 * past.completion_per_char * len(ITEMS[2][1]))


def test_the_judge_adds_four_requests_per_generation_request(tmp_path):
    store = ResponseStore(tmp_path / "s.sqlite")
    found = estimate.estimate("d", "fr", ITEMS, SETTINGS, store, PRICES,
                              judge=("Same meaning in {language}? {target} / {distractor}", "distractor"))
    assert found.judge_requests == pytest.approx(4 * found.requests)
    assert found.judge_completion_tokens == pytest.approx(found.judge_requests * 1)
    assert found.judge_prompt_tokens > found.judge_requests * estimate.TEMPLATE_TOKENS
    lines = estimate.log_lines(found)
    assert lines[0].startswith("estimate d fr: 3 items, 0 answered by the store, 4 requests to send") and "judge: 16 requests" in lines[0]
    # per item: one judge request per generation answer, about all four distractors
    per_item = estimate.estimate("d", "fr", ITEMS, SETTINGS, store, PRICES,
                                 judge=("Same in {language}? {target}\n{distractors}", "item"))
    assert per_item.judge_requests == pytest.approx(found.requests)
    assert per_item.judge_prompt_tokens < found.judge_prompt_tokens / 2


def test_without_prices_there_is_no_cost_and_the_table_says_why(tmp_path):
    found = estimate.estimate("d", "fr", ITEMS, SETTINGS, ResponseStore(tmp_path / "s.sqlite"),
                              {"prompt_per_1k": None, "completion_per_1k": None})
    assert found.cost is None and found.assumptions[-1] == "no cost: generation.prices is not set"


def test_the_endpoint_is_named_without_starting_anything(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    local = {"base_url": None, "local": {"gguf": str(gguf), "recipe": "qwen2.5-coder-1.5b-instruct-q4_k_m"}}
    assert estimate.planned_endpoint(local, None) == "gguf:" + hashlib.sha256(b"GGUF").hexdigest()
    assert estimate.planned_endpoint({**local, "local": {**local["local"], "gguf": None}}, "ab" * 32) == "gguf:" + "ab" * 32
    assert estimate.planned_endpoint({**local, "base_url": "https://api.example.org/v1/"}, None) == "https://api.example.org/v1"


@pytest.mark.slow
@pytest.mark.workflow
def test_the_estimate_rule_contacts_nothing_and_a_finished_run_leaves_nothing_to_send(tmp_path):
    """Real Snakemake against a real HTTP endpoint on 127.0.0.1: the estimate asks it nothing; after generation
    the store answers every item, so the estimate is redone (the store is its input) and says nothing is left."""
    import polars as pl
    from fault_server import FaultServer
    from test_workflow import MINILM, SAMPLE, snakemake, write_config

    from conftest import MODEL_STORE

    store = tmp_path / "store.sqlite"
    with FaultServer() as server:
        write_config(tmp_path, {
            "model_store": str(MODEL_STORE),
            "generation": {"model": "fault", "base_url": server.base_url, "store": str(store), "concurrency": 2,
                           "timeout": 5, "prices": {"prompt_per_1k": 0.03, "completion_per_1k": 0.06}},
            "datasets": {"gen": {"label": "LLM", "source": {"kind": "published_csv", "path": str(SAMPLE)},
                                 "select": {"limit": 4}, "distractors": {"kind": "llm"}}},
            "models": {"minilm": MINILM},
        })
        env = {"OPENAI_API_KEY": "sk-test"}
        snakemake(tmp_path, "generation_estimate", env=env)
        assert server.seen == []
        before = pl.read_csv(tmp_path / "results/generation/estimate.csv")
        assert before["items"].to_list() == [4, 4] and before["stored_items"].to_list() == [0, 0]
        assert before["requests"].to_list() == [5, 5] and before["cost"].min() > 0  # 4 x 1.33 re-asks included
        snakemake(tmp_path, "results/distractors/gen/de.parquet", env=env)
        german = json.loads((tmp_path / "results/generation/gen/de.json").read_text(encoding="utf-8"))
        assert german["estimate"]["requests"] == 5 and german["new_responses"] == len(server.seen) == 4
        # French is estimated from German's history in the store: one request per item, no re-ask
        snakemake(tmp_path, "results/distractors/gen/fr.parquet", env=env)
        asked = len(server.seen)
        french = json.loads((tmp_path / "results/generation/gen/fr.json").read_text(encoding="utf-8"))
        assert french["estimate"]["requests"] == 4 == french["new_responses"] and asked == 8
        snakemake(tmp_path, "generation_estimate", env=env)
        after = pl.read_csv(tmp_path / "results/generation/estimate.csv")
        assert after["stored_items"].to_list() == [4, 4] and after["requests"].to_list() == [0, 0]
        assert after["cost"].to_list() == [0.0, 0.0] and len(server.seen) == asked
        assert "Answered by the store" in (tmp_path / "results/generation/estimate.md").read_text(encoding="utf-8")
