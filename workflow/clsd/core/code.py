"""The code identity of a rule: a checksum of its script and of every clsd module the script imports, transitively.

Snakemake's own code trigger sees a rule's script, not the package modules it imports, so a fix in a clsd module
would rerun nothing. Each rule carries this checksum as a param: editing a module reruns exactly the rules whose
scripts reach it (scoring, not generation, after a scoring fix). Paths enter the checksum relative to the
package, so a moved checkout keeps the same identity.
"""

from __future__ import annotations

import ast
import hashlib
from functools import lru_cache
from pathlib import Path

from clsd.core.workflow import PACKAGE_ROOT, project_file, root

PACKAGE = "clsd"
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def imported_modules(source: str, package: str | None = None) -> set[str]:
    """Dotted names of the clsd modules (and `from clsd.x import y` submodule candidates) a source imports.
    `package` is the importing module's package, for relative imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and package is not None:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in names if name == PACKAGE or name.startswith(PACKAGE + ".")}


def module_file(name: str) -> Path | None:
    """The file of a clsd module or package (None for a name that is not one, e.g. an imported function)."""
    parts = name.split(".")[1:]
    if not parts:
        return PACKAGE_DIR / "__init__.py"
    for candidate in (PACKAGE_DIR.joinpath(*parts[:-1], parts[-1] + ".py"), PACKAGE_DIR.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def file_imports(path: Path, package: str | None) -> frozenset[str]:
    """imported_modules of one file, parsed once per plan: every rule's closure meets the same modules, and parsing
    them again for each of the ~36 scripts was half of a dry run's time."""
    return frozenset(imported_modules(path.read_text(encoding="utf-8"), package))


@lru_cache(maxsize=None)
def data_files(module: Path) -> tuple[Path, ...]:
    """The data files a module declares it reads (`DATA_FILES = ("resources/languages.yaml", ...)`, paths relative
    to the project; resources/ are the workflow's, clsd.core.workflow): their content is part of the code identity of
    every rule that reaches the module. Read once per plan."""
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DATA_FILES" for t in node.targets):
            return tuple(project_file(name) for name in ast.literal_eval(node.value))
    return ()


def closure(script: Path) -> list[Path]:
    """The script, every clsd module file it reaches through imports (each package's __init__ included) and the data
    files those modules declare."""
    seen: dict[Path, None] = {script.resolve(): None}
    pending = [(script.resolve(), None)]
    while pending:
        path, package = pending.pop()
        for name in sorted(file_imports(path, package)):
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):  # importing clsd.a.b runs clsd/__init__ and clsd/a/__init__ too
                prefix = ".".join(parts[:depth])
                found = module_file(prefix)
                if found is not None and found not in seen:
                    seen[found] = None
                    is_package = found.name == "__init__.py"
                    pending.append((found, prefix if is_package else prefix.rsplit(".", 1)[0]))
    return sorted(set(seen) | {data for module in seen for data in data_files(module)})


def identity_name(file: Path, script: Path) -> str:
    """The name a file enters the code identity under, wherever it lies: the script by its file name, a module or
    data file by its path in the project (workflow/clsd/..., resources/...)."""
    if file == script.resolve():
        return "script/" + file.name
    base = PACKAGE_ROOT if file.is_relative_to(PACKAGE_ROOT) else root()
    return file.relative_to(base).as_posix()


@lru_cache(maxsize=None)
def file_digest(path: Path) -> bytes:
    """sha256 of one file's bytes, read once per plan (most modules are in every rule's closure)."""
    return hashlib.sha256(path.read_bytes()).digest()


@lru_cache(maxsize=None)
def code_identity(script: str) -> str:
    """sha256 over the names and contents of a script's import closure, in the order of their names (computed once
    per plan): the same code gives the same identity whichever folders the scripts and the installed package
    lie in, and however those folders sort."""
    path = Path(script)
    digest = hashlib.sha256()
    for name, file in sorted((identity_name(file, path), file) for file in closure(path)):
        digest.update(name.encode() + b"\0" + file_digest(file))
    return digest.hexdigest()
