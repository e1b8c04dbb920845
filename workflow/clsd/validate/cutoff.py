"""A distractor that is its target cut off: the target's first or last words and nothing else
(`Der Stadtrat von Lyon hat am Dienstag` for `Der Stadtrat von Lyon hat am Dienstag den Bau genehmigt.`). It
is no other meaning, only less of the same one, often not even a sentence: an LLM that stops early or loses the
start of its line writes it, in any language.

Compared on the units of clsd.validate.tokens (`surface`: words, numbers, signs, symbols; punctuation left out), so
it works the same in every script, with or without spaces. One unit left out is not enough to tell: dropping a final
`nicht`, `pas` or a leading `Not` changes the meaning, and such a distractor is valid. At least MIN_LEFT_OUT units
left out at one end, and the rest exactly the target's, is a cut-off.
"""

from __future__ import annotations

from clsd.validate.tokens import surface

#: Units of the target a cut-off leaves out at least (one may be a negation: a real change of meaning).
MIN_LEFT_OUT = 2


def cut_off(target: str, distractor: str, lang: str) -> str | None:
    """Where `distractor` cuts `target` off and how much it leaves out ("at the end: 4 of 12 units left out"), or
    None when it is not the target's first or last units."""
    whole, part = surface(target, lang), surface(distractor, lang)
    left_out = len(whole) - len(part)
    if not part or left_out < MIN_LEFT_OUT:
        return None
    if whole[:len(part)] == part:
        where = "at the end"
    elif whole[left_out:] == part:
        where = "at the start"
    else:
        return None
    return f"{where}: {left_out} of {len(whole)} units left out"
