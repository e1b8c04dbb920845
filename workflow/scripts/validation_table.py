"""Rule `validation_table`: the validation reports of every dataset and language as one table with examples."""

import json
from pathlib import Path

from clsd import logs, render, validation_report

logs.to_file(snakemake.log[0])
reports = [json.loads(Path(path).read_text(encoding="utf-8")) for path in snakemake.input]
table = validation_report.table(reports)
notes = ["Checked = kept + caught; Kept (%) of checked. Examples (target → distractor):"] + validation_report.example_paragraphs(reports)
Path(snakemake.output.md).write_text(render.markdown(table, digits=1, notes=notes), encoding="utf-8")
table.write_csv(snakemake.output.csv)
