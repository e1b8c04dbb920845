"""Units of a sentence: what the validator compares between a target and its distractor.

Units are links (URLs, domains, e-mail addresses, hashtags and handles: one unit each, never checked as words),
words, numbers (with their decimal and thousands separators: `0,68`, `26.469,89`, `1 000`), signs
before a number (`+`, `-`, `−`), currency symbols (Unicode category Sc), `%`, `‰` and `°`: `50 €` → `50 $`,
`-5 Grad` → `5 Grad` and `+2` → `-2` are changes. A sign counts only right before a digit and not after a letter
or digit (`COVID-19`, `2019-2020` are no signs). A word is a run of letters and combining marks (Devanagari,
Bengali and Thai write vowels as marks: दिन "day" and दान "donation" are two words), with inner hyphens and
apostrophes; in a language written without spaces (the registry's `segmentation: icu`: Japanese, Chinese, Thai)
such a run is a whole clause and is cut into words at ICU's word breaks (clsd.core.words).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import regex

from clsd.core.languages import language
from clsd.core.words import word_spans

SPACES = " \u00a0\u202f\u2009"
NUMBER = rf"\d{{1,3}}(?:[{SPACES}]\d{{3}})+(?!\d|[.,]\d)|\d+(?:[.,]\d+)*"
SIGN = r"(?<![\w)])[+\-−–±](?=\d)"
SYMBOL = r"[%‰°℃\p{Sc}]"
#: Letters, combining marks, numerals that are no digits (², ½) and the joiners inside Indic words (U+200C/D).
LETTERS = r"[\p{L}\p{M}\p{Nl}\p{No}\u200c\u200d]+"
WORD = rf"{LETTERS}(?:[-'’]{LETTERS})*"
#: A URL (with a scheme or www.), an e-mail address, a domain (lower-case labels and a top-level domain of letters:
#: journal-exemple.fr, not z.B. or 0,68), a hashtag or a handle. Final punctuation is not part of it.
LINK = (r"(?:https?://|www\.)[^\s]*[^\s.,;:!?)\]»\"'’]"
        r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
        r"|(?<![\w.@/-])[\p{Ll}\d][\p{Ll}\d-]+(?:\.[\p{Ll}\d-]+)*\.[a-z]{2,6}(?![\w.]*\w)"
        r"|(?<![\w@#])[#@]\w+")
UNIT = regex.compile(rf"(?P<link>{LINK})|(?P<number>{NUMBER})|(?P<sign>{SIGN})|(?P<symbol>{SYMBOL})|(?P<word>{WORD})")
#: Signs that mean the same (U+2212 minus and the en dash typed as minus are a hyphen-minus).
SIGNS = {"−": "-", "–": "-"}
#: Punctuation after which a capital is orthographic, not meaningful (sentence or quotation starts).
OPENERS = set(".!?:;\"„“«»")


@dataclass(frozen=True)
class Unit:
    """One compared unit of a sentence: its text, its kind (word, number, sign, symbol), where it starts,
    whether punctuation separates it from the unit before, and whether it opens the sentence or a quotation
    (where a capital is orthographic, not meaningful)."""

    text: str
    kind: str
    start: int
    after_punct: bool
    opens: bool


@lru_cache(maxsize=4096)
def units(text: str, lang: str) -> tuple[Unit, ...]:
    """The units of a sentence in language `lang` (NFC-normalised: a decomposed accent is not a boundary), in
    order; cached, as every rule asks again."""
    text = unicodedata.normalize("NFC", text)
    found, previous = [], 0
    for start, end, kind in _spans(text, lang):
        gap = text[previous:start]
        before = text[:start].rstrip()
        found.append(Unit(text[start:end], kind, start, any(unicodedata.category(ch).startswith("P") for ch in gap),
                          not before or before[-1] in OPENERS))
        previous = end
    return tuple(found)


def _spans(text: str, lang: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each unit; words of a language written without spaces cut at ICU's word breaks."""
    found = [(match.start(), match.end(), match.lastgroup) for match in UNIT.finditer(text)]
    if language(lang).segmentation == "whitespace":
        return found
    breaks = sorted({edge for span in word_spans(text, lang) for edge in span})
    cut = []
    for start, end, kind in found:
        edges = [start, *(edge for edge in breaks if start < edge < end), end] if kind == "word" else [start, end]
        cut += [(left, right, kind) for left, right in zip(edges, edges[1:])]
    return cut


def tokens(text: str, lang: str) -> list[str]:
    """The words, numbers, signs and symbols of a sentence in language `lang`."""
    return [unit.text for unit in units(text, lang)]


def forms(text: str, lang: str) -> list[str]:
    """The comparison form of each unit of a sentence: case-folded (except words whose case carries meaning
    inside a sentence: the registry's `validation.case_sensitive`), apostrophes unified, combining marks dropped
    where they are optional in writing (`validation.optional_marks`: Arabic harakat), signs unified, spaces inside
    numbers dropped."""
    lists = language(lang).validation
    found = []
    for unit in units(text, lang):
        if unit.kind == "number":
            found.append(regex.sub(f"[{SPACES}]", "", unit.text))
        elif unit.kind == "sign":
            found.append(SIGNS.get(unit.text, unit.text))
        elif unit.kind == "symbol":
            found.append(unit.text)
        elif unit.kind == "link":
            found.append(unit.text.casefold())
        else:
            word = unit.text.replace("’", "'")
            if lists.optional_marks:
                word = "".join(char for char in word if not unicodedata.category(char).startswith("M"))
            meaningful_case = word.casefold() in lists.case_sensitive and not unit.opens
            found.append(word if meaningful_case else word.casefold())
    return found


def surface(text: str, lang: str) -> list[str]:
    """What must differ for a distractor to be more than a surface edit: the unit forms with hyphenated words
    split (Grande-Bretagne = Grande Bretagne)."""
    return [part for unit, form in zip(units(text, lang), forms(text, lang))
            for part in (form.split("-") if unit.kind == "word" else [form])]
