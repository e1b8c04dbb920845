"""The conda environments of the rule families parse and pin exactly the versions pyproject.toml pins."""

import re
import tomllib

import pytest
import yaml

from conftest import ROOT

ENVS = sorted((ROOT / "envs").glob("*.yaml"))


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return dict(re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)", dep).groups() for dep in project["dependencies"])


def test_every_rule_uses_an_existing_env():
    used = set()
    for smk in (ROOT / "rules").glob("*.smk"):
        used |= set(re.findall(r'conda:\s*\n\s*"\.\./envs/([^"]+)"', smk.read_text()))
    assert used == {p.name for p in ENVS}


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.name)
def test_env_pins_match_pyproject(env):
    spec = yaml.safe_load(env.read_text())
    pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    pins = dict(re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)", line).groups() for line in pip)
    expected = pyproject_pins()
    assert pins and {name: expected.get(name) for name in pins} == pins
    assert "python=3.11" in spec["dependencies"]
