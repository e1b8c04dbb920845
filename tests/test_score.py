"""Precision@1 and cosine tables on hand-made vectors: ties are failures, scale does not matter."""

import numpy as np
import polars as pl
import pytest
from clsd.core.keys import text_key
from clsd.embed.tables import embedding_table
from clsd.score import precision


def test_perfect_items_score_100():
    queries = np.array([[1.0, 0.0], [0.0, 1.0]])
    candidates = np.array([[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]])
    hits = precision.correct(precision.cosines(queries, candidates))
    assert hits.tolist() == [True, True]
    assert precision.precision_at_1(hits) == 100.0


def test_tie_with_any_distractor_is_a_failure():
    queries = np.array([[1.0, 0.0]])
    # true target and distractor 2 identical up to scale: equal cosine → failure
    candidates = np.array([[[2.0, 1.0], [0.0, 1.0], [4.0, 2.0], [-1.0, 0.0], [0.0, -1.0]]])
    cos = precision.cosines(queries, candidates)
    assert cos[0, 0] == cos[0, 2]
    assert precision.correct(cos).tolist() == [False]


def test_all_equal_candidates_score_zero():
    queries = np.array([[0.3, 0.4], [1.0, 1.0]])
    candidates = np.repeat(np.array([[[1.0, 2.0]]]), 2, axis=0).repeat(5, axis=1)
    assert precision.precision_at_1(precision.correct(precision.cosines(queries, candidates))) == 0.0


def test_margins_and_scale_invariance():
    queries = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    candidates = np.array(
        [
            [[1.0, 0.1], [1.0, 0.2], [1.0, 0.3]],  # true closest by a small margin → hit
            [[1.0, 0.2], [1.0, 0.1], [1.0, 0.3]],  # a distractor is closer → miss
            [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]],
        ]
    )
    hits = precision.correct(precision.cosines(queries, candidates))
    scaled = precision.correct(precision.cosines(queries * 7.0, candidates * np.array([3.0, 0.5, 9.0])[None, :, None]))
    assert hits.tolist() == [True, False, True] == scaled.tolist()
    assert precision.precision_at_1(hits) == pytest.approx(200 / 3)


def test_precision_of_no_items_is_an_error():
    with pytest.raises(ValueError):
        precision.precision_at_1(np.array([], dtype=bool))


def _table(rows):
    return pl.DataFrame(rows, schema=["id", "lang", "slot", "text"], orient="row")


def test_score_direction_uses_source_language_query_and_target_candidates():
    table = _table(
        [
            (0, "de", 0, "de0"), (0, "de", 1, "de0-a"), (0, "de", 2, "de0-b"),
            (0, "fr", 0, "fr0"), (0, "fr", 1, "fr0-a"), (0, "fr", 2, "fr0-b"),
            (1, "de", 0, "de1"), (1, "de", 1, "de1-a"), (1, "de", 2, "de1-b"),
            (1, "fr", 0, "fr1"), (1, "fr", 1, "fr1-a"), (1, "fr", 2, "fr1-b"),
        ]
    )
    vectors = {
        "de0": [1, 0, 0], "fr0": [1, 0.1, 0], "fr0-a": [0, 1, 0], "fr0-b": [1, 0.5, 0],
        "de1": [0, 0, 1], "fr1": [0, 1, 1], "fr1-a": [0, 0, 1], "fr1-b": [1, 0, 0],
        # reverse direction: de candidates for fr queries
        "de0-a": [1, 0.1, 0], "de0-b": [0, 1, 0], "de1-a": [1, 0, 0], "de1-b": [1, 1, 0],
    }
    prefix = "query: "
    texts = list(vectors)
    embeddings = embedding_table(texts, prefix, np.array([vectors[t] for t in texts], dtype=np.float32))
    result = precision.score_direction(table, embeddings, prefix, "de-fr")
    assert result.columns == ["id", "direction", "cos_true", "cos_d1", "cos_d2", "correct"]
    assert result["correct"].to_list() == [True, False]  # item 1: fr1-a equals the query direction exactly
    reverse = precision.score_direction(table, embeddings, prefix, "fr-de")
    # item 0: query fr0=[1,.1,0]; de0-a=[1,.1,0] is identical to the query → beats the true target
    assert reverse["correct"].to_list() == [False, True]
    assert precision.summary(pl.concat([result, reverse])) == {"de-fr": 50.0, "fr-de": 50.0}


def test_missing_embedding_names_the_key():
    table = _table([(0, "de", 0, "a"), (0, "fr", 0, "b"), (0, "fr", 1, "c")])
    embeddings = embedding_table(["a", "b"], "", np.eye(2, dtype=np.float32))
    with pytest.raises(KeyError, match=text_key("", "c")):
        precision.score_direction(table, embeddings, "", "de-fr")


def test_incomplete_item_is_reported():
    table = _table([(0, "de", 0, "a"), (0, "fr", 0, "b"), (0, "fr", 1, "c"), (1, "de", 0, "d"), (1, "fr", 0, "e")])
    embeddings = embedding_table(list("abcde"), "", np.eye(5, dtype=np.float32))
    with pytest.raises(ValueError, match="item id 1"):
        precision.score_direction(table, embeddings, "", "de-fr")


def test_true_pairs_that_do_not_stand_above_shifted_ones_are_warned_about(caplog):
    """Hand-made vectors: each item's translation lies near its source; shifting one side by an item breaks that."""
    from clsd.score import pairs

    rng = np.random.default_rng(7)
    n = 30
    sources = rng.normal(size=(n, 16))
    targets = sources + 0.3 * rng.normal(size=(n, 16))
    de, fr = [f"Satz {i}" for i in range(n)], [f"phrase {i}" for i in range(n)]

    def table(fr_texts):
        rows = [{"id": i, "lang": "de", "slot": 0, "text": de[i]} for i in range(n)]
        rows += [{"id": i, "lang": "fr", "slot": 0, "text": fr_texts[i]} for i in range(n)]
        return pl.DataFrame(rows)

    embeddings = embedding_table(de + fr, "", np.vstack([sources, targets]).astype(np.float32))
    aligned = pairs.check_pairs(table(fr), embeddings, "", ["de-fr", "fr-de"], "m")
    assert aligned["de-fr"]["true_median"] > 0.9 and aligned["de-fr"]["shifted_median"] < 0.3
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
    shifted = pairs.check_pairs(table(fr[1:] + fr[:1]), embeddings, "", ["de-fr"], "m")  # French side one line off
    assert shifted["de-fr"]["true_median"] < 0.3
    assert any("m, de-fr: the true pairs are no closer than pairs shifted by one item" in r.getMessage() for r in caplog.records)
    assert pairs.check_pairs(table(fr).filter(pl.col("id") < 10), embeddings, "", ["de-fr"], "m") == {"de-fr": None}
