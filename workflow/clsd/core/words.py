"""Words of a sentence in any registered language: the one segmentation every stage counts and compares with.

Languages written with spaces (the registry's `segmentation: whitespace`) use whitespace-separated tokens,
punctuation attached: the paper's unit for the selection rule (German side ≥ 9 words) and for single-word
distractors. Scripts written without spaces (`segmentation: icu`: Chinese, Japanese, Thai) use ICU's
dictionary-based word breaks (icu4py, which ships ICU itself); segments without a letter or digit
(punctuation) are not words there.
"""

from __future__ import annotations

import re
from functools import lru_cache

from clsd.core.languages import language

WHITESPACE_TOKEN = re.compile(r"\S+")
HAS_WORD_CHARACTER = re.compile(r"\w")


def word_spans(text: str, lang: str) -> list[tuple[int, int]]:
    """Character spans (start, end) of the words of `text` in language `lang`."""
    if language(lang).segmentation == "whitespace":
        return [match.span() for match in WHITESPACE_TOKEN.finditer(text)]
    return [(start, end) for start, end in _icu_segments(text, lang) if HAS_WORD_CHARACTER.search(text, start, end)]


def words(text: str, lang: str) -> list[str]:
    """The words of `text` in language `lang` (see the module docstring)."""
    return [text[start:end] for start, end in word_spans(text, lang)]


def _icu_segments(text: str, lang: str) -> list[tuple[int, int]]:
    """ICU word-break segments of `text` with the language's dictionary rules, as Python string offsets (ICU's
    own offsets count UTF-16 code units, which differ after a character outside the Basic Multilingual Plane)."""
    spans, start = [], 0
    for segment in _breaker_class()(text, lang):
        spans.append((start, start + len(segment)))
        start += len(segment)
    return spans


@lru_cache(maxsize=1)
def _breaker_class():  # -> type[icu4py.breakers.WordBreaker] (imported on first use: only unspaced scripts need it)
    from icu4py.breakers import WordBreaker

    return WordBreaker
