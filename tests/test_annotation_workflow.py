"""Human validation in the real workflow: sheet → verdict files → annotation_report → apply → Table 2 re-scored."""

from __future__ import annotations

import csv

import polars as pl
import pytest
from conftest import MODEL_STORE, ROOT
from test_workflow import MINILM, planned_jobs, read_config, snakemake, write_config

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
SAMPLE = ROOT / "resources/sample/clsd_sample.csv"


def test_sheet_verdicts_report_and_apply_rescore_table2(tmp_path):
    config = {"model_store": str(MODEL_STORE), "download_cache": str(tmp_path / "downloads"),
              "analysis": {"enabled": False},
              "annotation": {"sample": 12, "seed": 3, "min_per_stratum": 2},
              "datasets": {"sample": {"label": "Sample", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
              "models": {"minilm": MINILM}}
    write_config(tmp_path, config)
    snakemake(tmp_path)
    folder = tmp_path / "results/annotation/sample"
    assert {p.name for p in folder.iterdir()} == {"de.html", "de.csv", "de.design.parquet", "fr.html", "fr.csv", "fr.design.parquet"}
    assert not (tmp_path / "results/tables/annotation.md").exists()  # no verdict files yet
    n_before = pl.read_csv(tmp_path / "results/tables/table2.csv").filter(pl.col("view") == "n")["Sample DE→FR"][0]
    assert n_before == 22

    # two annotators fill in the French sheet: a judges two distractors invalid, b agrees on one of them
    with (folder / "fr.csv").open(encoding="utf-8", newline="") as handle:
        sheet = list(csv.DictReader(handle))
    assert len(sheet) == 12
    for name, verdicts in (("anna.csv", {0: "same", 1: "not_sentence"}), ("ben.csv", {0: "same"})):
        with (tmp_path / name).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(sheet[0]))
            writer.writeheader()
            for i, row in enumerate(sheet):
                writer.writerow(row | {"verdict": verdicts.get(i, "different")})
    removed_items = {int(sheet[0]["item"].split("-")[1]), int(sheet[1]["item"].split("-")[1])}
    config = read_config(tmp_path)
    config["annotation"]["files"] = {"sample": {"fr": ["anna.csv", "ben.csv"]}}
    write_config(tmp_path, config)
    jobs = {rule for rule, _ in planned_jobs(tmp_path)}
    assert {"annotation_report", "annotated_distractors"} <= jobs and "annotation_sheet" not in jobs
    snakemake(tmp_path)
    table = pl.read_csv(tmp_path / "results/tables/annotation.csv")
    share = table.filter(pl.col("Measure") == "share valid").row(0, named=True)
    assert (share["Dataset"], share["Language"], share["Annotators"], share["Items"]) == ("sample", "French", 2, 12)
    # by hand from the design: Σ_h N_h/N · (mean share of annotators judging valid in stratum h)
    y = {row["item"]: 1.0 for row in sheet} | {sheet[0]["item"]: 0.0, sheet[1]["item"]: 0.5}
    design = pl.read_parquet(folder / "fr.design.parquet").with_columns(pl.col("item").replace_strict(y).alias("y"))
    strata = design.group_by("stratum").agg(pl.col("population").first(), pl.col("y").mean())
    expected = (strata["population"] * strata["y"]).sum() / strata["population"].sum()
    assert share["Estimate"] == pytest.approx(expected) and share["Low"] < share["Estimate"] < share["High"]
    kappa = table.filter(pl.col("Measure").str.starts_with("agreement")).row(0, named=True)
    assert kappa["Measure"] == "agreement (Cohen's kappa)" and kappa["Items"] == 12
    markdown = (tmp_path / "results/tables/annotation.md").read_text(encoding="utf-8")
    assert f"{sheet[1]['item']} [anna.csv: not_sentence; ben.csv: different]" in markdown
    card = (tmp_path / "results/hf/sample/README.md").read_text(encoding="utf-8")
    assert "Checked by people: 2 annotator(s) judged 12 of 12 distractors" in card
    assert f"share valid of the whole set {100 * expected:.1f}% (95% interval {100 * share['Low']:.1f}–{100 * share['High']:.1f}%)" in card
    assert "their verdicts were not applied" in card
    assert pl.read_csv(tmp_path / "results/tables/table2.csv").filter(pl.col("view") == "n")["Sample DE→FR"][0] == 22

    config["annotation"]["apply"] = True
    write_config(tmp_path, config)
    snakemake(tmp_path)
    n_after = pl.read_csv(tmp_path / "results/tables/table2.csv").filter(pl.col("view") == "n")["Sample DE→FR"][0]
    assert n_after == 22 - len(removed_items)
    footnotes = (tmp_path / "results/tables/table2.md").read_text(encoding="utf-8")
    assert len(removed_items) == 2  # the seeded draw put the two judged distractors in different items
    assert "2 of 22 items not scored" in footnotes
    assert "fr: annotators removed 1 distractor(s): same" in footnotes
    assert "fr: annotators removed 1 distractor(s): not_sentence" in footnotes
    card = (tmp_path / "results/hf/sample/README.md").read_text(encoding="utf-8")
    assert "the 2 distractor(s) they judged same meaning or not a sentence were removed" in card
    assert planned_jobs(tmp_path) == []
    snakemake(tmp_path, "--report", str(tmp_path / "report.html"))
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "annotation.md" in html and "Wilson interval at the design" in html  # the table, and its caption's method
