"""Rule `generator_check`: for each pair of datasets with the same items and distractors by two generators, every
model's P@1 under both on the items both score, the paired difference with its interval, whether the models rank
alike, and the two closeness profiles side by side (clsd.report.generator_check, clsd.analysis.profile)."""

from pathlib import Path

import polars as pl
from clsd.analysis import profile
from clsd.core import logs, render
from clsd.core.io import read_meta, read_table
from clsd.core.languages import names
from clsd.core.paths import keyed
from clsd.report import generator_check

logs.to_file(snakemake.log[0])
scores = {(model, dataset): path for (_, model, dataset), path in keyed(snakemake.input, "scores").items()}
candidates = {dataset: path for (dataset,), path in keyed(snakemake.input, "candidates").items()}
tables, notes = [], []
for spec in snakemake.params.pairs:
    pair = generator_check.Pair(spec["reference"], spec["candidate"], spec["reference_label"], spec["candidate_label"])
    sets = {name: read_table(candidates[name]) for name in (pair.reference, pair.candidate)}
    generator_check.check_same_items(sets[pair.reference], sets[pair.candidate], pair)
    items = {name: read_meta(candidates[name])["items"] for name in sets}
    frames = {label: (pl.read_parquet(scores[(model, pair.reference)]), pl.read_parquet(scores[(model, pair.candidate)]))
              for model, label in snakemake.params.models.items()}
    table = generator_check.check_table(pair, frames, spec["directions"], items)
    tables.append(table)
    notes += generator_check.ranking_notes(table)
    reference = profile.reference_of(snakemake.params.reference, sets, {pair.reference: pair.reference_label}) \
        or profile.Reference(pair.reference_label, profile.profiles(sets[pair.reference]))
    profiles = profile.profile_table({label: profile.profiles(sets[name]) for name, label in
                                      ((pair.reference, pair.reference_label), (pair.candidate, pair.candidate_label))},
                                     reference, names())
    notes += [f"Closeness profiles of {pair.reference_label} and {pair.candidate_label} (% of kept distractors per "
              "Levenshtein ratio to the target):", render.markdown(profiles, digits=2).strip()]
table = pl.concat(tables)
notes = ["P@1 in percent on the items both sets score (n); Difference: candidate minus reference, in points, with "
         "Newcombe's paired 95% interval; McNemar p: exact, two-sided; unscored: items a set leaves out (fewer than "
         "four valid distractors), counted apart."] + notes
Path(snakemake.output.md).write_text(render.markdown(table, digits=1, notes=notes), encoding="utf-8")
table.write_csv(snakemake.output.csv)
