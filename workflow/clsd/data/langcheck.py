"""Is each column of an input file in its language? A swapped French/German pair of columns would otherwise score
0% everywhere, and a source equal to its target 100%, with nothing to warn the user.

A sample of each column is identified with the registry-wide detector (clsd.core.detect, trigram mode) and the
share detected as the column's language is reported; a column where fewer than half of the sampled texts are in
its language stops the job, naming the file, the column and the language most texts are in.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

from clsd.core.detect import detect, detectable
from clsd.core.errors import InputError
from clsd.core.languages import name

log = logging.getLogger(__name__)

#: Texts sampled per column (spread evenly over the column) and the share that must be in its language.
SAMPLE = 50
MIN_SHARE = 0.5


def sample(texts: list[str], size: int = SAMPLE) -> list[str]:
    """Up to `size` texts spread evenly over `texts` (deterministic: the same file gives the same sample)."""
    if len(texts) <= size:
        return list(texts)
    step = len(texts) / size
    return [texts[int(i * step)] for i in range(size)]


def column_report(texts: list[str], lang: str) -> dict[str, Any]:
    """Share of a column's sampled texts detected as `lang`, and what the sample was detected as."""
    if not detectable(lang):
        return {"language": lang, "checked": False, "why": f"no language detector for {lang}"}
    sampled = sample(texts)
    detected = Counter(detect(text, low_accuracy=True) or "undecided" for text in sampled)
    share = detected[lang] / len(sampled) if sampled else 1.0
    return {"language": lang, "checked": True, "sampled": len(sampled), "share": share, "detected": dict(detected.most_common())}


def check_columns(columns: dict[str, tuple[str, list[str]]], path: str | Path) -> dict[str, dict[str, Any]]:
    """Check every column ({column name: (language, texts)}) of the file at `path`; returns the report per column
    (recorded in the provenance of what is built from it). Raises InputError for a column not in its language."""
    reports = {}
    for column, (lang, texts) in columns.items():
        report = column_report(texts, lang)
        reports[column] = report
        if not report["checked"]:
            log.warning("%s, column %r: language not checked (%s)", path, column, report["why"])
            continue
        log.info("%s, column %r: %.0f%% of %d sampled texts detected as %s", path, column, 100 * report["share"],
                 report["sampled"], name(lang))
        if report["share"] < MIN_SHARE:
            top, count = next(iter(report["detected"].items()))
            raise InputError(
                f"only {report['detected'].get(lang, 0)} of {report['sampled']} sampled texts are {name(lang)}; "
                f"{count} are {name(top)}: is this column in {name(lang)}, or are columns swapped?",
                path=path, field=column,
            )
    return reports
