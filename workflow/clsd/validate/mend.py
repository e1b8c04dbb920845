"""A word of the target broken while it was copied, put back: what generation does before it drops a non_word.

A small local model copies most of its target into each variant, and a sampler that penalises long copied runs
(llama.cpp's DRY, `generation.local.sampling`) pushes it off the copy in the middle of a word: *suppléémentaires*
for the target's *supplémentaires*, *derFreiheit* for *der Freiheit*. Such a sentence is rejected as `non_word`,
although the change of meaning it was written for lies elsewhere; on the generator check's 100 news items most of
the non_word rejects were of this kind (bench/non_words.py). `mended` puts the target's own word back where every
unknown word of a sentence is one of them, so that the validator judges the sentence the model meant to write.

A word counts as a broken copy of a target word only on evidence: the target's nearest word is within MAX_EDITS
(and a third of its length), and no other word of the target is as near; or it is two neighbouring words of the
target written as one. Anything else stays as written, and the sentence stays rejected. A mended sentence is
checked again from the start (it may now be a copy of its target) and kept with its mends listed, never silently.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import regex
from rapidfuzz.distance import OSA

from clsd.validate.tokens import units

#: Edits (a letter dropped, added or changed, or two swapped) within which an unknown word is a broken copy of a target word.
MAX_EDITS = 2
#: ... and at most one edit per this many letters of the target word (a short word broken twice is another word).
LETTERS_PER_EDIT = 3
#: The pieces of a word a mend replaces: a hyphenated compound's parts and an elided word are mended one by one.
PIECE = regex.compile(r"[^-'’]+")
#: What may stand between two neighbouring target words that a broken copy runs together: spaces, an elision's
#: apostrophe or a compound's hyphen (put back as the target writes it); a comma or a number keeps them apart.
JOINT = regex.compile(r"\s+|['’-]")


@dataclass(frozen=True)
class Mended:
    """A sentence with its broken copies put back: the new `text`, and (written, put back) per mended piece."""

    text: str
    mends: tuple[tuple[str, str], ...]

    def detail(self) -> str:
        """The mends as a reader checks them: `suppléémentaires → supplémentaires; derFreiheit → der Freiheit`."""
        return "; ".join(f"{written} → {back}" for written, back in self.mends)


def _pieces(text: str, lang: str) -> list[tuple[int, int, str]]:
    """(start, end, piece) of every word piece of `text` (its word units split at hyphens and apostrophes)."""
    return [(unit.start + match.start(), unit.start + match.end(), match.group())
            for unit in units(text, lang) if unit.kind == "word" for match in PIECE.finditer(unit.text)]


def _cased(back: str, written: str, at_start: bool, target_first: str) -> str:
    """`back` (as the target writes it) cased for where it goes: capitalised at the sentence's start; where it
    begins with the target's first word, whose capital belongs to that position, in the case `written` has; else as
    the target writes it (*parlamentariier* mid-sentence is the target's *Parlamentarier*, a German noun)."""
    if not back[:1].isalpha():
        return back
    if at_start:
        return back[:1].upper() + back[1:]
    if back.split()[0] == target_first:
        return (back[:1].upper() if written[:1].isupper() else back[:1].lower()) + back[1:]
    return back


@dataclass(frozen=True)
class TargetWords:
    """What a broken word may be a copy of: the target's word pieces, and each two neighbouring ones joined by
    spaces, an apostrophe or a hyphen, as the target writes the two (*der Freiheit*, *l'Union*; not *Paris, Berlin*)."""

    words: tuple[str, ...]
    neighbours: tuple[str, ...]

    @classmethod
    def of(cls, target: str, lang: str) -> TargetWords:
        text = unicodedata.normalize("NFC", target)
        pieces = _pieces(text, lang)
        neighbours = tuple(text[start:end] for (start, gap, _), (after, end, _) in zip(pieces, pieces[1:])
                           if JOINT.fullmatch(text[gap:after]))
        return cls(tuple(piece for _, _, piece in pieces), neighbours)


def restored_word(written: str, target: TargetWords) -> str | None:
    """The target's word (or two neighbouring words) that `written` is a broken copy of, as the target writes it;
    None when none is near enough or two different words are equally near."""
    folded = written.casefold()
    for pair in target.neighbours:
        if folded == JOINT.sub("", pair).casefold():
            return pair
    best, nearest = None, MAX_EDITS + 1
    for word in target.words:
        limit = min(MAX_EDITS, len(word) // LETTERS_PER_EDIT)
        distance = OSA.distance(folded, word.casefold(), score_cutoff=limit)
        if distance > limit or distance > nearest:
            continue
        if distance == nearest and best is not None and best.casefold() != word.casefold():
            best = None  # two different words of the target are equally near: a guess
        elif distance < nearest:
            best = word
        nearest = distance
    return best


def mended(target: str, distractor: str, unknown: Sequence[str], lang: str) -> Mended | None:
    """`distractor` with each of its `unknown` words (as the validator names them: a word, or the piece of one
    after an elision or a hyphen) replaced by the target word it is a broken copy of (`restored_word`); None when
    one of them is no such copy or is not found as a piece of the sentence (a hyphenated word named whole stays)."""
    wanted = {word.casefold() for word in unknown}
    target_words = TargetWords.of(target, lang)
    text = unicodedata.normalize("NFC", distractor)  # the form units() reads: the spans index it
    mends, found = [], set()
    pieces = _pieces(text, lang)
    for start, end, piece in reversed(pieces):
        if piece.casefold() not in wanted:
            continue
        back = restored_word(piece, target_words)
        if back is None:
            return None
        at_start = not any(char.isalnum() for char in text[:start])  # nothing but quotes or spaces before it
        back = _cased(back, piece, at_start, target_words.words[0])
        text = text[:start] + back + text[end:]
        mends.append((piece, back))
        found.add(piece.casefold())
    if found != wanted:
        return None
    return Mended(text, tuple(reversed(mends)))
