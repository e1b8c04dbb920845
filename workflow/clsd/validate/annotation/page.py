"""The annotation page: one self-contained HTML file (inline CSS and JavaScript, no server, no network) showing
source, true target and distractor side by side with their word differences highlighted. Keys record a verdict,
progress is kept in the browser's localStorage under the sample id, and a button downloads the verdicts as CSV
(sample_id, item, verdict, comment), the layout `clsd.validate.annotation.sheets.read_verdicts` reads back. The
validator's verdict, the generator and the weights are never in the page."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from clsd.core.languages import language
from clsd.validate.annotation.diff import word_diff

DATA_FILES = ("workflow/clsd/validate/annotation/page.html",)
TEMPLATE = Path(__file__).with_name("page.html")


def download_name(dataset: str, lang: str, sample_id: str) -> str:
    """The file name the page downloads: `annotation-<dataset>-<lang>-<sample id>.csv`."""
    return f"annotation-{dataset}-{lang}-{sample_id}.csv"


def render(sample: pl.DataFrame, sample_id: str, *, dataset: str, lang: str, source_lang: str) -> str:
    """The page of one sample: its items in the sample's order, texts as JSON inside a non-executed script element
    (`<` escaped, so no text can end it) and drawn with textContent, never as HTML."""
    items = []
    for item, source, target, distractor in sample.select("item", "source", "target", "distractor").iter_rows():
        target_pieces, distractor_pieces = word_diff(target, distractor, lang)
        items.append({"item": item, "source": source, "target": target_pieces, "distractor": distractor_pieces})
    data = {"sample_id": sample_id, "file_name": download_name(dataset, lang, sample_id), "items": items}
    title = f"{dataset}, {language(source_lang).name} → {language(lang).name}"
    payload = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
    return TEMPLATE.read_text(encoding="utf-8").replace("__TITLE__", title.replace("&", "&amp;").replace("<", "&lt;")).replace("__DATA__", payload)
