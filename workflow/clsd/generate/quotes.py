"""Straight double quotes shown to the model as curly ones (`generation.prompt_quotes: curly`), and put back after.

A small model that answers in JSON (`answer_format: json`) ends its string at the first `"` it copies from a
target that quotes someone (`Kipping sagte: "Im Sinne` is all that comes back): inside a JSON string a quotation
mark must be written `\\"`, and the 1.5B default rarely does. Shown `“…”` instead, it copies characters that need
no escape; its sentences get the target's straight quotes back before anything checks them, so a distractor
differs from its target in what it says, never in the quotes' style. A target that already holds a curly double
quote is shown as written (which `"` it would stand for is then unclear).
"""

from __future__ import annotations

import re

from clsd.generate.parse import WHOLE_ANSWER, Parsed

STRAIGHT = '"'
OPENING, CLOSING = "“", "”"
#: Curly double quotes a model may write for a straight one it was shown (German opens with „).
CURLY = OPENING + CLOSING + "„"
#: A straight quote after one of these (or at the start) opens a quotation; any other closes it.
BEFORE_OPENING = re.compile(r"(^|[\s(\[{/–—-])" + STRAIGHT)


def curly_applies(sentence: str) -> bool:
    """Whether `sentence` is shown with curly quotes: it holds a straight double quote and no curly one."""
    return STRAIGHT in sentence and not any(char in sentence for char in CURLY)


def shown(sentence: str, style: str) -> str:
    """`sentence` as the prompt shows it: with `style` curly (and `curly_applies`), every straight double quote
    turned into “ where it opens a quotation (at the start, after a space or an opening bracket) and ” where it
    closes one; otherwise as written."""
    if style != "curly" or not curly_applies(sentence):
        return sentence
    return BEFORE_OPENING.sub(lambda match: match.group(1) + OPENING, sentence).replace(STRAIGHT, CLOSING)


def restored(text: str, sentence: str, style: str) -> str:
    """A sentence the model wrote for `sentence`, with the straight quotes back where the prompt showed curly ones
    (any of CURLY becomes `"`); as written when the prompt showed `sentence` as written."""
    if style != "curly" or not curly_applies(sentence):
        return text
    return text.translate({ord(char): STRAIGHT for char in CURLY})


def restored_answer(parsed: Parsed, sentence: str, style: str) -> Parsed:
    """A parsed answer for `sentence` with its sentences `restored` (an answer rejected whole stays as it came)."""
    return Parsed([restored(text, sentence, style) for text in parsed.accepted],
                  [(text if reason in WHOLE_ANSWER else restored(text, sentence, style), reason)
                   for text, reason in parsed.rejected])
