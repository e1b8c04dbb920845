"""The validation report: per dataset and language, how many distractors were checked and found valid, what
was done with the others (re-asked during generation, removed, or only flagged in a published file), the count
per reason, the reorders kept as suspects, the lexicon the non_word rule used, and examples."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

import polars as pl

from clsd.validate.verdicts import JUDGE_REASON, RULE_REASONS, SUSPECTS, Verdict

REASONS = (*RULE_REASONS, JUDGE_REASON)
ACTIONS = {"llm": "re-asked", "rules": "removed"}
#: The table's columns after Dataset and Language: what was checked and what happened to it.
COUNTS = ("Checked", "Valid", "Valid (%)", "Flagged", "Removed", "Re-asked", *SUSPECTS)


def action(kind: str, apply_to_published: bool) -> str:
    """What validation does to a distractor set of this kind: generated sets hold only valid distractors
    (re-asked during generation, or removed), published sets are flagged unless apply_to_published."""
    return ACTIONS.get(kind, "removed" if apply_to_published else "flagged")


def flag(distractors: pl.DataFrame, targets: dict[int, str], check: Callable[[str, str], Verdict]) -> pl.DataFrame:
    """The distractor rows with `flag` (the reason a distractor is invalid, null when valid), `note`
    (reorder_suspect for a kept reorder the rules cannot prove harmless) and `detail` (the unknown words of a
    non_word, the other language of a wrong_language)."""
    verdicts = [check(targets[item], text) for item, text in distractors.select("id", "text").iter_rows()]
    return distractors.with_columns(
        pl.Series("flag", [v.reason for v in verdicts], dtype=pl.String),
        pl.Series("note", [v.note for v in verdicts], dtype=pl.String),
        pl.Series("detail", [v.detail for v in verdicts], dtype=pl.String),
    )


def removed_items(flagged: pl.DataFrame) -> list[dict[str, Any]]:
    """Per (id, lang) with flagged distractors: a failure record naming the reasons (Table 2 footnotes)."""
    rows = flagged.filter(pl.col("flag").is_not_null()).group_by("id", "lang", maintain_order=True).agg(pl.col("flag"))
    return [
        {"id": item, "lang": lang, "reason": f"validation removed {len(reasons)} distractor(s): {', '.join(sorted(set(reasons)))}"}
        for item, lang, reasons in rows.iter_rows()
    ]


def summary(flagged: pl.DataFrame, targets: dict[int, str], rejected: list[dict[str, Any]], act: str, n_examples: int) -> dict[str, Any]:
    """Checked (the file's distractors plus those re-asked during generation), valid, and what happened to the
    others: `flagged` (left in a published file), `removed` (dropped from the set) or `reasked` (replaced during
    generation); counts per reason, reorder suspects among the valid ones, and examples per reason and for
    suspects."""
    in_file = Counter(reason for reason in flagged["flag"].to_list() if reason is not None)
    reasked = Counter(row["reason"] for row in rejected)
    caught = sum(in_file.values())
    checked = flagged.height + sum(reasked.values())
    valid = flagged.height - caught
    kept = flagged.filter(pl.col("flag").is_null())
    examples: dict[str, list[dict[str, Any]]] = {}
    sources = [{"id": row["id"], "reason": row["reason"], "text": row["text"], "detail": None} for row in rejected]
    sources += [{"id": i, "reason": r, "text": t, "detail": d}
                for i, r, t, d in flagged.filter(pl.col("flag").is_not_null()).select("id", "flag", "text", "detail").iter_rows()]
    sources += [{"id": i, "reason": n, "text": t, "detail": d}
                for i, n, t, d in kept.filter(pl.col("note").is_not_null()).select("id", "note", "text", "detail").iter_rows()]
    for row in sources:
        shown = examples.setdefault(row["reason"], [])
        if len(shown) < n_examples:
            shown.append({"id": row["id"], "target": targets.get(row["id"]), "distractor": row["text"]}
                         | ({"detail": row["detail"]} if row["detail"] else {}))
    return {
        "action": act, "checked": checked, "valid": valid, "share_valid": valid / checked if checked else None,
        "flagged": caught if act == "flagged" else 0, "removed": 0 if act == "flagged" else caught,
        "reasked": sum(reasked.values()), **{note: kept.filter(pl.col("note") == note).height for note in SUSPECTS},
        "reasons": dict(in_file + reasked), "in_file": dict(in_file), "reasked_reasons": dict(reasked), "examples": examples,
    }


def table(reports: list[dict[str, Any]]) -> pl.DataFrame:
    """One row per dataset and language: action, checked, valid, valid (%), flagged, removed, re-asked, reorder
    suspects kept, a count per reason, unclear judge answers and the lexicon of the non_word rule."""
    rows = []
    for report in reports:
        row = {"Dataset": report["dataset"], "Language": report["language"], "Action": report["action"],
               "Checked": report["checked"], "Valid": report["valid"],
               "Valid (%)": None if report["share_valid"] is None else 100 * report["share_valid"],
               "Flagged": report["flagged"], "Removed": report["removed"], "Re-asked": report["reasked"],
               **{note: report.get(note, 0) for note in SUSPECTS}}
        row |= {reason: report["reasons"].get(reason, 0) for reason in REASONS}
        row |= {"judge_unclear": report.get("judge_unclear", 0), "Lexicon": report.get("lexicon")}
        rows.append(row)
    schema = {"Dataset": pl.String, "Language": pl.String, "Action": pl.String,
              **{column: pl.Float64 if column == "Valid (%)" else pl.Int64 for column in COUNTS},
              **{reason: pl.Int64 for reason in REASONS}, "judge_unclear": pl.Int64, "Lexicon": pl.String}
    return pl.DataFrame(rows, schema=schema)


def lexicon_notes(reports: list[dict[str, Any]]) -> list[str]:
    """One line per language: the lexicon (name and version) its non_word verdicts used."""
    used = {report["language"]: report.get("lexicon") or "none (the non_word rule was not applied)" for report in reports}
    return [f"Lexicon of the non_word rule, {language}: {name}." for language, name in used.items()]


#: Examples kept per dataset, language and reason in a validation report; the table shows `validation.examples`
#: of them (a display setting, so changing it re-renders the table and reruns no validation).
MAX_EXAMPLES = 20


def example_paragraphs(reports: list[dict[str, Any]], n_examples: int) -> list[str]:
    """Markdown paragraphs, one per dataset, language and reason (and for kept suspects): its first `n_examples`
    examples (target → distractor, with the unknown words or the other language when known)."""
    return [
        "\n".join([f"**{report['dataset']} · {report['language']} · {reason}**"]
                  + [f"- item {ex['id']}: {ex['target']} → {ex['distractor']}" + (f" ({ex['detail']})" if ex.get("detail") else "")
                     for ex in shown[:n_examples]])
        for report in reports
        for reason, shown in report["examples"].items()
        if n_examples
    ]
