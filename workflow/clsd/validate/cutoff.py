"""A distractor that is its target cut off: the target's first or last words and nothing else
(`Der Stadtrat von Lyon hat am Dienstag` for `Der Stadtrat von Lyon hat am Dienstag den Bau genehmigt.`), or a
sentence that stops where its target goes on: the target ends its sentence (the registry's `final` punctuation,
closing quotes and brackets aside) and the distractor does not (`Im Programmentwurf tritt die Mitte für einen` for
`Im Programmentwurf tritt die Linke für einen "Neustart" der EU ein, …`). Neither is another meaning, only less of
the same one or no sentence at all: an LLM that stops early, loses the start of its line, or ends a JSON string at
a quotation mark it copies from the target writes them, in any language. None of the 800 GPT-4 distractors of the
two published 50-item slices is either, though a quarter of their WMT19 targets hold a quotation mark.

Compared on the units of clsd.validate.tokens (`surface`: words, numbers, signs, symbols; punctuation left out), so
it works the same in every script, with or without spaces. One unit left out is not enough to tell: dropping a final
`nicht`, `pas` or a leading `Not` changes the meaning, and such a distractor is valid. At least MIN_LEFT_OUT units
left out at one end, and the rest exactly the target's, is a cut-off.
"""

from __future__ import annotations

import re

import regex

from clsd.core.languages import language
from clsd.validate.tokens import surface

#: Units of the target a cut-off leaves out at least (one may be a negation: a real change of meaning).
MIN_LEFT_OUT = 2
#: A sentence's end in any script (Unicode's Sentence_Terminal: `.`, `。`, `।`, `؟`, …), so a distractor in another
#: language than its target's ends its sentence too (and is left to wrong_language).
TERMINAL = regex.compile(r"\p{Sentence_Terminal}")
#: Closing quotes, brackets and spaces after a sentence's final punctuation (`… können".`, `… Solidarität."`).
CLOSING = re.compile(r"[\s\"'»«“”„‘’‚›‹)\]}」』》〉）]+$")


def cut_off(target: str, distractor: str, lang: str) -> str | None:
    """Where `distractor` cuts `target` off and how much it leaves out ("at the end: 4 of 12 units left out"), or
    None when it is neither the target's first or last units nor unfinished (`unfinished`)."""
    whole, part = surface(target, lang), surface(distractor, lang)
    left_out = len(whole) - len(part)
    if part and left_out >= MIN_LEFT_OUT:
        if whole[:len(part)] == part:
            return f"at the end: {left_out} of {len(whole)} units left out"
        if whole[left_out:] == part:
            return f"at the start: {left_out} of {len(whole)} units left out"
    return unfinished(target, distractor, lang)


def unfinished(target: str, distractor: str, lang: str) -> str | None:
    """How `distractor` stops where `target` ends its sentence ("unfinished: stops at 'einen', its target ends with
    '.'"), or None when the target has no final punctuation or the distractor has some too."""
    final = language(lang).final
    ending, stop = CLOSING.sub("", target), CLOSING.sub("", distractor)
    if not ending or not stop or ending[-1] not in final or stop[-1] in final or TERMINAL.match(stop[-1]):
        return None
    return f"unfinished: stops at {stop.split()[-1][-20:]!r}, its target ends with {ending[-1]!r}"
