"""Rule `convert_ct2`: convert the translation model for CTranslate2 (users only name the HF model)."""

import logging

from clsd.translate.jobs import translation_model
from clsd.core import logs
from clsd.translate.pivot import convert_to_ctranslate2

logs.to_file(snakemake.log[0])
model = translation_model(snakemake.config)
path = convert_to_ctranslate2(model, snakemake.output[0], snakemake.params.quantization)
logging.info("converted %s to %s (%s)", model, path, snakemake.params.quantization)
