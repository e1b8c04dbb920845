"""`generation.answer_format: json`: the response format sent, JSON answers read into four distractors, and
malformed, cut and three-element answers stored, counted unusable and asked again (a real HTTP server on
127.0.0.1 answering as a schema-constrained endpoint would)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from clsd.serving.client import ChatClient, RequestRejected
from clsd.generate import llm
from clsd.generate.parse import json_sentences, parse_answer
from clsd.generate.settings import RESPONSE_FORMAT, Settings, generation_settings, request_settings
from clsd.generate.store import ResponseStore, request_key
from conftest import ROOT
from fault_server import FaultServer, distractors_for, job_config

TEMPLATE = (ROOT / "resources/prompts/paper-v1.txt").read_text()
ORIGINAL = "Der Stadtrat von Lyon hat am Dienstag den Bau von drei neuen Grundschulen genehmigt."
FOUR = ["Der Stadtrat von Lyon hat am Mittwoch den Bau von drei neuen Grundschulen genehmigt.",
        "Der Stadtrat von Lyon hat am Dienstag den Abriss von drei alten Grundschulen genehmigt.",
        "Der Stadtrat von Lyon hat am Dienstag den Bau von zwei neuen Grundschulen abgelehnt.",
        "Der Stadtrat von Paris hat am Dienstag den Bau von drei neuen Gymnasien genehmigt."]


def item(letter: str) -> str:
    return f"Der Stadtrat {letter} hat am Dienstag den Bau von drei neuen Grundschulen genehmigt."


def json_generator(server: FaultServer, store: ResponseStore, attempts: int = 3) -> llm.Generator:
    settings = Settings(model="fault", template=TEMPLATE, endpoint="fault", max_attempts=attempts, concurrency=4,
                        answer_format="json")
    return llm.Generator(settings, store, lambda: ChatClient(base_url=server.base_url, api_key="test-key", timeout=5, retries=2,
                                                             requests_per_minute=None, backoff_initial=0.05, backoff_max=0.2))


def test_json_answers_are_four_strings_or_nothing():
    assert json_sentences(json.dumps({"sentences": FOUR})) == FOUR
    # the paper's prompt asks for numbered sentences: a number inside the string is not part of the sentence
    numbered = [f"{i}. \"{text}\"" for i, text in enumerate(FOUR, 1)]
    assert json_sentences(json.dumps({"sentences": numbered}, ensure_ascii=False)) == FOUR
    for broken in (json.dumps({"sentences": FOUR[:3]}), json.dumps({"sentences": [*FOUR, FOUR[0]]}), json.dumps(FOUR),
                   json.dumps({"sentences": FOUR})[:-30], "1. " + FOUR[0], json.dumps({"sentences": [1, 2, 3, 4]}), ""):
        assert json_sentences(broken) is None, broken
    parsed = parse_answer(json.dumps({"sentences": FOUR})[:-30], ORIGINAL, "de", truncated=True, answer_format="json")
    assert parsed.accepted == [] and parsed.no_list and parsed.rejected[0][1] == "malformed_json"
    # not JSON at all: a refusal, counted as one
    parsed = parse_answer("I'm sorry, but I can't help with that.", ORIGINAL, "de", answer_format="json")
    assert parsed.no_list and parsed.rejected == [("I'm sorry, but I can't help with that.", "refusal")]
    # a numbered list where JSON was asked for: the endpoint ignored response_format (free text), not a refusal
    parsed = parse_answer("1. " + "\n2. ".join(FOUR), ORIGINAL, "de", answer_format="json")
    assert parsed.no_list and [reason for _, reason in parsed.rejected] == ["free_text"]
    # a copy, a duplicate and an English sentence inside valid JSON are rejected one by one, like numbered lines
    parsed = parse_answer(json.dumps({"sentences": [ORIGINAL, FOUR[1], FOUR[1], "The council met today."]}), ORIGINAL, "de",
                          answer_format="json")
    assert parsed.accepted == [FOUR[1]] and [reason for _, reason in parsed.rejected] == ["copy", "duplicate", "wrong_language"]
    assert not parsed.no_list


@pytest.mark.parametrize("lang, original, leaked", [
    # the prompt's instruction, or its example, copied into a variant
    ("de", ORIGINAL, ORIGINAL[:-1] + ", with another kind of edit."),
    ("fr", "Le conseil a approuvé mardi la construction de trois écoles.",
     "Le conseil a approuvé mardi la construction de trois écoles, the city will plant two hundred trees."),
    ("en", "The council approved three new schools on Tuesday.",
     "The council approved three new schools on Tuesday, and each is a complete, natural sentence."),
])  # (the English of the prompt in another script is wrong_language already)
def test_a_variant_that_copies_the_prompt_s_own_wording_is_rejected_in_any_language(lang, original, leaked):
    prompt = llm.messages_for((ROOT / "resources/prompts/local-v2.txt").read_text(), lang, original)[-1]["content"]
    kept = original.replace("trois", "quatre").replace("drei", "vier").replace("three", "four")
    parsed = parse_answer(json.dumps({"sentences": [leaked, kept, kept + " ", kept]}, ensure_ascii=False), original, lang,
                          answer_format="json", prompt=prompt)
    assert parsed.accepted == [kept] and [reason for _, reason in parsed.rejected][0] == "prompt_text"
    # words the original shares with the prompt are no copy of it, nor is any variant without a prompt to compare
    assert parse_answer(json.dumps({"sentences": [leaked] * 4}), original, lang, answer_format="json").accepted == [leaked]


def test_the_answer_format_is_sent_and_part_of_the_request_key_and_params(tmp_path):
    generation = job_config(tmp_path / "s.sqlite", "http://127.0.0.1:9/v1")["generation"]
    assert generation["answer_format"] == "json"  # the schema's default
    as_json = generation_settings(generation, TEMPLATE, "e")
    as_numbered = generation_settings(generation | {"answer_format": "numbered"}, TEMPLATE, "e")
    assert as_json.sampling()["response_format"] == RESPONSE_FORMAT and "response_format" not in as_numbered.sampling()
    schema = RESPONSE_FORMAT["json_schema"]["schema"]["properties"]["sentences"]
    assert schema["minItems"] == schema["maxItems"] == 4 and schema["items"] == {"type": "string", "minLength": 1}
    messages = [{"role": "user", "content": "x"}]
    assert request_key("e", "m", messages, as_json.sampling(), 0) != request_key("e", "m", messages, as_numbered.sampling(), 0)
    assert request_settings(generation) != request_settings(generation | {"answer_format": "numbered"})
    # numbered requests are keyed as before the format existed: stores of the paper's setup keep their answers
    assert as_numbered.sampling() == {"temperature": 1.0, "top_p": 1.0, "max_tokens": 512}


def test_malformed_cut_and_three_element_answers_are_stored_unusable_and_asked_again(tmp_path, caplog):
    plans = {"Stadtrat M ": ["malformed_json", "ok"], "Stadtrat L ": ["length", "ok"], "Stadtrat T ": ["three", "ok"],
             "Stadtrat R ": ["refusal"] * 3, "Stadtrat P ": ["preamble"]}
    items = [(i, item(letter)) for i, letter in enumerate("MLTRPO")]
    with FaultServer(plans={k: list(v) for k, v in plans.items()}) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        table, report = llm.generate(items, "de", json_generator(server, store), {}, "llm:fault")
        assert all(seen.sentence and seen.behaviour for seen in server.seen)
        assert len(server.seen) == 2 + 2 + 2 + 3 + 1 + 1  # each fault costs one more request, the refusal all three
    assert report["answer_format"] == "json" and report["generated_at_first_ask"] == 2  # P (numbered strings) and O
    assert report["failed"] == [{"id": 3, "lang": "de", "rejected": {"refusal": 3},
                                 "reason": "0 valid distractors after 3 attempts (3 refused: “I'm sorry, but I can't help "
                                           "with creating …”)"}]
    assert report["rejects"] == {"malformed_json": 3, "refusal": 3}  # counted as what they are, never as short answers
    assert sorted(table["id"].unique().to_list()) == [0, 1, 2, 4, 5]
    assert table.filter(table["id"] == 4)["text"].to_list() == distractors_for(item("P"), "German")  # numbers removed
    db = sqlite3.connect(tmp_path / "store.sqlite")
    # every answer stored, the unusable ones marked so: a rerun replays them, reask_unusable asks them again
    assert db.execute("SELECT COUNT(*), SUM(usable = 0) FROM responses").fetchone() == (11, 6)
    assert db.execute("SELECT COUNT(*) FROM responses WHERE finish_reason = 'length' AND usable = 0").fetchone()[0] == 1
    with FaultServer() as server:
        rerun, again = llm.generate(items, "de", json_generator(server, ResponseStore(tmp_path / "store.sqlite")), {}, "llm:fault")
        assert server.seen == [] and again["cache_hits"] == 11 and rerun.equals(table)
    # the refused item failed again on answers from the store alone: the report says so (and the log how to ask again)
    assert report["failed_on_replayed_answers"] == [] and again["failed_on_replayed_answers"] == [3]
    warning = next(r.getMessage() for r in caplog.records if "replayed from the response store" in r.getMessage())
    assert "clsd-forget --store" in warning and "generation.reask_unusable: true" in warning


def test_an_endpoint_that_refuses_structured_outputs_is_told_how_to_do_without(tmp_path):
    with FaultServer(plans={"Stadtrat X ": ["400"]}) as server:
        generator = json_generator(server, ResponseStore(tmp_path / "store.sqlite"))
        with pytest.raises(RequestRejected, match=r"HTTP 400: injected 400 \(generation\.answer_format: json sends "
                                                  r"response_format .* set answer_format: numbered"):
            generator.one(0, item("X"), "de")


def test_a_refused_sampling_field_is_named_not_the_json_schema(tmp_path):
    """A 400 that names another field of the request (llama-server refusing a local.sampling value) says where that
    field comes from, and does not send the user to answer_format."""
    with FaultServer(plans={"Stadtrat X ": ["400_field"]}) as server:
        generator = json_generator(server, ResponseStore(tmp_path / "store.sqlite"))
        with pytest.raises(RequestRejected) as refused:
            generator.one(0, item("X"), "de")
    assert "HTTP 400: Field 'dry_penalty_last_n': Value must be between" in str(refused.value)
    assert "the request's field dry_penalty_last_n comes from the config: a key of that name under generation" in str(refused.value)
    assert "answer_format" not in str(refused.value)


def test_an_endpoint_that_ignores_the_json_schema_is_named_after_the_first_few_answers(tmp_path):
    items = [(i, item(letter)) for i, letter in enumerate("ABCDEFGH")]
    with FaultServer(plans={f"Stadtrat {letter} ": ["free_text"] * 3 for letter in "ABCDEFGH"}) as server:
        store = ResponseStore(tmp_path / "store.sqlite")
        with pytest.raises(llm.FreeText) as raised:
            llm.generate(items, "de", json_generator(server, store), {}, "llm:fault")
    assert str(raised.value).startswith("fault: the endpoint answered free text, not the JSON schema: set "
                                        "generation.answer_format: numbered (its first 3 answers to generation.answer_format: "
                                        "json were numbered lists, e.g. “1. Der Stadtrat")
    assert len(server.seen) <= 3 + 4  # the third free-text answer stops the job; at most the others in flight (4 at once)
    db = sqlite3.connect(tmp_path / "store.sqlite")
    assert db.execute("SELECT COUNT(*) FROM responses WHERE usable != 0").fetchone()[0] == 0
