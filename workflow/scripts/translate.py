"""Rule `translate`: every distinct text of a dataset translated once into the pivot language."""

import logging

from clsd import datasets, logs, translate
from clsd.config import translation_model
from clsd.core.provenance import package_versions
from clsd.io import read_meta, read_table, write_table

logs.to_file(snakemake.log[0])
spec = translate.TranslatorSpec(**snakemake.params.spec)
candidates = read_table(snakemake.input.texts)
if spec.backend == "published":
    languages, cache = snakemake.params.languages, snakemake.config["download_cache"]
    path, source = datasets.local_copy(snakemake.params.pivot_csv, cache)
    english = datasets.read_published_csv(path, languages)
    original_path, original = datasets.local_copy(snakemake.params.published, cache)
    translate.check_same_items(datasets.read_published_csv(original_path, languages), english, languages, original_path, path)
    table = translate.published_translations(candidates, english, languages, path, spec.target_lang)
    provenance = {"source": source.as_dict(), "originals": original.as_dict()}
else:
    load_from, device = translation_model(snakemake.config), snakemake.config["device"]
    if spec.backend == "ctranslate2":
        translator = translate.CTranslate2Translator(spec, device, snakemake.input.converted[0], load_from)
    else:
        translator = translate.TransformersTranslator(spec, device, load_from)
    table = translate.translate_candidates(candidates, translator.translate, spec.target_lang)
    provenance = {}
logging.info("%d distinct texts in the pivot language %s (%s, %s)", table.height, spec.target_lang, spec.backend, spec.model)
write_table(
    table,
    snakemake.output[0],
    {"translator": snakemake.params.spec, **provenance, "texts": read_meta(snakemake.input.texts), "packages": package_versions()},
)
