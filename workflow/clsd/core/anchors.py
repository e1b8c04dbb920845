"""Anchors: tokens that survive translation unchanged, capitalised words and numbers (names, places, figures).

Two checks of order rest on them: a published English-pivot file must keep the anchors of its originals
(clsd.translate.pivot), and two line-aligned corpus files must share anchors line by line far more often than
with the neighbouring lines (clsd.data.alignment). Digits of any script are read as ASCII digits, so ২০২৫ and
2025 are one anchor.
"""

from __future__ import annotations

import re
import unicodedata

#: Capitalised words and numbers (a number's separators kept: 0,25 and 1.473 are one token each).
ANCHOR = re.compile(r"\b(?:[A-ZÀ-ÖØ-Þ][\w'’-]*\w|\d+(?:[.,]\d+)*)")


def ascii_digits(token: str) -> str:
    """`token` with every decimal digit of any script written as an ASCII digit."""
    return "".join(str(unicodedata.decimal(char)) if char.isdecimal() else char for char in token)


def anchor_tokens(text: str) -> set[str]:
    """The anchors of one text."""
    return {ascii_digits(token) for token in ANCHOR.findall(text)}


def anchors(*texts: str) -> set[str]:
    """Anchor tokens shared by all `texts` (the two originals of an item: names and numbers both keep)."""
    sets = [anchor_tokens(text) for text in texts]
    return set.intersection(*sets) if sets else set()
