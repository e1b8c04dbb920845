"""The table every embedding job writes, whether the model ran here or behind an endpoint: one row per distinct text,
keyed by `text_key(row key prefix, text)`, its vector as a float32 array (Parquet under results/embeddings/)."""

from __future__ import annotations

import numpy as np
import polars as pl

from clsd.core.keys import text_key


def embedding_table(texts: list[str], prefix: str, vectors: np.ndarray) -> pl.DataFrame:
    """Embeddings keyed by `text_key(prefix, text)`."""
    if len(texts) != len(vectors):
        raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
    return pl.DataFrame(
        {"text_id": [text_key(prefix, text) for text in texts], "embedding": vectors},
        schema={"text_id": pl.String, "embedding": pl.Array(pl.Float32, vectors.shape[1])},
    )


def empty_embedding_table() -> pl.DataFrame:
    """An embedding table without rows (a view with no item to score: no model is loaded for it)."""
    return pl.DataFrame(schema={"text_id": pl.String, "embedding": pl.List(pl.Float32)})
