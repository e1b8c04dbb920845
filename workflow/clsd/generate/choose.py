"""Which of an answer's valid sentences an item keeps when it holds more than the item's free places
(`generation.candidates` above four): the ones whose closeness to the target fills the reference profile best.

A generator asked for four distractors writes what comes easiest: from a small local model, near-copies (one word
changed). Asked for more, it also writes phrase-level rewrites; keeping the four whose Levenshtein ratios (in the
closeness profile's bins, clsd.core.levenshtein) come closest to the reference's share per bin makes the set aim at
a profile (by default GPT-4's published one), not at a threshold. The choice is per item, so it is the same whatever order the
items are answered in, and a replayed answer keeps the same four.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from clsd.core.items import N_DISTRACTORS
from clsd.core.levenshtein import EDGES, bin_of, similarity
from clsd.core.words import words

#: Least share of its target's words a distractor of GPT-4's kind keeps: 99.4% of the 800 GPT-4 distractors of the
#: published slices hold at least 0.7 times their target's words (median 1.00), where a small model rewriting a
#: long news sentence often writes a shorter summary of it (18% of what the local default kept of 50 WMT21 German
#: items): a far sentence no fine reading is needed to tell from the translation.
MIN_LENGTH_RATIO = 0.7


def shortened(target: str, text: str, lang: str) -> bool:
    """Whether `text` holds fewer than MIN_LENGTH_RATIO times the words of `target` (clsd.core.words)."""
    return len(words(text, lang)) < MIN_LENGTH_RATIO * len(words(target, lang))


def expected_counts(shares: Sequence[float], n: int = N_DISTRACTORS) -> list[float]:
    """How many of an item's `n` distractors each bin should hold under a profile's percentages."""
    return [n * share / 100.0 for share in shares]


def closest_to_profile(target: str, kept: Sequence[str], new: Sequence[str], free: int, shares: Sequence[float]) -> list[int]:
    """Indices (ascending) of `free` sentences of `new` that, with the item's `kept` ones, put its distractors'
    bins closest (L1) to `shares` (percent per bin of clsd.core.levenshtein.EDGES); ties go to answer order."""
    if free >= len(new):
        return list(range(len(new)))
    expected = expected_counts(shares)
    base = [0] * len(EDGES)
    for text in kept:
        base[bin_of(similarity(target, text))] += 1
    bins = [bin_of(similarity(target, text)) for text in new]

    def distance(chosen: tuple[int, ...]) -> float:
        counts = list(base)
        for index in chosen:
            counts[bins[index]] += 1
        return sum(abs(count - want) for count, want in zip(counts, expected))

    return list(min(combinations(range(len(new)), free), key=distance))  # min keeps the first of equals: answer order
