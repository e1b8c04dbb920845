"""The pivot view: translate every distinct text of a dataset once into the pivot language (English by default,
`pivot.language`), then rebuild the candidate table in that language.

Backends: `transformers` (the paper's M2M100, length-sorted batches, beam or greedy), `ctranslate2` (the
same model converted by `ct2-transformers-converter`, the fast path) and `published` (the English files
released with the CLSD sets). Texts already in the pivot language (the English side of a de-en pair) are used
as they are, not translated. Every translation row is keyed by the sha256 of the source text; the translated
text's column is named by the pivot language's code.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import polars as pl
from tqdm import tqdm

from clsd.core.anchors import anchor_tokens, anchors
from clsd.core.device import resolve_device
from clsd.core.errors import InputError
from clsd.core.keys import text_key
from clsd.data.corpora import slot_columns

log = logging.getLogger(__name__)

#: M2M100-style language tokens (`__en__`); none may survive into a translation.
LANGUAGE_TOKEN = re.compile(r"__[a-z]{2,3}__")


@dataclass(frozen=True)
class TranslatorSpec:
    """What a translation depends on, recorded with every translation (`model` is the hub id or the configured
    display name of a local model, whose content its checksum sentinel stands for; never a path on this machine)."""

    backend: str
    model: str
    target_lang: str
    beam_size: int = 5
    batch_size: int = 16
    max_new_tokens: int = 256
    compute_type: str = "int8"

    @classmethod
    def from_config(cls, pivot: dict[str, Any]) -> "TranslatorSpec":
        return cls(
            backend=pivot["backend"],
            model=pivot["model"],
            target_lang=pivot["language"],
            beam_size=pivot["beam_size"],
            batch_size=pivot["batch_size"],
            max_new_tokens=pivot["max_new_tokens"],
            compute_type=pivot["quantization"],
        )


def text_id(text: str) -> str:
    """Key of a translation row: sha256 of the source text (an embedding key without a prefix)."""
    return text_key("", text)


def keyed(table: pl.DataFrame, pivot: str) -> pl.DataFrame:
    """A (lang, text, <pivot>) table as the translation file's columns, keyed by `text_id`."""
    return table.select(pl.col("text").map_elements(text_id, return_dtype=pl.String).alias("text_id"), "lang", "text", pivot)


def length_sorted_batches(texts: list[str], batch_size: int) -> list[list[int]]:
    """Indices of `texts` in batches of similar length (longest first), so padding stays small."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def run_batches(texts: list[str], batch_size: int, translate_batch: Callable[[list[str]], list[str]], desc: str) -> list[str]:
    """Translate `texts` in length-sorted batches, back in input order; a batch answering with another
    number of outputs than its inputs stops the job (a silent shift or an empty translation otherwise)."""
    results: list[str] = [""] * len(texts)
    for number, batch in enumerate(tqdm(length_sorted_batches(texts, batch_size), desc=desc, unit="batch"), start=1):
        outputs = translate_batch([texts[i] for i in batch])
        if len(outputs) != len(batch):
            raise RuntimeError(
                f"{desc}: batch {number} ({len(batch)} texts, first {texts[batch[0]]!r}) returned {len(outputs)} translations"
            )
        for index, english in zip(batch, outputs):
            results[index] = english
    return results


def clean(text: str) -> str:
    """Drop any language token a model emitted and normalise spaces."""
    return " ".join(LANGUAGE_TOKEN.sub(" ", text).split())


class TransformersTranslator:
    """Seq2seq translation with `transformers` (M2M100 and models with the same language-token API)."""

    def __init__(self, spec: TranslatorSpec, device: str, load_from: str | None = None) -> None:
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        self.spec = spec
        self.device = resolve_device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(load_from or spec.model)
        self.model = AutoModelForSeq2SeqLM.from_pretrained(load_from or spec.model).to(self.device).eval()
        self.torch = torch

    def translate(self, texts: list[str], src_lang: str) -> list[str]:
        self.tokenizer.src_lang = src_lang
        target = self.tokenizer.get_lang_id(self.spec.target_lang)

        def batch(chunk: list[str]) -> list[str]:
            encoded = self.tokenizer(chunk, return_tensors="pt", padding=True).to(self.device)
            with self.torch.inference_mode():
                generated = self.model.generate(
                    **encoded,
                    forced_bos_token_id=target,
                    num_beams=self.spec.beam_size,
                    do_sample=False,
                    max_new_tokens=self.spec.max_new_tokens,
                )
            return [clean(t) for t in self.tokenizer.batch_decode(generated, skip_special_tokens=True)]

        return run_batches(texts, self.spec.batch_size, batch, f"{src_lang}→{self.spec.target_lang}")


class CTranslate2Translator:
    """The same model converted to CTranslate2; tokenisation by the original tokenizer."""

    def __init__(self, spec: TranslatorSpec, device: str, converted: str | Path, load_from: str | None = None) -> None:
        import ctranslate2
        from transformers import AutoTokenizer

        self.spec = spec
        self.tokenizer = AutoTokenizer.from_pretrained(load_from or spec.model)
        ct2_device = "cuda" if resolve_device(device) == "cuda" else "cpu"
        self.translator = ctranslate2.Translator(str(converted), device=ct2_device, compute_type=spec.compute_type)

    def translate(self, texts: list[str], src_lang: str) -> list[str]:
        self.tokenizer.src_lang = src_lang
        prefix = [self.tokenizer.convert_ids_to_tokens(self.tokenizer.get_lang_id(self.spec.target_lang))]

        def batch(chunk: list[str]) -> list[str]:
            sources = [self.tokenizer.convert_ids_to_tokens(self.tokenizer.encode(t)) for t in chunk]
            results = self.translator.translate_batch(
                sources,
                target_prefix=[prefix] * len(chunk),
                beam_size=self.spec.beam_size,
                max_decoding_length=self.spec.max_new_tokens,
            )
            # CTranslate2 returns the target-language token first: drop it.
            return [
                clean(self.tokenizer.decode(self.tokenizer.convert_tokens_to_ids(r.hypotheses[0][1:]), skip_special_tokens=True))
                for r in results
            ]

        return run_batches(texts, self.spec.batch_size, batch, f"{src_lang}→{self.spec.target_lang}")


def convert_to_ctranslate2(model: str, output_dir: str | Path, quantization: str) -> Path:
    """Convert a transformers model (HF name or folder) with CTranslate2's converter."""
    from ctranslate2.converters import TransformersConverter

    return Path(TransformersConverter(model).convert(str(output_dir), quantization=quantization, force=True))


def distinct_by_language(candidates: pl.DataFrame) -> pl.DataFrame:
    """Each (lang, text) once, in first-seen order: a text is translated once per dataset."""
    return candidates.select("lang", "text").unique(maintain_order=True)


def translate_candidates(candidates: pl.DataFrame, translate: Callable[[list[str], str], list[str]], pivot: str) -> pl.DataFrame:
    """Translation table (text_id, lang, text, <pivot>) of every distinct text, one language at a time; texts
    already in the pivot language are kept as they are."""
    distinct = distinct_by_language(candidates)
    parts = []
    for (lang,), group in distinct.group_by("lang", maintain_order=True):
        texts = group["text"].to_list()
        if lang == pivot:
            log.info("%d %s texts are already in the pivot language: kept as they are", len(texts), lang)
            translated = texts
        else:
            translated = translate(texts, lang)
        if len(translated) != len(texts):
            raise RuntimeError(f"{lang}: {len(texts)} texts but {len(translated)} translations")
        parts.append(pl.DataFrame({"lang": lang, "text": texts, pivot: translated}, schema={"lang": pl.String, "text": pl.String, pivot: pl.String}))
    if not parts:
        return pl.DataFrame(schema={"text_id": pl.String, "lang": pl.String, "text": pl.String, pivot: pl.String})
    return keyed(pl.concat(parts), pivot)


#: Share of anchored items whose translation keeps an anchor, below which the English rows are out of order
#: (aligned published files keep nearly all; shifted by one row, about a fifth).
MIN_ANCHOR_SHARE = 0.8
#: Fewer anchored items than this make the order check meaningless; it is skipped (logged).
MIN_ANCHORED_ITEMS = 5


def check_same_items(original: pl.DataFrame, english: pl.DataFrame, languages: list[str], original_path: str | Path, path: str | Path) -> None:
    """Fail unless a published English-pivot file translates exactly the items of its dataset, in its order.

    Both files' `Index` is 0..n-1 in file order (checked when read), so equal counts mean equal Index. The
    order of the originals is checked through anchors: names and numbers found in both originals of an
    item must appear in the English of those originals; a file shifted by even one row loses most of them.
    """
    if english.height != original.height:
        raise InputError(f"has {english.height} items but its dataset {original_path} has {original.height}", path=path)
    columns = [slot_columns(lang)[0] for lang in languages]
    anchored, missing = 0, []
    for row in range(original.height):
        shared = anchors(*(original[c][row] for c in columns))
        if not shared:
            continue
        anchored += 1
        translated = anchor_tokens(" ".join(english[c][row] for c in columns))
        if not shared & translated:
            missing.append((row, sorted(shared)))
    if anchored < MIN_ANCHORED_ITEMS:
        log.info("%s: only %d items with names or numbers; order against %s not checked", path, anchored, original_path)
        return
    share = 1 - len(missing) / anchored
    log.info("%s: %d of %d anchored items keep their names/numbers in English (%.0f%%)", path, anchored - len(missing), anchored, 100 * share)
    if share < MIN_ANCHOR_SHARE:
        row, shared = missing[0]
        raise InputError(
            f"rows are not in the order of {original_path}: only {anchored - len(missing)} of {anchored} items keep "
            f"the names/numbers of their originals (first: {shared} missing)",
            path=path, row=int(english["row"][row]), line=int(english["line"][row]), field=columns[0],
        )


def published_translations(candidates: pl.DataFrame, published: pl.DataFrame, languages: list[str], path: str | Path,
                           pivot: str) -> pl.DataFrame:
    """Translation table from a published pivot CSV (same layout, every cell in the pivot language: English for the
    authors' files, which the config check enforces)."""
    cells = []
    for lang in languages:
        for slot, column in enumerate(slot_columns(lang)):
            cells.append(
                published.select(pl.col("Index").alias("id"), pl.lit(lang).alias("lang"),
                                 pl.lit(slot, dtype=pl.Int64).alias("slot"), pl.col(column).alias(pivot))
            )
    english = pl.concat(cells)
    joined = candidates.join(english, on=["id", "lang", "slot"], how="left")
    missing = joined.filter(pl.col(pivot).is_null())
    if missing.height:
        first = missing.row(0, named=True)
        raise InputError(f"no English for item {first['id']} ({first['lang']}, slot {first['slot']})", path=path)
    return keyed(joined.select("lang", "text", pivot).unique(subset=["lang", "text"], keep="first", maintain_order=True), pivot)


def pivot_candidates(candidates: pl.DataFrame, translations: pl.DataFrame, pivot: str) -> pl.DataFrame:
    """The candidate table with every text replaced by its translation into the pivot language (same ids, langs,
    slots: `lang` stays the language the text was written in)."""
    joined = candidates.join(translations.select("lang", "text", pivot), on=["lang", "text"], how="left")
    missing = joined.filter(pl.col(pivot).is_null())
    if missing.height:
        raise InputError(f"no translation for {missing['text'][0]!r} ({missing['lang'][0]})")
    return joined.select("id", "lang", "slot", pl.col(pivot).alias("text")).sort("id", "lang", "slot")
