"""The validation report: per dataset and language, how many distractors each rule or the judge caught,
what was done with them (re-asked, removed, flagged), the share kept, and examples."""

from __future__ import annotations

from collections import Counter
from typing import Any

import polars as pl

from clsd.validate import JUDGE_REASON, RULE_REASONS

REASONS = (*RULE_REASONS, JUDGE_REASON)
ACTIONS = {"llm": "re-asked", "rules": "removed"}


def action(kind: str, apply_to_published: bool) -> str:
    """What validation does to a distractor set of this kind: generated sets hold only valid distractors
    (re-asked during generation, or removed), published sets are flagged unless apply_to_published."""
    return ACTIONS.get(kind, "removed" if apply_to_published else "flagged")


def flag(distractors: pl.DataFrame, targets: dict[int, str], reason_of) -> pl.DataFrame:  # noqa: ANN001 (a Validator.reason)
    """The distractor rows with a `flag` column: the reason a distractor is invalid, null when valid."""
    flags = [reason_of(targets[item], text) for item, text in distractors.select("id", "text").iter_rows()]
    return distractors.with_columns(pl.Series("flag", flags, dtype=pl.String))


def removed_items(flagged: pl.DataFrame) -> list[dict[str, Any]]:
    """Per (id, lang) with flagged distractors: a failure record naming the reasons (Table 2 footnotes)."""
    rows = flagged.filter(pl.col("flag").is_not_null()).group_by("id", "lang", maintain_order=True).agg(pl.col("flag"))
    return [
        {"id": item, "lang": lang, "reason": f"validation removed {len(reasons)} distractor(s): {', '.join(sorted(set(reasons)))}"}
        for item, lang, reasons in rows.iter_rows()
    ]


def summary(flagged: pl.DataFrame, targets: dict[int, str], rejected: list[dict[str, Any]], act: str, n_examples: int) -> dict[str, Any]:
    """Counts per reason (of the file and of the generation's re-asks), share kept and examples."""
    in_file = Counter(reason for reason in flagged["flag"].to_list() if reason is not None)
    reasked = Counter(row["reason"] for row in rejected)
    removed = 0 if act == "flagged" else sum(in_file.values())
    checked = flagged.height + sum(reasked.values())
    kept = flagged.height - removed
    examples: dict[str, list[dict[str, Any]]] = {}
    sources = [{"id": row["id"], "reason": row["reason"], "text": row["text"]} for row in rejected]
    sources += [{"id": i, "reason": r, "text": t} for i, r, t in flagged.filter(pl.col("flag").is_not_null()).select("id", "flag", "text").iter_rows()]
    for row in sources:
        shown = examples.setdefault(row["reason"], [])
        if len(shown) < n_examples:
            shown.append({"id": row["id"], "target": targets.get(row["id"]), "distractor": row["text"]})
    return {
        "action": act, "checked": checked, "kept": kept, "share_kept": kept / checked if checked else None,
        "reasons": dict(in_file + reasked), "in_file": dict(in_file), "reasked": dict(reasked), "examples": examples,
    }


def table(reports: list[dict[str, Any]]) -> pl.DataFrame:
    """One row per dataset and language: action, checked, kept, share kept (%), and a count per reason."""
    rows = []
    for report in reports:
        row = {"Dataset": report["dataset"], "Language": report["language"], "Action": report["action"],
               "Checked": report["checked"], "Kept": report["kept"],
               "Kept (%)": None if report["share_kept"] is None else 100 * report["share_kept"]}
        row |= {reason: report["reasons"].get(reason, 0) for reason in REASONS}
        row["judge_unclear"] = report.get("judge_unclear", 0)
        rows.append(row)
    schema = {"Dataset": pl.String, "Language": pl.String, "Action": pl.String, "Checked": pl.Int64, "Kept": pl.Int64,
              "Kept (%)": pl.Float64, **{reason: pl.Int64 for reason in REASONS}, "judge_unclear": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


def example_paragraphs(reports: list[dict[str, Any]]) -> list[str]:
    """Markdown paragraphs, one per dataset, language and reason: its examples (target → distractor)."""
    return [
        "\n".join([f"**{report['dataset']} · {report['language']} · {reason}**"]
                  + [f"- item {ex['id']}: {ex['target']} → {ex['distractor']}" for ex in shown])
        for report in reports
        for reason, shown in report["examples"].items()
    ]
