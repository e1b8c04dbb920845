"""Extract and validate the numbered sentences of an LLM answer.

Small models add preambles ("Here are four sentences:"), trailing remarks, markdown, `1)` or `1.`
numbering, blank lines, copies of the original, duplicates and sentences in the wrong language. Every
candidate is kept or rejected with a reason, so nothing is dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from clsd.text import normalise

NUMBERED = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?\(?(\d{1,2})\s*[.):\]]\s*(?:\*\*)?\s*(.*\S)\s*$")
QUOTES = "\"'“”„«»‚‘’ "


@dataclass
class Parsed:
    """Accepted sentences (in answer order) and rejected candidates with their reasons."""

    accepted: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)


def numbered_lines(answer: str) -> list[str]:
    """The text of every numbered line, markdown emphasis and surrounding quotes removed."""
    items = []
    for line in answer.splitlines():
        match = NUMBERED.match(line)
        if match:
            text = match.group(2).replace("**", "").strip().strip(QUOTES).strip()
            items.append(text)
    return items


@lru_cache(maxsize=1)
def _detector():
    from lingua import Language, LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_languages(Language.GERMAN, Language.FRENCH, Language.ENGLISH).build()


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of `text` among German, French and English (lingua), None when undecided."""
    language = _detector().detect_language_of(text)
    return None if language is None else language.iso_code_639_1.name.lower()


def parse_answer(answer: str, original: str, lang: str) -> Parsed:
    """Numbered sentences that are non-empty, not a copy of `original`, not duplicates, and in `lang`."""
    result = Parsed()
    seen = {normalise(original)}
    for text in numbered_lines(answer):
        key = normalise(text)
        if not key:
            reason = "empty"
        elif key == normalise(original):
            reason = "copy"
        elif key in seen:
            reason = "duplicate"
        elif detect_language(text) != lang:
            reason = "wrong_language"
        else:
            seen.add(key)
            result.accepted.append(text)
            continue
        result.rejected.append((text, reason))
    return result
