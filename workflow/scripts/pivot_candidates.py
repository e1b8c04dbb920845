"""Rule `pivot_candidates`: the candidate table of the pivot view (every text replaced by its translation)."""

from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.translate import pivot

logs.to_file(snakemake.log[0])
translator = read_meta(snakemake.input.translations)["translator"]
table = pivot.pivot_candidates(read_table(snakemake.input.texts), read_table(snakemake.input.translations), translator["target_lang"])
write_table(
    table,
    snakemake.output[0],
    {"view": "pivot", "pivot_language": translator["target_lang"], "parallel": read_meta(snakemake.input.texts)["parallel"],
     "translator": translator},
)
