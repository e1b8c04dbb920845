"""Rule `parallel`: the dataset's selected parallel pairs, with item ids, source checksums and the language check of
every column. Local files arrive as inputs (`file|<lang>`, `csv`); a URL or a sacrebleu id as params."""

from clsd.core import logs
from clsd.core.io import write_table
from clsd.core.paths import keyed
from clsd.data import corpora

logs.to_file(snakemake.log[0])
spec = snakemake.params.dataset
source = corpora.located_source(spec["source"], {lang: path for (lang,), path in keyed(snakemake.input, "file").items()},
                                dict(snakemake.input.items()).get("csv"))
frame, meta = corpora.build_parallel(source, spec["select"], spec["languages"], snakemake.config["download_cache"])
write_table(frame, snakemake.output[0], {"dataset": snakemake.wildcards.dataset, "languages": spec["languages"], **meta})
