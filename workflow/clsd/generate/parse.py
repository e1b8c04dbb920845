"""Extract and validate the numbered sentences of an LLM answer.

Small models add preambles ("Here are four sentences:"), trailing remarks, markdown, `1)` or `1.`
numbering, blank lines, copies of the original, duplicates and sentences in the wrong language. Every
candidate is kept or rejected with a reason, so nothing is dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clsd.core.detect import other_language
from clsd.core.text import normalise

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


def parse_answer(answer: str, original: str, lang: str, truncated: bool = False) -> Parsed:
    """Numbered sentences that are non-empty, not a copy of `original` (up to case, spacing and the language's
    final punctuation), not duplicates, and in `lang` (the validator's language check,
    clsd.core.detect.other_language: any registry language or foreign script).

    `truncated`: the answer was cut at `max_tokens` (finish_reason `length`), so its last sentence may stop
    mid-word; it is rejected (`truncated`), never taken as a distractor. Scripts that cost many tokens per word
    (Bengali, Hindi) reach the limit first."""
    result = Parsed()
    copy = normalise(original, lang)
    seen = {copy}
    lines = numbered_lines(answer)
    for position, text in enumerate(lines, 1):
        key = normalise(text, lang)
        if truncated and position == len(lines):
            reason = "truncated"
        elif not key:
            reason = "empty"
        elif key == copy:
            reason = "copy"
        elif key in seen:
            reason = "duplicate"
        elif other_language(original, text, lang) is not None:
            reason = "wrong_language"
        else:
            seen.add(key)
            result.accepted.append(text)
            continue
        result.rejected.append((text, reason))
    return result
