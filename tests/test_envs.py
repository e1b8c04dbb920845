"""The conda environments of the rule families parse, pin exactly the versions pyproject.toml pins, and hold every
package their rules import.

The imports of a rule are derived from its code (ast): its script, and transitively the clsd functions and classes
the script reaches. An import inside a function counts only when that function is reached (torch, imported inside
`embed.load_model`, is needed by the embedding rule, not by the scoring rule that only calls `core.keys.lookup`);
module-level imports count whenever the module is imported. A module imported by name from a registry (an embedding
backend) counts where its loader is called, with the functions called on it.

The same derivation checks the layout of the package: a stage imports only earlier stages and core, core no stage.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

ENVS = sorted((ROOT / "envs").glob("*.yaml"))
PACKAGE = ROOT / "workflow"
PIN = re.compile(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)")


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return dict(PIN.fullmatch(dep).groups() for dep in project["dependencies"])


def env_pins(env: Path) -> dict[str, str]:
    spec = yaml.safe_load(env.read_text())
    pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    return dict(PIN.fullmatch(line).groups() for line in pip)


def canonical(distribution: str) -> str:
    """PEP 503 name: case and runs of -_. do not matter."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def rules() -> dict[str, tuple[Path | None, Path | None]]:
    """Every rule of rules/*.smk with its conda env file and script (None when it has none)."""
    found = {}
    for smk in sorted((ROOT / "rules").glob("*.smk")):
        for block in re.split(r"^rule ", smk.read_text(), flags=re.M)[1:]:
            name = block.split(":", 1)[0].strip()
            conda = re.search(r'conda:\s*\n\s*"([^"]+)"', block)
            script = re.search(r'script:\s*\n\s*"([^"]+)"', block)
            found[name] = tuple((smk.parent / match.group(1)).resolve() if match else None for match in (conda, script))
    return found


SCRIPTED = {name: paths for name, paths in rules().items() if paths[1] is not None}


def module_file(module: str) -> Path | None:
    """The file of a clsd module or package, None when `module` is not one (e.g. a function of a module)."""
    base = PACKAGE.joinpath(*module.split("."))
    return next((path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()), None)


def absolute(node: ast.ImportFrom, module: str) -> str:
    """The module an ImportFrom names, relative imports resolved against the importing `module`."""
    if not node.level:
        return node.module or ""
    parent = module.split(".")
    is_package = module_file(module) is not None and module_file(module).name == "__init__.py"
    parent = parent[: len(parent) - node.level + (1 if is_package else 0)]
    return ".".join(parent + ([node.module] if node.module else []))


@cache
def module_bindings(module: str) -> dict[str, tuple[str, str | None]]:
    """Names a clsd module binds to clsd at any level (what a name it does not define may come from)."""
    return bindings(ast.parse(module_file(module).read_text(encoding="utf-8")).body, module)


def bindings(statements: list[ast.AST], module: str) -> dict[str, tuple[str, str | None]]:
    """Names bound to clsd by the import statements among `statements`: name → (module, attribute or None)."""
    bound: dict[str, tuple[str, str | None]] = {}
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "clsd":
                        bound[alias.asname or alias.name.split(".")[0]] = (alias.name if alias.asname else "clsd", None)
            elif isinstance(node, ast.ImportFrom):
                source = absolute(node, module)
                if source.split(".")[0] == "clsd":
                    for alias in node.names:
                        submodule = f"{source}.{alias.name}"
                        bound[alias.asname or alias.name] = (submodule, None) if module_file(submodule) else (source, alias.name)
    return bound


def third_party(statements: list[ast.AST], module: str) -> set[str]:
    """Top-level names of the non-clsd, non-stdlib modules imported by `statements`."""
    names = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                names.add(absolute(node, module).split(".")[0])
    return {name for name in names if name and name != "clsd" and name not in sys.stdlib_module_names}


def references(statements: list[ast.AST], bound: dict[str, tuple[str, str | None]], local: set[str], module: str) -> set[tuple[str, str | None]]:
    """What `statements` use of clsd: (module, top-level name) or (module, None) for a module itself."""
    used: set[tuple[str, str | None]] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import):  # an import statement runs the imported module
                used |= {(alias.name, None) for alias in node.names if alias.name.split(".")[0] == "clsd"}
            elif isinstance(node, ast.ImportFrom) and absolute(node, module).split(".")[0] == "clsd":
                source = absolute(node, module)
                used |= {(source, None)} | {(f"{source}.{alias.name}", None) for alias in node.names if module_file(f"{source}.{alias.name}")}
            elif isinstance(node, ast.Name) and node.id in local:
                used.add((module, node.id))
            elif isinstance(node, ast.Name) and node.id in bound:
                used.add(bound[node.id])
            elif isinstance(node, ast.Attribute):  # module.attr (or package.module.attr): what attr names in there
                chain = [node.attr]
                while isinstance(node.value, ast.Attribute):
                    node = node.value
                    chain.insert(0, node.attr)
                if isinstance(node.value, ast.Name) and node.value.id in bound and bound[node.value.id][1] is None:
                    target = bound[node.value.id][0]
                    while chain and module_file(f"{target}.{chain[0]}"):
                        target = f"{target}.{chain.pop(0)}"
                    used.add((target, chain[0] if chain else None))
    for module_name, _ in list(used):  # importing clsd.a.b runs clsd/__init__ and clsd/a/__init__ too
        parts = module_name.split(".")
        used |= {(".".join(parts[:depth]), None) for depth in range(1, len(parts))}
    return used


@cache
def units(module: str) -> dict[str | None, tuple[set[str], set[tuple[str, str | None]]]]:
    """A clsd module split into units, each with its third-party imports and clsd references: None = the code run
    on import (module-level statements), and one unit per top-level function or class (imports inside run on call)."""
    tree = ast.parse(module_file(module).read_text(encoding="utf-8"))
    defined = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    local = {node.name for node in defined}
    module_level = [node for node in tree.body if node not in defined]
    module_level += [part for node in defined for part in (*node.decorator_list, *getattr(node, "bases", []))]
    bound = bindings(module_level, module)
    found: dict[str | None, tuple[set[str], set[tuple[str, str | None]]]] = {
        None: (third_party(module_level, module), references(module_level, bound, local, module))}
    for node in defined:
        body = node.body if isinstance(node, ast.ClassDef) else [*node.body, node.args]
        used = references(body, bound | bindings(body, module), local, module)
        found[node.name] = (third_party(body, module), used | by_name(used, body))
    return found


def registry_loaders() -> dict[tuple[str, str], list[str]]:
    """Functions that import modules by name from a registry (importlib, invisible to `ast`), with those modules:
    the backend registry's `runtime` and `exporter` import any registered backend's module."""
    from clsd.embed.backends import BACKENDS

    modules = [entry.module for entry in BACKENDS.values()]
    return {("clsd.embed.backends", "runtime"): modules, ("clsd.embed.backends", "exporter"): modules}


def by_name(used: set[tuple[str, str | None]], statements: list[ast.AST]) -> set[tuple[str, str | None]]:
    """What a unit reaches through a registry loader it calls: each module the loader may import, and in it the
    functions the unit calls by attribute (`backends.runtime(name).load(...)` reaches every backend's `load`)."""
    attributes = {node.attr for statement in statements for node in ast.walk(statement) if isinstance(node, ast.Attribute)}
    reached: set[tuple[str, str | None]] = set()
    for loader, modules in registry_loaders().items():
        if loader in used:
            for module in modules:
                reached |= {(module, None)} | {(module, name) for name in attributes if name in units(module)}
    return reached


def rule_imports(script: Path) -> set[str]:
    """Third-party top-level modules a rule's script imports, directly or through the clsd code it reaches."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    needed = third_party(tree.body, "")  # the whole script runs; it imports clsd absolutely
    pending = list(references(tree.body, bindings(tree.body, ""), set(), ""))
    seen: set[tuple[str, str | None]] = set()
    while pending:
        module, name = pending.pop()
        if (module, name) in seen:
            continue
        seen.add((module, name))
        parts = units(module)
        if name is not None and name not in parts:  # a name the module imported from elsewhere, or a constant
            origin = module_bindings(module).get(name)
            pending += [(module, None)] + ([origin] if origin else [])
            continue
        imports, used = parts[name]
        needed |= imports
        pending += list(used) + [(module, None)]
    return needed


def test_every_rule_uses_an_existing_env():
    used = set()
    for smk in (ROOT / "rules").glob("*.smk"):
        used |= set(re.findall(r'conda:\s*\n\s*"\.\./envs/([^"]+)"', smk.read_text()))
    assert used == {p.name for p in ENVS}


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.name)
def test_env_pins_match_pyproject(env):
    pins = env_pins(env)
    expected = pyproject_pins()
    assert pins and {name: expected.get(name) for name in pins} == pins
    assert "python=3.11" in yaml.safe_load(env.read_text())["dependencies"]


def test_rule_imports_follow_what_each_script_reaches():
    """The derivation sees through clsd modules, lazy imports and the backend registry: scipy and matplotlib reach
    Table 2 through clsd.core.intervals and clsd.core.plots; torch reaches embedding (inside embed.load_model) but not
    scoring, whose script uses only core.keys; ONNX Runtime and OpenVINO (imported inside the runtimes that
    `backends.runtime(...).load` stands in) reach embedding, NNCF (inside openvino's `build`) only the export; the
    registry, which the config check reads, brings no backend to the rules that import clsd.config for paths."""
    table2, score, embed_rule = (rule_imports(SCRIPTED[rule][1]) for rule in ("table2", "score", "embed"))
    assert {"scipy", "matplotlib", "polars"} <= table2
    assert {"torch", "sentence_transformers", "onnxruntime", "openvino"} <= embed_rule and "nncf" not in embed_rule
    assert "nncf" in rule_imports(SCRIPTED["export_model"][1])
    assert not {"torch", "openvino", "sentence_transformers"} & score
    assert not {"torch", "onnxruntime", "openvino"} & rule_imports(SCRIPTED["generate_distractors"][1])


@pytest.mark.parametrize("rule", sorted(SCRIPTED))
def test_env_holds_every_package_its_rule_imports(rule):
    env, script = SCRIPTED[rule]
    assert env is not None, f"rule {rule} runs a script but names no conda env"
    distributions = packages_distributions()
    pinned = {canonical(name) for name in env_pins(env)}
    missing = {}
    for name in sorted(rule_imports(script)):
        assert name in distributions, f"rule {rule} imports {name}, which no installed distribution provides"
        if not pinned & {canonical(d) for d in distributions[name]}:
            missing[name] = distributions[name]
    assert not missing, f"{env.name} lacks what rule {rule} ({script.name}) imports: {missing}"


#: The stages in pipeline order (rules/*.smk): a stage may import an earlier one's public functions, never a later one.
STAGES = ("data", "generate", "validate", "translate", "embed", "score", "analysis", "report")


def test_stages_import_only_earlier_stages_and_core_imports_none():
    """The package's layout: serving (client, llama-server, model store, SQLite) lies below every stage, so embedding
    reaches llama-server without importing generation; translate/pivot keys rows with core.keys and picks its device with core.device rather
    than reaching into the later embed stage for them; scoring and analysis use core.keys too."""
    from clsd.core.code import PACKAGE_DIR, imported_modules

    order = {"core": -2, "serving": -1} | {stage: rank for rank, stage in enumerate(STAGES)}
    wrong = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR).parts
        if len(parts) < 2:  # the top layer (config, the public mteb_task name) may import any stage
            continue
        package = ".".join(("clsd", *parts[:-1]))
        for name in imported_modules(path.read_text(encoding="utf-8"), package):
            target = name.split(".")[1] if name.count(".") else None
            if target in order and target != parts[0] and (parts[0] == "core" or order[target] > order[parts[0]]):
                wrong.append(f"{path.relative_to(PACKAGE_DIR)} imports {name}")
    assert not wrong


def test_no_stage_imports_the_config():
    """clsd.config checks the config with every stage's accessors (their jobs.py), the embedding backend registry and
    the model recipes, so no stage and nothing of serving imports clsd.config back (lazy imports included): a rule's
    script reads the config through its stage's accessors, and the model folders both need live in
    clsd.serving.locations, which imports nothing of clsd."""
    from clsd.core.code import PACKAGE_DIR, imported_modules

    assert "clsd.embed.backends" in imported_modules((PACKAGE_DIR / "config.py").read_text(encoding="utf-8"), "clsd")
    loops = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR).parts
        if len(parts) < 2:  # config itself, and the public mteb_task name
            continue
        if "clsd.config" in imported_modules(path.read_text(encoding="utf-8"), ".".join(("clsd", *parts[:-1]))):
            loops.append(str(path.relative_to(PACKAGE_DIR)))
    assert not loops
    assert not [name for name in imported_modules((PACKAGE_DIR / "serving/locations.py").read_text(encoding="utf-8"), "clsd.serving")]


DOTTED = re.compile(r"(?<![\w/.-])clsd(?:\.[a-z_][a-z0-9_]*)+\b")  # not a file name such as install-clsd.sh
PROSE = ("*.sh", "*.smk", "*.yaml", "*.md", "*.rst", "Snakefile", ".ci/run")


def test_module_paths_named_outside_python_exist():
    """Scripts, rules, schemas and docs name clsd modules by dotted path (CI's `from clsd.serving.model_store import`,
    a schema's `clsd.serving.model_store.RECIPES`); after a move each must still import, with its attribute."""
    import importlib
    import subprocess

    tracked = subprocess.run(["git", "ls-files", *PROSE], cwd=ROOT, capture_output=True, text=True, check=True)
    stale = []
    for name in tracked.stdout.split():
        for dotted in set(DOTTED.findall((ROOT / name).read_text(encoding="utf-8"))):
            if dotted == "clsd.json":  # the HF export's metadata file, not a module
                continue
            parts = dotted.split(".")
            for cut in range(len(parts), 1, -1):
                try:
                    target = importlib.import_module(".".join(parts[:cut]))
                except ModuleNotFoundError:
                    continue
                try:
                    for attribute in parts[cut:]:
                        target = getattr(target, attribute)
                except AttributeError:
                    stale.append(f"{name}: {dotted}")
                break
            else:
                stale.append(f"{name}: {dotted}")
    assert not stale, stale


def test_a_rule_s_code_identity_does_not_depend_on_where_its_script_lies(tmp_path):
    """Two checkouts sharing one environment: the scripts of each, the package of one. Folder names that sort before
    and after the package's must give the same identity, and so must the checkout's own scripts."""
    from clsd.core.code import closure, code_identity

    script = ROOT / "workflow/scripts/score.py"
    copies = []
    for folder in ("0-first-checkout/workflow/scripts", "zz-second-checkout/workflow/scripts"):
        target = tmp_path / folder / script.name
        target.parent.mkdir(parents=True)
        target.write_bytes(script.read_bytes())
        copies.append(str(target))
    assert len(closure(Path(copies[0]))) > 3  # the script, clsd modules and data files are all hashed
    assert code_identity(copies[0]) == code_identity(copies[1]) == code_identity(str(script))
    changed = tmp_path / "changed" / script.name
    changed.parent.mkdir()
    changed.write_text(script.read_text() + "\n# a change\n")
    assert code_identity(str(changed)) != code_identity(str(script))
