"""Draw docs/rulegraph.svg: the rule graph (`snakemake --rulegraph`) with each rule in the box of its stage (its
rules/<stage>.smk and the clsd.<stage> subpackage that holds its code) and the results it writes.

Run from the project root (needs Graphviz's `dot`): .venv/bin/python docs/rulegraph.py
The graph is drawn for docs/rulegraph.yaml, a config that switches every branch on (pivot view, LLM, rule-based and
published distractors, the judge, a local model with an export, the MTEB evaluation).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from clsd.core import paths

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("data", "generate", "validate", "translate", "embed", "score", "analysis", "report")
#: The rule files of each stage: rules/<stage>.smk, and the human validation round trip of stage validate.
RULE_FILES = {stage: (stage,) for stage in STAGES} | {"validate": ("validate", "annotation")}
EDGE = re.compile(r"^\s*(\d+) -> (\d+)")
NODE = re.compile(r'^\s*(\d+)\[label = "([^"]+)"')


def rules_by_stage() -> dict[str, str]:
    """Rule name → stage, from the rule files."""
    found = {}
    for stage in STAGES:
        for file in RULE_FILES[stage]:
            for name in re.findall(r"^rule (\w+):", (ROOT / "rules" / f"{file}.smk").read_text(encoding="utf-8"), re.M):
                found[name] = stage
    return found


def outputs() -> dict[str, list[str]]:
    """Rule name → the path templates of its outputs (clsd.core.paths names used in its `output:` block)."""
    found: dict[str, list[str]] = {}
    for file in (file for stage in STAGES for file in RULE_FILES[stage]):
        text = (ROOT / "rules" / f"{file}.smk").read_text(encoding="utf-8")
        for block in re.split(r"^rule ", text, flags=re.M)[1:]:
            name = block.split(":", 1)[0]
            section = re.search(r"^    output:\n(.*?)^    \w", block, re.M | re.S)
            if section is None:
                continue
            templates = []
            for constant, arguments in re.findall(r"paths\.([A-Z0-9_]+)(?:, ([^)]*))?", section.group(1)):
                template = getattr(paths, constant)
                values = dict(re.findall(r'(\w+)="([^"]+)"', arguments or ""))
                templates.append(paths.fill(template, **values))
            found[name] = list(dict.fromkeys(templates))
    return found


def main() -> None:
    """Draw the graph (the target rule `all` is left out: every final result leads there)."""
    dot = subprocess.run([sys.executable, "-m", "snakemake", "--rulegraph", "--nolock", "--configfile", "docs/rulegraph.yaml",
                          "--quiet", "all"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    names = dict(match.groups() for match in map(NODE.match, dot.splitlines()) if match)
    edges = [EDGE.match(line).groups() for line in dot.splitlines() if EDGE.match(line)]
    stage_of, written = rules_by_stage(), outputs()
    lines = ["digraph clsd {", '  rankdir=LR; node [shape=box, fontname="Helvetica", fontsize=10]; edge [color="#666666"];']
    for stage in STAGES:
        members = [(number, name) for number, name in names.items() if stage_of.get(name) == stage]
        if not members:
            continue
        files = ", ".join(f"rules/{file}.smk" for file in RULE_FILES[stage])
        lines.append(f'  subgraph cluster_{stage} {{ label="{files} · clsd.{stage}"; style=rounded; color="#4477aa"; fontname="Helvetica";')
        for number, name in members:
            detail = "\\n".join(written.get(name, []))
            lines.append(f'    n{number} [label="{name}\\n{detail}"];')
        lines.append("  }")
    lines += [f"  n{a} -> n{b};" for a, b in edges if a in names and b in names and names[b] in stage_of]
    lines.append("}")
    svg = subprocess.run(["dot", "-Tsvg"], input="\n".join(lines), capture_output=True, text=True, check=True).stdout
    (ROOT / "docs" / "rulegraph.svg").write_text(svg, encoding="utf-8")


if __name__ == "__main__":
    main()
