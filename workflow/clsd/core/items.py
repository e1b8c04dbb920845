"""The shape of a CLSD item and of a direction, shared by every stage.

An item is a source sentence, its true target and N_DISTRACTORS distractors in the target language. A direction
`src-tgt` (ISO codes) takes the item's `src` original as the query and its `tgt` original plus distractors as the
candidates; the paper names de-fr DE→FR (German source, French target and distractors).
"""

from __future__ import annotations

#: Distractors per item and language (the published sets and the paper's prompt).
N_DISTRACTORS = 4


def split_direction(direction: str) -> tuple[str, str]:
    """`de-fr` → ("de", "fr")."""
    src, tgt = direction.split("-")
    return src, tgt


def direction_label(direction: str) -> str:
    """de-fr → DE→FR (the paper's naming)."""
    src, tgt = split_direction(direction)
    return f"{src.upper()}→{tgt.upper()}"
