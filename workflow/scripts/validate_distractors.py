"""Rule `validate_distractors`: check one distractor set (clsd.validate.validator) and write the validated set and its report.

Generated sets were already validated while generating (rejects re-asked, recorded in their provenance):
here they are checked again and their re-asks reported. Published sets are flagged, and changed only with
validation.apply_to_published, except that an item with a copy of its target is never scored (a certain tie). Reorders the rules cannot prove harmless stay and are counted as
reorder_suspect. The judge asks through the one endpoint factory (clsd.generate.llm_endpoint.open_endpoint), so its
verdicts come from the response store when generation asked them. The report names the lexicon (Hunspell
dictionary, wordfreq list and their versions) every non_word verdict used.
"""

import json
import logging
from contextlib import ExitStack
from pathlib import Path

import polars as pl
from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.core.languages import language
from clsd.generate import llm
from clsd.generate.llm_endpoint import open_endpoint
from clsd.validate import report as validation_report
from clsd.validate import judge as judges
from clsd.validate.validator import Validator
from clsd.validate.verdicts import SUSPECTS

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
        endpoint = stack.enter_context(open_endpoint(snakemake.config, snakemake.input.model, snakemake.threads, snakemake.log[0]))
        judge = judges.asking(endpoint, Path(snakemake.input.judge_prompt[0]).read_text(encoding="utf-8"), lang,
                              snakemake.config["validation"]["judge_per"], dataset=snakemake.wildcards.dataset)
    validator = Validator(lang, rules=settings["rules"], min_closeness=settings["min_closeness"], **judges.validator_judge(judge))
    flagged = validation_report.flag(distractors, targets, validator.check_item)

report = validation_report.summary(flagged, targets, meta.get("rejected", []), act, validation_report.MAX_EXAMPLES,
                                   meta.get("written", {}).get("unused", 0), meta.get("mended", []))
report |= {"dataset": snakemake.wildcards.dataset, "lang": lang, "language": language(lang).name, "kind": snakemake.params.kind,
           "settings": settings, "lexicon": validator.lexicon_name, "judge_unclear": validator.unclear["judge_unclear"],
           "judge": llm.judge_report(judge.generator) if judge else None}
for reason, count in report["in_file"].items():
    logging.warning("%d distractor(s) of %s (%s) %s: %s", count, snakemake.wildcards.dataset, lang, act, reason)
logging.info("validation: %s", json.dumps({k: v for k, v in report.items() if k != "examples"}))
Path(snakemake.output.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
kept, removed = validation_report.kept_and_removed(flagged, act)
summary = {key: report[key] for key in ("action", "written", "valid", "checked", "flagged", "removed", "reasked", *SUSPECTS,
                                       "mended", "reasons", "lexicon")}
write_table(kept, snakemake.output.distractors,
            {**meta, "validation": {**settings, **summary}, "failed": meta.get("failed", []) + removed})
