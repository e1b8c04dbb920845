"""Rule `generation_requests`: the generation requests one dataset and language still needs (the next attempt of
each unfinished item, after the answers in the response store), as a batch input file for an offline batch runner
(vLLM's run_batch; clsd.generate.offline). No generation request is sent; the judge, when it is on, is asked
about stored answers through the endpoint as in generation.
"""

import logging
from pathlib import Path

from clsd.core import logs
from clsd.core.io import read_table
from clsd.generate import offline
from clsd.generate.llm_endpoint import open_endpoint
from clsd.generate.settings import generation_settings
from clsd.validate import judge as judges
from clsd.validate.validator import Validator

logs.to_file(snakemake.log[0])
generation = snakemake.config["generation"]
validation = snakemake.params.validation
dataset, lang = snakemake.wildcards.dataset, snakemake.wildcards.lang
parallel = read_table(snakemake.input.parallel)
items = list(zip(parallel["id"].to_list(), parallel[lang].to_list()))

with open_endpoint(snakemake.config, snakemake.input.model, 1, snakemake.log[0]) as endpoint:
    judge = None
    if validation["judge"]:
        judge = judges.asking(endpoint, Path(snakemake.input.judge_prompt[0]).read_text(encoding="utf-8"), lang,
                              snakemake.config["validation"]["judge_per"], dataset=dataset)
    settings = generation_settings(generation, Path(snakemake.input.prompt).read_text(encoding="utf-8"), endpoint.id)
    generator = endpoint.generator(settings, Validator(lang, rules=validation["rules"], min_closeness=validation["min_closeness"], **judges.validator_judge(judge)),
                                   dataset=dataset, lang=lang)
    missing = generator.missing(items, lang)
offline.write_requests(snakemake.output[0], missing, settings.model)
logging.info("%d requests written to %s (items done or failed on stored answers: %d)", len(missing), snakemake.output[0],
             len(items) - len(missing))
