"""Checksum sentinels: a small file whose content changes exactly when a folder's content does.

Snakemake reruns a job when an input file changed, but a folder's mtime does not change when a file inside it
is rewritten. A local model folder (embedding model, translation model, Stanza models) is therefore represented
in the DAG by a sentinel JSON file listing the sha256 of every file in it (paths relative to the folder, so a
moved folder with the same files has the same sentinel). The workflow computes that record while it plans
(reading, never writing) and passes its checksum to the job that writes the sentinel: the job reruns only
when a file's content changes, not when it is merely touched or copied.

Files are rehashed only when their size or mtime changed since the last look: a stat cache beside the
sentinel, written atomically by real runs (never by a dry run).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from clsd.core.io import sha256_file

log = logging.getLogger(__name__)


def folder_checksums(folder: Path, stat_cache: dict[str, list]) -> dict[str, str]:
    """sha256 of every file under `folder` (relative POSIX path → hex), reusing `stat_cache` entries whose
    [size, mtime_ns, sha256] still match; `stat_cache` is updated in place (in memory)."""
    checksums: dict[str, str] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        stat = path.stat()
        cached = stat_cache.get(relative)
        if cached is None or cached[:2] != [stat.st_size, stat.st_mtime_ns]:
            cached = [stat.st_size, stat.st_mtime_ns, sha256_file(path)]
            stat_cache[relative] = cached
        checksums[relative] = cached[2]
    for stale in set(stat_cache) - set(checksums):
        del stat_cache[stale]
    return checksums


def stat_cache_path(sentinel: str | Path) -> Path:
    return Path(sentinel).with_suffix(".stat.json")


def load_stat_cache(sentinel: str | Path) -> dict[str, list]:
    """The stat cache kept beside a sentinel ({} when there is none or it cannot be read)."""
    path = stat_cache_path(sentinel)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def write_atomically(path: str | Path, text: str) -> None:
    """Replace `path` with `text` in one step (a temporary file in the same folder, then os.replace): a reader or a
    killed run never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False) as handle:
        handle.write(text)
    os.replace(handle.name, path)


def save_stat_cache(sentinel: str | Path, cache: dict[str, list]) -> None:
    write_atomically(stat_cache_path(sentinel), json.dumps(cache))


def record_text(checksums: dict[str, str]) -> str:
    """The sentinel's content: every file's checksum, by path relative to the folder."""
    return json.dumps({"files": checksums}, indent=1, sort_keys=True) + "\n"


def planned_checksum(folder: str | Path, sentinel: str | Path) -> tuple[str, dict[str, list]]:
    """While planning (no writes): the checksum of the sentinel's content for `folder`, and the refreshed stat
    cache for a real run to save."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder")
    cache = load_stat_cache(sentinel)
    text = record_text(folder_checksums(folder, cache))
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), cache


def write_sentinel(folder: str | Path, sentinel: str | Path) -> None:
    """The job's part: write the sentinel of `folder` and its stat cache (both atomically)."""
    cache = load_stat_cache(sentinel)
    write_atomically(sentinel, record_text(folder_checksums(Path(folder), cache)))
    save_stat_cache(sentinel, cache)
    log.info("wrote the checksums of %s to %s", folder, sentinel)
