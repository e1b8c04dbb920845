"""Comparison form of sentences: what counts as "the same sentence" for copies and duplicates."""

from __future__ import annotations


def normalise(text: str) -> str:
    """Case-folded, whitespace collapsed, final punctuation dropped: a distractor equal to its target in this
    form is a copy (it ties with the target, so the item can only fail)."""
    return " ".join(text.casefold().split()).rstrip(".!?…")
