"""Rule `mteb_evaluate`: one model on one exported CLSD folder through mteb.evaluate (clsd.report.mteb_task), checked against
clsd's own scores of the same items; writes mteb's result file and the check, and saves the result in the mteb
results cache (`mteb.cache`).

The model loads as for the embedding step (same folder, backend, precision and prompt) and mteb encodes through the
embedding step's own `encode`, so both see the same vectors; a model served behind an endpoint encodes through the
vector store its embedding jobs filled (no text is sent again). An item whose outcome differs fails the job unless clsd scored it as a near tie.
"""

import json
import logging
import tempfile
from pathlib import Path

import mteb
from clsd.core import logs
from clsd.core.io import read_table
from clsd.core.paths import keyed
from clsd.embed import loaded, served
from clsd.embed.token_counts import TokenCounter
from clsd.embed.vectors import VectorStore
from clsd.report.mteb_task import clsd_encoder, clsd_task, compare_with_scores, locked, read_manifest
from mteb.cache import ResultCache
from mteb.results.task_result import TaskResult

logs.to_file(snakemake.log[0])
cache = snakemake.config["mteb"]["cache"]
folder = Path(snakemake.input.dataset)
manifest = read_manifest(folder)
if not manifest["subsets"]:  # every item left out: nothing to evaluate, as in clsd's own record of the dataset
    logging.warning("%s has no subset to evaluate: %s", folder, manifest["not_exported"])
    check = []
    result = TaskResult(dataset_revision=manifest["revision"], task_name=manifest["task_name"], mteb_version=mteb.__version__,
                        scores={manifest["split"]: []}, evaluation_time=0.0)
elif (spec := snakemake.params.spec).served:  # clsd.embed.spec.ModelSpec, built once while Snakemake planned
    # served behind an endpoint: its vectors from the vector store, where its embedding jobs put them
    vectors = VectorStore(snakemake.params.store)
    embedder = served.Embedder(spec, vectors, TokenCounter(spec.tokenizer, *vectors.chars_per_token(spec.endpoint, spec.name)),
                               served.connector(spec))
    encoder, name = clsd_encoder(embedder.embed, spec.name, spec.endpoint), spec.name
    task, encode_kwargs = clsd_task(folder), {"batch_size": spec.inputs_per_request}
else:
    export = json.loads(Path(snakemake.input.export[0]).read_text(encoding="utf-8")) if snakemake.input.export else None
    model, runs_on = loaded.load_model(spec, snakemake.config["device"], export["file"] if export else None)
    source = json.loads(Path(snakemake.input.model[0]).read_text(encoding="utf-8")) if snakemake.input.model else {}
    revision = spec.revision or source.get("weights_sha256") or "no_revision_available"
    # float32 through ONNX Runtime or OpenVINO is the same model as PyTorch's (bench/embed.py: no P@1 change), so its
    # results are the model's own; int8 or half precision is an mteb experiment (load_experiments="match_name")
    reduced = runs_on["quantize"] != "none" or runs_on["dtype"] != "float32"
    experiment = {key: runs_on[key] for key in ("backend", "quantize", "dtype")} if reduced else None
    encoder, name = clsd_encoder(lambda texts: loaded.encode(model, spec, texts), spec.name, revision, experiment), spec.name
    task = clsd_task(folder)
    encode_kwargs = {"batch_size": spec.batch_size}
if manifest["subsets"]:
    with tempfile.TemporaryDirectory() as predictions:
        result = mteb.evaluate(encoder, tasks=[task], cache=None, prediction_folder=predictions,
                               encode_kwargs=encode_kwargs, show_progress_bar=False).task_results[0]
        predicted = json.loads((Path(predictions) / task.prediction_file_name).read_text(encoding="utf-8"))
    scores = {view: read_table(path) for (view,), path in keyed(snakemake.input, "scores").items()}
    check = compare_with_scores(folder, manifest, predicted, scores)
    for row in check:
        logging.info("%s: strict P@1 %.6f with mteb, %s in clsd's scores (%d items)", row["subset"], row["p1_mteb"],
                     row["p1_clsd"], row["n_mteb"])
        if row["items_differing"]:
            logging.warning("%s: items mteb and clsd score otherwise: %s", row["subset"], row["items_differing"])
    disagree = [row["subset"] for row in check if not row["agree"]]
    if disagree:
        raise ValueError(f"mteb's P@1 differs from clsd's scores {sorted(keyed(snakemake.input, 'scores').values())} in {', '.join(disagree)} on "
                         f"items clsd did not score as near ties: see {snakemake.log[0]}")
    with locked(Path(cache)):
        ResultCache(cache).save_to_cache(result, encoder.mteb_model_meta, encode_kwargs=encode_kwargs)
    logging.info("result of %s saved in the mteb results cache %s", name, cache)
Path(snakemake.output.check).write_text(json.dumps(check, indent=2) + "\n", encoding="utf-8")
result.to_disk(Path(snakemake.output.result))
