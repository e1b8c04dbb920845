"""Rule `annotation_report`: the annotators' verdicts of every sample against the sample design
(clsd.validate.annotation.review): share valid of each whole set with its interval, precision and recall of each
validator verdict, agreement; Markdown (method, disagreements under the table) and CSV."""

from pathlib import Path

from clsd.core import logs, render
from clsd.core.io import read_meta, read_table
from clsd.core.languages import language
from clsd.core.paths import keyed
from clsd.validate.annotation import review, sheets

logs.to_file(snakemake.log[0])
verdict_files = keyed(snakemake.input, "verdicts")
rows, notes = [], [review.METHOD, review.PRESENT_ONLY]
for (dataset, lang), design_path in keyed(snakemake.input, "design").items():
    design, sample_id = read_table(design_path), read_meta(design_path)["sample_id"]
    names = snakemake.params.annotators[dataset][lang]
    files = {names[int(index)]: sheets.read_verdicts(path, sample_id, design["item"].to_list())
             for (name, code, index), path in verdict_files.items() if (name, code) == (dataset, lang)}
    verdicts = review.long_verdicts(files)
    rows += review.rows(design, verdicts, list(files), dataset, language(lang).name)
    split = review.disagreements(design, verdicts)
    if split.height:
        notes.append(f"{dataset} ({language(lang).name}), sample {sample_id}: {split.height} item(s) with different verdicts: "
                     + "; ".join(f"{item} [{given}] {target} → {distractor}" for item, given, target, distractor in split.iter_rows()))
table = review.table(rows)
Path(snakemake.output.md).write_text(render.markdown(table, digits=3, notes=notes), encoding="utf-8")
table.write_csv(snakemake.output.csv)
