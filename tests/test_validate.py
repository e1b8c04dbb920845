"""Distractor validation: each reject reason on hand-made pairs, the judge's verdicts, the report."""

from __future__ import annotations

import polars as pl
import pytest

from clsd import validation_report
from clsd.generate.judge import verdict
from clsd.validate import Validator, rule_reason, unknown_words, word_list

DE = "Das Gericht hat den früheren Bürgermeister wegen Korruption zu zwei Jahren Haft verurteilt."
FR = "Le tribunal a condamné l'ancien maire à deux ans de prison avec sursis pour corruption."


@pytest.mark.parametrize(("target", "distractor", "lang", "reason"), [
    # copies: up to case, spacing and final punctuation
    (FR, FR.upper(), "fr", "copy"),
    (DE, DE.rstrip(".") + " ", "de", "copy"),
    # punctuation, case or whitespace inside the sentence only
    (FR, FR.replace("l'ancien maire", "l'Ancien maire,"), "fr", "surface_only"),
    (DE, DE.replace("Haft verurteilt", "Haft  verurteilt!").replace("Korruption", "Korruption;"), "de", "surface_only"),
    # the same words moved (the example)
    (FR, "Le tribunal a condamné à deux ans de prison avec sursis l'ancien maire pour corruption.", "fr", "reorder"),
    (DE, "Wegen Korruption hat das Gericht den früheren Bürgermeister zu zwei Jahren Haft verurteilt.", "de", "reorder"),
    # words no word list knows
    (FR, FR.replace("condamné", "condamnné"), "fr", "non_word"),
    (DE, DE.replace("verurteilt", "verurteilet"), "de", "non_word"),
    (FR, FR.replace("prison", "prisonnage"), "fr", "non_word"),
    # real distractors
    (FR, FR.replace("deux", "trois"), "fr", None),
    (DE, DE.replace("Korruption", "Steuerhinterziehung"), "de", None),
    # a German compound of listed words, a hyphenated compound and ß spellings
    (DE, DE.replace("Haft", "Bewährungsstrafe"), "de", None),
    (DE, DE.replace("verurteilt", "freigesprochen").replace("Korruption", "Korruptionsverdachts"), "de", None),
    (DE, DE.replace("verurteilt", "gemäß Gesetz verurteilt"), "de", None),
    # names and elided names are not checked (open class)
    (FR, FR.replace("l'ancien maire", "Kipping"), "fr", None),
    (FR, FR.replace("l'ancien maire", "l'Ouzbékistanais Zhukov"), "fr", None),
    # two words trading places exchange roles: a real change of meaning
    ("Nantes a battu Bordeaux samedi.", "Bordeaux a battu Nantes samedi.", "fr", None),
])
def test_rule_reasons_on_hand_made_pairs(target, distractor, lang, reason):
    assert rule_reason(target, distractor, word_list(lang)) == reason


def test_unknown_words_name_the_non_word_only():
    assert unknown_words(FR, FR.replace("condamné", "condamnné").replace("maire", "Zorglub"), word_list("fr")) == ["condamnné"]
    # a decomposed accent is one word, not two fragments
    decomposed = FR.replace("condamné", "condamne\u0301")
    assert unknown_words(FR, decomposed, word_list("fr")) == []


def test_a_language_without_a_word_list_skips_only_the_non_word_rule(caplog):
    assert word_list("xx") is None
    assert "no large word list" in caplog.text
    assert rule_reason("a b c d", "b c d a", None) == "reorder"
    assert rule_reason("a b c", "a b zzzq", None) is None


@pytest.mark.parametrize(("answer", "expected"), [
    ("Yes.", True), ("yes, they mean the same", True), ("**No**", False), ("Non.", False), ("Nein", False),
    ("Ja", True), ("", None), ("Maybe", None), ("42", None),
])
def test_judge_verdicts(answer, expected):
    assert verdict(answer) is expected


def test_validator_applies_rules_before_the_judge_and_counts_unclear_answers():
    asked = []

    def judge(target: str, distractor: str) -> bool | None:
        asked.append(distractor)
        return {"Same": True, "Other": False}.get(distractor.split()[0])  # capitalised: no word-list check

    validator = Validator("fr", judge=judge)
    assert validator.reason(FR, FR.upper()) == "copy" and asked == []  # no judge request for a rule reject
    assert validator.reason(FR, "Same " + FR) == "judged_equivalent"
    assert validator.reason(FR, "Other " + FR) is None
    assert validator.reason(FR, "Unclear " + FR) is None and validator.unclear["judge_unclear"] == 1
    assert Validator("fr", rules=False).reason(FR, FR.upper()) is None


def test_report_counts_reasons_share_and_examples_and_removes_by_action():
    targets = {0: FR, 1: "Nantes a battu Bordeaux samedi."}
    distractors = pl.DataFrame({
        "id": [0, 0, 0, 0, 1], "lang": ["fr"] * 5, "k": [1, 2, 3, 4, 1],
        "text": [FR.replace("deux", "trois"), FR.replace("condamné", "condamnné"), FR.upper(),
                 FR.replace("deux", "cinq"), "Bordeaux a battu Nantes samedi."],
    })
    validator = Validator("fr")
    flagged = validation_report.flag(distractors, targets, validator.reason)
    assert flagged["flag"].to_list() == [None, "non_word", "copy", None, None]
    reasked = [{"id": 1, "lang": "fr", "text": "samedi Nantes a battu Bordeaux.", "reason": "reorder"}]

    published = validation_report.summary(flagged, targets, [], validation_report.action("from_source", False), 2)
    assert published["action"] == "flagged" and published["kept"] == 5 and published["checked"] == 5
    assert published["reasons"] == {"non_word": 1, "copy": 1}

    generated = validation_report.summary(flagged, targets, reasked, validation_report.action("llm", False), 2)
    assert generated["action"] == "re-asked" and generated["checked"] == 6 and generated["kept"] == 3
    assert generated["share_kept"] == pytest.approx(0.5)
    assert generated["reasons"] == {"non_word": 1, "copy": 1, "reorder": 1} and generated["reasked"] == {"reorder": 1}
    assert generated["examples"]["reorder"] == [{"id": 1, "target": targets[1], "distractor": "samedi Nantes a battu Bordeaux."}]
    assert validation_report.action("from_source", True) == "removed" and validation_report.action("rules", False) == "removed"
    assert validation_report.removed_items(flagged) == [
        {"id": 0, "lang": "fr", "reason": "validation removed 2 distractor(s): copy, non_word"}]

    table = validation_report.table([generated | {"dataset": "sample", "language": "French"}])
    assert table.row(0, named=True) | {"Kept (%)": None} == {
        "Dataset": "sample", "Language": "French", "Action": "re-asked", "Checked": 6, "Kept": 3, "Kept (%)": None,
        "copy": 1, "surface_only": 0, "reorder": 1, "non_word": 1, "judged_equivalent": 0, "judge_unclear": 0}
    assert table["Kept (%)"][0] == pytest.approx(50.0)
