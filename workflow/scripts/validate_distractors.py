"""Rule `validate_distractors`: check one distractor set (clsd.validate) and write the validated set and its report.

Generated sets were already validated while generating (rejects re-asked, recorded in their provenance):
here they are checked again and their re-asks reported. Published sets are flagged, and changed only with
validation.apply_to_published. Judge verdicts come from the response store when generation asked them.
"""

import json
import logging
from contextlib import ExitStack
from pathlib import Path

import polars as pl

from clsd import logs, validation_report
from clsd.datasets import LANGUAGE_NAMES
from clsd.generate import llm
from clsd.generate.endpoint import connector, endpoint_id, judge_settings
from clsd.generate.judge import Judge
from clsd.generate.store import ResponseStore
from clsd.io import read_meta, read_table, write_table
from clsd.validate import Validator

logs.to_file(snakemake.log[0])
settings = snakemake.params.validation
lang = snakemake.wildcards.lang
meta = read_meta(snakemake.input.distractors)
parallel = read_table(snakemake.input.parallel)
targets = dict(zip(parallel["id"].to_list(), parallel[lang].to_list()))
# a published file may cover more items than the selection (select.limit): only selected items are checked
distractors = read_table(snakemake.input.distractors).filter(pl.col("id").is_in(list(targets)))
act = validation_report.action(snakemake.params.kind, settings.get("apply_to_published", False))

with ExitStack() as stack:
    judge = None
    if settings["judge"]:
        generation = snakemake.params.generation
        endpoint = endpoint_id(generation, snakemake.input.model, snakemake.params.gguf)
        store = ResponseStore(generation["store"])
        stack.callback(store.close)
        template = Path(snakemake.input.judge_prompt[0]).read_text(encoding="utf-8")
        judge = llm.Generator(judge_settings(generation, template, endpoint), store,
                              connector(generation, snakemake.params.gguf, snakemake.threads, snakemake.log[0], stack))
    validator = Validator(lang, rules=settings["rules"], judge=Judge(judge, template, lang) if judge else None)
    flagged = validation_report.flag(distractors, targets, validator.reason)

report = validation_report.summary(flagged, targets, meta.get("rejected", []), act, settings["examples"])
report |= {"dataset": snakemake.wildcards.dataset, "lang": lang, "language": LANGUAGE_NAMES[lang], "kind": snakemake.params.kind,
           "settings": settings, "judge_unclear": validator.unclear["judge_unclear"],
           "judge": llm.judge_report(judge) if judge else None}
for reason, count in report["in_file"].items():
    logging.warning("%d distractor(s) of %s (%s) %s: %s", count, snakemake.wildcards.dataset, lang, act, reason)
logging.info("validation: %s", json.dumps({k: v for k, v in report.items() if k != "examples"}))
Path(snakemake.output.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
kept = flagged if act == "flagged" else flagged.filter(pl.col("flag").is_null())
removed = [] if act == "flagged" else validation_report.removed_items(flagged)
summary = {key: report[key] for key in ("action", "checked", "kept", "reasons")}
write_table(kept, snakemake.output.distractors,
            {**meta, "validation": {**settings, **summary}, "failed": meta.get("failed", []) + removed})
