"""Broken copies of target words put back (clsd.validate.mend), alone and inside the validator, in three scripts."""

from __future__ import annotations

import unicodedata

import pytest

from clsd.validate.mend import Mended, TargetWords, mended, restored_word
from clsd.validate.validator import Validator


@pytest.mark.parametrize(("written", "target", "back"), [
    ("suppléémentaires", "des postes supplémentaires", "supplémentaires"),  # a letter doubled
    ("Bundesregirung", "Die Bundesregierung hat", "Bundesregierung"),  # a letter dropped
    ("derFreiheit", "im Namen der Freiheit", "der Freiheit"),  # two neighbouring words run together
    ("Freiheitder", "im Namen der Freiheit", None),  # run together, but not in the target's order
    ("lUnion", "de l'Union européenne", "l'Union"),  # an elision's apostrophe lost: put back as the target has it
    ("ParisBerlin", "Paris, Berlin", None),  # a comma between them
    ("Kurz", "Kunst Kurs", "Kurs"),  # Kurs one edit away, Kunst two: the nearest, alone
    ("Haus", "Maus Laus", None),  # two different words equally near: a guess
    ("xyz", "xy", None),  # a word of two letters allows no edit
    ("Regierungsschef", "Regierung Chef", None),  # six letters from anything: another word, not a broken one
    ("правительствоо", "правительство России", "правительство"),  # Cyrillic
])
def test_a_word_is_put_back_only_where_one_target_word_explains_it(written, target, back):
    assert restored_word(written, TargetWords.of(target, "fr" if "'" in target else "de")) == back


def test_a_sentence_is_mended_only_where_every_unknown_word_is_a_broken_copy():
    target = "Le gouvernement a créé des postes supplémentaires dans les écoles."
    assert mended(target, "Le gouvernement a supprimé des postes suppléémentaires dans les écoles.",
                  ["suppléémentaires"], "fr") == Mended(
        "Le gouvernement a supprimé des postes supplémentaires dans les écoles.",
        (("suppléémentaires", "supplémentaires"),))
    # one of two unknown words is no copy of a target word: nothing is mended
    assert mended(target, "Le gouvernement a suprimé des postes suppléémentaires dans les écoles.",
                  ["suprimé", "suppléémentaires"], "fr") is None
    # the piece after an elision and a broken first word, written capitalised as the sentence starts
    assert mended("L'armée a quitté la ville.", "L'arméé a quitté la campagne.", ["arméé"], "fr").text == \
        "L'armée a quitté la campagne."
    assert mended("der Rat hat getagt.", "Dre Rat hat nicht getagt.", ["Dre"], "de").text == "Der Rat hat nicht getagt."
    # mid-sentence a word comes back as the target writes it (a German noun keeps its capital), but the target's
    # first word, capitalised only where it stands, takes the case it was written in
    assert mended("Die Stadt schickt drei Parlamentarier.", "Die Stadt schickt vier parlamentariier.",
                  ["parlamentariier"], "de").text == "Die Stadt schickt vier Parlamentarier."
    assert mended("Die Stadt wählt.", "Morgen wählt dei Stadt.", ["dei"], "de").text == "Morgen wählt die Stadt."
    assert mended("नई सरकार ने कानून बनाया।", "नई सरकारर ने नियम बनाया।", ["सरकारर"], "hi").text == "नई सरकार ने नियम बनाया।"


def test_several_mends_of_one_sentence_keep_the_rest_of_it_as_written():
    target = "Le gouvernement a créé des postes supplémentaires dans les écoles."
    fixed = "Le gouvernement a supprimé des postes supplémentaires dans les écoles."
    # two mends, the first adding a space before the second: each piece is replaced where it stands
    two = mended(target, "Legouvernement a supprimé des postes suppléémentaires dans les écoles.",
                 ["Legouvernement", "suppléémentaires"], "fr")
    assert two == Mended(fixed, (("Legouvernement", "Le gouvernement"), ("suppléémentaires", "supplémentaires")))
    # a distractor in decomposed Unicode: the spans index its composed form, the one the validator reads
    decomposed = unicodedata.normalize("NFD", "Le gouvernement a supprimé des postes suppléémentaires dans les écoles.")
    assert mended(target, decomposed, ["suppléémentaires"], "fr").text == fixed
    # an unknown word the sentence does not hold as a piece: nothing is mended
    assert mended(target, "Le gouvernement a supprimé des postes dans les écoles.", ["suppléémentaires"], "fr") is None


def test_a_mended_word_is_capitalised_only_where_the_sentence_starts():
    assert mended("Le maire a quitté la ville hier.", "Villle a été quittée par le maire hier.", ["Villle"], "fr").text == \
        "Ville a été quittée par le maire hier."
    assert mended("„Die Stadt wächst“, sagte er.", "„Stadtt wächst nicht“, sagte er.", ["Stadtt"], "de").text == \
        "„Stadt wächst nicht“, sagte er."
    # after a number the sentence has started: the word stays as the target writes it
    assert mended("30 personnes sont mortes dans l'accident.", "40 persoonnes sont mortes dans l'accident.",
                  ["persoonnes"], "fr").text == "40 personnes sont mortes dans l'accident."


def test_the_validator_keeps_a_mended_sentence_only_when_it_passes_as_mended():
    validator = Validator("fr")
    target = "Le gouvernement a créé des postes supplémentaires dans les écoles."
    broken_change = "Le gouvernement a supprimé des postes suppléémentaires dans les écoles."
    broken_copy = "Le gouvernement a créé des postes suppléémentaires dans les écoles."
    plain = validator.check_item(target, [broken_change, broken_copy])
    assert [found.reason for found in plain] == ["non_word", "non_word"]
    assert plain[0].unknown == ("suppléémentaires",) and plain[0].mended is None
    change, copy = validator.check_item(target, [broken_change, broken_copy], mend=True)
    assert change.reason is None and change.mends == "suppléémentaires → supplémentaires"
    assert change.mended == "Le gouvernement a supprimé des postes supplémentaires dans les écoles."
    # mended, the second is its target: it stays rejected, as written (a non_word), and nothing is put back
    assert copy.reason == "non_word" and copy.mended is None


def test_the_judge_reads_the_mended_sentence_and_a_mend_leaving_an_unattested_word_is_no_mend():
    seen = []
    validator = Validator("fr", judge=lambda target, distractor: seen.append(distractor) or False)
    target = "Le gouvernement a créé des postes supplémentaires dans les écoles."
    found = validator.check_item(target, ["Le gouvernement a supprimé des postes suppléémentaires dans les écoles."],
                                 mend=True)[0]
    assert found.reason is None and seen == ["Le gouvernement a supprimé des postes supplémentaires dans les écoles."]
    # mended, this one would still hold an invented place (a non_word_suspect): it stays a non_word, unmended
    german = Validator("de")
    target = "Der Stadtrat in Lyon hat den Bau von drei neuen Grundschulen genehmigt."
    invented = "Der Stadtrat in Bravolkin hat den Bau von drei neuen grundschuulen genehmigt."
    found = german.check_item(target, [invented], mend=True)[0]
    assert found.reason == "non_word" and found.unknown == ("grundschuulen",) and found.mended is None


@pytest.mark.parametrize(("target", "written", "back"), [
    ("Intel meldete eine Verzögerung bei neuen Chips.", "Intel meldete eine VerzöGERung bei alten Chips.",
     "Intel meldete eine Verzögerung bei alten Chips."),  # capitals put inside a target word
    ("Die Chefin Katja Kipping forderte Klarheit.", "Die Chefin katjaKipping forderte Ruhe.",
     "Die Chefin Katja Kipping forderte Ruhe."),  # two target words run together at a capital
    ("Le juge a rejeté les accusations.", "Le juge a retenu les accusATIONS.", "Le juge a retenu les accusations."),
])
def test_a_word_whose_case_breaks_is_a_non_word_that_generation_mends(target, written, back):
    lang = "fr" if "juge" in target else "de"
    assert Validator(lang).check(target, written).reason == "non_word"
    found = Validator(lang).check_item(target, [written], mend=True)[0]
    assert found.reason is None and found.mended == back
