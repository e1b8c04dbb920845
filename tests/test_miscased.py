"""Words whose case breaks inside them (clsd.validate.miscased): attested, broken or kept on a guess."""

from __future__ import annotations

import pytest

from clsd.validate.lexicon import lexicon
from clsd.validate.miscased import Miscased, miscased_words

DE = "Die Partei von Katja Kipping hat die Verzögerung im Haushalt erklärt."


@pytest.mark.parametrize(("word", "found"), [
    ("VerzöGERung", Miscased(["VerzöGERung"], [])),  # the target's word, miscased
    ("katjaKipping", Miscased(["katjaKipping"], [])),  # two target words run together
    ("ErzählUNG", Miscased(["ErzählUNG"], [])),  # a known word with capitals put inside it
    ("anderemAbgeordneten", Miscased(["anderemAbgeordneten"], [])),  # a lower-case word run into a known one
    ("Linken-BundestagsabgeordNETen", Miscased(["BundestagsabgeordNETen"], [])),  # a hyphenated word's piece
    ("Linken-BundestagsabgeordNeten", Miscased([], ["BundestagsabgeordNeten"])),  # one capital: as names join parts
    ("BahnCard", Miscased([], [])),  # the dictionary knows it so
    ("iPhone", Miscased([], [])),  # other languages' lists attest it
    ("ProSieben", Miscased([], ["ProSieben"])),  # a name's capitalised parts: no evidence either way
    ("BioNTech", Miscased([], ["BioNTech"])),
    ("Haushalt", Miscased([], [])),  # no break
    ("HaushALT", Miscased(["HaushALT"], [])),  # the target's word: the word lists, which fold case, attest nothing
    ("TaXI", Miscased(["TaXI"], [])),  # a known word, capitals inside, though every language lists *taxi*
    ("iPHONE", Miscased([], ["iPHONE"])),  # a listed name with capitals inside: no list attests that casing
])
def test_a_break_inside_a_word_is_judged_on_evidence(word, found):
    assert miscased_words(DE, f"Die Partei von {word} hat die Verzögerung erklärt.", lexicon("de")) == found


def test_a_word_the_target_writes_so_and_a_script_without_case_are_left_alone():
    assert miscased_words("Die PiS hat gewonnen.", "Die PiS hat verloren.", lexicon("de")) == Miscased([], [])
    assert miscased_words("सरकार ने योजना बनाई।", "सरकार ने iPhoneX बनाई।", lexicon("hi")) == Miscased([], [])
