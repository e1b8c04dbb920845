"""The closeness profile of a distractor set beside GPT-4's (clsd.analysis.profile), the paired interval of a
difference of two P@1 on the same items (clsd.core.intervals), and the generator check's pieces
(clsd.report.generator_check); the config keys that name them fail at start-up, naming the key."""

from __future__ import annotations

import copy

import polars as pl
import pytest
import yaml
from clsd.analysis import profile
from clsd.config import validate
from clsd.core.errors import InputError
from clsd.core.intervals import paired_difference_interval
from clsd.report import generator_check
from conftest import ROOT

DEFAULT = yaml.safe_load((ROOT / "config.yaml").read_text())
GPT4 = ROOT / "resources/profiles/gpt-4-0613-wmt.yaml"


def candidates(rows: list[tuple[int, str, int, str]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"id": pl.Int64, "lang": pl.String, "slot": pl.Int64, "text": pl.String}, orient="row")


def test_every_ratio_falls_in_one_bin_and_the_shares_add_up():
    assert [profile.bin_of(r) for r in (0.0, 0.29, 0.599, 0.6, 0.75, 0.8, 0.8999, 0.9, 1.0)] == [0, 0, 0, 1, 2, 3, 3, 4, 4]
    found = profile.profile([0.5, 0.65, 0.72, 0.78, 0.85, 0.95, 1.0, 0.91])
    assert found.shares == (12.5, 12.5, 25.0, 12.5, 37.5) and found.n == 8 and found.median == pytest.approx(0.815)
    with pytest.raises(ValueError, match="at least one distractor"):
        profile.profile([])


def test_a_set_of_near_copies_does_not_match_gpt4_and_one_like_it_does():
    reference = profile.read_reference(GPT4)
    assert reference.label.startswith("GPT-4") and set(reference.languages) == {"de", "fr"}
    assert all(sum(p.shares) == pytest.approx(100) for p in reference.languages.values())
    near_copies = profile.profile([0.95] * 17 + [0.85] * 3)
    assert not profile.matches(near_copies, reference.languages["de"])
    assert profile.gaps(near_copies, reference.languages["de"]) == pytest.approx((68.5, 0.17))
    alike = profile.profile([0.5] * 6 + [0.65] * 20 + [0.75] * 30 + [0.85] * 28 + [0.95] * 16)
    assert profile.matches(alike, reference.languages["de"])
    record = profile.record(alike, reference.languages["de"])
    assert record["matches"] is True and record["n"] == 100 and record["[0.7,0.8)"] == 30.0


def test_profiles_of_a_candidates_table_pair_each_distractor_with_its_own_target():
    table = candidates([(1, "de", 0, "Der Hund schläft im Garten."), (1, "de", 1, "Der Hund schläft im Garten!"),
                        (1, "de", 2, "Die Katze spielt im Haus."), (2, "de", 0, "Ganz anders hier."),
                        (2, "de", 1, "Ganz anders dort."), (1, "fr", 0, "Le chien dort."), (1, "fr", 1, "Le chat dort.")])
    found = profile.profiles(table)
    assert set(found) == {"de", "fr"} and found["de"].n == 3 and found["fr"].n == 1
    frame = profile.profile_table({"Mine": found}, profile.read_reference(GPT4), {"de": "German", "fr": "French"})
    assert frame["Set"].to_list() == ["GPT-4 (published WMT19 + WMT21)", "Mine"] * 2
    assert frame["matches"].to_list() == [None, "no", None, "no"]


def test_a_reference_file_with_a_bad_key_is_named(tmp_path):
    bad = tmp_path / "bad_profile.yaml"
    bad.write_text("label: x\nlanguages:\n  de: {shares: [1, 2, 3], median: 0.8}\n")
    with pytest.raises(InputError, match=r"key languages\.de\.shares.*bad_profile.yaml|bad_profile.yaml.*key languages\.de\.shares"):
        profile.read_reference(bad)


@pytest.mark.parametrize("counts, difference", [((12, 2, 9, 4), 7 / 27), ((5, 3, 0, 4), -3 / 12), ((10, 0, 0, 0), 0.0),
                                                ((11, 0, 0, 11), 0.0)])
def test_the_paired_interval_holds_the_difference_and_stays_wide_on_few_items(counts, difference):
    low, high = paired_difference_interval(*counts)
    assert -1 <= low < difference < high <= 1 or (difference == 0 and low < 0 < high)
    both, only_a, only_b, neither = counts
    mirrored = paired_difference_interval(both, only_b, only_a, neither)  # A and B swapped: the mirror image
    assert mirrored == pytest.approx((-high, -low))
    wide, narrow = paired_difference_interval(6, 1, 3, 2), paired_difference_interval(60, 10, 30, 20)
    assert wide[1] - wide[0] > 2 * (narrow[1] - narrow[0])  # ten times the items: about a third of the width
    with pytest.raises(ValueError):
        paired_difference_interval(0, 0, 0, 0)


def test_pairs_that_agree_give_a_narrower_interval_than_pairs_that_do_not():
    """The same two proportions (0.5 and 0.6 of 20): outcomes that go together (the same items right) make the
    difference surer than outcomes that are independent, the point of a paired interval."""
    together, apart = paired_difference_interval(10, 0, 2, 8), paired_difference_interval(6, 4, 6, 4)
    assert together[1] - together[0] < 0.75 * (apart[1] - apart[0])
    assert together[0] < 0.1 < together[1] and apart[0] < 0.1 < apart[1]


def scores(correct: dict[int, bool], direction: str = "de-fr") -> pl.DataFrame:
    return pl.DataFrame({"id": list(correct), "direction": [direction] * len(correct), "correct": list(correct.values())})


def test_a_model_is_compared_on_the_items_both_sets_score_and_the_rest_is_counted_apart():
    reference = scores({1: True, 2: True, 3: False, 4: True, 5: True})
    candidate = scores({1: True, 2: False, 3: False, 5: False})  # item 4 unscored under the candidate
    pair = generator_check.Pair("gpt4", "local", "GPT-4", "Local")
    table = generator_check.check_table(pair, {"Model A": (reference, candidate)}, ["de-fr"], {"gpt4": 5, "local": 5})
    row = table.row(0, named=True)
    assert row["n"] == 4 and row["P@1 reference"] == 75.0 and row["P@1 candidate"] == 25.0 and row["Difference"] == -50.0
    assert row["CI low"] < -50 < row["CI high"] and row["McNemar p"] == 0.5
    assert row["unscored reference"] == 0 and row["unscored candidate"] == 1 and row["Direction"] == "DE→FR"


def test_the_ranking_note_says_whether_the_models_keep_their_order():
    pair = generator_check.Pair("a", "b", "GPT-4", "Local")
    good, weak = scores({i: True for i in range(10)}), scores({i: i < 3 for i in range(10)})
    same = generator_check.check_table(pair, {"Good": (good, good), "Weak": (weak, weak)}, ["de-fr"], {"a": 10, "b": 10})
    assert generator_check.ranking_notes(same) == ["DE→FR: GPT-4 ranks Good > Weak; Local ranks Good > Weak: the same order."]
    swapped = generator_check.check_table(pair, {"Good": (good, weak), "Weak": (weak, good)}, ["de-fr"], {"a": 10, "b": 10})
    assert "another order" in generator_check.ranking_notes(swapped)[0]


def test_two_sets_of_other_items_are_refused_naming_the_item():
    pair = generator_check.Pair("a", "b", "A", "B")
    mine = candidates([(1, "de", 0, "Der Hund schläft."), (1, "de", 1, "Der Hund bellt.")])
    other = candidates([(1, "de", 0, "Die Katze schläft."), (1, "de", 1, "Die Katze spielt.")])
    generator_check.check_same_items(mine, mine, pair)
    with pytest.raises(InputError, match=r"item 1 \(de\) is not the same sentence in a"):
        generator_check.check_same_items(mine, other, pair)


def test_config_keys_of_the_profile_and_the_check_fail_at_start_up_naming_the_key():
    config = copy.deepcopy(DEFAULT)
    assert validate(copy.deepcopy(config))["analysis"]["profile_reference"] == "resources/profiles/gpt-4-0613-wmt.yaml"
    config["analysis"] = {"profile_reference": "no/such/profile.yaml"}
    with pytest.raises(InputError, match=r"config key analysis.profile_reference: .*no/such/profile.yaml is neither a dataset"):
        validate(copy.deepcopy(config))
    config["analysis"] = {"profile_reference": "sample"}  # a dataset of the run
    # more candidates than four (config.yaml's six) are chosen by a reference file: a dataset's profile exists only
    # after the run
    assert config["generation"]["candidates"] == 6
    with pytest.raises(InputError, match=r"config key generation.candidates: 6 candidates are chosen by a reference "
                                         r"profile file, and analysis.profile_reference names the dataset sample"):
        validate(copy.deepcopy(config))
    config["generation"]["candidates"] = 4
    assert validate(copy.deepcopy(config))["analysis"]["profile_reference"] == "sample"
    config["generator_check"] = [{"reference": "sample", "candidate": "gpt4"}]
    with pytest.raises(InputError, match=r"config key generator_check.0.candidate: 'gpt4' is not a dataset of this config"):
        validate(copy.deepcopy(config))
    other = copy.deepcopy(config["datasets"]["sample"]) | {"languages": ["de", "en"], "directions": ["de-en"]}
    config["datasets"]["english"] = other
    config["generator_check"] = [{"reference": "sample", "candidate": "english"}]
    with pytest.raises(InputError, match=r"config key generator_check.0: sample and english have other languages"):
        validate(copy.deepcopy(config))
