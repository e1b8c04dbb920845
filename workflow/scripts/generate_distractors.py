"""Rule `generate_distractors`: LLM distractors for one dataset and language, every response stored first.

Distractors the validator rejects (clsd.validate rules, the optional judge) are replaced by asking again; the
rejects are recorded for the validation report. The API key is read from the environment variable named in
the config and is never logged or written. When no base_url is configured, a local llama.cpp server is started on first need and always stopped.
"""

import json
import logging
from contextlib import ExitStack
from pathlib import Path

from clsd import logs
from clsd.datasets import LANGUAGE_NAMES
from clsd.generate import llm
from clsd.generate.endpoint import connector, endpoint_id, generation_settings, judge_settings
from clsd.generate.judge import Judge
from clsd.generate.store import ResponseStore
from clsd.io import read_meta, read_table, sha256_file, write_table
from clsd.validate import Validator

logs.to_file(snakemake.log[0])
config = snakemake.params.settings
validation = snakemake.params.validation
lang = snakemake.wildcards.lang
parallel = read_table(snakemake.input.parallel)
items = list(zip(parallel["id"].to_list(), parallel[lang].to_list()))
endpoint = endpoint_id(config, snakemake.input.model, snakemake.params.gguf)
settings = generation_settings(config, Path(snakemake.input.prompt).read_text(encoding="utf-8"), endpoint)

with ExitStack() as stack:
    store = ResponseStore(config["store"])
    unkeyed = store.unkeyed()
    if unkeyed:
        logging.warning("%d responses in %s were stored before requests were keyed by endpoint and are not reused",
                        unkeyed, config["store"])
    connect = connector(config, snakemake.params.gguf, snakemake.threads, snakemake.log[0], stack)
    judge = None
    if validation["judge"]:
        judge_template = Path(snakemake.input.judge_prompt[0]).read_text(encoding="utf-8")
        judge = llm.Generator(judge_settings(config, judge_template, endpoint), store, lambda: generator.client)
    validator = Validator(lang, rules=validation["rules"], judge=Judge(judge, judge_template, lang) if judge else None)
    generator = llm.Generator(settings, store, connect, validator)
    table, report = llm.generate(items, lang, generator, config["prices"], snakemake.params.label, judge)
    store.close()

report |= {"dataset": snakemake.wildcards.dataset, "lang": lang, "language": LANGUAGE_NAMES[lang], "model": settings.model,
           "endpoint": endpoint, "prompt": snakemake.input.prompt, "store": config["store"], "validation": validation}
logging.info("generation report: %s", json.dumps({k: v for k, v in report.items() if k not in ("failed", "rejected")}))
Path(snakemake.output.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
write_table(table, snakemake.output.distractors, {"dataset": snakemake.wildcards.dataset, "lang": lang,
                                                  "generator": snakemake.params.label,
                                                  "settings": {**settings.sampling(), "model": settings.model, "endpoint": endpoint},
                                                  "prompt_sha256": sha256_file(snakemake.input.prompt),
                                                  "validation": validation, "rejects": report["rejects"],
                                                  "rejected": report["rejected"],
                                                  "failed": report["failed"], "parallel": read_meta(snakemake.input.parallel)})
