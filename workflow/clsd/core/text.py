"""Comparison forms of text: what counts as "the same sentence" (copies, duplicates) and "the same word"."""

from __future__ import annotations

import unicodedata
from itertools import groupby

from clsd.core.languages import language


def normalise(text: str, lang: str) -> str:
    """Case-folded, whitespace collapsed, the language's sentence-final punctuation (the registry's `final`:
    "。" in Japanese, "।" in Hindi, "؟" in Arabic) dropped: a distractor equal to its target in this form is a
    copy (it ties with the target, so the item can only fail)."""
    return " ".join(text.casefold().split()).rstrip(language(lang).final)


def is_word_character(char: str) -> bool:
    """Whether `char` is part of what a word says: a letter, a digit or a combining mark (Unicode categories L*,
    N*, M*). Marks carry meaning: Devanagari, Bengali and Thai write vowels as marks (दिन "day", दान "donation")."""
    return unicodedata.category(char)[0] in "LNM"


def word_runs(text: str) -> list[str]:
    """The maximal runs of word characters (`is_word_character`) of a text: `l'Europe,` → [l, Europe]."""
    return ["".join(run) for is_word, run in groupby(text, is_word_character) if is_word]
