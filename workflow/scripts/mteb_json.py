"""Rule `mteb_json`: one MTEB-shaped results file per model and dataset."""

import json
from pathlib import Path

from clsd import logs
from clsd.io import read_meta, read_table
from clsd.report import mteb_result

logs.to_file(snakemake.log[0])
views = snakemake.params.views
result = mteb_result(
    dataset=snakemake.wildcards.dataset,
    dataset_meta=read_meta(snakemake.input.parallel),
    model_meta=read_meta(snakemake.input.scores[0])["model"],
    scores_by_view={view: read_table(path) for view, path in zip(views, snakemake.input.scores)},
    candidates_meta=read_meta(snakemake.input.candidates),
)
Path(snakemake.output[0]).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
