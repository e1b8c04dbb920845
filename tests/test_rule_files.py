"""The rule files' layout: each stage's input and param helpers sit beside its rules in rules/<stage>.smk, and
rules/common.smk keeps only what more than one stage (or the Snakefile) uses.

A helper is a top-level `def` or an upper-case name of a rule file; it is used where its name appears as a word.
"""

from __future__ import annotations

import re

from conftest import ROOT

#: The rule files in the order the Snakefile includes them (common first).
ORDER = ("common", "data", "generate", "validate", "translate", "embed", "score", "analysis", "report")
DEFINED = re.compile(r"^(?:def ([a-z_][a-z0-9_]*)|([A-Z][A-Z0-9_]*) =)", re.M)


def texts() -> dict[str, str]:
    files = {name: (ROOT / "rules" / f"{name}.smk").read_text(encoding="utf-8") for name in ORDER}
    return files | {"Snakefile": (ROOT / "Snakefile").read_text(encoding="utf-8")}


def helpers(text: str) -> list[str]:
    return [a or b for a, b in DEFINED.findall(text)]


def users(name: str, files: dict[str, str], defined_in: str) -> set[str]:
    """The files that use `name`: the file defining it counts when it uses the name besides defining it."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    return {file for file, text in files.items() if len(word.findall(text)) > (1 if file == defined_in else 0)}


def test_the_snakefile_includes_the_rule_files_in_stage_order():
    included = re.findall(r'^include: "rules/(\w+)\.smk"', (ROOT / "Snakefile").read_text(encoding="utf-8"), re.M)
    assert tuple(included) == ORDER
    assert {path.stem for path in (ROOT / "rules").glob("*.smk")} == set(ORDER)


def test_common_keeps_only_what_more_than_one_stage_uses():
    files = texts()
    single = {}
    for name in helpers(files["common"]):
        used = users(name, files, "common")
        if len(used) < 2 and not {"common", "Snakefile"} & used:
            single[name] = sorted(used)
    assert not single, f"helpers of common.smk used by one stage only (move them to its rules file): {single}"


def test_a_stage_s_helpers_serve_its_own_rules_and_later_stages_only():
    files = texts()
    wrong = {}
    for rank, stage in enumerate(ORDER[1:], start=1):
        for name in helpers(files[stage]):
            used = users(name, files, stage)
            earlier = sorted(file for file in used if file in ORDER[:rank] or file == "Snakefile")
            if stage not in used or earlier:
                wrong[f"{stage}.smk: {name}"] = sorted(used)
    assert not wrong, wrong
