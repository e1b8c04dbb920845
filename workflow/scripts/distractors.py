"""Rule `distractors`: the distractor set of one dataset and language from a published CSV, in the generator-neutral
schema, with the language check of each distractor column."""

from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.data import corpora, langcheck

logs.to_file(snakemake.log[0])
origin, lang = snakemake.params.origin, snakemake.wildcards.lang
languages = origin["languages"]
reference = corpora.located_reference(origin["csv"], dict(snakemake.input.items()).get("csv"))
local, source = corpora.local_copy(reference, snakemake.config["download_cache"])
published = corpora.read_published_csv(local, languages)
if origin["kind"] == "published_csv":
    corpora.check_same_pairs(read_table(snakemake.input.parallel), published, languages, local)
columns = corpora.slot_columns(lang)[1:]
checked = langcheck.check_columns({column: (lang, published[column].to_list()) for column in columns}, local)
frame = corpora.distractors_from_published(published, lang, generator=origin["generator"], source=source)
write_table(
    frame,
    snakemake.output[0],
    {"dataset": snakemake.wildcards.dataset, "lang": lang, "generator": origin["generator"], "source": source.as_dict(),
     "items": published.height, "language_check": checked, "parallel": read_meta(snakemake.input.parallel)},
)
