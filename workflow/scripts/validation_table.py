"""Rule `validation_table`: the validation reports of every dataset and language as one table (CSV: with the lexicon
of each row; Markdown: the closeness profile of what was kept, the lexicons and examples under the table)."""

import json
from pathlib import Path

from clsd.core import logs, render
from clsd.core.paths import keyed
from clsd.validate import reliability
from clsd.validate import report as validation_report

logs.to_file(snakemake.log[0])
reports = [json.loads(Path(path).read_text(encoding="utf-8")) for path in keyed(snakemake.input, "report").values()]
table = validation_report.table(reports)
notes = [validation_report.COLUMNS_NOTE]
langs = sorted({report["lang"] for report in reports})
notes += reliability.note(reliability.measure(langs), langs)
notes += ["Closeness profile of the kept distractors (results/tables/closeness_profile.md):",
          Path(snakemake.input.profile).read_text(encoding="utf-8").strip()]
notes += validation_report.lexicon_notes(reports) + ["Examples (target → distractor):"] + validation_report.example_paragraphs(reports, snakemake.params.examples)
Path(snakemake.output.md).write_text(render.markdown(table.drop("Lexicon"), digits=1, notes=notes), encoding="utf-8")
table.write_csv(snakemake.output.csv)
