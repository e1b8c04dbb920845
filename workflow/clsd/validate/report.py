"""The validation report: per dataset and language, how many distractors were checked and found valid, what
was done with the others (re-asked during generation, removed, or only flagged in a published file), the count
per reason, the reorders kept as suspects, the lexicon the non_word rule used, and examples."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

import polars as pl

from clsd.core.text import normalise
from clsd.validate.verdicts import DUPLICATE, JUDGE_REASON, RULE_REASONS, SUSPECTS, Verdict

REASONS = (*RULE_REASONS, JUDGE_REASON)
ACTIONS = {"llm": "re-asked", "rules": "removed"}
#: The table's columns after Dataset and Language: what was written and checked, and what happened to it.
COUNTS = ("Written", "Valid", "Valid (%)", "Checked", "Valid of checked (%)", "Flagged", "Removed", "Re-asked", *SUSPECTS,
          "Mended")
SHARES = ("Valid (%)", "Valid of checked (%)")
#: Under the table: what its columns count.
COLUMNS_NOTE = ("Written: every distractor of a published file, or every sentence the generator wrote (re-asks and the "
                "copies, repeats and other languages its own filter dropped included); Valid (%) of Written, the figure "
                "to compare with a published set's validity. Checked: what passed generation's own filter and the "
                "validator judged; Valid of checked (%) of those. Written = Valid + Flagged + Removed + Re-asked. Flagged "
                "distractors stay in their published file; removed ones leave the set; re-asked ones were replaced "
                "during generation. unrelated: below validation.min_closeness, the Levenshtein ratio of the two "
                "sentences' words (no adversarial example). reorder_suspect: valid reorders the rules cannot prove "
                "harmless (kept; the judge decides when it is on). Mended: kept distractors that were valid only once "
                "generation put back a target word they broke while copying it (generation.mend_broken_words; each "
                "listed with what was written).")


def action(kind: str, apply_to_published: bool) -> str:
    """What validation does to a distractor set of this kind: generated sets hold only valid distractors
    (re-asked during generation, or removed), published sets are flagged unless apply_to_published."""
    return ACTIONS.get(kind, "removed" if apply_to_published else "flagged")


def flag(distractors: pl.DataFrame, targets: dict[int, str], check_item: Callable[[str, list[str]], list[Verdict]]) -> pl.DataFrame:
    """The distractor rows with `flag` (the reason a distractor is invalid, null when valid), `note`
    (reorder_suspect for a kept reorder the rules cannot prove harmless), `detail` (the unknown words of a
    non_word, the other language of a wrong_language, the closeness of an unrelated one) and `judge` (what the LLM
    judge answered: same, different or unclear; null when it was not asked), checked item by item (a per-item judge asks once per item
    and language). A distractor equal (up to case, spacing and final punctuation) to an earlier valid one of the
    same item is `duplicate`: an item needs four different ones."""
    rows: dict[tuple[int, str], list[int]] = {}
    for row, (item, lang) in enumerate(distractors.select("id", "lang").iter_rows()):
        rows.setdefault((item, lang), []).append(row)
    texts = distractors["text"].to_list()
    verdicts: list[Verdict] = [Verdict()] * distractors.height
    for (item, _), members in rows.items():
        for row, found in zip(members, check_item(targets[item], [texts[row] for row in members])):
            verdicts[row] = found
    seen: dict[tuple[int, str], set[str]] = {}
    for row, (item, lang, text) in enumerate(distractors.select("id", "lang", "text").iter_rows()):
        key, earlier = normalise(text, lang), seen.setdefault((item, lang), set())
        if verdicts[row].reason is None and key in earlier:  # an item needs four different distractors
            verdicts[row] = Verdict(DUPLICATE, detail="the same as an earlier distractor of this item")
        earlier.add(key)
    return distractors.with_columns(
        pl.Series("flag", [v.reason for v in verdicts], dtype=pl.String),
        pl.Series("note", [v.note for v in verdicts], dtype=pl.String),
        pl.Series("detail", [v.detail for v in verdicts], dtype=pl.String),
        pl.Series("judge", [v.judged for v in verdicts], dtype=pl.String),
    )


COPY_LEFT_OUT = "a distractor is a copy of its target (a certain tie), not scored"


def kept_and_removed(flagged: pl.DataFrame, act: str) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """The distractors that stay and the failure records of items left out (Table 2 footnotes). Flagged published
    sets keep their distractors, but an item holding a copy of its target is left out whatever
    apply_to_published says: a copy ties with the target, so the item could only count as a failure."""
    if act != "flagged":
        return flagged.filter(pl.col("flag").is_null()), removed_items(flagged)
    copies = flagged.filter(pl.col("flag") == "copy").select("id", "lang").unique(maintain_order=True)
    kept = flagged.join(copies, on=["id", "lang"], how="anti")
    return kept, [{"id": item, "lang": lang, "reason": COPY_LEFT_OUT} for item, lang in copies.iter_rows()]


def removed_items(flagged: pl.DataFrame) -> list[dict[str, Any]]:
    """Per (id, lang) with flagged distractors: a failure record naming the reasons (Table 2 footnotes)."""
    rows = flagged.filter(pl.col("flag").is_not_null()).group_by("id", "lang", maintain_order=True).agg(pl.col("flag"))
    return [
        {"id": item, "lang": lang, "reason": f"validation removed {len(reasons)} distractor(s): {', '.join(sorted(set(reasons)))}"}
        for item, lang, reasons in rows.iter_rows()
    ]


def summary(flagged: pl.DataFrame, targets: dict[int, str], rejected: list[dict[str, Any]], act: str, n_examples: int,
            unused: int = 0, mended: list[dict[str, Any]] = ()) -> dict[str, Any]:
    """What the generator wrote and what became of it: `written` (the file's distractors plus every sentence generation
    rejected, and the `unused` valid ones it wrote after an item had its four), `valid` of them and its share (the
    figure to compare with a published set, which counts all it holds); `checked`, what passed generation's own filter
    of copies, repeats and other languages and the validator judged, and the share valid of those; what happened to
    the others: `flagged` (left in a published file), `removed` (dropped from the set) or `reasked` (replaced during
    generation); counts per reason, suspects among the valid ones, the kept distractors generation `mended`
    (clsd.generate.llm.mended_rows), and examples per reason, for suspects and for mends."""
    in_file = Counter(reason for reason in flagged["flag"].to_list() if reason is not None)
    reasked = Counter(row["reason"] for row in rejected)
    caught = sum(in_file.values())
    written = flagged.height + len(rejected) + unused
    checked = written - sum(row.get("caught_by") == "generation" for row in rejected)
    valid = flagged.height - caught + unused
    kept = flagged.filter(pl.col("flag").is_null())
    examples: dict[str, list[dict[str, Any]]] = {}
    sources = [{"id": row["id"], "reason": row["reason"], "text": row["text"], "detail": None} for row in rejected]
    sources += [{"id": i, "reason": r, "text": t, "detail": d}
                for i, r, t, d in flagged.filter(pl.col("flag").is_not_null()).select("id", "flag", "text", "detail").iter_rows()]
    sources += [{"id": i, "reason": n, "text": t, "detail": d}
                for i, n, t, d in kept.filter(pl.col("note").is_not_null()).select("id", "note", "text", "detail").iter_rows()]
    sources += [{"id": row["id"], "reason": "mended", "text": row["text"], "detail": row["mends"]}
                for row in mended]
    for row in sources:
        shown = examples.setdefault(row["reason"], [])
        if len(shown) < n_examples:
            shown.append({"id": row["id"], "target": targets.get(row["id"]), "distractor": row["text"]}
                         | ({"detail": row["detail"]} if row["detail"] else {}))
    return {
        "action": act, "written": written, "valid": valid, "share_valid": valid / written if written else None,
        "checked": checked, "share_valid_checked": valid / checked if checked else None,
        "flagged": caught if act == "flagged" else 0, "removed": 0 if act == "flagged" else caught,
        "reasked": sum(reasked.values()), **{note: kept.filter(pl.col("note") == note).height for note in SUSPECTS},
        "mended": len(mended),
        "reasons": dict(in_file + reasked), "in_file": dict(in_file), "reasked_reasons": dict(reasked), "examples": examples,
    }


def table(reports: list[dict[str, Any]]) -> pl.DataFrame:
    """One row per dataset and language: action, sentences written, valid and its share, checked by the validator and
    the share valid of those, flagged, removed, re-asked, suspects kept, a count per reason, unclear judge answers and
    the lexicon of the non_word rule."""
    rows = []
    for report in reports:
        row = {"Dataset": report["dataset"], "Language": report["language"], "Action": report["action"],
               "Written": report["written"], "Valid": report["valid"], "Valid (%)": percent(report["share_valid"]),
               "Checked": report["checked"], "Valid of checked (%)": percent(report["share_valid_checked"]),
               "Flagged": report["flagged"], "Removed": report["removed"], "Re-asked": report["reasked"],
               **{note: report.get(note, 0) for note in SUSPECTS}, "Mended": report.get("mended", 0)}
        row |= {reason: report["reasons"].get(reason, 0) for reason in REASONS}
        row |= {"judge_unclear": report.get("judge_unclear", 0), "Lexicon": report.get("lexicon")}
        rows.append(row)
    schema = {"Dataset": pl.String, "Language": pl.String, "Action": pl.String,
              **{column: pl.Float64 if column in SHARES else pl.Int64 for column in COUNTS},
              **{reason: pl.Int64 for reason in REASONS}, "judge_unclear": pl.Int64, "Lexicon": pl.String}
    return pl.DataFrame(rows, schema=schema)


def percent(share: float | None) -> float | None:
    """A share in percent (None stays None: nothing was written)."""
    return None if share is None else 100 * share


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
