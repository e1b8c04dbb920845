"""How sure each validation reason is: the rules run on the hand-made sets of resources/validation/ and compared with
what a person says of each pair.

Each hand-made pair carries `verdict`, the true verdict (a rejection reason, a suspect note or valid), and, where the
rules are known to say something else, `rules_say`. Precision of a reason is the share of the pairs the rules give it
that truly have it; recall the share of the pairs that truly have it that the rules give it. The sets are small and
made by hand, so the figures say which flags to trust, not how often they fire on real distractors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import yaml

from clsd.core.languages import name
from clsd.core.workflow import project_file
from clsd.validate.lexicon import lexicon
from clsd.validate.validator import rule_verdict

#: The hand-made sets, one file per language: read by the validation table and by tests/test_validate.py (part of
#: the code identity of the rules that read them: clsd.core.code).
DATA_FILES = ("resources/validation/ar.yaml", "resources/validation/bn.yaml", "resources/validation/de.yaml",
              "resources/validation/en.yaml", "resources/validation/fr.yaml", "resources/validation/hi.yaml",
              "resources/validation/is.yaml", "resources/validation/ja.yaml", "resources/validation/ru.yaml",
              "resources/validation/th.yaml", "resources/validation/zh.yaml")


def hand_made(lang: str, folder: Path | None = None) -> list[dict[str, Any]]:
    """The hand-made pairs of `lang` ([] when it has no set), from `folder` (default: the workflow's
    resources/validation/)."""
    path = (folder or project_file("resources/validation")) / f"{lang}.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else []


def rules_say(lang: str, case: dict[str, Any]) -> str:
    """What the rules say of a hand-made pair: its rejection reason, the note of a kept suspect, or valid."""
    found = rule_verdict(case["target"], case["distractor"], lang, lexicon(lang))
    return found.reason or found.note or "valid"


def measure(langs: list[str], folder: Path | None = None) -> pl.DataFrame:
    """Per language with a hand-made set and per verdict the rules can give: pairs the rules give it, of which right
    (precision), pairs that truly have it, of which caught (recall)."""
    rows = []
    for lang in langs:
        said = [(case["verdict"], rules_say(lang, case)) for case in hand_made(lang, folder)]
        for verdict in sorted({truth for truth, _ in said} | {rule for _, rule in said} - {"valid"}):
            if verdict == "valid":
                continue
            given = [truth for truth, rule in said if rule == verdict]
            true = [rule for truth, rule in said if truth == verdict]
            rows.append({"Language": name(lang), "Verdict": verdict, "Given": len(given),
                         "Right": sum(truth == verdict for truth in given), "True": len(true),
                         "Caught": sum(rule == verdict for rule in true)})
    frame = pl.DataFrame(rows, schema={"Language": pl.String, "Verdict": pl.String, "Given": pl.Int64,
                                       "Right": pl.Int64, "True": pl.Int64, "Caught": pl.Int64})
    return frame.with_columns((100 * pl.col("Right") / pl.col("Given")).alias("Precision (%)"),
                              (100 * pl.col("Caught") / pl.col("True")).alias("Recall (%)"))


def note(frame: pl.DataFrame, langs: list[str]) -> list[str]:
    """Lines under the validation table: how sure each reason is, per language of `langs` with a hand-made set, and
    which languages have none (their flags are unmeasured, not sure)."""
    measured = set(frame["Language"])
    unmeasured = [name(lang) for lang in langs if name(lang) not in measured]
    lines = []
    if not frame.is_empty():
        lines.append("How sure each reason is, measured on the hand-made pairs of resources/validation/ (right of given: "
                     "precision; caught of true: recall):")
    for (language,), rows in frame.group_by("Language", maintain_order=True):
        parts = [f"{row['Verdict']} {row['Right']}/{row['Given']} right, {row['Caught']}/{row['True']} caught"
                 for row in rows.iter_rows(named=True)]
        lines.append(f"- {language}: " + "; ".join(parts) + ".")
    if unmeasured:
        lines.append(f"How sure each reason is: not measured for {', '.join(unmeasured)}, which "
                     f"{'has' if len(unmeasured) == 1 else 'have'} no hand-made set (resources/validation/<code>.yaml; "
                     "docs/validation.md says how to add one): read its flags as unverified.")
    return lines
