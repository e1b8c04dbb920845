"""Checksum sentinels: a small file whose content (and so its mtime) changes exactly when a folder's content does.

Snakemake reruns a job when an input file is newer than its outputs, but a folder's mtime does not change when a
file inside it is rewritten. A local model folder (embedding model, translation model, Stanza models) is
therefore represented in the DAG by a sentinel JSON file listing the sha256 of every file in it; the sentinel
is rewritten only when one of those checksums, or the set of files, changes. Files are rehashed only when
their size or mtime changed since the last look (a stat cache kept beside the sentinel), so re-planning a
workflow does not re-read gigabytes of weights.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from clsd.io import sha256_file

log = logging.getLogger(__name__)


def folder_checksums(folder: Path, stat_cache: dict[str, list]) -> dict[str, str]:
    """sha256 of every file under `folder` (relative POSIX path → hex), reusing `stat_cache` entries whose
    [size, mtime_ns, sha256] still match; `stat_cache` is updated in place."""
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


def write_folder_sentinel(folder: str | Path, sentinel: str | Path) -> str:
    """Make `sentinel` describe `folder`'s current content; its file is only rewritten when the content changed.

    Returns the sentinel's path (for use as a rule input).
    """
    folder, sentinel = Path(folder), Path(sentinel)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder")
    stat_path = sentinel.with_suffix(".stat.json")
    stat_cache = json.loads(stat_path.read_text(encoding="utf-8")) if stat_path.is_file() else {}
    record = {"folder": str(folder), "files": folder_checksums(folder, stat_cache)}
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"
    sentinel.parent.mkdir(parents=True, exist_ok=True)
    if not sentinel.is_file() or sentinel.read_text(encoding="utf-8") != text:
        log.info("%s changed: writing %s", folder, sentinel)
        sentinel.write_text(text, encoding="utf-8")
    stat_path.write_text(json.dumps(stat_cache), encoding="utf-8")
    return str(sentinel)
