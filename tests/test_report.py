"""Table 2 layout and formats, and the MTEB-shaped record, from hand-made score files."""

import json

import numpy as np
import polars as pl
import pytest

from clsd import intervals, render, report


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
    table, counts = report.table2(report.read_outcomes(files, ["de-fr", "fr-de"]))
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


def test_mteb_record_loads_as_an_mteb_task_result(tmp_path):
    from mteb.results.task_result import TaskResult

    scores = pl.read_parquet(score_file(tmp_path, "s", {"de-fr": [True, False, True], "fr-de": [True, True, True]}))
    meta = {"parallel": {"sources": [{"path": "x.csv", "sha256": "ab" * 32}]}, "content_sha256": "c" * 64,
            "distractors": [{"lang": "fr", "generator": "llm:m", "prompt_sha256": "1" * 64}]}
    record = report.mteb_result(dataset="sample", candidates_meta=meta, model_meta={"name": "m"}, scores_by_view={"direct": scores},
                                evaluation_time=1.5)
    loaded = TaskResult.from_dict(json.loads(json.dumps(record)))
    assert loaded.task_name == "CLSD-sample" and loaded.evaluation_time == 1.5 and loaded.mteb_version == record["mteb_version"]
    assert loaded.get_score(splits=["test"]) == pytest.approx((0.666667 + 1.0) / 2)  # mean main score of the subsets
    # a new prompt (or LLM, or distractor file) is a new dataset revision
    other = {**meta, "distractors": [{"lang": "fr", "generator": "llm:m", "prompt_sha256": "2" * 64}]}
    assert report.dataset_revision(other) != report.dataset_revision(meta) == record["dataset_revision"]
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
        report.table2(report.read_outcomes(files, ["de-fr", "fr-de"]))


def test_table2_shows_items_scored_and_footnotes_for_items_left_out(tmp_path):
    files = [report.ScoreFile("direct", "A", "w19", "WMT19", score_file(tmp_path, "a", {"de-fr": [True, False], "fr-de": [True, True]}))]
    outcomes = report.read_outcomes(files, ["de-fr", "fr-de"])
    table, counts = report.table2(outcomes)
    intervals = report.confidence_intervals(outcomes, 200, 0)
    meta = {"items": 5, "dropped": [{"id": 2, "reason": "not in x.csv"}, {"id": 3, "reason": "not in x.csv"},
                                    {"id": 4, "reason": "de: 2 valid distractors after 3 attempts"}]}
    notes = report.not_scored_notes([("WMT19", meta), ("WMT21", {"items": 3, "dropped": []})])
    assert notes == ["WMT19: 3 of 5 items not scored (2 × not in x.csv; 1 × de: 2 valid distractors after 3 attempts)."]
    paths = [tmp_path / f"t2.{ext}" for ext in ("md", "tex", "csv")]
    report.write_table2(table, counts, intervals, notes, False, *paths)
    markdown = paths[0].read_text()
    assert "| direct | A | 50.00 | 100.00 | 75.00 |" in markdown
    assert "| n | items scored | 2 | 2 | – |" in markdown
    assert markdown.rstrip().endswith(notes[0])
    assert r"\multicolumn{5}{l}{\footnotesize WMT19: 3 of 5 items" in paths[1].read_text()
    csv = pl.read_csv(paths[2])
    assert csv.filter(pl.col("view") == "n")["WMT19 DE→FR"].to_list() == [2.0]
    assert csv.columns[2:5] == ["WMT19 DE→FR", "WMT19 DE→FR ci_low", "WMT19 DE→FR ci_high"]
    assert csv["WMT19 FR→DE ci_low"][0] == csv["WMT19 FR→DE ci_high"][0] == 100.0  # no variation, no width
    report.write_table2(table, counts, intervals, notes, True, *paths)
    assert "| direct | A | 50.00 ± 50.00 | 100.00 ± 0.00 |" in paths[0].read_text()


def test_bootstrap_intervals_cover_a_known_rate():
    """Simulated cells with a true P@1 of 90%: the 95% interval must hold it in about 95% of them."""
    rng = np.random.default_rng(7)
    outcomes = [report.Outcome("direct", "m", f"c{i}", np.arange(300), rng.random(300) < 0.9, "sim") for i in range(400)]
    intervals = report.confidence_intervals(outcomes, 1000, 3).filter(pl.col("column") != "Average")
    covered = ((intervals["ci_low"] <= 90.0) & (intervals["ci_high"] >= 90.0)).mean()
    assert 0.91 <= covered <= 0.98
    width = (intervals["ci_high"] - intervals["ci_low"]).mean()
    assert width == pytest.approx(2 * 1.96 * (0.9 * 0.1 / 300) ** 0.5 * 100, rel=0.1)  # the normal approximation
    again = report.confidence_intervals(outcomes[:3], 1000, 3)
    assert again.equals(report.confidence_intervals(outcomes[:3], 1000, 3))  # seeded


def test_mcnemar_exact_on_a_hand_made_table():
    # 10 items only A gets right, 2 only B: p = 2 * P(X <= 2 | n=12, 1/2) = 2 * (1 + 12 + 66) / 4096
    assert intervals.mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert intervals.mcnemar_exact(2, 10) == pytest.approx(158 / 4096)
    assert intervals.mcnemar_exact(0, 0) == 1.0 and intervals.mcnemar_exact(3, 3) == 1.0
    assert intervals.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_paired_comparisons_count_discordant_items(tmp_path):
    a = [True] * 10 + [False] * 2 + [True] * 5 + [False] * 3
    b = [False] * 10 + [True] * 2 + [True] * 5 + [False] * 3
    files = [report.ScoreFile("direct", "A", "w", "W", score_file(tmp_path, "a", {"de-fr": a})),
             report.ScoreFile("direct", "B", "w", "W", score_file(tmp_path, "b", {"de-fr": b}))]
    pairs = report.paired_comparisons(report.read_outcomes(files, ["de-fr"]))
    row = pairs.row(0, named=True)
    assert (row["model_a"], row["model_b"], row["n"], row["only_a"], row["only_b"]) == ("A", "B", 20, 10, 2)
    assert row["difference"] == pytest.approx(75.0 - 35.0) and row["p_mcnemar"] == pytest.approx(158 / 4096)
