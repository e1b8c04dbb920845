"""Table 2 layout and formats, and the MTEB-shaped record, from hand-made score files."""

import polars as pl
import pytest

from clsd import render, report


def score_file(tmp_path, name, outcomes: dict[str, list[bool]]):
    rows = [(i, d, 0.5, 0.4, ok) for d, hits in outcomes.items() for i, ok in enumerate(hits)]
    frame = pl.DataFrame(rows, schema=["id", "direction", "cos_true", "cos_d1", "correct"], orient="row")
    path = tmp_path / f"{name}.parquet"
    frame.write_parquet(path)
    return str(path)


def test_table2_layout_and_average(tmp_path):
    files = [
        report.ScoreFile("direct", "A", "w19", "WMT19", score_file(tmp_path, "a19", {"de-fr": [True, True, False, True], "fr-de": [True, False]})),
        report.ScoreFile("direct", "A", "w21", "WMT21", score_file(tmp_path, "a21", {"de-fr": [True], "fr-de": [False]})),
        report.ScoreFile("direct", "B", "w19", "WMT19", score_file(tmp_path, "b19", {"de-fr": [False, True, False, False], "fr-de": [True, True]})),
        report.ScoreFile("direct", "B", "w21", "WMT21", score_file(tmp_path, "b21", {"de-fr": [False], "fr-de": [True]})),
    ]
    table, counts = report.table2(files, ["de-fr", "fr-de"])
    assert counts == {"WMT19 DE→FR": 4, "WMT19 FR→DE": 2, "WMT21 DE→FR": 1, "WMT21 FR→DE": 1}
    assert table.columns == ["view", "model", "WMT19 DE→FR", "WMT19 FR→DE", "WMT21 DE→FR", "WMT21 FR→DE", "Average"]
    a = table.row(0, named=True)
    assert (a["WMT19 DE→FR"], a["WMT19 FR→DE"], a["WMT21 DE→FR"], a["WMT21 FR→DE"]) == (75.0, 50.0, 100.0, 0.0)
    assert a["Average"] == pytest.approx(56.25)
    markdown = render.markdown(table)
    assert "| direct | A | 75.00 | 50.00 | 100.00 | 0.00 | 56.25 |" in markdown
    assert "| direct | B | 25.00 | 100.00 | 0.00 | 100.00 | 56.25 |" in markdown
    latex = render.latex(table)
    assert r"WMT19 DE$\rightarrow$FR" in latex and r"\toprule" in latex and latex.count(r"\\") == 3


def test_latex_separates_view_blocks_and_escapes():
    table = pl.DataFrame(
        [("direct", "m_1", 1.0, 1.0), ("pivot", "m_1", 2.0, 2.0)],
        schema=["view", "model", "X DE→FR", "Average"],
        orient="row",
    )
    latex = render.latex(table)
    assert latex.count(r"\midrule") == 2
    assert r"m\_1" in latex


def test_mteb_record(tmp_path):
    scores = pl.read_parquet(score_file(tmp_path, "s", {"de-fr": [True, False, True], "fr-de": [True, True, True]}))
    meta = {"sources": [{"path": "x.csv", "sha256": "ab" * 32}]}
    record = report.mteb_result(dataset="sample", dataset_meta=meta, model_meta={"name": "m"}, scores_by_view={"direct": scores})
    assert record["task_name"] == "CLSD-sample"
    assert record["dataset_revision"] == "ab" * 32
    subsets = {s["hf_subset"]: s for s in record["scores"]["test"]}
    assert subsets["direct-de-fr"]["main_score"] == 0.666667
    assert subsets["direct-de-fr"]["languages"] == ["deu-Latn", "fra-Latn"]
    assert subsets["direct-fr-de"]["n_items"] == 3
    assert record["packages"]["torch"].startswith("2.13")


def test_table2_rows_must_score_the_same_items(tmp_path):
    files = [
        report.ScoreFile("direct", "A", "w19", "WMT19", score_file(tmp_path, "a", {"de-fr": [True, True], "fr-de": [True, False]})),
        report.ScoreFile("direct", "B", "w19", "WMT19", score_file(tmp_path, "b", {"de-fr": [True], "fr-de": [True, False]})),
    ]
    with pytest.raises(ValueError, match=r"b\.parquet: 1 items scored for WMT19 DE→FR, other rows scored 2"):
        report.table2(files, ["de-fr", "fr-de"])


def test_table2_shows_items_scored_and_footnotes_for_items_left_out(tmp_path):
    files = [report.ScoreFile("direct", "A", "w19", "WMT19", score_file(tmp_path, "a", {"de-fr": [True, False], "fr-de": [True, True]}))]
    table, counts = report.table2(files, ["de-fr", "fr-de"])
    meta = {"items": 5, "dropped": [{"id": 2, "reason": "not in x.csv"}, {"id": 3, "reason": "not in x.csv"},
                                    {"id": 4, "reason": "de: 2 valid distractors after 3 attempts"}]}
    notes = report.not_scored_notes([("WMT19", meta), ("WMT21", {"items": 3, "dropped": []})])
    assert notes == ["WMT19: 3 of 5 items not scored (2 × not in x.csv; 1 × de: 2 valid distractors after 3 attempts)."]
    paths = [tmp_path / f"t2.{ext}" for ext in ("md", "tex", "csv")]
    report.write_table2(table, counts, notes, *paths)
    markdown = paths[0].read_text()
    assert "| direct | A | 50.00 | 100.00 | 75.00 |" in markdown
    assert "| n | items scored | 2 | 2 | – |" in markdown
    assert markdown.rstrip().endswith(notes[0])
    assert r"\multicolumn{5}{l}{\footnotesize WMT19: 3 of 5 items" in paths[1].read_text()
    csv = pl.read_csv(paths[2])
    assert csv.filter(pl.col("view") == "n")["WMT19 DE→FR"].to_list() == [2.0]
