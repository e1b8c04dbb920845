"""Rule `export_model`: the export of one model for a backend that runs from one, built once into the model store
(clsd.embed.exports)."""

import json
from pathlib import Path

from clsd.core import logs
from clsd.embed import exports
from clsd.serving.locations import model_store

logs.to_file(snakemake.log[0])
spec = snakemake.params.spec
if snakemake.input.model:  # a PyPI manifest or a local folder's checksum sentinel
    source = json.loads(Path(snakemake.input.model[0]).read_text(encoding="utf-8"))
    source = {"weights_sha256": source["weights_sha256"]} if "weights_sha256" in source else {"files": source["files"]}
else:
    source = {"hub": spec.name, "revision": spec.revision}
manifest = exports.ensure(model_store(snakemake.config), spec, source)
Path(snakemake.output[0]).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
