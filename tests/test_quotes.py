"""`generation.prompt_quotes: curly`: a target's straight double quotes shown as “…” in the prompt and put back in
every sentence written for it (clsd.generate.quotes), through a real HTTP server on 127.0.0.1; and the quotes a
model wraps its sentences in removed, never those of a target that opens or ends with a quotation."""

from __future__ import annotations

import json

import pytest
from clsd.serving.client import ChatClient
from clsd.generate import llm, quotes
from clsd.generate.parse import cleaned, parse_answer
from clsd.generate.settings import Settings, request_settings
from clsd.generate.store import ResponseStore
from conftest import ROOT
from fault_server import FaultServer, job_config

TEMPLATE = (ROOT / "resources/prompts/paper-v1.txt").read_text()
QUOTING = 'Zum Auftakt in Bonn sagte die Stadträtin Q: "Wir bauen drei neue Schulen."'


@pytest.mark.parametrize("sentence, expected", [
    (QUOTING, "Zum Auftakt in Bonn sagte die Stadträtin Q: “Wir bauen drei neue Schulen.”"),
    ('"Nein", sagte er (und "nie").', "“Nein”, sagte er (und “nie”)."),
    ('Betreiber des Vélib" Métropole', "Betreiber des Vélib” Métropole"),  # a stray quote after a word closes
    ("Kein Zitat hier.", "Kein Zitat hier."),
    ('Sie sagte „Ja" und ging.', 'Sie sagte „Ja" und ging.'),  # a curly quote already there: shown as written
])
def test_straight_quotes_are_shown_curly_only_where_none_is_curly(sentence, expected):
    assert quotes.shown(sentence, "curly") == expected
    assert quotes.shown(sentence, "as_written") == sentence


def test_what_the_model_writes_gets_the_target_s_straight_quotes_back():
    written = "Zum Abschluss in Bonn sagte die Stadträtin Q: „Wir schließen drei alte Schulen.”"
    assert quotes.restored(written, QUOTING, "curly") == 'Zum Abschluss in Bonn sagte die Stadträtin Q: "Wir schließen drei alte Schulen."'
    assert quotes.restored(written, QUOTING, "as_written") == written
    assert quotes.restored(written, 'Sie sagte „Ja" und ging.', "curly") == written  # shown as written: left as written


@pytest.mark.parametrize("text, original, expected", [
    ('"Der Rat tagt."', "Der Rat tagt.", "Der Rat tagt."),  # a model's quotes around its sentence
    ('**“Der Rat tagt.”**', "Der Rat tagt.", "Der Rat tagt."),
    ('"Nein", sagte er.', '"Ja", sagte er.', '"Nein", sagte er.'),  # the target opens with a quotation: kept
    ('Er sagte: "Nein."', 'Er sagte: "Ja."', 'Er sagte: "Nein."'),  # the target ends with one: kept
    ('"Er sagte: "Nein.""', 'Er sagte: "Ja."', 'Er sagte: "Nein."'),  # wrapped once more than the target
    ('""', "Der Rat tagt.", ""),
])
def test_only_the_quotes_the_target_has_not_are_taken_off_a_sentence(text, original, expected):
    assert cleaned(text, original) == expected


def test_a_target_that_ends_with_a_quotation_keeps_it_in_a_numbered_answer():
    original = 'Kipping sagte: "Europa ist ein Kontinent der Einwanderung."'
    parsed = parse_answer('1. Kipping sagte: "Europa ist ein Kontinent der Auswanderung."', original, "de")
    assert parsed.accepted == ['Kipping sagte: "Europa ist ein Kontinent der Auswanderung."']


def generator(server: FaultServer, store: ResponseStore, style: str) -> llm.Generator:
    settings = Settings(model="fault", template=TEMPLATE, endpoint="fault", max_attempts=1, concurrency=2,
                        answer_format="json", prompt_quotes=style)
    return llm.Generator(settings, store, lambda: ChatClient(base_url=server.base_url, api_key="test-key", timeout=5,
                                                             retries=0, requests_per_minute=None))


def test_the_prompt_shows_curly_quotes_and_the_distractors_have_straight_ones(tmp_path):
    items = [(0, QUOTING), (1, "Der Stadtrat R hat am Dienstag den Bau von drei neuen Schulen genehmigt.")]
    with FaultServer() as server:
        table, _ = llm.generate(items, "de", generator(server, ResponseStore(tmp_path / "curly.sqlite"), "curly"), {}, "llm:fault")
        shown = {seen.sentence for seen in server.seen}
    assert shown == {quotes.shown(QUOTING, "curly"), items[1][1]}
    texts = table.filter(table["id"] == 0)["text"].to_list()
    assert len(texts) == 4 and all(text.count('"') == 2 and not set(text) & set(quotes.CURLY) for text in texts)
    # the item without quotes is asked exactly as before: its stored answer replays under either setting
    with FaultServer() as server:
        llm.generate(items, "de", generator(server, ResponseStore(tmp_path / "curly.sqlite"), "as_written"), {}, "llm:fault")
        assert [seen.sentence for seen in server.seen] == [QUOTING]
        assert '"' in json.dumps(server.seen[0].body["messages"][-1]["content"], ensure_ascii=False)


def test_curly_quotes_enter_the_params_and_as_written_leaves_them_as_before(tmp_path):
    generation = job_config(tmp_path / "s.sqlite", "http://127.0.0.1:9/v1")["generation"]
    assert generation["prompt_quotes"] == "as_written"  # the schema's default: the paper's prompt, as written
    assert "prompt_quotes" not in request_settings(generation)
    assert request_settings(generation | {"prompt_quotes": "curly"})["prompt_quotes"] == "curly"
