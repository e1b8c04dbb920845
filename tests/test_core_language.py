"""Language handling in clsd.core shared by every stage: the comparison form of a sentence (final punctuation from
the registry), what a word is made of (combining marks included) and the language of a text (one lingua
detector, scripts of letters)."""

from __future__ import annotations

import pytest
from clsd.analysis.swaps import Change, single_word_change, word_form
from clsd.core import detect
from clsd.core.detect import other_language, scripts
from clsd.core.text import is_word_character, normalise


@pytest.mark.parametrize(("lang", "target", "copy"), [
    ("de", "Der Rat hat den Bau genehmigt.", "der  Rat hat den Bau genehmigt!"),
    ("hi", "सरकार ने नई नीति की घोषणा की।", "सरकार ने नई नीति की घोषणा की"),
    ("bn", "ঘরে একটি পাখা আছে।", "ঘরে একটি পাখা আছে"),
    ("ja", "私は昨日東京に行った。", "私は昨日東京に行った"),
    ("zh", "我昨天去了北京。", "我昨天去了北京！"),
    ("ar", "هل ذهبت إلى المدرسة اليوم؟", "هل ذهبت إلى المدرسة اليوم"),
])
def test_a_copy_differs_only_by_case_spacing_and_the_languages_final_punctuation(lang, target, copy):
    assert normalise(copy, lang) == normalise(target, lang)


def test_only_the_languages_own_final_punctuation_is_dropped():
    # "।" ends a Hindi sentence but is no final punctuation of German; "。" none of Arabic
    assert normalise("Der Rat tagt।", "de") != normalise("Der Rat tagt", "de")
    assert normalise("ذهبت。", "ar") != normalise("ذهبت", "ar")


def test_vowel_signs_are_part_of_a_word():
    assert all(is_word_character(char) for char in "दिन") and not is_word_character("।")
    assert word_form("दिन,") == "दिन" != word_form("दान")
    assert word_form("ดี") != word_form("ดุ")
    # दिन ("day") → दान ("donation") is a single-word swap, not a punctuation edit
    assert single_word_change("उसने एक दिन दिया।", "उसने एक दान दिया।", "hi") == Change("swap", 2, "दिन", "दान")
    assert single_word_change("ঘরে একটি পাখা আছে।", "ঘরে একটি পাখি আছে।", "bn") == Change("swap", 2, "পাখা", "পাখি")


def test_scripts_of_letters_in_order_of_first_use():
    assert scripts("東京でG7サミット") == ["CJK", "HIRAGANA", "LATIN", "KATAKANA"]
    assert scripts("5 % — 2019") == []


def test_a_script_the_target_uses_too_is_not_another_language():
    target = "東京でG7サミットが開かれた。"
    assert other_language(target, "東京でG20サミットが開かれた。", "ja") is None
    assert other_language("東京でサミットが開かれた。", "東京でG20サミットが開かれた。", "ja") == "latin"
    assert other_language("Europa ist längst ein Kontinent der Einwanderung.",
                          "Η Ευρώπη είναι εδώ και καιρό μια ήπειρος μετανάστευσης.", "de") == "greek"


def test_one_detector_builder_serves_detection_and_confirmation():
    detect._detector.cache_clear()
    assert other_language("Europa ist längst ein Kontinent der Einwanderung.",
                          "A Europa é há muito tempo um continente de imigração.", "de") == "pt"
    # the fast detector over every language proposed Portuguese, the full one on German and Portuguese confirmed it
    assert detect._detector.cache_info().currsize == 2


def test_stanzas_multi_word_token_expander_is_registry_data():
    """Whether Stanza's pipeline of a language needs `mwt` (French au → à le) is read from the registry, not code."""
    from clsd.core.languages import language

    assert language("fr").stanza_mwt and language("de").stanza_mwt and language("ar").stanza_mwt
    assert not language("en").stanza_mwt and not language("ja").stanza_mwt
