"""An MTEB task for a CLSD folder written by clsd.report.hf_export, evaluated with mteb's own retrieval machinery.

`clsd_task(folder)` reads the folder's manifest, checks the folder (every config file present, every query with
its true target and candidates) and returns a task of mteb's reranking kind (AbsTaskRetrieval with a candidate
list per query): mteb loads the subsets from the local folder with its own RetrievalDatasetLoader (no hub),
encodes queries and candidates with the model it is given, scores each query against its own candidates and
computes its standard metrics. The main score, `strict_precision_at_1`, is the paper's Precision@1 computed from
those scores: an item counts only when its true target scores strictly above every distractor, and a distractor
whose text equals the target's ties with it by definition (clsd's scoring embeds each distinct text once, so equal
texts tie exactly there; mteb encodes them separately, where batch padding can move them apart by a rounding
error). mteb's own `precision_at_1` breaks a tie by document id, which the export orders so that the target loses
it; both are reported.

The task's name (`CLSD-{dataset}`), subsets (`{view}-{direction}`), languages and revision are those of clsd's
MTEB record (`clsd.report.mteb_record.mteb_result`) for the same items, so mteb's result files and clsd's load into one
mteb results cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, get_args

import polars as pl
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.types import Licenses

from clsd.core.errors import InputError
from clsd.report.hf_export import (
    CARD,
    MANIFEST,
    PAPER_BIBTEX,
    PAPER_URL,
    PARTS,
    config_name,
    data_file,
    item_of,
)

MAIN_SCORE = "strict_precision_at_1"
#: An item clsd scored with a margin (true target minus best distractor) below this may flip between two encodings of
#: the same texts in other batches (float32 rounding): a disagreement there is reported, not an error.
NEAR_TIE = 1e-5


class CLSDTask(AbsTaskRetrieval):
    """CLSD as an mteb reranking task; `clsd_task` makes a subclass per folder, with that folder's metadata as a class
    attribute (mteb's `unload_data` drops an instance's own metadata)."""

    #: Every query has five candidates: ranks beyond them repeat the same numbers.
    k_values = (1, 3, 5)

    def task_specific_scores(
        self,
        scores: dict[str, dict[str, float]],
        qrels: dict[str, dict[str, int]],
        results: dict[str, dict[str, float]],
        hf_split: str,
        hf_subset: str,
    ) -> dict[str, float]:
        """Strict Precision@1 (the main score), the number of items and of ties, from mteb's retrieval scores."""
        corpus = self.dataset[hf_subset][hf_split]["corpus"]
        texts = dict(zip(corpus["id"], corpus["text"]))
        return strict_precision_at_1(qrels, results, texts)


def strict_outcomes(qrels: dict[str, dict[str, int]], results: dict[str, dict[str, float]],
                    texts: dict[str, str]) -> dict[str, tuple[bool, bool]]:
    """(success, tie) per query of `qrels`: success iff the score of its relevant document in `results` is strictly
    greater than every other candidate's and no other candidate's text equals the relevant one's (equal texts tie by
    definition); a tie is an equal best score or an equal text. A query mteb returned no score for fails."""
    outcomes = {}
    for query, relevant in qrels.items():
        (target,) = [doc for doc, grade in relevant.items() if grade > 0]
        ranked = results.get(query, {})
        if target not in ranked:
            outcomes[query] = (False, False)
            continue
        others = [doc for doc in ranked if doc != target]
        best = max((ranked[doc] for doc in others), default=float("-inf"))
        text = texts.get(target)
        tied = best == ranked[target] or (text is not None and any(texts.get(doc) == text for doc in others))
        outcomes[query] = (not tied and ranked[target] > best, tied)
    return outcomes


def strict_precision_at_1(qrels: dict[str, dict[str, int]], results: dict[str, dict[str, float]],
                          texts: dict[str, str]) -> dict[str, float]:
    """The paper's Precision@1 over the queries of `qrels` as a fraction (`strict_outcomes`), with the number of items
    and of ties."""
    outcomes = strict_outcomes(qrels, results, texts).values()
    n = len(outcomes)
    return {MAIN_SCORE: sum(hit for hit, _ in outcomes) / n if n else float("nan"), "n_items": n,
            "n_ties": sum(tie for _, tie in outcomes)}


def read_manifest(folder: Path) -> dict[str, Any]:
    """The export manifest of `folder` (InputError naming the file when it is missing or unreadable)."""
    path = folder / MANIFEST
    if not path.is_file():
        raise InputError(f"not a CLSD export: no {MANIFEST} (write the folder with clsd.report.hf_export)", path=path)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from exc
    for key in ("task_name", "revision", "subsets", "split"):
        if key not in manifest:
            raise InputError("missing key", path=path, field=key)
    return manifest


def read_part(folder: Path, subset: str, part: str) -> pl.DataFrame:
    """One config's table, with the columns mteb reads (InputError naming the file when absent or incomplete)."""
    path = folder / data_file(config_name(subset, part))
    if not path.is_file():
        raise InputError(f"the {part} of subset {subset} is missing", path=path)
    frame = pl.read_parquet(path)
    missing = [column for column in PARTS[part] if column not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}", path=path, field=missing[0])
    return frame


def check_subset(folder: Path, subset: str) -> None:
    """Fail, naming the file, row and field, unless every query of `subset` has exactly one relevant document in
    its qrels, a candidate list that holds it and a distractor, and every candidate is in the corpus."""
    queries, corpus, qrels, top = (read_part(folder, subset, part) for part in ("queries", "corpus", "qrels", "top_ranked"))
    path = {part: folder / data_file(config_name(subset, part)) for part in PARTS}
    documents = set(corpus["id"].to_list())
    relevant: dict[str, list[str]] = {}
    for query, document, grade in qrels.select("query-id", "corpus-id", "score").iter_rows():
        if grade > 0:
            relevant.setdefault(query, []).append(document)
    candidates = dict(zip(top["query-id"].to_list(), top["corpus-ids"].to_list()))
    for row, query in enumerate(queries["id"].to_list(), start=1):
        targets = relevant.get(query, [])
        if len(targets) != 1:
            raise InputError(f"query {query} (row {row} of its queries) has {len(targets)} relevant documents, CLSD needs "
                             "exactly one", path=path["qrels"], field="query-id")
        listed = candidates.get(query) or []
        if targets[0] not in listed or len(listed) < 2:
            raise InputError(f"query {query} (row {row} of its queries) has no candidate list with its target and a distractor",
                             path=path["top_ranked"], field="corpus-ids")
        unknown = [document for document in listed if document not in documents]
        if unknown:
            raise InputError(f"query {query} lists candidate {unknown[0]}, which the corpus lacks", path=path["top_ranked"],
                             field="corpus-ids")


def task_metadata(folder: Path, manifest: dict[str, Any]) -> TaskMetadata:
    """mteb metadata of the task: name, description, local dataset path with our content revision, subsets and their
    languages (ISO 639-3 + script), main score, license (when mteb knows its id) and the paper."""
    license_id = manifest.get("license")
    return TaskMetadata(
        name=manifest["task_name"],
        description=(
            f"Cross-Lingual Semantic Discrimination on {manifest.get('label', manifest['task_name'])}: rank the true translation "
            "of a sentence above distractors that look like it but mean something else, among the item's own candidates. "
            "Main score: Precision@1 with ties counted as failures (arXiv 2502.08638)."
        ),
        reference=PAPER_URL,
        dataset={"path": str(folder.resolve()), "revision": manifest["revision"]},
        type="Reranking",
        category="t2t",
        modalities=["text"],
        eval_splits=[manifest["split"]],
        eval_langs={subset: entry["languages"] for subset, entry in manifest["subsets"].items()},
        main_score=MAIN_SCORE,
        task_subtypes=["Cross-Lingual Semantic Discrimination"],
        license=license_id if license_id in get_args(Licenses) else None,
        annotations_creators="derived",
        dialect=[],
        bibtex_citation=PAPER_BIBTEX,
    )


def clsd_task(folder: str | Path) -> CLSDTask:
    """The MTEB task of a folder written by clsd.report.hf_export, checked and ready for `mteb.evaluate` (loads locally)."""
    folder = Path(folder)
    if not (folder / CARD).is_file():
        raise InputError("not a datasets folder: no dataset card", path=folder / CARD)
    manifest = read_manifest(folder)
    if not manifest["subsets"]:
        raise InputError(f"no subset has items to evaluate: {manifest.get('not_exported')}", path=folder / MANIFEST, field="subsets")
    for subset in manifest["subsets"]:
        check_subset(folder, subset)
    metadata = task_metadata(folder, manifest)
    task_class = type(f"CLSDTask_{manifest['dataset']}", (CLSDTask,), {"metadata": metadata, "__module__": __name__})
    return task_class()


def clsd_encoder(encode: Callable[[list[str]], Any], name: str, revision: str, experiment: dict[str, str] | None = None) -> Any:
    """The one mteb encoder of a clsd model, whatever runs it: `encode` is the embedding step's own (a model loaded
    here: clsd.embed.loaded.encode, its prefix and named prompt, backend and precision; a model served behind an
    endpoint: clsd.embed.served.Embedder.embed, its vectors from the vector store, so what the embedding job stored
    is not sent again), used for queries and candidates alike, so mteb ranks the vectors clsd scored. Its metadata
    names the model `name` at `revision` (the folder a clsd model loads from has neither; an endpoint's revision is
    the endpoint), scored by cosine as clsd scores; `experiment` (e.g. the backend and precision) keeps its results
    apart from plain PyTorch float32 ones."""
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ModelMeta, ScoringFunction

    class ClsdEncoder(AbsEncoder):
        def __init__(self) -> None:
            self.mteb_model_meta = ModelMeta.create_empty(overwrites={
                "name": name, "revision": revision, "loader": type(self), "similarity_fn_name": ScoringFunction.COSINE,
                "experiment_kwargs": experiment or None})

        def encode(self, inputs: Any, **kwargs: Any) -> Any:
            return encode([text for batch in inputs for text in batch["text"]])

    return ClsdEncoder()


def qrels_of(folder: Path, subset: str) -> dict[str, dict[str, int]]:
    """A subset's relevance judgements as mteb holds them: query → {document: grade}."""
    qrels: dict[str, dict[str, int]] = {}
    for query, document, grade in read_part(folder, subset, "qrels").select("query-id", "corpus-id", "score").iter_rows():
        qrels.setdefault(query, {})[document] = grade
    return qrels


def compare_with_scores(folder: Path, manifest: dict[str, Any], predictions: dict[str, Any],
                        scores_by_view: dict[str, pl.DataFrame]) -> list[dict[str, Any]]:
    """Per subset, mteb's strict outcomes (from the predictions file `mteb.evaluate(..., prediction_folder=...)`
    wrote) against clsd's score table of the same view and direction: items, P@1 of each (fractions), and every
    item where they differ with clsd's margin (cos_true − best distractor). `agree` is false when they differ on an
    item clsd did not score as a near tie (|margin| < NEAR_TIE) or on the items scored."""
    rows = []
    for subset, entry in manifest["subsets"].items():
        corpus = read_part(folder, subset, "corpus")
        outcomes = strict_outcomes(qrels_of(folder, subset), predictions[subset][manifest["split"]],
                                   dict(zip(corpus["id"].to_list(), corpus["text"].to_list())))
        by_mteb = {item_of(query): hit for query, (hit, _) in outcomes.items()}
        scores = scores_by_view[entry["view"]].filter(pl.col("direction") == entry["direction"])
        distractors = [column for column in scores.columns if column.startswith("cos_d")]
        scores = scores.with_columns((pl.col("cos_true") - pl.max_horizontal(distractors)).alias("margin"))
        by_clsd = dict(zip(scores["id"].to_list(), scores["correct"].to_list()))
        margins = dict(zip(scores["id"].to_list(), scores["margin"].to_list()))
        differ = [{"id": item, "clsd": by_clsd.get(item), "mteb": by_mteb.get(item), "margin": margins.get(item)}
                  for item in sorted(by_mteb.keys() | by_clsd.keys()) if by_mteb.get(item) != by_clsd.get(item)]
        clear = [row for row in differ if row["margin"] is None or abs(row["margin"]) >= NEAR_TIE]
        rows.append({
            "subset": subset, "n_mteb": len(by_mteb), "n_clsd": len(by_clsd),
            "p1_mteb": sum(by_mteb.values()) / len(by_mteb), "p1_clsd": sum(by_clsd.values()) / len(by_clsd) if by_clsd else None,
            "items_differing": differ, "agree": not clear and by_mteb.keys() == by_clsd.keys(),
        })
    return rows


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on `folder` (created if needed): jobs of other datasets write the same model's files of
    an mteb results cache (model_meta.json, run_settings.jsonl)."""
    import fcntl  # POSIX only: the task itself stays usable elsewhere

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
