"""Rule `generate_distractors`: LLM distractors for one dataset and language, every response stored first.

Distractors the validator rejects (clsd.validate.rules rules, the optional judge) are replaced by asking again; the
rejects are recorded for the validation report. The API key is read from the environment variable named in
the config and is never logged or written. When no base_url is configured, a local llama.cpp server is started
on first need and always stopped, at once on Ctrl-C or SIGTERM. The job's run is recorded in the store, so
the report sums what every run of this dataset and language paid for.
"""

import json
import logging
from contextlib import ExitStack
from pathlib import Path

from clsd.core import logs
from clsd.config import local_gguf, response_store
from clsd.data.corpora import LANGUAGE_NAMES
from clsd.generate import llm
from clsd.generate.endpoint import connector, endpoint_id, generation_settings, judge_settings
from clsd.validate.judge import Judge, verdict
from clsd.generate.server import sigterm_as_interrupt
from clsd.generate.store import ResponseStore
from clsd.core.io import read_meta, read_table, sha256_file, write_table
from clsd.validate.rules import Validator

logs.to_file(snakemake.log[0])
config = snakemake.params.settings
validation = snakemake.params.validation
lang = snakemake.wildcards.lang
parallel = read_table(snakemake.input.parallel)
items = list(zip(parallel["id"].to_list(), parallel[lang].to_list()))
gguf = local_gguf(snakemake.config)
endpoint = endpoint_id(config, snakemake.input.model, gguf)
settings = generation_settings(config, Path(snakemake.input.prompt).read_text(encoding="utf-8"), endpoint)

dataset = snakemake.wildcards.dataset
with sigterm_as_interrupt(), ExitStack() as stack:
    store_path = response_store(snakemake.config)
    store = ResponseStore(store_path)  # left open on an error: answers still in flight are paid for and stored
    unkeyed = store.unkeyed()
    if unkeyed:
        logging.warning("%d responses in %s were stored before requests were keyed by endpoint and are not reused",
                        unkeyed, store_path)
    connect = connector(config, gguf, snakemake.threads, snakemake.log[0], stack)
    run = store.start_run(dataset, lang, endpoint, settings.model)
    origin = {"dataset": dataset, "lang": lang, "run": run, "reask_unusable": config["reask_unusable"]}
    judge = None
    if validation["judge"]:
        judge_template = Path(snakemake.input.judge_prompt[0]).read_text(encoding="utf-8")
        judge = llm.Generator(judge_settings(config, judge_template, endpoint), store, lambda: generator.client,
                              usable=lambda text: verdict(text) is not None, **origin)
    validator = Validator(lang, rules=validation["rules"], judge=Judge(judge, judge_template, lang) if judge else None)
    generator = llm.Generator(settings, store, connect, validator, **origin)
    table, report = llm.generate(items, lang, generator, config["prices"], snakemake.params.label, judge)
    store.close()

report |= {"dataset": dataset, "lang": lang, "language": LANGUAGE_NAMES[lang], "model": settings.model,
           "endpoint": endpoint, "prompt": snakemake.input.prompt, "store": str(store_path), "validation": validation}
logging.info("generation report: %s", json.dumps({k: v for k, v in report.items() if k not in ("failed", "rejected")}))
Path(snakemake.output.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
write_table(table, snakemake.output.distractors, {"dataset": dataset, "lang": lang,
                                                  "generator": snakemake.params.label,
                                                  "settings": {**settings.sampling(), "model": settings.model, "endpoint": endpoint},
                                                  "prompt_sha256": sha256_file(snakemake.input.prompt),
                                                  "validation": validation, "rejects": report["rejects"],
                                                  "rejected": report["rejected"],
                                                  "failed": report["failed"], "parallel": read_meta(snakemake.input.parallel)})
