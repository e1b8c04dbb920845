"""Analysis building blocks on hand-made data: single-word changes, Table 3 bins, shifts, statistics."""

import numpy as np
import polars as pl
import pytest
from clsd.analysis import distractor_stats, shifts, swaps, table3
from clsd.core import intervals
from clsd.data import candidates as candidates_module
from clsd.embed.tables import embedding_table

# ---- single-word pairs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "distractor", "expected"),
    [
        ("Der Rat hat genehmigt.", "Der Rat hat abgelehnt.", ("swap", 3, "genehmigt.", "abgelehnt.")),
        ("Der Rat hat genehmigt.", "Der Rat hat abgelehnt!", ("swap", 3, "genehmigt.", "abgelehnt!")),
        ("a b c", "x b c", ("swap", 0, "a", "x")),
        ("Er hat genehmigt.", "Er hat nicht genehmigt.", ("addition", 2, None, "nicht")),
        ("a b", "a b c", ("addition", 2, None, "c")),
        ("a b", "a a b", ("addition", 1, None, "a")),  # repeated word: first differing position
        ("x y z", "w x y z", ("addition", 0, None, "w")),
    ],
)
def test_single_word_changes(target, distractor, expected):
    change = swaps.single_word_change(target, distractor, "de")
    assert (change.operation, change.position, change.original, change.new) == expected


@pytest.mark.parametrize(
    ("target", "distractor"),
    [
        ("Der Rat hat genehmigt.", "Der Rat hat genehmigt."),  # identical
        ("a b c", "x y c"),  # two swaps
        ("a b c", "a b"),  # deletion, not an addition
        ("a b", "a b c d"),  # two additions
        ("a b c", "a x c d"),  # swap plus addition
        ("a  b", "a b"),  # whitespace differences are not a change
        ("Der Rat hat genehmigt.", "Der Rat hat genehmigt!"),  # punctuation only
        ("Der Rat hat genehmigt.", "Der rat hat genehmigt."),  # case only
        ("Le conseil a approuvé.", "Le conseil a « approuvé »."),  # quotes added to a word
        ("Der Rat hat genehmigt.", "Der Rat – hat genehmigt."),  # an added dash is no word
    ],
)
def test_not_single_word(target, distractor):
    assert swaps.single_word_change(target, distractor, "de") is None


def candidates(rows):
    return pl.DataFrame(rows, schema=["id", "lang", "slot", "text"], orient="row")


def test_find_pairs_reports_every_single_word_distractor():
    table = candidates(
        [(0, "de", 0, "Der Rat hat genehmigt."), (0, "de", 1, "Der Rat hat abgelehnt."), (0, "de", 2, "Die Stadt hat gebaut."),
         (0, "fr", 0, "Le conseil a approuvé."), (0, "fr", 1, "Le conseil a approuvé."), (0, "fr", 2, "Le conseil n'a approuvé.")]
    )
    pairs = swaps.find_pairs(table)
    assert pairs.select("id", "lang", "k", "operation", "new").rows() == [(0, "de", 1, "swap", "abgelehnt."), (0, "fr", 2, "swap", "n'a")]


# ---- Table 3 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "label"),
    [(0.2999, "outside"), (0.3, "[0.3,0.6)"), (0.5999, "[0.3,0.6)"), (0.6, "[0.6,0.7)"), (0.8999, "[0.8,0.9)"),
     (0.9, "[0.9,0.999)"), (0.9989, "[0.9,0.999)"), (0.999, "outside"), (1.0, "outside")],
)
def test_bins_are_right_open(value, label):
    frame = pl.DataFrame({"s": [value]})
    assert frame.select(table3.assign_bin(pl.col("s")))[0, 0] == label


def test_similarity_is_levenshtein_ratio():
    assert table3.similarity("abcd", "abcd") == 1.0
    assert table3.similarity("abcd", "abce") == pytest.approx(0.75)  # InDel: 2 edits over 8 chars


def test_successful_distractor_is_the_closest_one_of_failed_items():
    scores = pl.DataFrame(
        {"id": [0, 1, 2], "direction": ["de-fr"] * 3, "cos_true": [0.9, 0.5, 0.7], "cos_d1": [0.1, 0.6, 0.7],
         "cos_d2": [0.2, 0.8, 0.1], "correct": [True, False, False]}
    )
    picks = table3.successful_distractors(scores)
    assert picks.rows() == [(1, "de-fr", 2), (2, "de-fr", 1)]


def test_table3_percentages_and_bin_sizes():
    successful = pl.DataFrame({"model": ["A", "A", "A", "B"], "lang": ["fr"] * 4, "bin": ["[0.9,0.999)", "[0.9,0.999)", "[0.6,0.7)", "outside"]})
    everything = pl.DataFrame({"lang": ["fr"] * 5, "bin": ["[0.9,0.999)", "[0.9,0.999)", "[0.6,0.7)", "[0.3,0.6)", "outside"]})
    table = table3.table3(successful, everything, ["A", "B"], {"fr": "French"})
    rows = {r["Levenshtein"]: r for r in table.iter_rows(named=True)}
    assert rows["[0.9,0.999)"]["A"] == pytest.approx(200 / 3) and rows["[0.9,0.999)"]["|D_bin|"] == 2
    assert rows["[0.6,0.7)"]["A"] == pytest.approx(100 / 3)
    assert sum(rows[label]["A"] for label in table["Levenshtein"].to_list()[:5]) == pytest.approx(100.0)
    assert rows["[0.3,0.6)"]["|D_bin|"] == 1 and rows[table3.OUTSIDE_ROW]["|D_bin|"] == 1
    # B's only successful distractor lies outside the bins: no bin percentages, 100% outside
    assert rows["[0.9,0.999)"]["B"] is None and rows[table3.OUTSIDE_ROW]["B"] == 100.0 and rows[table3.OUTSIDE_ROW]["A"] == 0.0
    assert table["Levenshtein"].to_list()[:5] == ["[0.9,0.999)", "[0.8,0.9)", "[0.7,0.8)", "[0.6,0.7)", "[0.3,0.6)"]


def test_table3_bin_percentages_leave_out_the_outside_distractors():
    """The paper's percentages are over its five bins: a near-copy outside them must not shrink them."""
    successful = pl.DataFrame({"model": ["A"] * 4, "lang": ["de"] * 4, "bin": ["[0.8,0.9)", "[0.8,0.9)", "[0.3,0.6)", "outside"]})
    everything = pl.DataFrame({"lang": ["de"] * 4, "bin": ["[0.8,0.9)", "[0.8,0.9)", "[0.3,0.6)", "outside"]})
    rows = {r["Levenshtein"]: r for r in table3.table3(successful, everything, ["A"], {}).iter_rows(named=True)}
    assert rows["[0.8,0.9)"]["A"] == pytest.approx(200 / 3) and rows["[0.3,0.6)"]["A"] == pytest.approx(100 / 3)
    assert rows[table3.OUTSIDE_ROW]["A"] == 25.0


# ---- shifts ---------------------------------------------------------------------------------------


def test_derangement_is_seeded_and_has_no_fixed_point():
    for n in (2, 3, 10, 101):
        order = shifts.derangement(n, seed=7)
        assert sorted(order) == list(range(n)) and all(order[i] != i for i in range(n))
    assert shifts.derangement(50, 1).tolist() == shifts.derangement(50, 1).tolist()
    assert shifts.derangement(50, 1).tolist() != shifts.derangement(50, 2).tolist()
    with pytest.raises(ValueError):
        shifts.derangement(1, 0)


def test_shift_formulas_on_hand_made_vectors():
    # de source S, fr target T and distractor d, as unit vectors with known cosines
    s, t = np.array([1.0, 0.0, 0.0]), np.array([0.8, 0.6, 0.0])
    d = np.array([0.6, 0.8, 0.0])
    # item 1 is a parallel pair without distractors (not scored): N still counts it (the paper's definition)
    table = candidates([(0, "de", 0, "S"), (0, "fr", 0, "T"), (0, "fr", 1, "d")])
    pairs_all = pl.DataFrame({"id": [1, 0], "de": ["S1", "S"], "fr": ["T1", "T"]})
    embeddings = embedding_table(["S", "T", "d", "S1", "T1"], "", np.array([s, t, d, [0, 0, 1.0], [0, 0.28, 0.96]], dtype=np.float32))
    parallel, unrelated = shifts.pair_cosines(pairs_all, embeddings, "", ["de", "fr"], seed=3)
    np.testing.assert_allclose(parallel, [0.8, 0.96], atol=1e-6)
    np.testing.assert_allclose(unrelated, [0.0, 0.0], atol=1e-6)  # S·T1 = 0, S1·T = 0
    norm = shifts.normaliser([parallel], [unrelated])
    assert norm["N"] == pytest.approx(0.88)
    pairs = pl.DataFrame({"id": [0], "lang": ["fr"], "k": [1]})
    result = shifts.pair_shifts(pairs, table, embeddings, "", ["de", "fr"], norm["N"])
    assert result["x_shift"][0] == pytest.approx((0.6 - 0.8) / 0.88, abs=1e-6)
    assert result["m_shift"][0] == pytest.approx((0.96 - 1.0) / 0.88, abs=1e-6)


def test_the_direct_view_encodes_every_parallel_original_once():
    pairs_all = pl.DataFrame({"id": [0, 1, 2], "de": ["S", "S1", "S"], "fr": ["T", "T1", "T2"]})
    assert candidates_module.with_originals(["S", "d", "T"], pairs_all, ["de", "fr"]) == ["S", "d", "T", "S1", "T1", "T2"]


def test_bootstrap_interval_brackets_the_mean():
    values = np.random.default_rng(0).normal(1.0, 0.5, 200)
    low, high = intervals.bootstrap_ci(values, 1000, seed=1)
    assert low < values.mean() < high and high - low < 0.3
    assert intervals.bootstrap_ci(values, 1000, seed=1) == (low, high)


def test_groups_summary_and_correlations():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    data = pl.DataFrame({
        "model": ["A"] * 40, "dataset": ["s"] * 40, "id": list(range(40)), "k": [1] * 40,
        "lang": ["de", "fr"] * 20, "pos": ["NOUN"] * 30 + ["VERB"] * 8 + ["DET"] * 2,
        "x_shift": x, "m_shift": 2 * x + 0.5,
    })
    grouped = shifts.pos_groups(data, min_group=5)
    assert sorted(grouped["group"].unique()) == ["NOUN", "OTHER", "VERB"]
    summary = shifts.summary(grouped, "x_shift", 200, 0)
    any_row = summary.filter(pl.col("group") == "ANY").row(0, named=True)
    assert any_row["n"] == 40 and any_row["mean"] == pytest.approx(x.mean())
    corr = shifts.correlations(grouped, {"de": "German"})
    assert corr.filter(pl.col("Scope") == "all")["Pearson"][0] == pytest.approx(1.0)
    assert corr.filter(pl.col("Scope") == "all")["Spearman"][0] == pytest.approx(1.0)
    assert "language=German" in corr["Scope"].to_list()
    assert corr.filter(pl.col("Scope") == "POS=OTHER")["Pearson"][0] is None  # 2 pairs: undefined


# ---- distractor statistics ----------------------------------------------------------------------------


def test_jaccard_definition():
    assert distractor_stats.vocabulary("Der Rat, der Rat! a 5 ab", "de") == {"der", "rat", "ab"}
    assert distractor_stats.vocabulary("उसने एक दिन दिया।", "hi") == {"उसने", "एक", "दिन", "दिया"}  # vowel signs belong to words
    assert distractor_stats.vocabulary("東京の会社が工場を建てた。", "ja") == {"東京", "の", "会社", "が", "工場", "を", "建て", "た"}
    values = distractor_stats.intra_jaccard(["a1 bb cc", "aa bb cc", "aa bb dd"], "de")
    # sets: {a1,bb,cc} {aa,bb,cc} {aa,bb,dd}; J12=2/4, J13=1/5, J23=2/4
    assert values == pytest.approx([(0.5 + 0.2) / 2, (0.5 + 0.5) / 2, (0.2 + 0.5) / 2])


def test_stats_per_language():
    table = candidates([(0, "de", 0, "a b c"), (0, "de", 1, "a b x"), (0, "de", 2, "y z w"),
                        (1, "de", 0, "p q"), (1, "de", 1, "p q r"), (1, "de", 2, "p")])
    (record,) = distractor_stats.stats(table)
    assert record["items"] == 2 and record["distractors"] == 4
    assert record["single_word_pairs"] == 2 and record["single_word_share"] == 0.5


def test_stats_say_how_many_distractors_are_far_from_their_target():
    table = candidates([(0, "de", 0, "Der Rat hat den Bau genehmigt."), (0, "de", 1, "Der Rat hat den Bau abgelehnt."),
                        (0, "de", 2, "Im Zoo schlafen viele Tiere."), (0, "de", 3, "Der Senat hat den Bau gestoppt.")])
    (record,) = distractor_stats.stats(table)
    # the zoo sentence shares no word with its target (Jaccard 0, ratio below 0.6); the others keep most of it
    assert record["levenshtein_below_0_6"] == pytest.approx(1 / 3) and record["target_jaccard_below_0_1"] == pytest.approx(1 / 3)


def test_stats_pool_datasets_without_mixing_items():
    table = candidates([(0, "de", 0, "a b c"), (0, "de", 1, "a b x")])
    pooled = pl.concat([table.with_columns(pl.lit(d).alias("dataset")) for d in ("one", "two")])
    (record,) = distractor_stats.stats(pooled)
    assert record["items"] == 2 and record["distractors"] == 2 and record["single_word_pairs"] == 2


def test_distractors_copying_their_target_are_counted_and_listed():
    table = candidates([(0, "de", 0, "Der Rat hat genehmigt."), (0, "de", 1, "der  Rat hat GENEHMIGT"), (0, "de", 2, "Der Rat hat abgelehnt."),
                        (1, "de", 0, "Die Bank hebt den Zins."), (1, "de", 1, "Die Bank senkt den Zins."), (1, "de", 2, "Die Bank hebt den Zins!")])
    (record,) = distractor_stats.stats(table)
    assert record["target_copies"] == 2
    copies = distractor_stats.target_copies(table)
    assert copies.select("id", "k").rows() == [(0, 1), (1, 2)]
    assert copies["distractor"].to_list() == ["der  Rat hat GENEHMIGT", "Die Bank hebt den Zins!"]


def test_table5_says_who_checked_each_successful_distractor():
    from clsd.analysis import examples

    candidates = pl.DataFrame({"id": [0] * 6, "lang": ["de", "fr", "fr", "fr", "fr", "fr"], "slot": [0, 0, 1, 2, 3, 4],
                               "text": ["Quelle", "cible", "d1", "d2", "d3", "d4"]})
    successful = pl.DataFrame({"model": ["a", "b", "a"], "dataset": ["s"] * 3, "direction": ["de-fr"] * 3,
                               "id": [0, 0, 0], "k": [2, 2, 3]})
    rows = examples.tricked(successful, {"s": candidates})
    # the judge answered about d2 and d3; two people judged d3 (their verdicts win over the judge's)
    judged = pl.DataFrame({"id": [0] * 4, "lang": ["fr"] * 4, "k": [1, 2, 3, 4], "judge": [None, "different", "different", None],
                           "people": [None, None, "different 1/2, same 1/2", None]})
    checked = examples.checked_by({("s", "fr"): judged, ("s", "de"): pl.DataFrame({"id": [0], "lang": ["de"], "k": [1]})})
    table = examples.table5(rows, 10, 1, checked).sort("Successful distractor")
    assert table["Successful distractor"].to_list() == ["d2", "d3"]
    assert table["Tricked models"].to_list() == ["a, b", "a"]
    assert table["Checked"].to_list() == ["judge: different", "people: different 1/2, same 1/2"]
    unchecked = examples.table5(rows, 10, 1, examples.checked_by({("s", "fr"): judged.drop("judge", "people")}))
    assert unchecked["Checked"].to_list() == [examples.UNCHECKED] * 2 and "nobody checked" in examples.CHECKED_NOTE
