"""Rule `folder_checksums`: the checksum sentinel of a local folder (a model, the translator, Stanza's models)."""

from clsd.config import local_folders
from clsd.core import logs
from clsd.core.sentinel import write_sentinel

logs.to_file(snakemake.log[0])
folder = local_folders(snakemake.config)[(snakemake.wildcards.kind, snakemake.wildcards.name)]
write_sentinel(folder, snakemake.output[0])
