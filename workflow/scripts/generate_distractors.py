"""Rule `generate_distractors`: LLM distractors for one dataset and language, every response stored first.

Distractors the validator rejects (clsd.validate.validator rules, the optional judge) are replaced by asking again; the
rejects are recorded for the validation report. The endpoint, store and judge come from the one factory
(clsd.generate.llm_endpoint.open_endpoint): the API key is read from the environment variable named in the config and
is never logged or written; when no base_url is configured, a local llama.cpp server is started on first need and
always stopped, at once on Ctrl-C or SIGTERM. The job's run is recorded in the store, so the report sums what
every run of this dataset and language paid for. With generation.batch the requests go through the endpoint's
Batch API in rounds (clsd.generate.batch; a killed job resumes its batch); with generation.batch_output the answers
of an offline batch runner are read from its output file and no generation request is sent
(clsd.generate.offline). The rule's params are what the outputs depend on
(clsd.generate.settings.request_settings); everything is read from the config and the inputs.
"""

import json
import logging
from pathlib import Path

from clsd.analysis import profile
from clsd.core import logs
from clsd.core.io import read_meta, read_table, sha256_file, write_table
from clsd.core.languages import language
from clsd.core.paths import REQUESTS
from clsd.generate import estimate, llm, offline
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

with open_endpoint(snakemake.config, snakemake.input.model, snakemake.threads, snakemake.log[0]) as endpoint:
    origin = {"dataset": dataset, "run": endpoint.start_run(dataset, lang), "reask_unusable": generation["reask_unusable"]}
    judge = None
    if validation["judge"]:
        judge = judges.asking(endpoint, Path(snakemake.input.judge_prompt[0]).read_text(encoding="utf-8"), lang,
                              snakemake.config["validation"]["judge_per"], **origin)
    settings = generation_settings(generation, Path(snakemake.input.prompt).read_text(encoding="utf-8"), endpoint.id,
                                   endpoint.concurrency)
    batch = llm.Batching(generation["batch_poll_s"], generation["retries"]) if generation["batch"] else None
    reference = profile.reference_of(snakemake.params.reference, {}, {})
    generator = endpoint.generator(settings, Validator(lang, rules=validation["rules"], min_closeness=validation["min_closeness"], **judges.validator_judge(judge)),
                                   lang=lang, batch=batch, reference_shares=profile.shares_for(reference, lang) if reference else None,
                                   **origin)
    if generation["batch_output"] is not None:
        offline.answer(generation["batch_output"].format(dataset=dataset, lang=lang), generator, items, lang,
                       REQUESTS.format(dataset=dataset, lang=lang))
    planned = estimate.estimate(dataset, lang, items, settings, endpoint.store, generation["prices"],
                                (judge.template, snakemake.config["validation"]["judge_per"]) if judge else None,
                                batch=generation["batch"])
    for line in estimate.log_lines(planned):
        logging.info(line)
    table, report = llm.generate(items, lang, generator, generation["prices"], snakemake.params.label,
                                 judge.generator if judge else None)

report |= {"dataset": dataset, "lang": lang, "language": language(lang).name, "model": settings.model,
           "endpoint": endpoint.id, "prompt": snakemake.input.prompt, "store": str(endpoint.store.path),
           "validation": validation, "local_server": endpoint.local_server(), "estimate": planned.row(),
           "closeness_profile": profile.kept_record(items, table, lang, reference)}
logging.info("generation report: %s", json.dumps({k: v for k, v in report.items() if k not in ("failed", "rejected", "mended")}))
Path(snakemake.output.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
write_table(table, snakemake.output.distractors, {"dataset": dataset, "lang": lang,
                                                  "generator": snakemake.params.label,
                                                  "settings": {**settings.sampling(), "model": settings.model, "endpoint": endpoint.id},
                                                  "prompt_sha256": sha256_file(snakemake.input.prompt),
                                                  "validation": validation, "rejects": report["rejects"],
                                                  "rejected": report["rejected"], "mended": report["mended"],
                                                  "written": report["sentences"],
                                                  "failed": report["failed"], "parallel": read_meta(snakemake.input.parallel)})
