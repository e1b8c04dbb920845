"""Rule `mteb_json`: one results file per model and dataset that loads with mteb's TaskResult."""

import json
from pathlib import Path

from clsd.core import logs
from clsd.core.io import read_meta, read_table
from clsd.core.paths import keyed
from clsd.report.mteb_record import mteb_result, view_texts

logs.to_file(snakemake.log[0])
scores = {view: path for (view,), path in keyed(snakemake.input, "scores").items()}
candidates = {view: path for (view,), path in keyed(snakemake.input, "candidates").items()}
metas = [read_meta(path) for path in scores.values()]
seconds = [meta.get("encode_seconds") for meta in metas]
result = mteb_result(
    dataset=snakemake.wildcards.dataset,
    candidates_meta=read_meta(candidates["direct"]),
    texts_by_view={view: view_texts(read_table(path), read_meta(path)) for view, path in candidates.items()},
    model_meta=metas[0]["model"],
    scores_by_view={view: read_table(path) for view, path in scores.items()},
    directions=snakemake.params.directions,
    evaluation_time=None if None in seconds else round(sum(seconds), 3),
)
Path(snakemake.output[0]).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
