"""Rule `distractors`: the distractor set of one dataset and language, in the generator-neutral schema."""

from clsd.core import logs

from clsd.data import corpora, langcheck
from clsd.core.io import read_meta, read_table, write_table

logs.to_file(snakemake.log[0])
origin, lang = snakemake.params.origin, snakemake.wildcards.lang
languages = origin["languages"]
local, source = corpora.local_copy(origin["csv"], snakemake.config["download_cache"])
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
