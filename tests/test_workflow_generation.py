"""LLM-generated distractors in real Snakemake runs against a fault-injecting OpenAI-compatible server: retries,
re-asks, the judge, refusals kept and asked again, the API key never written; and the generator check's config."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import polars as pl
import pytest
from conftest import MODEL_STORE, ROOT, require_shared
from workflow_runs import MINILM, SAMPLE, TABLES, p1_columns, params_naming_paths, planned_jobs, read_config, snakemake, write_config

pytestmark = [pytest.mark.workflow, pytest.mark.slow]


def test_generated_distractors_in_the_workflow_and_the_api_key_stays_secret(tmp_path):
    from fault_server import FaultServer

    secret = "sk-test-" + "Z9q" * 12
    prompt = tmp_path / "prompt.txt"
    prompt.write_text((ROOT / "resources/prompts/paper-v1.txt").read_text(encoding="utf-8"), encoding="utf-8")
    store = tmp_path / "store" / "responses.sqlite"
    sample = {"kind": "published_csv", "path": str(SAMPLE)}
    # item 2's German sentence only ever gets English answers: it is left out, with its reason in Table 2
    with FaultServer(plans={"Lyon": ["429", "ok"], "Eisenbahner": ["wrong_language"] * 3}, retry_after="0") as server:
        write_config(tmp_path, {
            "model_store": str(MODEL_STORE),
            "generation": {"model": "fault", "base_url": server.base_url, "prompt": str(prompt), "store": str(store),
                           "concurrency": 2, "timeout": 5},
            "datasets": {
                "gen": {"label": "LLM", "source": sample, "select": {"limit": 4}, "distractors": {"kind": "llm"}},
                "rules": {"label": "Rules", "source": sample, "select": {"limit": 4}, "distractors": {"kind": "rules"}},
            },
            "models": {"minilm": MINILM}, "analysis": {"enabled": False},
        })
        # what the reruns below ask for: the generated sets and their reports, then the validated sets
        generated = [f"results/{kind}/gen/{lang}.{ext}" for kind, ext in (("distractors", "parquet"), ("generation", "json"))
                     for lang in ("de", "fr")]
        validated = [f"results/validated/{name}/{lang}.parquet" for name in ("gen", "rules") for lang in ("de", "fr")]
        env = {"OPENAI_API_KEY": secret}
        snakemake(tmp_path, env=env)
        assert len(server.seen) == 4 * 2 + 1 + 2  # 4 items x 2 languages, the retried 429, two re-asks of item 2
        assert {s.authorization for s in server.seen} == {f"Bearer {secret}"}
        reports = [json.loads((tmp_path / f"results/generation/gen/{lang}.json").read_text()) for lang in ("de", "fr")]
        assert [r["generated"] for r in reports] == [3, 4] and reports[1]["failed"] == []
        assert [(f["id"], f["reason"]) for f in reports[0]["failed"]] == [(2, "0 valid distractors after 3 attempts")]
        assert sum(r["retries"] for r in reports) == 1  # the first "Lyon" request (either language) got a 429
        distractors = pl.read_parquet(tmp_path / "results/distractors/gen/fr.parquet")
        assert distractors.height == 16 and set(distractors["generator"]) == {"llm:fault"}
        assert set(pl.read_parquet(tmp_path / "results/distractors/rules/de.parquet")["generator"]) == {"rules-v1"}
        assert params_naming_paths(tmp_path) == []  # not the prompt, the store or the sample file
        table = p1_columns(pl.read_csv(tmp_path / "results/tables/table2.csv"))
        assert table.columns[2:6] == ["LLM DE→FR", "LLM FR→DE", "Rules DE→FR", "Rules FR→DE"]
        assert table.filter(pl.col("view") == "n").row(0)[2:4] == (3.0, 3.0)
        markdown = (tmp_path / "results/tables/table2.md").read_text(encoding="utf-8")
        assert "LLM: 1 of 4 items not scored (1 × de: 0 valid distractors after 3 attempts)." in markdown

        # the key is nowhere: results, logs, Snakemake metadata, the response store
        for path in [p for p in tmp_path.rglob("*") if p.is_file()]:
            assert secret.encode() not in path.read_bytes(), path

        # rm -r results: a rerun regenerates from the store without a single request
        seen = len(server.seen)
        shutil.rmtree(tmp_path / "results")
        snakemake(tmp_path, *generated, env=env)
        assert len(server.seen) == seen
        assert json.loads((tmp_path / "results/generation/gen/fr.json").read_text())["cache_hits"] == 4

        # a new prompt version reruns generation (Snakemake's own triggers) with new requests; going back to
        # the old prompt reruns it again but every request is already in the store
        original = prompt.read_text(encoding="utf-8")
        prompt.write_text(original.replace("tricky", "difficult"), encoding="utf-8")
        assert {w["dataset"] for rule, w in planned_jobs(tmp_path) if rule == "generate_distractors"} == {"gen"}
        snakemake(tmp_path, *generated, env=env)
        assert len(server.seen) == seen + 8
        prompt.write_text(original, encoding="utf-8")
        assert {w["dataset"] for rule, w in planned_jobs(tmp_path) if rule == "generate_distractors"} == {"gen"}
        snakemake(tmp_path, *generated, env=env)
        assert len(server.seen) == seen + 8

        # the judge: a paraphrase is re-asked during generation, every set (generated or not) is judged, each
        # question is asked once, and the verdicts come from the store after `rm -r results`
        server.equivalent = ("primaires demain",)  # the "demain" variant of item 0's French sentence
        config = read_config(tmp_path)
        config["validation"] = {"judge": True}
        write_config(tmp_path, config)
        before = len(server.seen)
        snakemake(tmp_path, *TABLES, env=env)
        judged = [s.sentence for s in server.seen[before:] if s.behaviour == "judge"]
        assert judged and len(judged) == len(set(judged))
        assert len(server.seen) - before - len(judged) == 2  # item 0's French sentence asked twice more
        validation = pl.read_csv(tmp_path / "results/tables/validation.csv")
        gen_fr = validation.filter((pl.col("Dataset") == "gen") & (pl.col("Language") == "French")).row(0, named=True)
        assert gen_fr["judged_equivalent"] == 3 and gen_fr["Action"] == "re-asked"
        assert validation.filter(pl.col("Dataset") == "rules")["judged_equivalent"].to_list() == [0, 0]
        markdown = (tmp_path / "results/tables/table2.md").read_text(encoding="utf-8")
        assert "LLM: 2 of 4 items not scored" in markdown and "fr: 3 valid distractors after 3 attempts" in markdown
        seen = len(server.seen)
        shutil.rmtree(tmp_path / "results")
        snakemake(tmp_path, *validated, env=env)
        assert len(server.seen) == seen


def test_the_generator_check_config_plans_both_generators_and_the_check():
    """config/generator-check.yaml (docs/generator-check.md) plans the local generator on the published items, both
    sets' embeddings and the check, from the repository root where its ../shared paths point."""
    require_shared()
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--dry-run", "--configfile",
                             "config/generator-check.yaml"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, re.MULTILINE))  # the dry run's job statistics
    # the local generator on both languages of both sets, every model on all four sets, one check
    assert counts["generate_distractors"] == "4" and counts["embed"] == "8" and counts["generator_check"] == "1", counts


def test_refused_items_rerun_with_results_kept_say_how_to_ask_again_and_reask_unusable_asks(tmp_path):
    """Refusals are stored answers: a plain rerun replays them and says so, with both ways to ask again; with
    generation.reask_unusable the next run asks again (the job is not up to date while unusable answers are new)."""
    from fault_server import FaultServer

    with FaultServer(plans={"Stadtrat von Lyon": ["refusal"] * 3}) as server:
        config = {
            "model_store": str(MODEL_STORE),
            "generation": {"model": "fault", "base_url": server.base_url, "store": str(tmp_path / "store.sqlite"),
                           "concurrency": 1, "timeout": 5},
            "datasets": {"gen": {"label": "LLM", "source": {"kind": "published_csv", "path": str(SAMPLE)},
                                 "select": {"limit": 1}, "distractors": {"kind": "llm"}}},
            "models": {"minilm": MINILM}, "analysis": {"enabled": False},
        }
        write_config(tmp_path, config)
        env = {"OPENAI_API_KEY": "sk-test"}
        snakemake(tmp_path, env=env)  # nothing to score: Table 2 all –, with what went wrong and what to try
        table2 = tmp_path / "results/tables/table2.md"
        assert "no item can be scored" in (tmp_path / "results/logs/table2.log").read_text(encoding="utf-8")
        note = next(line for line in table2.read_text(encoding="utf-8").splitlines() if line.startswith("No item could be scored."))
        assert "raise generation.max_attempts" in note  # what to try, not only what went wrong
        assert "3 refused" in table2.read_text(encoding="utf-8")
        asked = len(server.seen)
        assert asked == 4  # three refusals of the German sentence, one French answer

        snakemake(tmp_path, env=env)  # the endpoint answers now; results/ kept: up to date, nothing asked
        assert len(server.seen) == asked
        assert "These failures come from answers stored in the response store (generation.store)" in note
        assert "clsd-forget --dataset gen --lang de" in note and "--forcerun generate_distractors" in note
        assert "generation.reask_unusable: true" in note

        # reask_unusable from the start of a run: refused again, then the next run asks again and is scored
        server.plans["Stadtrat von Lyon"] = ["refusal"] * 3
        config["generation"]["reask_unusable"] = True
        write_config(tmp_path, config)
        snakemake(tmp_path, env=env)
        assert len(server.seen) == asked + 3
        scored = snakemake(tmp_path, env=env)
        assert len(server.seen) == asked + 4, scored.stdout[-3000:]
        assert "No item could be scored." not in table2.read_text(encoding="utf-8")
        # nothing unusable is left: one more run replays the answers (no request), then the job is up to date
        snakemake(tmp_path, env=env)
        assert len(server.seen) == asked + 4
        assert [rule for rule, _ in planned_jobs(tmp_path) if rule == "generate_distractors"] == []
