"""bench/non_words.py: the unknown words of non_word rejects sorted by kind, with the real validator and lexicon."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from non_words import NEAR, OTHER, RUN_TOGETHER, kinds  # noqa: E402

TARGET = "Die Linke kritisiert die neoliberale Politik der Europäischen Union scharf."


def test_a_broken_target_word_two_run_together_and_another_word_are_told_apart():
    rejected = [(TARGET, "Die Linke kritisiert die neoliberalale Politik der Europäischen Union scharf."),
                (TARGET, "Die Linke kritisiert dieneoliberale Politik der Europäischen Union scharf."),
                (TARGET, "Die Linke kritisiert die neoliberale Politik der Europäischen Union blorptzig.")]
    assert kinds(rejected, "de") == {NEAR: 1, RUN_TOGETHER: 1, OTHER: 1}


def test_a_word_three_edits_from_every_target_word_is_no_broken_target_word():
    assert kinds([(TARGET, "Die Linke kritisiert die neolibxyzale Politik der Europäischen Union scharf.")], "de") \
        == {NEAR: 0, RUN_TOGETHER: 0, OTHER: 1}
