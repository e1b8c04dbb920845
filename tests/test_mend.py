"""Broken copies of target words put back (clsd.validate.mend), alone and inside the validator, in three scripts."""

from __future__ import annotations

import pytest

from clsd.validate.mend import Mended, mended, restored_word
from clsd.validate.validator import Validator


@pytest.mark.parametrize(("written", "words", "back"), [
    ("suppléémentaires", ["des", "postes", "supplémentaires"], "supplémentaires"),  # a letter doubled
    ("Bundesregirung", ["Die", "Bundesregierung", "hat"], "Bundesregierung"),  # a letter dropped
    ("derFreiheit", ["im", "Namen", "der", "Freiheit"], "der Freiheit"),  # two neighbouring words run together
    ("Freiheitder", ["im", "Namen", "der", "Freiheit"], None),  # run together, but not in the target's order
    ("Kurz", ["Kunst", "Kurs"], "Kurs"),  # Kurs one edit away, Kunst two: the nearest, alone
    ("Haus", ["Maus", "Laus"], None),  # two different words equally near: a guess
    ("xyz", ["xy"], None),  # a word of two letters allows no edit
    ("Regierungsschef", ["Regierung", "Chef"], None),  # six letters from anything: another word, not a broken one
    ("правительствоо", ["правительство", "России"], "правительство"),  # Cyrillic
])
def test_a_word_is_put_back_only_where_one_target_word_explains_it(written, words, back):
    assert restored_word(written, words) == back


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
