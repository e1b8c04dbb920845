"""Rule `convert_ct2`: convert the translation model for CTranslate2 (users only name the HF model)."""

import logging

from clsd import logs
from clsd.translate import convert_to_ctranslate2

logs.to_file(snakemake.log[0])
path = convert_to_ctranslate2(snakemake.params.model, snakemake.output[0], snakemake.params.quantization)
logging.info("converted %s to %s (%s)", snakemake.params.model, path, snakemake.params.quantization)
