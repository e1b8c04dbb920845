"""Are two line-aligned corpus files aligned? One lost line shifts every pair after it, and a benchmark built on
shifted pairs scores about 0 without any other sign.

Names and numbers (clsd.core.anchors) appear on both sides of most true pairs and rarely in a neighbouring
line's translation. For every line whose first side holds anchors, the check counts how often the second side
shares one at the same line, at the next and at the previous one: aligned files share far more at the same
line; files shifted by one line share more with a neighbour. Files with too few anchored lines (scripts without
capitals and few numbers) are not checked, and the log says so.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from clsd.core.anchors import anchor_tokens
from clsd.core.errors import InputError

log = logging.getLogger(__name__)

#: Fewer lines with anchors than this say nothing about alignment: the check is skipped (logged).
MIN_ANCHORED_LINES = 20
#: Fewer anchored lines than this after a break are too few to call a shift.
WINDOW = 10
#: A neighbour's share of shared anchors that shows a shift: aligned WMT and FLORES files share with a neighbour
#: 5-13% of the time (news documents repeat their names), files shifted by one line 45-70%.
MIN_SHIFT_SHARE = 0.2
SHIFTS = (0, 1, -1)


def shared(first: Sequence[set[str]], second: Sequence[set[str]], shift: int) -> list[int | None]:
    """Per line i whose first side has anchors: 1 when the second side's line i + shift shares one, else 0;
    None for lines without anchors (or past either end)."""
    hits: list[int | None] = []
    for i, anchors in enumerate(first):
        j = i + shift
        hits.append(None if not anchors or not 0 <= j < len(second) else int(bool(anchors & second[j])))
    return hits


def share(hits: Sequence[int | None]) -> float:
    counted = [hit for hit in hits if hit is not None]
    return sum(counted) / len(counted) if counted else 0.0


def break_line(aligned: Sequence[int | None], shifted: Sequence[int | None]) -> int:
    """Where a shift most likely starts (0-based line): the split that best explains the hits as "own line before,
    neighbour after" (the most shared anchors with the own line before it plus with the neighbour from it on)."""
    anchored = [i for i, hit in enumerate(aligned) if hit is not None and shifted[i] is not None]
    before = [0]
    for i in anchored:
        before.append(before[-1] + aligned[i])
    after = [0]
    for i in reversed(anchored):
        after.append(after[-1] + shifted[i])
    after.reverse()
    scores = [before[k] + after[k] for k in range(len(anchored))]
    best = max(k for k, score in enumerate(scores) if score == max(scores))  # the latest: where the shift shows first
    return anchored[best]


def check_aligned(texts: Mapping[str, Sequence[str]], paths: Mapping[str, str | Path]) -> dict[str, object]:
    """Fail unless the files of two languages (`texts`: lang → lines, `paths`: lang → file) are line-aligned from
    their first line to their last; the measured shares otherwise (a provenance record). A line lost or added
    anywhere shows as a stretch, from that line to the end, whose lines share anchors with a neighbour more often
    than with their own line."""
    (lang_a, lines_a), (lang_b, lines_b) = list(texts.items())[:2]
    first, second = [anchor_tokens(t) for t in lines_a], [anchor_tokens(t) for t in lines_b]
    hits = {shift: shared(first, second, shift) for shift in SHIFTS}
    anchored = sum(hit is not None for hit in hits[0])
    if anchored < MIN_ANCHORED_LINES:
        log.info("%s / %s: only %d lines with names or numbers; line alignment not checked", paths[lang_a], paths[lang_b], anchored)
        return {"checked": False, "anchored_lines": anchored}
    shares = {shift: share(hits[shift]) for shift in SHIFTS}
    log.info("%s / %s: %d lines with names or numbers share one with the same line in %.0f%%, with the next in %.0f%%, "
             "the previous in %.0f%%", paths[lang_a], paths[lang_b], anchored, 100 * shares[0], 100 * shares[1], 100 * shares[-1])
    breaks = []
    for shift in (1, -1):
        start = break_line(hits[0], hits[shift])
        rest = sum(hit is not None for hit in hits[0][start:])
        own, neighbour = share(hits[0][start:]), share(hits[shift][start:])
        if rest >= WINDOW and neighbour > own and neighbour >= MIN_SHIFT_SHARE:
            breaks.append((neighbour - own, shift, start, rest, own, neighbour))
    if breaks:
        _, shift, start, rest, own, neighbour = max(breaks)
        earlier = hits[0][:start]
        before = f" (before it: {100 * share(earlier):.0f}% with their own)" if sum(h is not None for h in earlier) >= WINDOW else ""
        raise InputError(
            f"is not line-aligned with {paths[lang_a]} from line {start + 1} on: its {rest} lines with names or numbers "
            f"from there share one with the {'next' if shift == 1 else 'previous'} line of {paths[lang_a]} in "
            f"{100 * neighbour:.0f}% and with their own line in {100 * own:.0f}%{before}; a line lost or added there "
            "shifts every pair after it", path=paths[lang_b], line=start + 1, field=lang_b)
    return {"checked": True, "anchored_lines": anchored, "same_line": round(shares[0], 3), "next_line": round(shares[1], 3),
            "previous_line": round(shares[-1], 3)}
