"""The real workflow: Snakemake runs the whole default DAG on a tiny config in a temporary folder."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from clsd.core.io import read_meta
from clsd.core.keys import text_key
from clsd.data import corpora
from clsd.report import mteb_record
from conftest import MODEL_STORE, PUBLISHED, ROOT, require_shared

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
SAMPLE = ROOT / "resources/sample/clsd_sample.csv"
MINILM = {"name": "sentence-transformers/all-MiniLM-L6-v2", "source": "pypi", "recipe": "all-MiniLM-L6-v2", "batch_size": 64}


def snakemake(workdir: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir), "--cores", "2", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=None if env is None else {**os.environ, **env})
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def planned_jobs(workdir: Path) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run would execute; [] only when Snakemake says nothing is to be done.

    The parsed jobs are checked against the total of Snakemake's own job statistics, so a change in its
    output format fails here instead of making every plan look empty.
    """
    output = snakemake(workdir, "--dry-run").stdout
    if "Nothing to be done" in output:
        return []
    jobs = []
    for block in re.split(r"\n(?=rule |localrule )", output)[1:]:
        rule = block.split()[1].rstrip(":")
        match = re.search(r"^\s+wildcards: (.*)$", block, re.MULTILINE)
        wildcards = dict(part.split("=", 1) for part in match.group(1).split(", ")) if match else {}
        jobs.append((rule, wildcards))
    total = re.search(r"^total\s+(\d+)\s*$", output, re.MULTILINE)
    assert total is not None and int(total.group(1)) == len(jobs) > 0, f"unreadable dry run:\n{output[-3000:]}"
    return jobs


def params_naming_paths(workdir: Path) -> list[tuple[str, str]]:
    """(rule, path) of every rule param recorded by Snakemake that names a file or folder on this machine: none may
    (a moved run, or the same run on another machine, must plan nothing)."""
    found = []
    for record in (json.loads(path.read_text(encoding="utf-8")) for path in (workdir / ".snakemake/metadata").iterdir()):
        for value in record.get("params") or []:
            for candidate in re.findall(r"[~/][\w.\-/]+", value):
                expanded = Path(os.path.expanduser(candidate))
                if expanded.is_absolute() and len(expanded.parts) > 2 and expanded.exists():
                    found.append((record["rule"], candidate))
    return found


#: Table 2 and the validation table: what the tests of validation and scoring read (a run asks only for what its test
#: reads; the whole DAG is checked once, by the module's `workdir`).
TABLES = ("results/tables/table2.md", "results/tables/table2.csv", "results/tables/validation.md", "results/tables/validation.csv")


def write_config(workdir: Path, config: dict) -> None:
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")


def read_config(workdir: Path) -> dict:
    return yaml.safe_load((workdir / "config.yaml").read_text(encoding="utf-8"))


def raw_sample_corpus(folder: Path) -> dict[str, str]:
    """Line-aligned files from the sample plus one short pair the selection must drop (paths relative to `folder`)."""
    frame = corpora.read_published_csv(SAMPLE, ["de", "fr"])
    de = frame["German"].to_list()
    fr = frame["French"].to_list()
    de.insert(3, "Kurzer Satz.")
    fr.insert(3, "Phrase courte.")
    (folder / "sources").mkdir(exist_ok=True)
    (folder / "sources/raw.de").write_text("\n".join(de) + "\n", encoding="utf-8")
    (folder / "sources/raw.fr").write_text("\n".join(fr) + "\n", encoding="utf-8")
    return {"de": "sources/raw.de", "fr": "sources/raw.fr"}


def job_set(jobs: list[tuple[str, dict[str, str]]]) -> set[tuple[str, ...]]:
    """(rule, model, dataset, view, lang) of each planned job, "" for a wildcard it does not have."""
    return {(rule, w.get("model", ""), w.get("dataset", ""), w.get("view", ""), w.get("lang", "")) for rule, w in jobs}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, minilm_folder) -> Path:
    """The whole DAG run once on two datasets and two models; tests that change anything work on a copy.

    Every source lives inside the folder under a relative path, so a copy (fresh_copy) is a complete,
    independent run whose sources can be edited.
    """
    folder = tmp_path_factory.mktemp("clsd-run")
    raw = raw_sample_corpus(folder)
    shutil.copy(SAMPLE, folder / "sources/sample.csv")
    shutil.copy(SAMPLE, folder / "sources/distractors.csv")
    shutil.copytree(minilm_folder, folder / "sources/minilm-copy")
    config = {
        "model_store": str(MODEL_STORE),
        "download_cache": "downloads",
        "datasets": {
            "sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "sources/sample.csv"},
                       "distractors": {"kind": "from_source", "generator": "handwritten"}},
            "raw": {"label": "Raw", "source": {"kind": "files", "files": raw},
                    "select": {"lang": "de", "min_words": 9},
                    "distractors": {"kind": "published_csv", "path": "sources/distractors.csv", "generator": "handwritten"}},
        },
        "models": {"minilm": MINILM,
                   "minilm-query": {"name": "minilm with prefix", "source": "local", "path": "sources/minilm-copy", "prefix": "query: "}},
    }
    write_config(folder, config)
    snakemake(folder)
    return folder


@pytest.fixture
def fresh_copy(workdir, tmp_path) -> Path:
    """A copy of the finished run (results, Snakemake metadata, sources; mtimes kept) to change freely."""
    copy = tmp_path / "run"
    shutil.copytree(workdir, copy, symlinks=True)
    return copy


def p1_columns(table: pl.DataFrame) -> pl.DataFrame:
    """Table 2's CSV without its interval columns."""
    return table.select([c for c in table.columns if not c.endswith((" ci_low", " ci_high"))])


def test_outputs_of_the_whole_dag(workdir):
    from mteb.results.task_result import TaskResult

    full = pl.read_csv(workdir / "results/tables/table2.csv")
    table = p1_columns(full)
    # one canonical order: models and datasets by name, whatever their order in the config
    assert table.columns == ["view", "model", "Raw DE→FR", "Raw FR→DE", "Sample DE→FR", "Sample FR→DE", "Average"]
    assert table["model"].to_list() == ["minilm", "minilm-query", "items scored"]
    assert table.row(2) == ("n", "items scored", 22.0, 22.0, 22.0, 22.0, None)
    assert (full["Sample DE→FR ci_low"] <= full["Sample DE→FR"]).head(2).all() and (full["Average ci_high"] >= full["Average"]).head(2).all()
    pairs = pl.read_csv(workdir / "results/tables/table2_pairs.csv")
    assert pairs.height == 4 and set(pairs["model_a"]) == {"minilm"} and set(pairs["model_b"]) == {"minilm-query"}
    assert (workdir / "results/figures/table2.png").read_bytes()[:4] == b"\x89PNG"
    for path in (workdir / "results/mteb").rglob("*.json"):
        loaded = TaskResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
        assert loaded.mteb_version and loaded.evaluation_time > 0 and len(loaded.scores["test"]) == 2
    scored = table.filter(pl.col("view") != "n")
    # the raw corpus after selection holds the sample's pairs: identical scores
    assert scored["Sample DE→FR"].to_list() == scored["Raw DE→FR"].to_list()
    markdown = (workdir / "results/tables/table2.md").read_text()
    assert "| direct | minilm |" in markdown and "| n | items scored | 22 | 22 | 22 | 22 | – |" in markdown
    assert "not scored" not in markdown  # every item has its distractors
    assert (workdir / "results/tables/table2.tex").read_text().startswith(r"\begin{tabular}")
    assert params_naming_paths(workdir) == []

    parallel = pl.read_parquet(workdir / "results/data/raw/parallel.parquet")
    assert parallel.height == 22 and "Kurzer Satz." not in parallel["de"].to_list()
    assert read_meta(workdir / "results/data/raw/parallel.parquet")["selection"]["n_raw"] == 23

    distractors = pl.read_parquet(workdir / "results/distractors/sample/fr.parquet")
    assert distractors.columns == ["id", "lang", "k", "text", "generator", "source"]
    assert distractors.height == 22 * 4 and set(distractors["generator"]) == {"handwritten"}

    candidates = pl.read_parquet(workdir / "results/candidates/sample/direct.parquet")
    embeddings = pl.read_parquet(workdir / "results/embeddings/minilm/sample/direct.parquet")
    assert embeddings.height == candidates["text"].n_unique() == 22 * 10  # each distinct text once
    assert set(embeddings["text_id"]) == {text_key("", t) for t in candidates["text"]}
    meta = read_meta(workdir / "results/embeddings/minilm/sample/direct.parquet")
    assert meta["model"]["applied_prefix"] == "" and meta["device"] == "cpu"
    # the manifest's checksum is computed from the weights the job loaded, and it is the published one
    weights = Path(meta["model_manifest"]["folder"]) / "model.safetensors"
    assert meta["model_manifest"]["weights_sha256"] == corpora.sha256_file(weights)
    assert meta["model_manifest"]["weights_sha256"] == "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

    scores = pl.read_parquet(workdir / "results/scores/minilm/sample/direct.parquet")
    assert scores.height == 44 and set(scores["direction"]) == {"de-fr", "fr-de"}
    expected = 100 * scores.filter(pl.col("direction") == "de-fr")["correct"].mean()
    assert scored["Sample DE→FR"][0] == pytest.approx(expected)

    record = json.loads((workdir / "results/mteb/minilm/sample.json").read_text())
    direct = workdir / "results/candidates/sample/direct.parquet"
    assert record["dataset_revision"] == mteb_record.dataset_revision({"direct": mteb_record.view_texts(pl.read_parquet(direct), read_meta(direct))})
    raw = json.loads((workdir / "results/mteb/minilm/raw.json").read_text())
    assert raw["dataset_revision"] == record["dataset_revision"]  # same texts from other files: the same content
    assert {s["hf_subset"] for s in record["scores"]["test"]} == {"direct-de-fr", "direct-fr-de"}
    assert {s["n_items"] for s in record["scores"]["test"]} == {22} and record["items_not_scored"] == []
    assert "encoding 220 distinct texts" in (workdir / "results/logs/embed/minilm/sample/direct.log").read_text()
    prefixed = read_meta(workdir / "results/embeddings/minilm-query/sample/direct.parquet")
    assert prefixed["model"]["applied_prefix"] == "query: "


def test_analysis_outputs(workdir):
    table3 = pl.read_csv(workdir / "results/tables/table3.csv")
    assert table3.columns == ["Language", "Levenshtein", "|D_bin|", "minilm", "minilm-query"]
    # |D_bin| counts every distractor of the language once per dataset (sample and raw hold the same 88)
    assert table3.filter(pl.col("Language") == "French")["|D_bin|"].sum() == 2 * 88
    failures = pl.read_parquet(workdir / "results/scores/minilm/sample/direct.parquet").filter(~pl.col("correct")).height
    assert failures > 0
    pairs = pl.read_parquet(workdir / "results/analysis/sample/single_word.parquet")
    assert pairs.height > 0 and set(pairs["operation"]) <= {"swap", "addition"}
    assert pairs["pos"].null_count() == 0 and {t.split("-")[0] for t in pairs["tagger"]} == {"spacy", "hanta"}
    shifts = pl.read_parquet(workdir / "results/analysis/shifts/minilm.parquet")
    assert shifts.height == 2 * pairs.height  # sample + raw, same pairs
    assert read_meta(workdir / "results/analysis/shifts/minilm.parquet")["normaliser"]["N"] > 0
    for name in ("x_change", "m_change"):
        assert (workdir / f"results/figures/{name}.png").read_bytes()[:4] == b"\x89PNG"
        assert (workdir / f"results/figures/{name}.pdf").stat().st_size > 5000
    correlations = pl.read_csv(workdir / "results/tables/correlations.csv")
    assert correlations.filter((pl.col("Scope") == "all") & (pl.col("Model") == "minilm"))["n"][0] == shifts.height
    table5 = (workdir / "results/tables/table5.md").read_text()
    assert table5.count("\n| sample") + table5.count("\n| raw") == 10
    # neither a judge nor an annotator checked these distractors: every row says so, and the note under the table why
    assert table5.count(" | no |") == 10 and "nobody checked it" in table5
    stats = pl.read_csv(workdir / "results/tables/distractor_stats.csv")
    assert stats["Dataset"].to_list() == ["raw", "raw", "sample", "sample", "all", "all"]
    assert stats["distractors"].to_list() == [88, 88, 88, 88, 176, 176]
    assert stats["target_copies"].to_list() == [0] * 6
    assert pl.read_csv(workdir / "results/tables/distractor_copies.csv").height == 0
    # every set's closeness profile beside GPT-4's published sets', in its own table and in the validation table
    profiles = pl.read_csv(workdir / "results/tables/closeness_profile.csv")
    assert profiles["Set"].to_list() == ["GPT-4 (published WMT19 + WMT21)", "Raw", "Sample"] * 2
    mine = profiles.filter(pl.col("n").is_not_null())
    assert mine["n"].to_list() == [88] * 4 and mine["Language"].to_list() == ["German", "German", "French", "French"]
    shares = mine.select("<0.6", "[0.6,0.7)", "[0.7,0.8)", "[0.8,0.9)", "≥0.9").sum_horizontal()
    assert shares.round(6).to_list() == [100.0] * 4 and set(mine["matches"]) <= {"yes", "no"}
    for table in ("validation", "distractor_stats"):
        assert "Closeness profile of the kept distractors" in (workdir / f"results/tables/{table}.md").read_text()


def test_the_generator_check_compares_two_generators_on_the_same_items(fresh_copy):
    """The sample's hand-written distractors against the same items' rule-based ones (and against the raw corpus's,
    the same distractors): each model's P@1 under both, the paired difference, the ranking, the two profiles."""
    config = read_config(fresh_copy)
    config["datasets"]["rules"] = {"label": "Rules", "source": {"kind": "published_csv", "path": "sources/sample.csv"},
                                   "distractors": {"kind": "rules"}}
    config["generator_check"] = [{"reference": "sample", "candidate": "raw"}, {"reference": "sample", "candidate": "rules"}]
    write_config(fresh_copy, config)
    snakemake(fresh_copy)
    check = pl.read_csv(fresh_copy / "results/tables/generator_check.csv")
    assert check.height == 2 * 2 * 2  # pairs × models × directions
    same = check.filter(pl.col("Candidate") == "Raw")
    assert same["Difference"].to_list() == [0.0] * 4 and same["n"].to_list() == [22] * 4
    assert (same["CI low"] < 0).all() and (same["CI high"] > 0).all()  # no difference, an interval around it
    table2 = pl.read_csv(fresh_copy / "results/tables/table2.csv")
    minilm = check.filter((pl.col("Candidate") == "Rules") & (pl.col("Model") == "minilm") & (pl.col("Direction") == "DE→FR")).row(0, named=True)
    rules_scored = table2.filter(pl.col("model") == "items scored")["Rules DE→FR"][0]
    assert minilm["n"] == rules_scored and minilm["unscored candidate"] == 22 - rules_scored and minilm["unscored reference"] == 0
    if rules_scored == 22:  # on the same items, the reference's P@1 is Table 2's
        assert minilm["P@1 reference"] == pytest.approx(table2.filter(pl.col("model") == "minilm")["Sample DE→FR"][0])
    assert minilm["CI low"] <= minilm["Difference"] <= minilm["CI high"]
    markdown = (fresh_copy / "results/tables/generator_check.md").read_text()
    assert "DE→FR: Sample ranks" in markdown and "Raw ranks" in markdown
    assert "Closeness profiles of Sample and Rules" in markdown and "| GPT-4 (published WMT19 + WMT21) | German |" in markdown


def test_html_report_holds_every_table_and_figure(workdir):
    snakemake(workdir, "--report", str(workdir / "report.html"))
    html = (workdir / "report.html").read_text(encoding="utf-8")
    for name in ("table2.md", "table2_pairs.md", "table2.png", "table3.md", "table5.md", "correlations.md", "x_change.png", "m_change.png",
                 "validation.md"):
        assert name in html
    assert "successful distractor" in html and "bootstrap" in html  # captions say how it was computed


def test_unchanged_rerun_plans_nothing(workdir):
    assert planned_jobs(workdir) == []


AGGREGATIONS = {("all",), ("table2",), ("table3",), ("examples",), ("shift_figures",), ("correlations",)}


def aggregations(jobs) -> set[tuple[str]]:
    """Jobs of rules that aggregate over models or datasets (the checksum sentinels of local folders are not)."""
    return {(rule,) for rule, w in jobs if not {"model", "dataset", "kind"} & set(w)}


def test_adding_a_model_schedules_only_its_jobs(fresh_copy, minilm_folder):
    config = read_config(fresh_copy)
    config["models"]["minilm-passage"] = {"name": "minilm, passages", "source": "local", "path": str(minilm_folder), "prefix": "passage: "}
    write_config(fresh_copy, config)
    jobs = planned_jobs(fresh_copy)
    per_model = sorted((rule, w["model"], w["dataset"]) for rule, w in jobs if "dataset" in w and "model" in w)
    assert per_model == [
        (rule, "minilm-passage", dataset) for rule in ("embed", "mteb_json", "score") for dataset in ("raw", "sample")
    ]
    assert [w for rule, w in jobs if rule == "shifts"] == [{"model": "minilm-passage"}]
    assert aggregations(jobs) == AGGREGATIONS
    snakemake(fresh_copy, "results/tables/table2.csv")
    table = pl.read_csv(fresh_copy / "results/tables/table2.csv")
    assert table["model"].to_list() == ["minilm", "minilm-passage", "minilm-query", "items scored"]


def test_tables_do_not_depend_on_the_order_of_models_and_datasets_in_the_config(fresh_copy):
    before = {path.relative_to(fresh_copy): path.read_bytes() for folder in ("tables", "figures") for path in (fresh_copy / "results" / folder).iterdir()}
    config = read_config(fresh_copy)
    config["models"] = dict(reversed(list(config["models"].items())))
    config["datasets"] = dict(reversed(list(config["datasets"].items())))
    write_config(fresh_copy, config)
    for folder in ("tables", "figures"):
        shutil.rmtree(fresh_copy / "results" / folder)
    snakemake(fresh_copy)
    text = [name for name in before if name.suffix in (".md", ".csv", ".tex")]
    assert len(text) >= 20
    for name in text:
        assert (fresh_copy / name).read_bytes() == before[name], name


def test_changing_a_prefix_reruns_only_that_model(fresh_copy):
    config = read_config(fresh_copy)
    config["models"]["minilm-query"]["prefix"] = "passage: "
    write_config(fresh_copy, config)
    jobs = planned_jobs(fresh_copy)
    assert {w["model"] for rule, w in jobs if "model" in w} == {"minilm-query"}
    assert {rule for rule, w in jobs if "model" in w} == {"embed", "score", "mteb_json", "shifts"}
    assert aggregations(jobs) == AGGREGATIONS


def test_changing_a_dataset_label_reruns_only_the_tables_that_print_it(fresh_copy):
    config = read_config(fresh_copy)
    config["datasets"]["raw"]["label"] = "Raw WMT"
    write_config(fresh_copy, config)
    # Table 2, the dataset card, and the closeness profile (under distractor_stats.md and validation.md) print it
    assert job_set(planned_jobs(fresh_copy)) == {("table2", "", "", "", ""), ("hf_export", "", "raw", "", ""), ("all", "", "", "", ""),
                                                 ("distractor_stats", "", "", "", ""), ("validation_table", "", "", "", "")}


def per_dataset(dataset: str) -> set[tuple[str, ...]]:
    """Every job downstream of a dataset's distractor sets (validation, both models, direct view), with the aggregations."""
    jobs = {("candidates", "", dataset, "", ""), ("single_word_pairs", "", dataset, "", ""), ("distractor_stats", "", "", "", "")}
    jobs |= {("validate_distractors", "", dataset, "", lang) for lang in ("de", "fr")} | {("validation_table", "", "", "", "")}
    jobs |= {(rule, model, dataset, "direct", "") for rule in ("embed", "score") for model in ("minilm", "minilm-query")}
    jobs |= {("mteb_json", model, dataset, "", "") for model in ("minilm", "minilm-query")}
    jobs |= {("shifts", model, "", "", "") for model in ("minilm", "minilm-query")} | {("hf_export", "", dataset, "", "")}
    return jobs | {(rule, "", "", "", "") for (rule,) in AGGREGATIONS}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_editing_a_raw_corpus_file_replans_exactly_its_dataset(fresh_copy):
    edit(fresh_copy / "sources/raw.de", "Kurzer Satz.", "Ein kurzer Satz.")
    expected = per_dataset("raw") | {("parallel", "", "raw", "", "")} | {("distractors", "", "raw", "", lang) for lang in ("de", "fr")}
    assert job_set(planned_jobs(fresh_copy)) == expected


def test_editing_a_published_distractor_file_replans_exactly_what_it_feeds(fresh_copy):
    edit(fresh_copy / "sources/distractors.csv", "Marseille", "Toulouse")
    expected = per_dataset("raw") | {("distractors", "", "raw", "", lang) for lang in ("de", "fr")}
    assert job_set(planned_jobs(fresh_copy)) == expected
    snakemake(fresh_copy, "results/candidates/raw/direct.parquet")
    assert "Toulouse" in " ".join(pl.read_parquet(fresh_copy / "results/candidates/raw/direct.parquet")["text"])


def rewrite_cells(path: Path, changes: dict[tuple[int, str], str]) -> None:
    """Set cells of a published CSV ((row, column) → text), written back with the csv module."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for (row, column), text in changes.items():
        rows[row][column] = text
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_published_distractors_are_flagged_and_removed_only_when_asked(fresh_copy):
    path = fresh_copy / "sources/distractors.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        first = next(csv.DictReader(handle))
    # a fronted adverbial (the same meaning: a reorder) and a misspelt participle (a non-word)
    reorder = "Mardi, le conseil municipal de Lyon a approuvé la construction de trois nouvelles écoles primaires."
    assert first["French"] == "Le conseil municipal de Lyon a approuvé mardi la construction de trois nouvelles écoles primaires."
    non_word = first["German"].replace("genehmigt", "genemigt")
    # and a sentence that shares almost nothing with its target (no adversarial example)
    unrelated = "Die Regierung will im nächsten Jahr die Steuern auf Benzin senken."
    rewrite_cells(path, {(0, "fr_adv2"): reorder, (0, "de_adv3"): non_word, (5, "de_adv1"): unrelated})
    snakemake(fresh_copy, *TABLES)
    validation = pl.read_csv(fresh_copy / "results/tables/validation.csv")
    raw = {row["Language"]: row for row in validation.filter(pl.col("Dataset") == "raw").iter_rows(named=True)}
    assert raw["French"]["reorder"] == 1 and raw["German"]["non_word"] == 1 and raw["French"]["Action"] == "flagged"
    assert raw["German"]["unrelated"] == 1 and (raw["German"]["Written"], raw["German"]["Flagged"]) == (88, 2)
    assert (raw["French"]["Written"], raw["French"]["Valid"], raw["French"]["Flagged"]) == (88, 87, 1)  # flagged, not valid
    assert validation.filter(pl.col("Dataset") == "sample")["Written"].to_list() == [88, 88]
    markdown = (fresh_copy / "results/tables/validation.md").read_text(encoding="utf-8")
    assert reorder in markdown
    # how sure each reason is, measured on the hand-made sets of both languages (clsd.validate.reliability)
    assert "- German: copy 1/1 right, 1/1 caught; cut_off 2/2 right, 2/2 caught; non_word " in markdown and "- French: copy 1/1 right" in markdown
    table = pl.read_csv(fresh_copy / "results/tables/table2.csv")
    assert table.filter(pl.col("view") == "n")["Raw DE→FR"][0] == 22  # flagged only: the published data is unchanged

    config = read_config(fresh_copy)
    config["validation"] = {"apply_to_published": True}
    write_config(fresh_copy, config)
    assert {rule for rule, _ in planned_jobs(fresh_copy)} >= {"validate_distractors", "candidates", "embed", "table2"}
    snakemake(fresh_copy, *TABLES)
    validation = pl.read_csv(fresh_copy / "results/tables/validation.csv")
    assert validation.filter(pl.col("Dataset") == "raw")["Action"].to_list() == ["removed", "removed"]
    table = pl.read_csv(fresh_copy / "results/tables/table2.csv")
    # an item lacking a distractor in either language is left out of both directions
    assert table.filter(pl.col("view") == "n")["Raw DE→FR"][0] == 20
    markdown = (fresh_copy / "results/tables/table2.md").read_text(encoding="utf-8")
    assert "2 of 22 items not scored" in markdown and "validation removed 1 distractor(s): non_word" in markdown and "validation removed 1 distractor(s): unrelated" in markdown
    assert "validation removed 1 distractor(s): reorder" in markdown


def test_editing_a_file_of_a_local_model_folder_replans_its_jobs(fresh_copy):
    settings = fresh_copy / "sources/minilm-copy/config_sentence_transformers.json"
    settings.write_text(settings.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    jobs = planned_jobs(fresh_copy)
    assert {w["model"] for _, w in jobs if "model" in w} == {"minilm-query"}
    assert {rule for rule, w in jobs if "model" in w} == {"embed", "score", "mteb_json", "shifts"}
    assert len([1 for rule, _ in jobs if rule == "embed"]) == 2
    snakemake(fresh_copy)
    os.utime(settings)  # touched, same content: the sentinel stays as it is
    assert planned_jobs(fresh_copy) == []


def nothing_left(path: Path) -> Path:
    """A published set of one item whose first German distractor copies the German sentence: with
    validation.apply_to_published the item is not scored, so the dataset has no items (a header with no rows
    is an input error since issue 34)."""
    rows = list(csv.DictReader(io.StringIO(SAMPLE.read_text(encoding="utf-8"))))[:1]
    rows[0]["de_adv1"] = rows[0]["German"]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_a_dataset_without_items_shows_dashes_and_the_others_are_scored(fresh_copy):
    config = read_config(fresh_copy)
    config["datasets"]["empty"] = {"label": "Empty", "source": {"kind": "published_csv", "path": str(nothing_left(fresh_copy / "sources/empty.csv"))}}
    config["validation"] = {"apply_to_published": True}
    write_config(fresh_copy, config)
    snakemake(fresh_copy, "results/tables/table2.md")
    markdown = (fresh_copy / "results/tables/table2.md").read_text(encoding="utf-8")
    assert "| n | items scored | 0 | 0 | 22 | 22 | 22 | 22 | – |" in markdown
    note = next(line for line in markdown.splitlines() if line.startswith("Empty: "))
    assert note.startswith("Empty: all 1 items not scored (") and note.endswith("so its columns show –.")
    assert "copy" in note
    rows = [line for line in markdown.splitlines() if line.startswith("| direct | minilm |")]
    assert rows[0].split(" | ")[2:4] == ["–", "–"]  # the Empty columns
    embed_log = (fresh_copy / "results/logs/embed/minilm/empty/direct.log").read_text(encoding="utf-8")
    assert "no item of empty (direct view) can be scored: nothing encoded" in embed_log


def test_a_run_with_nothing_to_score_stops_with_one_message(tmp_path):
    write_config(tmp_path, {
        "model_store": str(MODEL_STORE),
        "datasets": {"empty": {"label": "Empty", "source": {"kind": "published_csv", "path": str(nothing_left(tmp_path / "empty.csv"))}}},
        "models": {"minilm": MINILM},
        "validation": {"apply_to_published": True},
    })
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    message = "no item can be scored, so no model was run. Empty: none of 1 items has four valid distractors in every language ("
    assert message in result.stdout + result.stderr  # shown in the terminal (show-failed-logs)
    assert "Traceback" not in (tmp_path / "results/logs/embed/minilm/empty/direct.log").read_text(encoding="utf-8")


def test_bad_csv_fails_before_any_embedding(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(SAMPLE.read_text(encoding="utf-8").replace("fr_adv3", "fr_adv_3", 1), encoding="utf-8")
    write_config(tmp_path, {
        "model_store": str(MODEL_STORE),
        "datasets": {"bad": {"label": "Bad", "source": {"kind": "published_csv", "path": str(bad)}}},
        "models": {"minilm": MINILM},
    })
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    log = (tmp_path / "results/logs/parallel/bad.log").read_text()
    assert f"file {bad}, field 'fr_adv3': missing column" in log
    # the profile's show-failed-logs prints it in the terminal too, and the job ran once (no blind retry)
    assert f"file {bad}, field 'fr_adv3': missing column" in result.stdout + result.stderr
    assert log.count(f"file {bad}, field 'fr_adv3'") == 1
    assert not (tmp_path / "results/embeddings").exists()


def test_bad_config_fails_at_parse_time_naming_the_key(tmp_path):
    write_config(tmp_path, {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
                            "models": {"m": {"name": "x", "source": "pypi", "recipe": "nope"}}})
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    assert "config key models.m.recipe: unknown recipe 'nope'" in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


def pivot_config(folder: Path, pivot: dict, datasets_: dict | None = None) -> dict:
    return {
        "model_store": str(MODEL_STORE),
        "download_cache": str(folder / "downloads"),
        "views": ["direct", "pivot"],
        "pivot": pivot,
        "datasets": datasets_ or {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
        "models": {"minilm": MINILM},
    }


def test_pivot_branch_with_both_model_backends(tmp_path, tiny_m2m):
    settings = {"source": "local", "path": str(tiny_m2m), "model": "tiny-m2m", "beam_size": 1, "max_new_tokens": 10,
                "quantization": "float32"}
    runs = {}
    for backend in ("transformers", "ctranslate2"):
        workdir = tmp_path / backend
        workdir.mkdir()
        write_config(workdir, pivot_config(workdir, {"backend": backend, **settings}) | {"analysis": {"enabled": False}})
        snakemake(workdir)
        runs[backend] = workdir
    hf, ct2 = (pl.read_parquet(runs[b] / "results/candidates/sample/pivot.parquet") for b in ("transformers", "ctranslate2"))
    assert hf.equals(ct2)  # float32 greedy decoding: identical translations
    direct = pl.read_parquet(runs["transformers"] / "results/candidates/sample/direct.parquet")
    assert hf.select("id", "lang", "slot").equals(direct.select("id", "lang", "slot"))
    translations = pl.read_parquet(runs["transformers"] / "results/pivot/sample.parquet")
    assert translations.height == direct.select("lang", "text").n_unique()
    assert read_meta(runs["transformers"] / "results/pivot/sample.parquet")["translator"]["beam_size"] == 1
    assert (runs["ctranslate2"] / "results/translators/ct2/model.bin").is_file()
    table = pl.read_csv(runs["transformers"] / "results/tables/table2.csv")
    assert table["view"].to_list() == ["direct", "pivot", "n"]
    record = json.loads((runs["transformers"] / "results/mteb/minilm/sample.json").read_text())
    assert {s["hf_subset"] for s in record["scores"]["test"]} == {"direct-de-fr", "direct-fr-de", "pivot-de-fr", "pivot-fr-de"}
    assert planned_jobs(runs["transformers"]) == []  # cached: a rerun translates nothing
    assert params_naming_paths(runs["transformers"]) == params_naming_paths(runs["ctranslate2"]) == []


def test_published_pivot_backend(tmp_path):
    require_shared()
    data = {
        "wmt19": {"label": "WMT19", "source": {"kind": "published_csv", "path": str(PUBLISHED / "CLSD_wmt2019_adversarial_dataset.head50.csv")},
                  "pivot_csv": str(PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv")},
    }
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "published"}, data))
    jobs = {rule for rule, _ in planned_jobs(tmp_path)}
    assert "convert_ct2" not in jobs and "translate" in jobs
    snakemake(tmp_path)
    english = corpora.read_published_csv(PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv", ["de", "fr"])
    pivot = pl.read_parquet(tmp_path / "results/candidates/wmt19/pivot.parquet")
    german_sources = pivot.filter((pl.col("lang") == "de") & (pl.col("slot") == 0)).sort("id")["text"]
    assert german_sources.to_list() == english["German"].to_list()
    table = pl.read_csv(tmp_path / "results/tables/table2.csv")
    assert table["view"].to_list() == ["direct", "pivot", "n"]
    # the English-only control does much better once everything is in English
    assert table.filter(pl.col("view") == "pivot")["Average"][0] > table.filter(pl.col("view") == "direct")["Average"][0]
    failures = pl.read_csv(tmp_path / "results/tables/pivot_failures.csv")
    direct = pl.read_parquet(tmp_path / "results/scores/minilm/wmt19/direct.parquet")
    pivot_scores = pl.read_parquet(tmp_path / "results/scores/minilm/wmt19/pivot.parquet")
    expected = direct.join(pivot_scores, on=["id", "direction"]).filter(pl.col("correct") & ~pl.col("correct_right")).height
    assert failures.height == expected


def sample_as_pivot_file(path: Path) -> None:
    """A file in the MT_M2M_* layout (extra unnamed leading column) whose "English" is the sample's own text."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([f",{lines[0]}"] + [f"{i},{line}" for i, line in enumerate(lines[1:])]) + "\n", encoding="utf-8")


def test_pivot_file_edits_and_moves_replan_only_the_pivot_view(tmp_path):
    (tmp_path / "sources").mkdir()
    shutil.copy(SAMPLE, tmp_path / "sources/sample.csv")
    sample_as_pivot_file(tmp_path / "sources/mt.csv")
    data = {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "sources/sample.csv"}, "pivot_csv": "sources/mt.csv"}}
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "published"}, data))
    snakemake(tmp_path)
    assert "8 of 8 anchored items keep" in (tmp_path / "results/logs/translate/sample.log").read_text()
    pivot_only = {("translate", "", "sample", "", ""), ("pivot_candidates", "", "sample", "", ""), ("embed", "minilm", "sample", "pivot", ""),
                  ("score", "minilm", "sample", "pivot", ""), ("mteb_json", "minilm", "sample", "", ""), ("table2", "", "", "", ""),
                  ("pivot_failures", "", "", "", ""), ("hf_export", "", "sample", "", ""), ("all", "", "", "", "")}
    edit(tmp_path / "sources/mt.csv", "Marseille", "Toulouse")
    assert job_set(planned_jobs(tmp_path)) == pivot_only
    snakemake(tmp_path)
    shutil.copy(tmp_path / "sources/mt.csv", tmp_path / "sources/mt-moved.csv")
    config = read_config(tmp_path)
    config["datasets"]["sample"]["pivot_csv"] = {"path": "sources/mt-moved.csv", "sha256": corpora.sha256_file(tmp_path / "sources/mt.csv")}
    write_config(tmp_path, config)
    assert job_set(planned_jobs(tmp_path)) == pivot_only


def test_a_pivot_file_out_of_order_stops_the_pivot_view(tmp_path):
    (tmp_path / "sources").mkdir()
    shutil.copy(SAMPLE, tmp_path / "sources/sample.csv")
    sample_as_pivot_file(tmp_path / "sources/mt.csv")
    frame = pl.read_csv(tmp_path / "sources/mt.csv", infer_schema=False)
    texts = [c for c in frame.columns if c not in ("", "Index")]
    frame.with_columns(pl.col(c).shift(1).fill_null(pl.col(c).last()) for c in texts).write_csv(tmp_path / "sources/mt.csv")
    data = {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": "sources/sample.csv"}, "pivot_csv": "sources/mt.csv"}}
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "published"}, data))
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    assert "rows are not in the order of sources/sample.csv" in (tmp_path / "results/logs/translate/sample.log").read_text()
    assert not (tmp_path / "results/scores/minilm/sample/pivot.parquet").exists()


def test_no_pivot_backend_skips_the_pivot_view_cleanly(tmp_path):
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "none"}))
    jobs = planned_jobs(tmp_path)
    assert not [rule for rule, _ in jobs if rule in ("translate", "pivot_candidates", "convert_ct2")]
    assert {w.get("view") for rule, w in jobs if rule == "embed"} == {"direct"}


def test_missing_translation_model_fails_before_any_work(tmp_path):
    write_config(tmp_path, pivot_config(tmp_path, {"backend": "transformers", "source": "local", "path": str(tmp_path / "none")}))
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    assert "config key pivot.path" in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


def test_configfile_on_the_command_line_replaces_the_default(tmp_path):
    write_config(tmp_path, {"datasets": {"default": {"label": "D", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
                            "models": {"minilm": MINILM}})
    other = {"datasets": {"other": {"label": "O", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
             "models": {"minilm": MINILM}}
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(other, sort_keys=False), encoding="utf-8")
    output = snakemake(tmp_path, "--dry-run", "--configfile", str(tmp_path / "other.yaml")).stdout
    assert "dataset=other" in output and "dataset=default" not in output


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


def test_onnx_and_openvino_backends_export_once_and_never_mix_with_torch(tmp_path):
    """all-MiniLM-L6-v2 run by torch, ONNX Runtime int8 and OpenVINO int8: one export each, kept in the model
    store and reused after `rm -r results`; rebuilt when an export file changes."""
    keys = {"test-minilm-onnx": ("onnx", "int8"), "test-minilm-ov": ("openvino", "int8")}
    for key in keys:
        shutil.rmtree(MODEL_STORE / "exports" / key, ignore_errors=True)
    models = {"minilm": MINILM} | {
        key: {**MINILM, "label": key, "backend": backend, "quantize": quantize} for key, (backend, quantize) in keys.items()}
    write_config(tmp_path, {
        "model_store": str(MODEL_STORE),
        # the first 8 of the sample's 22 items: validation checks only the selected items' distractors
        "datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": str(SAMPLE)}, "select": {"limit": 8}}},
        "models": models, "analysis": {"enabled": False},
    })
    snakemake(tmp_path)
    torch_table = pl.read_parquet(tmp_path / "results/embeddings/minilm/s/direct.parquet")
    reference = dict(zip(torch_table["text_id"], torch_table["embedding"].to_numpy()))
    candidates = pl.read_parquet(tmp_path / "results/candidates/s/direct.parquet")
    for key, (backend, quantize) in keys.items():
        manifest = json.loads((tmp_path / f"results/exports/{key}.json").read_text(encoding="utf-8"))
        assert not manifest["reused"] and manifest["identity"]["backend"] == backend and Path(manifest["file"]).is_file()
        meta = read_meta(tmp_path / f"results/embeddings/{key}/s/direct.parquet")
        assert meta["runs_on"]["tag"] == f"{backend}-{quantize}" and meta["export"]["file"] == manifest["file"]
        table = pl.read_parquet(tmp_path / f"results/embeddings/{key}/s/direct.parquet")
        assert not set(table["text_id"]) & set(reference)  # never the same row key as torch's vectors
        # the same texts, vectors within int8 noise of torch's
        prefix = meta["model"]["row_key_prefix"]
        assert prefix == f"<{backend}-{quantize}>"
        vectors = dict(zip(table["text_id"], table["embedding"].to_numpy()))
        cosines = [float(np.dot(vectors[text_key(prefix, t)], reference[text_key("", t)])
                         / np.linalg.norm(vectors[text_key(prefix, t)]) / np.linalg.norm(reference[text_key("", t)]))
                   for t in candidates["text"].unique()]
        assert min(cosines) > 0.99
    table = p1_columns(pl.read_csv(tmp_path / "results/tables/table2.csv"))
    assert table["model"].to_list()[:3] == ["minilm", "test-minilm-onnx", "test-minilm-ov"]
    assert pl.read_csv(tmp_path / "results/tables/validation.csv")["Written"].to_list() == [32, 32]

    manifests = [f"results/exports/{key}.json" for key in keys]  # all the reruns below ask for
    shutil.rmtree(tmp_path / "results")
    snakemake(tmp_path, *manifests)
    assert all(json.loads((tmp_path / f"results/exports/{key}.json").read_text())["reused"] for key in keys)

    onnx_folder = MODEL_STORE / "exports/test-minilm-onnx/onnx-int8"
    with (onnx_folder / "model.onnx.data").open("ab") as handle:
        handle.write(b"\0")
    shutil.rmtree(tmp_path / "results")
    snakemake(tmp_path, *manifests)
    manifest = json.loads((tmp_path / "results/exports/test-minilm-onnx.json").read_text())
    assert not manifest["reused"] and "files of the export" in (tmp_path / "results/logs/export_model/test-minilm-onnx.log").read_text()


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
        first = snakemake(tmp_path, check=False, env=env)
        assert first.returncode != 0 and "no item can be scored" in first.stdout + first.stderr
        asked = len(server.seen)
        assert asked == 4  # three refusals of the German sentence, one French answer

        kept = snakemake(tmp_path, check=False, env=env)  # the endpoint answers now; results/ kept
        terminal = kept.stdout + kept.stderr
        assert kept.returncode != 0 and len(server.seen) == asked
        assert "3 refused" in terminal
        assert "These failures come from answers stored in the response store (generation.store)" in terminal
        assert "clsd-forget --dataset gen --lang de" in terminal and "--forcerun generate_distractors" in terminal
        assert "generation.reask_unusable: true" in terminal

        # reask_unusable from the start of a run: refused again, then the next run asks again and is scored
        server.plans["Stadtrat von Lyon"] = ["refusal"] * 3
        config["generation"]["reask_unusable"] = True
        write_config(tmp_path, config)
        again = snakemake(tmp_path, check=False, env=env)
        assert again.returncode != 0 and len(server.seen) == asked + 3
        scored = snakemake(tmp_path, env=env)
        assert len(server.seen) == asked + 4, scored.stdout[-3000:]
        assert (tmp_path / "results/tables/table2.md").exists()
        # nothing unusable is left: one more run replays the answers (no request), then the job is up to date
        snakemake(tmp_path, env=env)
        assert len(server.seen) == asked + 4
        assert [rule for rule, _ in planned_jobs(tmp_path) if rule == "generate_distractors"] == []
