"""Rule `rule_distractors`: the rule-based baseline's distractors for one dataset and language."""

import json
import logging
from pathlib import Path

from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.generate import rules_based

logs.to_file(snakemake.log[0])
lang = snakemake.wildcards.lang
parallel = read_table(snakemake.input.parallel)
items = list(zip(parallel["id"].to_list(), parallel[lang].to_list()))
table, failures = rules_based.generate(items, lang, rules_based.Lexicon.load(snakemake.input.lexicon), snakemake.params.label)
for failure in failures:
    logging.warning("item %s (%s) failed: %s", failure["id"], lang, failure["reason"])
report = {"items": len(items), "generated": len(items) - len(failures), "failed": failures, "generator": snakemake.params.label}
Path(snakemake.output.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
write_table(table, snakemake.output.distractors, {"dataset": snakemake.wildcards.dataset, "lang": lang,
                                                  "generator": snakemake.params.label, "failed": failures,
                                                  "parallel": read_meta(snakemake.input.parallel)})
