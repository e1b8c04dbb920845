"""The Levenshtein ratio of two sentences and the closeness bins over it: Table 3's measure, used by the analysis
(Table 3, the closeness profile) and by generation, which chooses an item's distractors by the same bins.

The ratio is rapidfuzz's normalised InDel similarity (= python-Levenshtein's `ratio`). The bins are Table 3's,
widened so that every ratio falls in one: below 0.6 (Table 3's lowest bin starts at 0.3), [0.6,0.7), [0.7,0.8),
[0.8,0.9) and 0.9 up to a copy (1).
"""

from __future__ import annotations

from rapidfuzz.distance import Indel

#: Lower edges of the five closeness bins (the last one ends at 1 inclusive).
EDGES = (0.0, 0.6, 0.7, 0.8, 0.9)


def similarity(a: str, b: str) -> float:
    """Levenshtein ratio (normalised InDel similarity) in [0, 1]."""
    return Indel.normalized_similarity(a, b)


def bin_of(ratio: float) -> int:
    """The index of the closeness bin (EDGES) of a Levenshtein ratio."""
    return max(i for i, edge in enumerate(EDGES) if ratio >= edge)
