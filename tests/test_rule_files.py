"""The rule files' layout: rules/<stage>.smk holds its stage's rules, which take their inputs and params from plain
functions of the config in the stage's subpackage (clsd.<stage>.jobs, tested in tests/test_jobs.py), or of an
earlier stage's; rules/common.smk keeps only what more than one stage (or the Snakefile) uses.

A helper is a top-level `def` or an upper-case name; it is used where its name appears as a word.
"""

from __future__ import annotations

import ast
import re

from conftest import ROOT

#: The rule files in the order the Snakefile includes them (common first), which is the stages' order.
ORDER = ("common", "data", "generate", "validate", "translate", "embed", "score", "analysis", "report")
DEFINED = re.compile(r"^(?:def ([a-z_][a-z0-9_]*)|([A-Z][A-Z0-9_]*) =)", re.M)
JOBS_IMPORT = re.compile(r"^import clsd\.(\w+)\.jobs as (\w+)$", re.M)


def texts() -> dict[str, str]:
    files = {name: (ROOT / "rules" / f"{name}.smk").read_text(encoding="utf-8") for name in ORDER}
    return files | {"Snakefile": (ROOT / "Snakefile").read_text(encoding="utf-8")}


def users(name: str, files: dict[str, str], defined_in: str) -> set[str]:
    """The files that use `name`: the file defining it counts when it uses the name besides defining it."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    return {file for file, text in files.items() if len(word.findall(text)) > (1 if file == defined_in else 0)}


def test_the_snakefile_includes_the_rule_files_in_stage_order():
    included = re.findall(r'^include: "rules/(\w+)\.smk"', (ROOT / "Snakefile").read_text(encoding="utf-8"), re.M)
    assert tuple(included) == ORDER
    assert {path.stem for path in (ROOT / "rules").glob("*.smk")} == set(ORDER)


def test_a_stage_s_rules_take_inputs_and_params_from_its_own_or_earlier_stages_jobs():
    """No function in a stage's rules file (Snakemake's lint: rules and functions apart); the jobs modules it calls
    are its own stage's or earlier stages', each imported where it is used."""
    files = texts()
    wrong = []
    for rank, stage in enumerate(ORDER[1:], start=1):
        text = files[stage]
        wrong += [f"{stage}.smk defines {name}" for name in re.findall(r"^def (\w+)", text, re.M)]
        imported = dict((alias, module) for module, alias in JOBS_IMPORT.findall(text))
        wrong += [f"{stage}.smk imports clsd.{module}.jobs" for module in imported.values() if ORDER.index(module) > rank]
        wrong += [f"{stage}.smk uses {alias} unimported" for alias in set(re.findall(r"\b(\w+_jobs)\.", text)) - set(imported)]
    assert not wrong, wrong


def test_every_function_of_a_jobs_module_serves_a_rule():
    """A stage's jobs.py holds what its rules and jobs read of the config: each function is used by a rule file,
    another jobs module, a rule's script, the config's checks or a module of the package."""
    files = texts()
    modules = sorted((ROOT / "workflow/clsd").glob("*/jobs.py"))
    assert {path.parent.name for path in modules} == set(ORDER[1:]) - {"score"}
    sources = {path: path.read_text(encoding="utf-8") for path in modules}
    readers = [path.read_text(encoding="utf-8") for path in [*(ROOT / "workflow/scripts").glob("*.py"),
                                                             *(ROOT / "workflow/clsd").rglob("*.py")] if path not in sources]
    unused = []
    for path, source in sources.items():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef):
                word = re.compile(rf"\b{node.name}\b")
                elsewhere = [text for other, text in sources.items() if other != path] + list(files.values()) + readers
                if not any(word.search(text) for text in elsewhere) and len(word.findall(source)) < 2:
                    unused.append(f"{path.parent.name}/jobs.py: {node.name}")
    assert not unused, unused


def test_common_keeps_only_what_more_than_one_stage_uses():
    files = texts()
    single = {}
    for name in (a or b for a, b in DEFINED.findall(files["common"])):
        used = users(name, files, "common")
        if len(used) < 2 and not {"common", "Snakefile"} & used:
            single[name] = sorted(used)
    assert not single, f"helpers of common.smk used by one stage only (move them to clsd.<stage>.jobs): {single}"
