"""Generate the site's reference pages at build time (run by mkdocs-gen-files, see mkdocs.yml).

`reference/config.md`: every key of `workflow/schemas/config.schema.yaml` (nested properties, maps under
`additionalProperties`, `$defs` reached through `$ref`, the branches of `oneOf`) with its type, default and
description, one table per object, so the page cannot drift from the schema the workflow validates against.
`reference/scripts.md`: the console scripts of `pyproject.toml` ([project.scripts]) with the first paragraph of
the docstring of the module each one runs, read with `ast` (nothing of clsd is imported).

Both are read from the checkout being built (this file's folder's parent), not from an installed clsd.
"""

from __future__ import annotations

import ast
import logging
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mkdocs_gen_files
import yaml
from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = ROOT / "workflow"
#: How a map's key (a dataset's or model's name, a language) is written in a key path, by the map's own key; a map
#: whose key means another thing under another parent (a dataset's `source.files` is by language) is named by both.
NAMES = {"datasets": "<dataset>", "models": "<model>", "files": "<dataset>", "sampling": "<parameter>",
         "source.files": "<lang>"}

log = logging.getLogger("mkdocs.plugins.clsd.gen_reference")


def entry_name(path: str, key: str) -> str:
    """How an entry of the map at `path` (whose own key is `key`) is written: `<lang>`, `<dataset>`, `<name>`."""
    parent = path.rsplit(".", 2)[-2] if path.count(".") else ""
    return NAMES.get(f"{parent}.{key}", NAMES.get(key, "<name>"))


@dataclass
class Row:
    """One key of the reference: its dotted path, type, default and description."""

    path: str
    type: str
    default: str
    description: str


@dataclass
class Section:
    """One object of the schema: its path, what it is, and the rows of its keys."""

    path: str
    description: str
    rows: list[Row] = field(default_factory=list)


def resolve(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The node a `$ref` (`#/$defs/name`) points to, merged under the node's own keys; other nodes as they are."""
    ref = node.get("$ref")
    if ref is None:
        return node
    target: Any = schema
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return {**resolve(target, schema), **{k: v for k, v in node.items() if k != "$ref"}}


def flow(value: Any) -> str:
    """A default written as YAML flow (what a config file would hold): null, true, [de-fr, fr-de], {}."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '""' if value == "" else value
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in value.items()) + "}"
    return str(value)


def type_of(node: dict[str, Any], schema: dict[str, Any]) -> str:
    """The type a reader writes: `string or null`, `one of none, hub`, `map of <name> → string`, `string or object`."""
    node = resolve(node, schema)
    if "enum" in node:
        return "one of " + ", ".join(f"`{flow(v)}`" for v in node["enum"])
    if "oneOf" in node:
        return " or ".join(type_of(branch, schema) for branch in node["oneOf"])
    kind = node.get("type", "any")
    kinds = kind if isinstance(kind, list) else [kind]
    words = []
    for k in kinds:
        if k == "array" and isinstance(node.get("items"), dict):
            words.append(f"list of {type_of(node['items'], schema)}")
        elif k == "object" and isinstance(node.get("additionalProperties"), dict) and "properties" not in node:
            words.append(f"map of name → {type_of(node['additionalProperties'], schema)}")
        else:
            words.append(k)
    return " or ".join(words)


def limits(node: dict[str, Any]) -> str:
    """Bounds and patterns the schema enforces, as a short clause after the description."""
    parts = []
    for key, word in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("minItems", "items ≥"),
                      ("maxItems", "items ≤"), ("minProperties", "entries ≥")):
        if key in node:
            parts.append(f"{word} {node[key]}")
    if "pattern" in node:
        parts.append(f"matches `{node['pattern']}`")
    return "; ".join(parts)


def escape(text: str) -> str:
    """Description text for a Markdown table cell: one line, `|` escaped, `<…>` outside code kept as text."""
    text = " ".join(text.split()).replace("|", "\\|")
    pieces = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;").replace(">", "&gt;") for p in pieces)


def walk(node: dict[str, Any], path: str, schema: dict[str, Any], sections: list[Section], description: str) -> None:
    """Add the section of the object at `path` (its keys as rows) and, after it, the sections of its sub-objects."""
    node = resolve(node, schema)
    section = Section(path, description)
    sections.append(section)
    children: list[tuple[dict[str, Any], str, str]] = []
    required = set(node.get("required", []))
    for key, child in node.get("properties", {}).items():
        child = resolve(child, schema)
        child_path = f"{path}.{key}" if path else key
        text = child.get("description", "")
        extra = limits(child)
        if key in required:
            extra = "required" + (f"; {extra}" if extra else "")
        if extra:
            text = f"{text} ({extra})" if text else f"({extra})"
        default = f"`{flow(child['default'])}`" if "default" in child else "—"
        kind = type_of(child, schema)
        mapped = child.get("additionalProperties")
        if "properties" in child:
            kind = f"{kind}: [its keys](#{slugify(child_path, '-')})"
        elif isinstance(mapped, dict) and "properties" in resolve(mapped, schema):
            name = f"{child_path}.{entry_name(child_path, key)}"
            kind = f"{kind}: [its keys](#{slugify(name, '-')})"
        section.rows.append(Row(child_path, kind, default, text))
        if "properties" in child:
            children.append((child, child_path, child.get("description", "")))
        for branch in child.get("oneOf", []):
            branch = resolve(branch, schema)
            if "properties" in branch:
                children.append((branch, child_path, f"`{child_path}` written as an object."))
        mapped = child.get("additionalProperties")
        if isinstance(mapped, dict):
            mapped = resolve(mapped, schema)
            name = f"{child_path}.{entry_name(child_path, key)}"
            if "properties" in mapped:
                children.append((mapped, name, child.get("description", "")))
            elif isinstance(mapped.get("additionalProperties"), dict):
                inner = resolve(mapped["additionalProperties"], schema)
                section.rows.append(Row(name, type_of(mapped, schema), "—", f"An entry of `{child_path}`."))
                section.rows.append(Row(f"{name}.<lang>", type_of(inner, schema), "—",
                                        f"An entry of `{name}` (a language of the dataset)."))
            else:
                section.rows.append(Row(name, type_of(mapped, schema), "—", f"An entry of `{child_path}`."))
    for child, child_path, text in children:
        walk(child, child_path, schema, sections, text)


def config_page(schema: dict[str, Any]) -> str:
    """The Markdown of reference/config.md: one table per object of the schema."""
    sections: list[Section] = []
    walk(schema, "", schema, sections, schema.get("description", ""))
    lines = [
        "# Configuration reference",
        "",
        "Generated at build time from `workflow/schemas/config.schema.yaml`, the schema every config is validated",
        "against at start-up (a key not listed here is an error naming it). `config.yaml` is the embedded default;",
        "the configs shipped are described in `config/README.md`. `<dataset>`, `<model>` and `<name>` stand for",
        "names you choose. A `--configfile` on the command line replaces `config.yaml` (it is not merged with it).",
        "",
    ]
    for section in sections:
        lines += [f"## `{section.path}`" if section.path else "## Top level", ""]
        if section.description:
            lines += [escape(section.description), ""]
        lines += ["| key | type | default | description |", "|---|---|---|---|"]
        for row in section.rows:
            default = row.default.replace("|", "\\|")
            kind, _, link = row.type.partition(": [")
            kind = escape(kind) + (f": [{link}" if link else "")
            lines.append(f"| `{row.path}` | {kind} | {default} | {escape(row.description)} |")
        lines.append("")
    return "\n".join(lines)


def module_summary(module: str) -> str:
    """The first paragraph of a module's docstring, read from its file under workflow/ without importing it."""
    base = PACKAGE.joinpath(*module.split("."))
    file = base.with_suffix(".py") if base.with_suffix(".py").exists() else base / "__init__.py"
    doc = ast.get_docstring(ast.parse(file.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def scripts_page(pyproject: dict[str, Any]) -> str:
    """The Markdown of reference/scripts.md: every console script with what its module says it does."""
    lines = [
        "# Console scripts",
        "",
        "Generated at build time from `[project.scripts]` in `pyproject.toml`; `install.sh` puts them in `.venv/bin/`.",
        "Each is also `.venv/bin/python -m <module>`. The workflow itself runs with `.venv/bin/snakemake` (see",
        "[Getting started](../index.md)).",
        "",
        "| command | runs | what it does |",
        "|---|---|---|",
    ]
    for name, target in pyproject["project"]["scripts"].items():
        module, _, function = target.partition(":")
        lines.append(f"| `{name}` | `{module}:{function}` | {escape(module_summary(module))} |")
    lines += ["", "How `clsd-forget` is used: [Asking again for bad answers](../guides/llm.md#asking-again-for-bad-answers).", ""]
    return "\n".join(lines)


def main() -> None:
    """Write both generated pages into the site being built."""
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    with mkdocs_gen_files.open("reference/config.md", "w") as out:
        out.write(config_page(schema))
    mkdocs_gen_files.set_edit_path("reference/config.md", SCHEMA.relative_to(ROOT).as_posix())
    pyproject = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    with mkdocs_gen_files.open("reference/scripts.md", "w") as out:
        out.write(scripts_page(pyproject))
    log.info("generated reference/config.md and reference/scripts.md from %s", SCHEMA.relative_to(ROOT))


main()
