"""Row keys of embedding tables: the sha256 of the exact text a model encoded, and the vectors of given keys.

The embedding stage writes rows under these keys; scoring, the shift analysis and the pivot translation (which
keys its rows by the source text) read them back with the same function, so a key is computed one way only.
"""

from __future__ import annotations

import hashlib

import numpy as np
import polars as pl


def text_key(prefix: str, text: str) -> str:
    """Row key of an embedding: sha256 of the exact encoded text (`prefix` + `text`)."""
    return hashlib.sha256((prefix + text).encode("utf-8")).hexdigest()


def lookup(table: pl.DataFrame, keys: list[str]) -> np.ndarray:
    """Vectors of an embedding table (text_id, embedding) for `keys` in order; fails naming a missing key (a text
    the embedding job never saw)."""
    index = {key: row for row, key in enumerate(table["text_id"].to_list())}
    matrix = table["embedding"].to_numpy()
    try:
        rows = [index[key] for key in keys]
    except KeyError as exc:
        raise KeyError(f"no embedding for text key {exc.args[0]}; rerun the embedding job") from exc
    return matrix[rows]
