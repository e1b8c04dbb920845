"""What is written beside every result so that a number can be traced: the versions of the packages behind it."""

from __future__ import annotations

import platform
from importlib import metadata

#: Packages that determine the numbers (recorded with embeddings, translations and results).
PACKAGES = ("clsd", "mteb", "torch", "sentence-transformers", "transformers", "polars", "numpy", "snakemake")


def package_versions() -> dict[str, str]:
    """Versions of the packages that determine the numbers ("not installed" for an absent one)."""
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions
