"""The real workflow: Snakemake runs the whole default DAG on a tiny config in a temporary folder."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from clsd.core.io import read_meta
from clsd.core.keys import text_key
from clsd.data import corpora
from clsd.report import mteb_record
from conftest import MODEL_STORE
from workflow_runs import (MINILM, SAMPLE, TABLES, edit, job_set, p1_columns, params_naming_paths, planned_jobs, read_config,
                           snakemake, write_config)

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
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
    assert "- German: copy 1/1 right, 1/1 caught; cut_off 4/4 right, 4/4 caught; non_word " in markdown and "- French: copy 1/1 right" in markdown
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


def test_a_run_with_nothing_to_score_writes_table2_with_dashes_and_says_why(tmp_path):
    """A run whose only dataset has nothing to score writes Table 2 as a run of several datasets does: `–` and the
    dataset's footnote; the table2 log warns why, per dataset and language."""
    write_config(tmp_path, {
        "model_store": str(MODEL_STORE),
        "datasets": {"empty": {"label": "Empty", "source": {"kind": "published_csv", "path": str(nothing_left(tmp_path / "empty.csv"))}}},
        "models": {"minilm": MINILM},
        "validation": {"apply_to_published": True},
    })
    snakemake(tmp_path, "results/tables/table2.md")
    markdown = (tmp_path / "results/tables/table2.md").read_text(encoding="utf-8")
    rows = [line for line in markdown.splitlines() if line.startswith("| direct | minilm |")]
    assert rows[0].split(" | ")[2:] == ["–", "–", "– |"]  # DE→FR, FR→DE, Average
    assert "| n | items scored | 0 | 0 | – |" in markdown
    assert next(line for line in markdown.splitlines() if line.startswith("Empty: ")).startswith("Empty: all 1 items not scored (")
    assert "No item could be scored." not in markdown  # no LLM was asked: nothing to try there
    message = ("no item can be scored, so no model was run and Table 2 shows – in every column. Empty: none of 1 items "
               "has four valid distractors in every language (")
    assert message in (tmp_path / "results/logs/table2.log").read_text(encoding="utf-8")
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


def test_configfile_on_the_command_line_replaces_the_default(tmp_path):
    write_config(tmp_path, {"datasets": {"default": {"label": "D", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
                            "models": {"minilm": MINILM}})
    other = {"datasets": {"other": {"label": "O", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
             "models": {"minilm": MINILM}}
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(other, sort_keys=False), encoding="utf-8")
    output = snakemake(tmp_path, "--dry-run", "--configfile", str(tmp_path / "other.yaml")).stdout
    assert "dataset=other" in output and "dataset=default" not in output


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


