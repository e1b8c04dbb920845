"""Parquet files that describe themselves: every table carries a JSON provenance record in its metadata."""

from __future__ import annotations

import errno
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

META_KEY = b"clsd"


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes (the checksum recorded for every source file)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def disk_full(exc: BaseException) -> bool:
    """Whether an error is a full disk (pyarrow's OSError carries the errno too, in its own words)."""
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


@contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """Name the file when writing it fills the disk: `no space left on device while writing <path>` (the OSError
    pyarrow or Python raise names none). Snakemake removes the incomplete output; a rerun after freeing space
    continues with the jobs not done."""
    try:
        yield
    except OSError as exc:
        if not disk_full(exc):
            raise
        raise OSError(errno.ENOSPC, f"no space left on device while writing {path}", str(path)) from None


def write_table(frame: pl.DataFrame, path: str | Path, meta: dict[str, Any]) -> None:
    """Write `frame` to Parquet with `meta` stored as JSON under the `clsd` metadata key."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = frame.to_arrow()
    existing = table.schema.metadata or {}
    table = table.replace_schema_metadata({**existing, META_KEY: json.dumps(meta, sort_keys=True).encode()})
    with writing(path):
        pq.write_table(table, str(path))  # a Path goes through a Python file whose close swallows the error


def read_table(path: str | Path) -> pl.DataFrame:
    """Read a Parquet table written by `write_table`."""
    return pl.read_parquet(path)


def read_meta(path: str | Path) -> dict[str, Any]:
    """The provenance record of a Parquet table written by `write_table` ({} when absent)."""
    metadata = pq.read_schema(path).metadata or {}
    raw = metadata.get(META_KEY)
    return json.loads(raw) if raw else {}
