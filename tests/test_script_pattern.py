"""generation.constrain_script: the characters a sentence of a JSON answer may hold, per target and language."""

from __future__ import annotations

import regex

from clsd.generate.script_pattern import sentence_pattern
from clsd.generate.settings import Settings, response_format

GERMAN = "Der Stadtrat von Lyon hat am Dienstag den Bau von drei neuen Grundschulen genehmigt."


def matches(target: str, lang: str, sentence: str) -> bool:
    return regex.match(sentence_pattern(target, lang), sentence) is not None


def test_a_german_sentence_keeps_its_script_punctuation_and_signs_but_no_other_script_or_prompt_junk():
    pattern = sentence_pattern(GERMAN, "de")
    assert pattern.startswith("^[") and pattern.endswith("]+$")  # anchored: llama.cpp turns only such into a grammar
    for sentence in ("Der Stadtrat von Köln hat am Montag den Bau von fünf Schulen abgelehnt.",
                     "Er sagte: „Nein“ – das kostet 5 € (oder 3,5 %)…", "Die NATO und iPhone-Nutzer", "Straße, Öl, Ärger"):
        assert matches(GERMAN, "de", sentence), sentence
    for sentence in ("Angela Merkel hat Sahра Wagenknecht kritisiert.",  # a Cyrillic р inside a Latin name
                     "Der Zauberer der Industriенanierung", "Kipping и Fraktionsvorsitzenden", "東京",
                     "sentences_with_edit12345", 'ein "Zitat"', "ein \\ Strich", "zwei\nZeilen", ""):
        assert not matches(GERMAN, "de", sentence), sentence


def test_the_target_s_own_characters_stay_allowed():
    target = "Der Kreml nannte das Treffen „Москва_2020“ einen Erfolg."
    assert matches(target, "de", "Der Kreml nannte das Treffen „Москва_2020“ einen Misserfolg.")
    assert not matches(GERMAN, "de", "Der Kreml nannte das Treffen „Москва_2020“ einen Misserfolg.")


def test_other_scripts_keep_their_letters_and_latin_acronyms():
    assert matches("Москва сегодня объявила о новых мерах.", "ru", "Киев вчера объявил о мерах НАТО и NATO, 5 %.")
    assert matches("東京は今日、新しい規則を発表した。", "ja", "大阪は昨日、古い規則を「撤回」した。")
    assert matches("北京今天宣布了新的规定。", "zh", "上海昨天取消了旧的规定。")
    assert not matches("Москва сегодня объявила о новых мерах.", "ru", "Moskau hat heute neue Maßnahmen angekündigt.")
    assert not matches("北京今天宣布了新的规定。", "zh", "Москва")


def test_each_item_s_requests_carry_its_pattern_and_the_rule_s_params_say_so():
    settings = Settings(model="m", template="{language} {sentence}", endpoint="e", answer_format="json", candidates=6,
                        constrain_script=True)
    extra = settings.script_format(GERMAN, "de")
    assert extra == {"response_format": response_format(6, sentence_pattern(GERMAN, "de"))}
    schema = extra["response_format"]["json_schema"]["schema"]["properties"]["sentences"]
    assert schema["items"]["pattern"] == sentence_pattern(GERMAN, "de") and schema["minItems"] == 6
    # off, or with numbered answers (no schema to hold it), an item sends nothing more: its keys stay as they were
    assert Settings(model="m", template="", endpoint="e", answer_format="json").script_format(GERMAN, "de") == {}
    assert Settings(model="m", template="", endpoint="e", answer_format="numbered",
                    constrain_script=True).script_format(GERMAN, "de") == {}


def test_the_request_an_item_sends_is_the_one_generator_requests_and_the_estimate_key(tmp_path):
    """Held to its script, an item's first request (what Generator.one would send: collected, nothing sent) has the
    key Generator.requests lists and the estimate looks up, so a stored answer is found by all three."""
    from clsd.generate import estimate, llm
    from clsd.generate.store import Response, ResponseStore

    items = [(0, GERMAN), (1, "Москва сегодня объявила о новых мерах.")]
    settings = Settings(model="m", template="{language} {sentence}", endpoint="e", answer_format="json", candidates=6,
                        constrain_script=True)
    store = ResponseStore(tmp_path / "store.sqlite")

    def no_endpoint():
        raise AssertionError("collecting the missing requests contacts no endpoint")

    generator = llm.Generator(settings, store, no_endpoint)
    sent = generator.missing(items, "de")
    listed = generator.requests(items, "de")
    assert len(sent) == 2 and set(sent) <= set(listed)
    assert {r.params["response_format"]["json_schema"]["schema"]["properties"]["sentences"]["items"]["pattern"]
            for r in sent.values()} == {sentence_pattern(s, "de") for _, s in items}
    prices = {"prompt_per_1k": 0.0, "completion_per_1k": 0.0}
    assert estimate.estimate("d", "de", items, settings, store, prices).stored_items == 0
    for r in sent.values():
        store.put(Response(r.key, "e", "m", r.messages, r.params, r.attempt, "{}", "stop", 1, 1, 0.1))
    assert estimate.estimate("d", "de", items, settings, store, prices).stored_items == 2
