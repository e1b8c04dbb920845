"""Where the workflow being run lies: the checkout whose Snakefile Snakemake runs owns resources/ (the language
registry, the rule-based word lists, the prompts, the hand-made validation sets); the package's own files (its
modules, the schemas its code reads) lie beside the package.

One environment may serve several checkouts (a cluster's shared environment, an editable install of another clone),
so the package's folder need not be the workflow's. The Snakefile names its own folder (workflow.basedir) in
CLSD_WORKFLOW before it reads anything, for itself and every job it starts (jobs inherit its environment; a cluster
job parses the Snakefile again). Outside Snakemake (tests, clsd-forget, the benchmarks) the checkout clsd is
installed from is the workflow.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from clsd.core.errors import InputError

#: The environment variable naming the workflow's folder (set by the Snakefile).
ENV = "CLSD_WORKFLOW"
#: The checkout the package is installed from (its modules, the schemas).
PACKAGE_ROOT = Path(__file__).resolve().parents[3]


def root() -> Path:
    """The folder of the workflow being run: $CLSD_WORKFLOW, else the package's checkout."""
    given = os.environ.get(ENV)
    return Path(given).resolve() if given else PACKAGE_ROOT


def use(folder: str | Path) -> None:
    """Make `folder` the workflow's, for this process and every process it starts (the Snakefile names its own)."""
    os.environ[ENV] = str(Path(folder).resolve())


def project_file(relative: str) -> Path:
    """A file of the project by its path in a checkout: resources/... from the workflow's, anything else (schemas,
    a module's template) from the package's."""
    return (root() if relative.startswith("resources/") else PACKAGE_ROOT) / relative


def data_file(path: str) -> Path:
    """A data file a config names: `resources/...` in this checkout (like the registry), any other path as given
    (`~` expanded)."""
    return project_file(path) if path.startswith("resources/") else Path(path).expanduser()


def read_schema(path: Path) -> Any:
    """A JSON Schema shipped as YAML, parsed by libyaml where PyYAML has it (its wheels do): the schemas are read at
    every Snakemake start, and the pure-Python parser took a tenth of a dry run."""
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_checked_yaml(path: Path, schema: str, what: str) -> Any:
    """The YAML data of the data file `path` (`what` it is, for the error), valid against the package's schema file
    `schema` (a path in the checkout): a file that cannot be read or parsed, or the first (best) schema error, is an
    InputError naming the file and the key."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{what} cannot be read ({exc})", path=path) from None
    checker = jsonschema.Draft202012Validator(read_schema(project_file(schema)))
    error = jsonschema.exceptions.best_match(checker.iter_errors(data))
    if error is not None:
        key = ".".join(str(part) for part in error.absolute_path) or "(top level)"
        raise InputError(f"key {key}: {error.message} (schema: {schema})", path=path)
    return data


def repo_file(relative: str) -> str:
    """A file of the workflow (e.g. a rule lexicon), named relative to the working folder (see `resource`)."""
    return os.path.relpath(root() / relative)
