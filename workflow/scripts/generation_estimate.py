"""Rule `generation_estimate`: what every LLM generation job of the config will send and cost, before a request is
sent (clsd.generate.estimate); nothing contacts an endpoint or starts a server."""

import logging
from pathlib import Path

import polars as pl

from clsd.generate.jobs import response_store
from clsd.core import logs, render
from clsd.core.io import read_table
from clsd.core.paths import keyed
from clsd.serving.model_store import RECIPES
from clsd.generate import estimate
from clsd.generate.settings import generation_settings
from clsd.generate.store import ResponseStore

logs.to_file(snakemake.log[0])
generation = snakemake.config["generation"]
recipe = RECIPES.get(generation["local"]["recipe"])
settings = generation_settings(generation, Path(snakemake.input.prompt).read_text(encoding="utf-8"),
                               estimate.planned_endpoint(generation, recipe.weights_sha256 if recipe else None))
judge = None
if snakemake.input.judge_prompt:
    judge = (Path(snakemake.input.judge_prompt[0]).read_text(encoding="utf-8"), snakemake.config["validation"]["judge_per"])
store = ResponseStore(response_store(snakemake.config))
found = []
for (dataset, lang), path in keyed(snakemake.input, "parallel").items():
    parallel = read_table(path)
    found.append(estimate.estimate(dataset, lang, list(zip(parallel["id"].to_list(), parallel[lang].to_list())),
                                   settings, store, generation["prices"], judge, generation["batch"]))
    for line in estimate.log_lines(found[-1]):
        logging.info(line)
store.close()
table = pl.DataFrame([item.row() for item in found], schema=list(estimate.HEADERS), schema_overrides={"cost": pl.Float64})
assumed = dict.fromkeys(line for item in found for line in item.assumptions)
notes = [f"Endpoint {settings.endpoint}, model {settings.model}; nothing was sent. Requests and tokens are expected "
         "values (re-asks included); stored items cost nothing. Assumed:\n" + "\n".join(f"- {line}" for line in assumed)]
shown = table.rename(estimate.HEADERS)
Path(snakemake.output.md).write_text(render.markdown(shown, digits=2, notes=notes), encoding="utf-8")
table.write_csv(snakemake.output.csv)
