"""Words whose case breaks inside them: *VerzöGERung*, *décevANTS*, *katjaKipping*, *europäischenEbene*.

No language writes an upper-case letter after a lower-case one inside a common word; a small model copying its
target writes them when its sampler pushes it off the copy in mid-word (23 of the 792 distractors the local
generator kept on the generator check's 100 news items, none of GPT-4's 800 on the same items). The lexicon cannot
see them: it looks words up case-folded, so *VerzöGERung* is *verzögerung*, and a word of the target is not checked
at all. Names and brands do break their
case (*iPhone*, *AfD*, *BahnCard*, *PiS*), so such a word is judged on evidence, as a capital is
(clsd.validate.lexicon.unattested_capitals):
- attested, left alone: written so in the target or known so to the Hunspell dictionary; or, not broken as below
  and with no run of capitals inside it, listed by SUSPECT_NAME_LISTS other languages' word lists (the names data,
  which fold case: they attest *iPhone*, not *iPHONE*, and no list makes *HoTEL* a name);
- `broken`, a non_word: the target's own word (or two neighbouring ones) miscased, misspelt or run together
  (clsd.validate.mend.restored_word, which generation's mend then puts back); a word the dictionary knows with a
  run of capitals put inside it (*décevANTS*); or a lower-case word the dictionary knows run into a word it knows
  (*anderemAbgeordneten*);
- `unattested`, kept as a non_word_suspect: anything else (*BioNTech* is new to every list here), as a rule cannot
  tell a new brand from a broken word.
"""

from __future__ import annotations

from typing import NamedTuple

import regex

from clsd.core.languages import language
from clsd.validate.lexicon import SUSPECT_NAME_LISTS, Lexicon
from clsd.validate.mend import PIECE, TargetWords, restored_word
from clsd.validate.tokens import units

#: A lower-case letter followed by an upper-case one: where a word's case breaks.
CASE_BREAK = regex.compile(r"(?<=\p{Ll})(?=\p{Lu})")
#: Two or more upper-case letters after a lower-case one: a word's case broken, not two parts of a name joined.
CAPITALS_INSIDE = regex.compile(r"\p{Ll}\p{Lu}{2}")
#: Shortest word on either side of a break that a run-together pair is read from (*PiS* is no *Pi* + *S*).
MIN_SIDE = 2


class Miscased(NamedTuple):
    """Word pieces of a distractor whose case breaks inside them (clsd.validate.miscased.miscased_words)."""

    broken: list[str]  # a known word or the target's own, miscased or run together: non_word
    unattested: list[str]  # nothing attests it or shows it broken: kept as non_word_suspect


def _capitals_inside(piece: str, lex: Lexicon) -> bool:
    """Whether `piece` is a word the dictionary knows with a run of capitals put inside it (*VerzöGERung*,
    *décevANTS*); one capital starting a part is how names join theirs (*ProSieben*, *BlackRock*), not evidence."""
    return bool(CAPITALS_INSIDE.search(piece)) and lex.spelt(piece[:1] + piece[1:].lower())


def _run_together(piece: str, lex: Lexicon) -> bool:
    """Whether `piece` is a lower-case word the dictionary knows run into a word it knows, at a case break
    (*europäischenEbene*); a capitalised head is a name's own (*ProSieben*, *BioNTech*), not evidence."""
    for cut in CASE_BREAK.finditer(piece):
        head, tail = piece[:cut.start()], piece[cut.start():]
        if (len(head) >= MIN_SIDE and len(tail) >= MIN_SIDE and head[:1].islower()
                and lex.spelt(head) and lex.spelt(tail)):
            return True
    return False


def miscased_words(target: str, distractor: str, lex: Lexicon) -> Miscased:
    """The pieces of `distractor`'s words (split at hyphens and apostrophes, as mends are made) with an upper-case
    letter after a lower-case one that nothing attests, sorted into `broken` and `unattested` (module docstring).
    Empty in a script without case."""
    found = Miscased([], [])
    if not language(lex.lang).cased:
        return found
    target_words = TargetWords.of(target, lex.lang)
    as_written = set(target_words.words)
    for unit in units(distractor, lex.lang):
        if unit.kind != "word":
            continue
        for piece in PIECE.findall(unit.text):
            if not CASE_BREAK.search(piece) or piece in as_written or lex.spelt(piece):
                continue
            if (restored_word(piece, target_words) is not None or _capitals_inside(piece, lex)
                    or _run_together(piece, lex)):
                found.broken.append(piece)
            elif CAPITALS_INSIDE.search(piece) or lex.name_lists(piece) < SUSPECT_NAME_LISTS:
                # the word lists fold case: they attest *iPhone* as a name, never a run of capitals inside (*iPHONE*)
                found.unattested.append(piece)
    return found
