"""Rule `parallel`: the dataset's selected parallel pairs, with item ids and source checksums."""

from clsd.core import logs

from clsd.data import corpora
from clsd.core.io import write_table

logs.to_file(snakemake.log[0])
spec = snakemake.params.dataset
frame, meta = corpora.build_parallel(spec["source"], spec["select"], spec["languages"], snakemake.config["download_cache"])
write_table(frame, snakemake.output[0], {"dataset": snakemake.wildcards.dataset, "languages": spec["languages"], **meta})
