"""Word differences between a true target and a distractor, for the annotation page to highlight."""

from __future__ import annotations

from difflib import SequenceMatcher

from clsd.core.words import word_spans

#: A text cut into pieces that cover it exactly: (piece, changed). Spaces and punctuation between words are unchanged pieces.
Segments = list[tuple[str, bool]]


def segments(text: str, spans: list[tuple[int, int]], changed: set[int]) -> Segments:
    """`text` as consecutive pieces: each word span (changed when its index is in `changed`) and what lies between."""
    pieces: Segments = []
    end = 0
    for index, (start, stop) in enumerate(spans):
        if start > end:
            pieces.append((text[end:start], False))
        pieces.append((text[start:stop], index in changed))
        end = stop
    if end < len(text):
        pieces.append((text[end:], False))
    return pieces


def word_diff(target: str, distractor: str, lang: str) -> tuple[Segments, Segments]:
    """The target and the distractor cut into pieces, the words one has and the other lacks marked as changed
    (the language's word segmentation, so scripts without spaces are compared word by word too)."""
    target_spans, distractor_spans = word_spans(target, lang), word_spans(distractor, lang)
    target_words = [target[a:b] for a, b in target_spans]
    distractor_words = [distractor[a:b] for a, b in distractor_spans]
    removed: set[int] = set()
    added: set[int] = set()
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=target_words, b=distractor_words, autojunk=False).get_opcodes():
        if tag != "equal":
            removed.update(range(i1, i2))
            added.update(range(j1, j2))
    return segments(target, target_spans, removed), segments(distractor, distractor_spans, added)
