"""Table 2 layout, intervals and formats, and the MTEB-shaped record, from hand-made score files."""

import json
import shutil
import subprocess
from collections import defaultdict

import numpy as np
import polars as pl
import pytest
from clsd.core import intervals, render
from clsd.core.io import read_meta, read_table, write_table
from clsd.data import candidates
from clsd.report import mteb_record, table2

SCORE_SCHEMA = {"id": pl.Int64, "direction": pl.String, "cos_true": pl.Float64, "cos_d1": pl.Float64, "correct": pl.Boolean}

#: Directions per dataset (every dataset of these tests has the same ones).
BOTH = defaultdict(lambda: ["de-fr", "fr-de"])
DE_FR = defaultdict(lambda: ["de-fr"])


def score_file(tmp_path, name, outcomes: dict[str, list[bool]]):
    rows = [(i, d, 0.5, 0.4, ok) for d, hits in outcomes.items() for i, ok in enumerate(hits)]
    frame = pl.DataFrame(rows, schema=SCORE_SCHEMA, orient="row")
    path = tmp_path / f"{name}.parquet"
    frame.write_parquet(path)
    return str(path)


def test_table2_layout_and_average(tmp_path):
    files = [
        table2.ScoreFile("direct", "A", "w19", "WMT19", score_file(tmp_path, "a19", {"de-fr": [True, True, False, True], "fr-de": [True, False]})),
        table2.ScoreFile("direct", "A", "w21", "WMT21", score_file(tmp_path, "a21", {"de-fr": [True], "fr-de": [False]})),
        table2.ScoreFile("direct", "B", "w19", "WMT19", score_file(tmp_path, "b19", {"de-fr": [False, True, False, False], "fr-de": [True, True]})),
        table2.ScoreFile("direct", "B", "w21", "WMT21", score_file(tmp_path, "b21", {"de-fr": [False], "fr-de": [True]})),
    ]
    table, counts = table2.table2(table2.read_outcomes(files, BOTH))
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


def test_latex_escapes_every_special_of_a_model_label():
    label = r"a\b{c}$d&e#f^g_h~i%j<k>l"
    table = pl.DataFrame([("direct", label, 1.0)], schema=["view", "model", "X DE→FR"], orient="row")
    escaped = (r"a\textbackslash{}b\{c\}\$d\&e\#f\textasciicircum{}g\_h\textasciitilde{}i\%j"
               r"\textless{}k\textgreater{}l")
    assert render.tex_escape(label) == escaped
    assert render.latex(table).splitlines()[4] == rf"direct & {escaped} & 1.00 \\"
    assert render.tex_escape("DE→FR") == r"DE$\rightarrow$FR"  # the arrow's own $ and \ are not escaped again


@pytest.mark.skipif(not (shutil.which("pdflatex") and shutil.which("kpsewhich")), reason="no pdflatex (Debian: texlive-latex-recommended)")
def test_latex_table_with_every_special_compiles(tmp_path):
    if subprocess.run(["kpsewhich", "booktabs.sty"], capture_output=True).returncode:
        pytest.skip("booktabs.sty not installed (Debian: texlive-latex-recommended)")
    label = r"a\b{c}$d&e#f^g_h~i%j<k>l"
    table = pl.DataFrame([("direct", label, "100.0 [71.5, 100]")], schema=["View", "Model", "X DE→FR"], orient="row")
    (tmp_path / "table.tex").write_text(render.latex(table, right={"X DE→FR"}, notes=["X: 1 × not in x.csv; – n = 0."]), encoding="utf-8")
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{booktabs}\n"
                                      "\\begin{document}\\input{table.tex}\\end{document}\n", encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "Missing character" not in (tmp_path / "doc.log").read_text(errors="replace")


# ---- intervals ----------------------------------------------------------------------------------


def test_exact_intervals_match_published_values():
    """Clopper–Pearson bounds as tabulated (e.g. Geigy Scientific Tables; 0/n and n/n: (α/2)^(1/n))."""
    assert intervals.exact_interval(12, 12) == pytest.approx((0.7354, 1.0), abs=5e-5)
    assert intervals.exact_interval(0, 12) == pytest.approx((0.0, 0.2646), abs=5e-5)
    assert intervals.exact_interval(6, 12) == pytest.approx((0.2109, 0.7891), abs=5e-5)
    assert intervals.exact_interval(11, 11)[0] == pytest.approx(0.7151, abs=5e-5)  # the 71.5–100
    for k in (0, 6, 12):  # the effective-size form is the same interval at whole numbers
        assert intervals.exact_interval_effective(k / 12, 12) == pytest.approx(intervals.exact_interval(k, 12))
    with pytest.raises(ValueError, match="zero items"):
        intervals.exact_interval(0, 0)


@pytest.mark.parametrize(("p", "n"), [(0.98, 20), (0.5, 50)])
def test_exact_intervals_cover_the_true_rate(p, n):
    """2000 simulated cells: the 95% interval holds the true P@1 in at least 93% of them (a percentile bootstrap
    holds 0.98 on 20 items in about a third: every cell with 20 of 20 right gives 100–100)."""
    draws = np.random.default_rng(11).binomial(n, p, size=2000)
    bounds = {k: intervals.exact_interval(int(k), n) for k in np.unique(draws)}
    covered = np.mean([bounds[k][0] <= p <= bounds[k][1] for k in draws])
    assert covered >= 0.93


def correlated_row(rng, model, n, p, same):
    """One model's two directions of a dataset: the second copies the first's outcome on a share `same` of the items."""
    first = rng.random(n) < p
    second = np.where(rng.random(n) < same, first, rng.random(n) < p)
    ids = np.arange(n)
    return [table2.Outcome("direct", model, "d", f"D {direction}", ids, hits, "sim") for direction, hits in (("DE→FR", first), ("FR→DE", second))]


def test_average_interval_covers_the_true_rate_with_correlated_directions():
    """Both directions score the same items and succeed or fail together on most of them: the Average's interval
    must count the items once (resampling each direction on its own, as before, covers 0.82 here)."""
    rng = np.random.default_rng(5)
    outcomes = [cell for i in range(1000) for cell in correlated_row(rng, f"m{i}", 20, 0.9, 0.8)]
    average = table2.confidence_intervals(outcomes).filter(pl.col("column") == "Average")
    assert average.height == 1000
    covered = ((average["ci_low"] <= 90.0) & (average["ci_high"] >= 90.0)).mean()
    assert covered >= 0.93


def test_average_interval_respects_pairing_and_does_not_collapse_at_100():
    ids = np.arange(12)
    right = np.ones(12, dtype=bool)
    cells = [table2.Outcome("direct", "m", "d", f"D {d}", ids, right, "x") for d in ("DE→FR", "FR→DE")]
    average = table2.confidence_intervals(cells).row(2, named=True)
    assert average["column"] == "Average" and average["p1"] == 100.0 and average["ci_high"] == 100.0
    # 12 items, each right in both directions: as much evidence as 12 of 12, not as 24 of 24
    assert average["ci_low"] == pytest.approx(100 * intervals.exact_interval(12, 12)[0])
    # directions that disagree on every item: every item scores exactly one of two, the Average varies no more
    # than with 24 independent outcomes (the most the pairing allows)
    alternating = np.arange(12) % 2 == 0
    cells = [table2.Outcome("direct", "m", "d", "D DE→FR", ids, alternating, "x"),
             table2.Outcome("direct", "m", "d", "D FR→DE", ids, ~alternating, "x")]
    paired = table2.confidence_intervals(cells).row(2, named=True)
    assert paired["p1"] == 50.0
    assert (paired["ci_low"], paired["ci_high"]) == pytest.approx(tuple(100 * b for b in intervals.exact_interval(12, 24)))


def test_intervals_do_not_depend_on_the_position_of_a_row(tmp_path):
    """Adding a model (before the others) changes no other row's intervals, the Average's included."""
    hits = {"A": [True, False, True, True, False, True], "B": [False, True, True, False, True, True], "C": [True] * 6}
    files = {m: table2.ScoreFile("direct", m, "w19", "WMT19", score_file(tmp_path, m, {"de-fr": h, "fr-de": h[::-1]})) for m, h in hits.items()}
    before = table2.confidence_intervals(table2.read_outcomes([files["A"], files["B"]], BOTH))
    after = table2.confidence_intervals(table2.read_outcomes([files["C"], files["A"], files["B"]], BOTH))
    assert after.filter(pl.col("model") != "C").sort("model", "column").equals(before.sort("model", "column"))


def test_two_models_with_the_same_outcomes_get_the_same_intervals(tmp_path):
    """An interval depends on the outcomes alone, not on the model's name (a served model and the same model loaded
    here score every item alike): the Average's too, which a bootstrap seeded by the row would not give."""
    hits = {"de-fr": [True, False, True, True, False, True, True, False], "fr-de": [True, True, False, True, False, True, False, False]}
    files = [table2.ScoreFile("direct", m, "w19", "WMT19", score_file(tmp_path, m, hits)) for m in ("minilm", "minilm-served")]
    table = table2.confidence_intervals(table2.read_outcomes(files, BOTH))
    rows = [table.filter(pl.col("model") == m).drop("model").sort("column") for m in ("minilm", "minilm-served")]
    assert rows[0].equals(rows[1])
    average = rows[0].filter(pl.col("column") == "Average").row(0, named=True)
    assert 0.0 < average["ci_low"] < average["p1"] < average["ci_high"] < 100.0


# ---- Table 2 as written -------------------------------------------------------------------------


def test_table2_of_the_default_run_shows_exact_bounds(tmp_path):
    """The embedded default's shape: 12 pairs, one left out, EmbeddingGemma right on 11 of 11 FR→DE items."""
    gemma = {"de-fr": [True] * 10 + [False], "fr-de": [True] * 11}
    minilm = {"de-fr": [True] * 4 + [False] * 7, "fr-de": [True] * 5 + [False] * 6}
    files = [table2.ScoreFile("direct", "EmbeddingGemma-300m", "sample", "Sample", score_file(tmp_path, "g", gemma)),
             table2.ScoreFile("direct", "all-MiniLM-L6-v2 (English)", "sample", "Sample", score_file(tmp_path, "m", minilm))]
    outcomes = table2.read_outcomes(files, BOTH)
    table, counts = table2.table2(outcomes)
    notes = table2.not_scored_notes([("Sample", {"items": 12, "dropped": [{"id": 7, "reason": "fr: 3 valid distractors after 3 attempts"}]})])
    paths = [tmp_path / f"t2.{ext}" for ext in ("md", "tex", "csv")]
    table2.write_table2(table, counts, table2.confidence_intervals(outcomes), notes + table2.average_note(counts), True, *paths)
    markdown = paths[0].read_text(encoding="utf-8")
    assert "| direct | EmbeddingGemma-300m | 90.9 [58.7, 99.8] | 100.0 [71.5, 100] | 95.5 [" in markdown
    assert "| direct | all-MiniLM-L6-v2 (English) | 36.4 [10.9, 69.3] | 45.5 [16.7, 76.7] |" in markdown
    assert "| n | items scored | 11 | 11 | – |" in markdown and "±" not in markdown
    assert markdown.rstrip().endswith("Sample: 1 of 12 items not scored (1 × fr: 3 valid distractors after 3 attempts).")
    assert r"100.0 [71.5, 100]" in paths[1].read_text(encoding="utf-8")
    csv = pl.read_csv(paths[2]).row(0, named=True)
    assert csv["Sample FR→DE ci_low"] == pytest.approx(100 * 0.025 ** (1 / 11)) and csv["Sample FR→DE ci_high"] == 100.0
    assert csv["Average ci_low"] < csv["Average"] < csv["Average ci_high"] < 100.0


def test_bounds_are_rounded_outwards():
    assert table2.bounds_text(50.0, 21.09, 78.91) == "50.0 [21.0, 79.0]"
    assert table2.bounds_text(0.0, 0.0, 26.46) == "0.0 [0, 26.5]"
    assert table2.bounds_text(70.0, 70.0, 100.0) == "70.0 [70.0, 100]"


def test_table2_rows_must_score_the_same_items(tmp_path):
    files = [
        table2.ScoreFile("direct", "A", "w19", "WMT19", score_file(tmp_path, "a", {"de-fr": [True, True], "fr-de": [True, False]})),
        table2.ScoreFile("direct", "B", "w19", "WMT19", score_file(tmp_path, "b", {"de-fr": [True], "fr-de": [True, False]})),
    ]
    with pytest.raises(ValueError, match=r"b\.parquet: 1 items scored for WMT19 DE→FR, other rows scored 2"):
        table2.table2(table2.read_outcomes(files, BOTH))


def test_table2_shows_items_scored_and_footnotes_for_items_left_out(tmp_path):
    files = [table2.ScoreFile("direct", "A", "w19", "WMT19", score_file(tmp_path, "a", {"de-fr": [True, False], "fr-de": [True, True]}))]
    outcomes = table2.read_outcomes(files, BOTH)
    table, counts = table2.table2(outcomes)
    cis = table2.confidence_intervals(outcomes)
    meta = {"items": 5, "dropped": [{"id": 2, "reason": "not in x.csv"}, {"id": 3, "reason": "not in x.csv"},
                                    {"id": 4, "reason": "de: 2 valid distractors after 3 attempts"}]}
    notes = table2.not_scored_notes([("WMT19", meta), ("WMT21", {"items": 3, "dropped": []})])
    assert notes == ["WMT19: 3 of 5 items not scored (2 × not in x.csv; 1 × de: 2 valid distractors after 3 attempts)."]
    paths = [tmp_path / f"t2.{ext}" for ext in ("md", "tex", "csv")]
    table2.write_table2(table, counts, cis, notes, False, *paths)
    markdown = paths[0].read_text()
    assert "| direct | A | 50.00 | 100.00 | 75.00 |" in markdown
    assert "| n | items scored | 2 | 2 | – |" in markdown
    assert markdown.rstrip().endswith(notes[0])
    assert r"\multicolumn{5}{l}{\footnotesize WMT19: 3 of 5 items" in paths[1].read_text()
    csv = pl.read_csv(paths[2])
    assert csv.filter(pl.col("view") == "n")["WMT19 DE→FR"].to_list() == [2.0]
    assert csv.columns[2:5] == ["WMT19 DE→FR", "WMT19 DE→FR ci_low", "WMT19 DE→FR ci_high"]
    assert csv["WMT19 FR→DE ci_low"][0] == pytest.approx(100 * 0.025 ** 0.5)  # 2 of 2 right is no certainty
    assert csv["WMT19 FR→DE ci_high"][0] == 100.0


def test_a_dataset_with_zero_items_shows_a_dash_and_the_rest_is_scored(tmp_path):
    """Every item of WMT21 lacks its distractors: its score files are empty, Table 2 shows – with n = 0, the
    Average is over WMT19's columns, the pairs and the figure skip it, and the footnotes say why."""
    empty = tmp_path / "empty.parquet"
    pl.DataFrame(schema=SCORE_SCHEMA).write_parquet(empty)
    files = [
        table2.ScoreFile("direct", "A", "w19", "WMT19", score_file(tmp_path, "a", {"de-fr": [True, False, True], "fr-de": [True, True, True]})),
        table2.ScoreFile("direct", "A", "w21", "WMT21", str(empty)),
        table2.ScoreFile("direct", "B", "w19", "WMT19", score_file(tmp_path, "b", {"de-fr": [False, False, True], "fr-de": [True, False, True]})),
        table2.ScoreFile("direct", "B", "w21", "WMT21", str(empty)),
    ]
    outcomes = table2.read_outcomes(files, BOTH)
    table, counts = table2.table2(outcomes)
    assert counts == {"WMT19 DE→FR": 3, "WMT19 FR→DE": 3, "WMT21 DE→FR": 0, "WMT21 FR→DE": 0}
    assert table.row(0, named=True)["WMT21 DE→FR"] is None
    assert table.row(0, named=True)["Average"] == pytest.approx((200 / 3 + 100) / 2)
    cis = table2.confidence_intervals(outcomes)
    empty_cell = cis.filter((pl.col("model") == "A") & (pl.col("column") == "WMT21 FR→DE")).row(0, named=True)
    assert (empty_cell["n"], empty_cell["p1"], empty_cell["ci_low"]) == (0, None, None)
    dropped = [{"id": i, "reason": "de: 0 valid distractors after 3 attempts"} for i in range(4)]
    notes = table2.not_scored_notes([("WMT19", {"items": 3, "dropped": []}), ("WMT21", {"items": 4, "dropped": dropped})])
    notes += table2.average_note(counts)
    assert notes == ["WMT21: all 4 items not scored (4 × de: 0 valid distractors after 3 attempts), so its columns show –.",
                     "Average: over the columns with items scored (WMT19 DE→FR, WMT19 FR→DE); WMT21 DE→FR, WMT21 FR→DE left out (no items)."]
    paths = [tmp_path / f"t2.{ext}" for ext in ("md", "tex", "csv")]
    table2.write_table2(table, counts, cis, notes, True, *paths)
    markdown = paths[0].read_text(encoding="utf-8")
    assert "| n | items scored | 3 | 3 | 0 | 0 | – |" in markdown
    row_a = next(line for line in markdown.splitlines() if line.startswith("| direct | A |"))
    assert row_a.split(" | ")[4:6] == ["–", "–"] and "nan" not in markdown.lower()
    csv = pl.read_csv(paths[2]).row(0, named=True)
    assert csv["WMT21 DE→FR"] is None and csv["WMT21 DE→FR ci_low"] is None
    pairs = table2.paired_comparisons(outcomes)
    assert pairs["column"].to_list() == ["WMT19 DE→FR", "WMT19 FR→DE"]
    assert table2.average_note({"X DE→FR": 0}) == ["Average: no column has items scored."]
    assert table2.table2(outcomes[2:4])[0]["Average"].to_list() == [None]  # a row of empty columns only


def test_paired_comparisons_count_discordant_items(tmp_path):
    a = [True] * 10 + [False] * 2 + [True] * 5 + [False] * 3
    b = [False] * 10 + [True] * 2 + [True] * 5 + [False] * 3
    files = [table2.ScoreFile("direct", "A", "w", "W", score_file(tmp_path, "a", {"de-fr": a})),
             table2.ScoreFile("direct", "B", "w", "W", score_file(tmp_path, "b", {"de-fr": b}))]
    pairs = table2.paired_comparisons(table2.read_outcomes(files, DE_FR))
    row = pairs.row(0, named=True)
    assert (row["model_a"], row["model_b"], row["n"], row["only_a"], row["only_b"]) == ("A", "B", 20, 10, 2)
    assert row["difference"] == pytest.approx(75.0 - 35.0) and row["p_mcnemar"] == pytest.approx(158 / 4096)


def test_mcnemar_exact_on_a_hand_made_table():
    # 10 items only A gets right, 2 only B: p = 2 * P(X <= 2 | n=12, 1/2) = 2 * (1 + 12 + 66) / 4096
    assert intervals.mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert intervals.mcnemar_exact(2, 10) == pytest.approx(158 / 4096)
    assert intervals.mcnemar_exact(0, 0) == 1.0 and intervals.mcnemar_exact(3, 3) == 1.0
    assert intervals.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


# ---- the MTEB record ----------------------------------------------------------------------------


def build_candidates(folder, dataset, label, distractor_fr_1="Le chat dort."):
    """The candidate table of two items as the `candidates` rule writes it, from files in `folder`: the
    provenance holds `folder`'s paths, the dataset name and generator label, the texts are the same."""
    parallel = pl.DataFrame({"id": [0, 1], "row": [1, 2], "de": ["Der Hund schläft.", "Es regnet."], "fr": ["Le chien dort.", "Il pleut."]})
    distractors = {
        lang: pl.DataFrame({"id": [i for i in (0, 1) for _ in range(4)], "lang": lang, "k": [1, 2, 3, 4] * 2, "text": texts})
        for lang, texts in {
            "fr": [distractor_fr_1, "Le chien mange.", "Le chien court.", "Un chien dort.", "Il neige.", "Il pleuvait.", "Il pleut fort.", "Elle pleut."],
            "de": ["Die Katze schläft.", "Der Hund isst.", "Der Hund rennt.", "Ein Hund schläft.", "Es schneit.", "Es regnete.", "Es regnet stark.", "Sie regnet."],
        }.items()
    }
    table = candidates.build(parallel, list(distractors.values()), ["de", "fr"])
    meta = {"view": "direct", "items": 2, "dropped": [],
            "parallel": {"sources": [{"path": str(folder / "sample.csv"), "sha256": "ab" * 32}], "dataset": dataset, "label": label},
            "generators": [f"llm:{label}"] * 2,
            "distractors": [{"dataset": dataset, "lang": lang, "generator": f"llm:{label}", "prompt": str(folder / "prompt.txt"),
                             "validation": {"examples": 3 if label == "A" else 10}} for lang in ("de", "fr")],
            "content_sha256": candidates.content_sha256(table)}
    path = folder / "candidates" / dataset / "direct.parquet"
    write_table(table, path, meta)
    return path


def pivot_candidates(direct_path, folder, language="en"):
    """The pivot view of a candidate table: every text replaced by a (fake) English translation."""
    table = read_table(direct_path).with_columns(pl.concat_str(pl.lit("EN "), pl.col("text")).alias("text"))
    path = folder / "pivot.parquet"
    write_table(table, path, {"view": "pivot", "translator": {"backend": "ctranslate2", "model": "m2m", "target_lang": language}})
    return path


def record(candidates_path, scores_by_view, views_paths, directions=("de-fr", "fr-de")):
    return mteb_record.mteb_result(
        dataset="sample", candidates_meta=read_meta(candidates_path),
        texts_by_view={view: mteb_record.view_texts(read_table(path), read_meta(path)) for view, path in views_paths.items()},
        model_meta={"name": "m"}, scores_by_view=scores_by_view, directions=list(directions), evaluation_time=1.5)


def test_mteb_record_loads_as_an_mteb_task_result(tmp_path):
    from mteb.results.task_result import TaskResult

    scores = pl.read_parquet(score_file(tmp_path, "s", {"de-fr": [True, False, True], "fr-de": [True, True, True]}))
    direct = build_candidates(tmp_path, "sample", "A")
    pivot = pivot_candidates(direct, tmp_path)
    result = record(direct, {"direct": scores, "pivot": scores}, {"direct": direct, "pivot": pivot})
    loaded = TaskResult.from_dict(json.loads(json.dumps(result)))
    assert loaded.task_name == "CLSD-sample" and loaded.evaluation_time == 1.5 and loaded.mteb_version == result["mteb_version"]
    assert loaded.get_score(splits=["test"]) == pytest.approx((0.666667 + 1.0) / 2)  # mean main score of the subsets
    subsets = {s["hf_subset"]: s for s in result["scores"]["test"]}
    assert subsets["direct-de-fr"]["main_score"] == 0.666667
    assert subsets["direct-de-fr"]["languages"] == ["deu-Latn", "fra-Latn"]
    assert subsets["direct-fr-de"]["n_items"] == 3
    # the pivot view encoded English texts: its subsets say so, and where they were translated from
    assert subsets["pivot-de-fr"]["languages"] == ["eng-Latn"] and subsets["pivot-de-fr"]["translated_from"] == ["deu-Latn", "fra-Latn"]
    assert loaded.get_score(languages=["fra"]) == pytest.approx((0.666667 + 1.0) / 2)  # only the direct subsets
    assert result["produced_by"]["tool"] == "clsd" and result["produced_by"]["version"] == "0.1.0"
    assert result["packages"]["torch"].startswith("2.13")


def test_dataset_revision_depends_only_on_content(tmp_path):
    """The same pairs and distractors built in two folders, under other dataset names, labels, generator names
    and display settings, give the same revision; one other distractor or pivot language gives another."""
    one = build_candidates(tmp_path / "machine-1", "sample", "A")
    two = build_candidates(tmp_path / "machine-2", "wmt-copy", "B")
    assert read_meta(one) != read_meta(two)
    scores = pl.read_parquet(score_file(tmp_path, "s", {"de-fr": [True, True], "fr-de": [True, False]}))
    revision = record(one, {"direct": scores}, {"direct": one})["dataset_revision"]
    assert record(two, {"direct": scores}, {"direct": two})["dataset_revision"] == revision
    changed = build_candidates(tmp_path / "machine-3", "sample", "A", distractor_fr_1="Le chat dormait.")
    assert record(changed, {"direct": scores}, {"direct": changed})["dataset_revision"] != revision
    english = {"direct": one, "pivot": pivot_candidates(one, tmp_path / "machine-1")}
    spanish = {"direct": one, "pivot": pivot_candidates(one, tmp_path / "machine-2", language="es")}
    assert len({revision, record(one, {"direct": scores, "pivot": scores}, english)["dataset_revision"],
                record(one, {"direct": scores, "pivot": scores}, spanish)["dataset_revision"]}) == 3


def test_mteb_record_of_a_dataset_without_items_loads_and_says_why(tmp_path):
    from mteb.results.task_result import TaskResult

    direct = build_candidates(tmp_path, "sample", "A")
    meta = read_meta(direct) | {"dropped": [{"id": 0, "reason": "not in x.csv"}, {"id": 1, "reason": "not in x.csv"}]}
    write_table(read_table(direct).head(0), direct, meta)
    empty = pl.DataFrame(schema=SCORE_SCHEMA)
    result = record(direct, {"direct": empty}, {"direct": direct})
    assert result["scores"]["test"] == []
    assert [(s["hf_subset"], s["n_items"], s["reason"]) for s in result["subsets_not_scored"]] == [
        ("direct-de-fr", 0, "2 of 2 items left out (2 × not in x.csv)"), ("direct-fr-de", 0, "2 of 2 items left out (2 × not in x.csv)")]
    loaded = TaskResult.from_dict(json.loads(json.dumps(result)))
    assert loaded.scores == {"test": []}
    # one view scored, the other not: only the scored subsets carry a main score
    scores = pl.read_parquet(score_file(tmp_path, "s", {"de-fr": [True, False], "fr-de": [True, True]}))
    mixed = record(direct, {"direct": scores, "pivot": empty}, {"direct": direct, "pivot": pivot_candidates(direct, tmp_path)})
    assert TaskResult.from_dict(json.loads(json.dumps(mixed))).get_score() == pytest.approx(0.75)
    assert [s["hf_subset"] for s in mixed["subsets_not_scored"]] == ["pivot-de-fr", "pivot-fr-de"]


def test_published_duplicates_kept_in_scoring_get_a_footnote_like_copies():
    from clsd.validate import report as validation_report
    from clsd.validate.validator import Validator

    fr = "Le tribunal a condamné l'ancien maire à deux ans de prison."
    other = [fr.replace("deux", word) for word in ("trois", "cinq", "dix")]
    distractors = pl.DataFrame({"id": [0] * 4 + [1] * 4, "lang": ["fr"] * 8, "k": [1, 2, 3, 4] * 2,
                                "text": [other[0], other[0], other[1], other[2], *other, fr.replace("deux", "six")]})
    targets = {0: fr, 1: fr}
    metas = []
    for act in ("flagged", "removed"):  # a published set as validated, flagged (the default) or with apply_to_published
        flagged = validation_report.flag(distractors, targets, Validator("fr").check_item)
        summary = validation_report.summary(flagged, targets, [], act, 0)
        metas.append({"lang": "fr", "validation": {key: summary[key] for key in ("action", "reasons")}})
    notes = table2.duplicate_notes([("WMT19", {"items": 2, "distractors": [metas[0]]}),
                                    ("WMT21", {"items": 2, "distractors": [metas[1]]})])
    assert notes == ["WMT19: 1 published distractor(s) repeat another of their item (1 fr; flagged in the validation table), "
                     "scored as published: their items have fewer than four different distractors."]


def test_nothing_to_score_says_what_to_try_when_an_llm_left_items_short():
    failed = [{"id": 0, "lang": "is", "reason": "1 valid distractors after 3 attempts"}]
    llm = {"items": 2, "distractors": [{"dataset": "wmt21-is-en", "lang": "is", "failed": failed, "settings": {"endpoint": "http://127.0.0.1:8080/v1"}}]}
    message = table2.nothing_to_score([("WMT21 is-en", llm)])
    assert "WMT21 is-en: none of 2 items has four valid distractors in every language (is: 1 × 1 valid distractors after 3 attempts)" in message
    assert "raise generation.max_attempts" in message and "generation.base_url" in message
    published = {"items": 2, "distractors": [{"dataset": "pub", "lang": "de", "failed": failed, "settings": {}}]}
    assert "max_attempts" not in table2.nothing_to_score([("Pub", published)])  # nobody asked an LLM: no LLM hint
