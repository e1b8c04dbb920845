"""Rule `translate`: every distinct text of a dataset translated once into the pivot language."""

import logging

from clsd.translate.jobs import translation_model
from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.core.provenance import package_versions
from clsd.data import corpora
from clsd.translate import pivot

logs.to_file(snakemake.log[0])
spec = pivot.TranslatorSpec(**snakemake.params.spec)
candidates = read_table(snakemake.input.texts)
if spec.backend == "published":
    languages, cache, files, local = snakemake.params.languages, snakemake.config["download_cache"], snakemake.params.files, dict(snakemake.input.items())
    path, source = corpora.local_copy(corpora.located_reference(files["pivot_csv"], local.get("pivot_csv")), cache)
    english = corpora.read_published_csv(path, languages)
    original_path, original = corpora.local_copy(corpora.located_reference(files["published"], local.get("published")), cache)
    pivot.check_same_items(corpora.read_published_csv(original_path, languages), english, languages, original_path, path)
    table = pivot.published_translations(candidates, english, languages, path, spec.target_lang)
    provenance = {"source": source.as_dict(), "originals": original.as_dict()}
else:
    load_from, device = translation_model(snakemake.config), snakemake.config["device"]
    if spec.backend == "ctranslate2":
        translator = pivot.CTranslate2Translator(spec, device, snakemake.input.converted[0], load_from)
    else:
        translator = pivot.TransformersTranslator(spec, device, load_from)
    table = pivot.translate_candidates(candidates, translator.translate, spec.target_lang)
    provenance = {}
logging.info("%d distinct texts in the pivot language %s (%s, %s)", table.height, spec.target_lang, spec.backend, spec.model)
write_table(
    table,
    snakemake.output[0],
    {"translator": snakemake.params.spec, **provenance, "texts": read_meta(snakemake.input.texts), "packages": package_versions()},
)
