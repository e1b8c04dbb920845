"""The MTEB task of an exported CLSD folder: mteb.evaluate with all-MiniLM-L6-v2 (offline, from its local folder)
gives the Precision@1 of clsd's own scoring on the same items, ties included; its results and clsd's load into one
mteb results cache; a corrupted folder fails naming the file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from clsd.core.errors import InputError
from clsd.core.io import read_meta, write_table
from clsd.embed import loaded, tables
from clsd.embed.spec import ModelSpec
from clsd.report.mteb_task import (
    MAIN_SCORE,
    clsd_encoder,
    clsd_task,
    compare_with_scores,
    read_manifest,
    strict_outcomes,
)
from clsd.report import mteb_record
from clsd.report.hf_export import (
    ViewTable,
    config_name,
    data_file,
    document_id,
    export,
    query_id,
)
from clsd.score import precision
from test_hf_export import offline, sample_view  # noqa: F401 (offline is a fixture)

DIRECTIONS = ["de-fr", "fr-de"]


def clsd_scores(model, table: pl.DataFrame) -> pl.DataFrame:
    """clsd's own scoring of a candidate table (embedding step without prefix, then `score`)."""
    spec = ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from="")
    texts = table["text"].unique(maintain_order=True).to_list()
    return precision.score(table, tables.embedding_table(texts, "", loaded.encode(model, spec, texts)), "", DIRECTIONS)


def evaluate(model, folder: Path, predictions: Path):
    """mteb.evaluate of `model` on the folder's task, no results cache; the TaskResult and mteb's predictions."""
    import mteb

    task = clsd_task(folder)
    result = mteb.evaluate(model, tasks=[task], cache=None, prediction_folder=predictions, show_progress_bar=False)
    return result.task_results[0], json.loads((predictions / task.prediction_file_name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sample_run(minilm, tmp_path_factory):
    """The 22 sample items exported, scored by clsd and evaluated by mteb.evaluate with the same MiniLM, offline."""
    import datasets
    import huggingface_hub.constants

    root = tmp_path_factory.mktemp("mteb-sample")
    view = sample_view()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
        patch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
        manifest = export(root / "hf", [view], DIRECTIONS, dataset="sample", label="Sample")
        result, predictions = evaluate(minilm, root / "hf", root / "predictions")
    return {"root": root, "view": view, "manifest": manifest, "scores": clsd_scores(minilm, view.table), "result": result,
            "predictions": predictions}


@pytest.mark.slow
def test_mteb_evaluate_gives_the_precision_of_clsds_score_step(sample_run):
    result, scores = sample_run["result"], sample_run["scores"]
    assert result.task_name == "CLSD-sample" and result.dataset_revision == sample_run["manifest"]["revision"]
    subsets = {entry["hf_subset"]: entry for entry in result.scores["test"]}
    assert set(subsets) == {"direct-de-fr", "direct-fr-de"}
    assert subsets["direct-fr-de"]["languages"] == ["fra-Latn", "deu-Latn"]
    for direction in DIRECTIONS:
        ours = scores.filter(pl.col("direction") == direction)["correct"]
        entry = subsets[f"direct-{direction}"]
        assert entry["n_items"] == ours.len() == 22 and entry["n_ties"] == 0
        assert entry["main_score"] == entry[MAIN_SCORE] == pytest.approx(precision.precision_at_1(ours) / 100, abs=1e-9)
        assert entry["precision_at_1"] == pytest.approx(entry["main_score"], abs=1e-5)  # mteb's own, rounded by mteb
    checks = compare_with_scores(sample_run["root"] / "hf", sample_run["manifest"], sample_run["predictions"], {"direct": scores})
    assert [(row["subset"], row["agree"], row["items_differing"]) for row in checks] == [
        ("direct-de-fr", True, []), ("direct-fr-de", True, [])]


@pytest.mark.slow
def test_mtebs_and_clsds_results_load_into_one_results_cache(sample_run, tmp_path):
    from mteb.cache import ResultCache
    from mteb.results.task_result import TaskResult

    view, scores = sample_run["view"], sample_run["scores"]
    candidates_path = tmp_path / "direct.parquet"
    write_table(view.table, candidates_path, view.meta)
    record = mteb_record.mteb_result(dataset="sample", candidates_meta=read_meta(candidates_path),
                                texts_by_view={"direct": mteb_record.view_texts(view.table, view.meta)}, model_meta={"name": "minilm"},
                                scores_by_view={"direct": scores}, directions=DIRECTIONS, evaluation_time=None)
    cache = ResultCache(tmp_path / "cache")
    cache.save_to_cache(sample_run["result"], "sentence-transformers/all-MiniLM-L6-v2", "mteb")
    cache.save_to_cache(TaskResult.from_dict(record), "sentence-transformers/all-MiniLM-L6-v2", "clsd")
    task = clsd_task(sample_run["root"] / "hf")
    loaded = cache.load_results(tasks=[task], validate_and_filter=True, require_model_meta=False)
    results = {model.model_revision: model.task_results[0] for model in loaded.model_results}
    assert set(results) == {"mteb", "clsd"}
    mteb_result, clsd_result = results["mteb"], results["clsd"]
    assert mteb_result.task_name == clsd_result.task_name == task.metadata.name
    assert mteb_result.dataset_revision == clsd_result.dataset_revision == task.metadata.revision
    assert mteb_result.is_mergeable(clsd_result)
    for entry in mteb_result.scores["test"]:
        (same,) = [other for other in clsd_result.scores["test"] if other["hf_subset"] == entry["hf_subset"]]
        assert same["languages"] == entry["languages"] and same["main_score"] == pytest.approx(entry["main_score"], abs=1e-6)


@pytest.mark.slow
def test_a_tie_with_a_distractor_is_a_failure_for_mteb_and_clsd(sample_run, minilm, tmp_path, offline):
    """An item MiniLM gets right DE→FR, with a French distractor made equal to its target: both count it as failed."""
    scores = sample_run["scores"]
    right = scores.filter((pl.col("direction") == "de-fr") & pl.col("correct"))["id"]
    assert right.len() > 0
    item = int(right[0])
    view = sample_run["view"]
    target = view.table.filter((pl.col("id") == item) & (pl.col("lang") == "fr") & (pl.col("slot") == 0))["text"][0]
    copied = view.table.with_columns(
        pl.when((pl.col("id") == item) & (pl.col("lang") == "fr") & (pl.col("slot") == 2)).then(pl.lit(target))
        .otherwise(pl.col("text")).alias("text"))
    tied = ViewTable("direct", copied, view.meta)
    manifest = export(tmp_path / "hf", [tied], DIRECTIONS, dataset="tied", label="Tied")
    ours = clsd_scores(minilm, copied)
    row = ours.filter((pl.col("direction") == "de-fr") & (pl.col("id") == item))
    assert row["cos_true"][0] == row["cos_d2"][0] and not row["correct"][0]
    spec = ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from="")
    encoder = clsd_encoder(lambda texts: loaded.encode(minilm, spec, texts), "sentence-transformers/all-MiniLM-L6-v2", "test")
    result, predictions = evaluate(encoder, tmp_path / "hf", tmp_path / "predictions")
    subsets = {entry["hf_subset"]: entry for entry in result.scores["test"]}
    de_fr = ours.filter(pl.col("direction") == "de-fr")["correct"]
    assert subsets["direct-de-fr"]["n_ties"] == 1
    assert subsets["direct-de-fr"][MAIN_SCORE] == pytest.approx(precision.precision_at_1(de_fr) / 100, abs=1e-9)
    assert subsets["direct-de-fr"][MAIN_SCORE] == pytest.approx(
        {e["hf_subset"]: e for e in sample_run["result"].scores["test"]}["direct-de-fr"][MAIN_SCORE] - 1 / 22, abs=1e-9)
    assert all(check["agree"] and not check["items_differing"]
               for check in compare_with_scores(tmp_path / "hf", manifest, predictions, {"direct": ours}))


def test_the_import_every_exported_card_shows_gives_the_task():
    """Exported cards say `from clsd.mteb_task import clsd_task`: that public name stays, the task lives in clsd.report."""
    import inspect

    from clsd.mteb_task import clsd_task as public
    from clsd.report import hf_export

    assert public is clsd_task
    assert '"from clsd.mteb_task import clsd_task"' in inspect.getsource(hf_export)


def test_strict_outcomes_count_equal_scores_and_equal_texts_as_failures():
    qrels = {q: {f"{q}-0": 1} for q in ("win", "tie", "copy", "lose", "missing")}
    results = {
        "win": {"win-0": 0.9, "win-1": 0.8},
        "tie": {"tie-0": 0.7, "tie-1": 0.7, "tie-2": 0.1},
        "copy": {"copy-0": 0.70001, "copy-1": 0.7},  # another encoding of the same text, a rounding error apart
        "lose": {"lose-0": 0.5, "lose-1": 0.6},
    }
    texts = {"copy-0": "Il pleut.", "copy-1": "Il pleut.", "win-0": "a", "win-1": "b", "tie-0": "c", "tie-1": "d"}
    assert strict_outcomes(qrels, results, texts) == {
        "win": (True, False), "tie": (False, True), "copy": (False, True), "lose": (False, False), "missing": (False, False)}


def test_mtebs_own_precision_ranks_the_target_below_a_distractor_it_ties_with():
    """trec_eval (and mteb) break a tie of scores by the larger document id: the export's ids make the target lose it."""
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores

    target, distractor, other = (document_id(7, "fr", slot) for slot in (0, 3, 1))
    qrels = {query_id(7, "de"): {target: 1}}
    tie = calculate_retrieval_scores({query_id(7, "de"): {target: 0.5, distractor: 0.5, other: 0.1}}, qrels, [1], False)
    win = calculate_retrieval_scores({query_id(7, "de"): {target: 0.5, distractor: 0.4999, other: 0.1}}, qrels, [1], False)
    assert tie.precision["P@1"] == 0.0 and win.precision["P@1"] == 1.0


def test_a_disagreement_fails_the_check_unless_clsd_scored_a_near_tie(tmp_path):
    view = sample_view(limit=2)
    manifest = export(tmp_path / "hf", [view], ["de-fr"], dataset="s", label="S")
    predictions = {"direct-de-fr": {"test": {"0-de": {f"0-fr-{k}": [0.9, 0.1, 0.1, 0.1, 0.1][k] for k in range(5)},
                                             "1-de": {f"1-fr-{k}": [0.1, 0.9, 0.1, 0.1, 0.1][k] for k in range(5)}}}}

    def scores(margin_1: float, correct_1: bool) -> pl.DataFrame:
        return pl.DataFrame({"id": [0, 1], "direction": ["de-fr"] * 2, "cos_true": [0.9, 0.5], "cos_d1": [0.1, 0.5 - margin_1],
                             "correct": [True, correct_1]})

    (same,) = compare_with_scores(tmp_path / "hf", manifest, predictions, {"direct": scores(-0.4, False)})
    assert same["agree"] and same["p1_mteb"] == same["p1_clsd"] == 0.5
    (clear,) = compare_with_scores(tmp_path / "hf", manifest, predictions, {"direct": scores(0.3, True)})
    assert not clear["agree"] and clear["items_differing"] == [{"id": 1, "clsd": True, "mteb": False, "margin": pytest.approx(0.3)}]
    (near,) = compare_with_scores(tmp_path / "hf", manifest, predictions, {"direct": scores(1e-7, True)})
    assert near["agree"] and [row["id"] for row in near["items_differing"]] == [1]


def rewrite(folder: Path, subset: str, part: str, change) -> Path:
    """Replace one config's Parquet file by `change` of its table."""
    path = folder / data_file(config_name(subset, part))
    pl.read_parquet(path).pipe(change).write_parquet(path)
    return path


@pytest.mark.parametrize("corruption, message", [
    ("missing qrels", "the qrels of subset direct-de-fr is missing"),
    ("query without candidates", "query 1-de (row 2 of its queries) has no candidate list with its target"),
    ("empty candidate list", "query 0-de (row 1 of its queries) has no candidate list with its target"),
    ("candidate not in the corpus", "query 0-de lists candidate 0-fr-4, which the corpus lacks"),
    ("query without its target", "query 1-de (row 2 of its queries) has 0 relevant documents"),
    ("no manifest", "not a CLSD export"),
])
def test_a_corrupted_export_fails_naming_the_file(tmp_path, corruption, message):
    folder = tmp_path / "hf"
    export(folder, [sample_view(limit=2)], ["de-fr"], dataset="s", label="S")
    subset = "direct-de-fr"
    if corruption == "missing qrels":
        path = folder / data_file(config_name(subset, "qrels"))
        shutil.rmtree(path.parent)
    elif corruption == "query without candidates":
        path = rewrite(folder, subset, "top_ranked", lambda frame: frame.head(1))
    elif corruption == "empty candidate list":
        path = rewrite(folder, subset, "top_ranked", lambda frame: frame.with_columns(
            pl.when(pl.col("query-id") == "0-de").then(pl.lit([], dtype=pl.List(pl.String))).otherwise(pl.col("corpus-ids")).alias("corpus-ids")))
    elif corruption == "candidate not in the corpus":
        path = rewrite(folder, subset, "corpus", lambda frame: frame.filter(pl.col("id") != "0-fr-4"))
        path = folder / data_file(config_name(subset, "top_ranked"))
    elif corruption == "query without its target":
        path = rewrite(folder, subset, "qrels", lambda frame: frame.head(1))
    else:
        path = folder / "clsd.json"
        path.unlink()
    with pytest.raises(InputError, match=re.escape(message)) as error:
        clsd_task(folder)
    assert f"file {path}" in str(error.value)


def test_a_folder_without_subsets_says_why(tmp_path):
    view = sample_view(limit=1)
    empty = ViewTable("direct", view.table.head(0), view.meta | {"dropped": [{"id": 0, "reason": "not in x.csv"}]})
    export(tmp_path / "hf", [empty], ["de-fr"], dataset="e", label="E")
    assert read_manifest(tmp_path / "hf")["not_exported"][0]["reason"] == "1 × not in x.csv"
    with pytest.raises(InputError, match="no subset has items to evaluate") as error:
        clsd_task(tmp_path / "hf")
    assert "clsd.json" in str(error.value)
