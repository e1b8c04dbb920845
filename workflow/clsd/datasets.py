"""Parallel corpora and distractor sets: raw line-aligned files, sacrebleu test sets, published CLSD CSVs.

Every loader validates strictly (encoding, line counts, empty segments, columns) and raises
`InputError` naming the file, row and field, so bad data stops the run before any model is loaded.
"""

from __future__ import annotations

import io
import logging
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from clsd.errors import InputError
from clsd.io import sha256_file

log = logging.getLogger(__name__)

#: English names of languages, as printed in tables.
LANGUAGE_NAMES = {"fr": "French", "de": "German", "en": "English"}
#: Column names of the published CLSD CSVs (PAPER.md), by ISO language code.
PUBLISHED_LANG_COLUMNS = {"fr": "French", "de": "German"}
#: Number of distractors per item and language in the published sets and the paper's prompt.
N_DISTRACTORS = 4


@dataclass(frozen=True)
class Source:
    """One input file and its checksum, recorded in every output derived from it."""

    path: str
    sha256: str

    @classmethod
    def of(cls, path: str | Path) -> "Source":
        return cls(str(path), sha256_file(path))

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "sha256": self.sha256}


def decode_utf8(data: bytes, path: str | Path) -> str:
    """Decode bytes as strict UTF-8; on failure name the line holding the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", path=path, row=line) from exc


def read_segments(path: str | Path) -> list[str]:
    """Lines of a line-aligned corpus file (one segment a line, final newline optional)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("corpus file not found", path=path)
    text = decode_utf8(path.read_bytes(), path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def load_parallel_files(files: dict[str, str | Path]) -> tuple[pl.DataFrame, list[Source]]:
    """Read line-aligned files (one per language) into a table with `row` (1-based line) and a column per language."""
    columns: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    for lang, path in files.items():
        segments = read_segments(path)
        for number, segment in enumerate(segments, start=1):
            if not segment.strip():
                raise InputError("empty segment", path=path, row=number, field=lang)
        columns[lang] = segments
        counts[str(path)] = len(segments)
    if len(set(counts.values())) > 1:
        detail = ", ".join(f"{p}: {n} lines" for p, n in counts.items())
        raise InputError(f"line counts differ between aligned files ({detail})")
    n_rows = next(iter(counts.values()))
    frame = pl.DataFrame({"row": list(range(1, n_rows + 1)), **columns})
    return frame, [Source.of(path) for path in files.values()]


def sacrebleu_files(test_set: str, langpair: str) -> dict[str, str]:
    """Download (or reuse sacrebleu's cache of) a WMT test set; returns {lang: plain-text path}."""
    from sacrebleu import utils

    src_lang, ref_lang = langpair.split("-")
    try:
        source = utils.get_source_file(test_set, langpair)
        references = utils.get_reference_files(test_set, langpair)
    except Exception as exc:  # sacrebleu raises bare Exceptions and SystemExit-free errors when offline
        raise InputError(
            f"sacrebleu could not provide test set {test_set!r} for {langpair!r} ({exc}); "
            "without network use a `files` source with local copies"
        ) from exc
    return {src_lang: source, ref_lang: references[0]}


def select_min_words(frame: pl.DataFrame, lang: str, min_words: int) -> pl.DataFrame:
    """Keep rows whose `lang` side has at least `min_words` whitespace-separated words, order kept.

    This is the CLSD selection rule: with lang="de", min_words=9 on the WMT19/WMT21 fr-de test sets
    it yields exactly the 1473 and 893 published items.
    """
    if lang not in frame.columns:
        raise InputError(f"selection language {lang!r} is not a language of this dataset", field="select.lang")
    counts = pl.Series([len(text.split()) for text in frame[lang]], dtype=pl.Int64)
    return frame.filter(counts >= min_words)


def with_ids(frame: pl.DataFrame) -> pl.DataFrame:
    """Number the selected items 0..n-1 in order (the published sets' `Index`)."""
    return frame.with_row_index("id").with_columns(pl.col("id").cast(pl.Int64))


def fetch(path_or_url: str, cache_dir: str | Path) -> Path:
    """A local path for `path_or_url`: URLs are downloaded once into `cache_dir`."""
    if not path_or_url.startswith(("http://", "https://")):
        return Path(path_or_url)
    target = Path(cache_dir) / path_or_url.rsplit("/", 1)[-1]
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        log.info("downloading %s", path_or_url)
        try:
            with urllib.request.urlopen(path_or_url, timeout=60) as response:
                data = response.read()
        except OSError as exc:
            raise InputError(f"could not download {path_or_url} ({exc})") from exc
        partial = target.with_suffix(target.suffix + ".part")
        partial.write_bytes(data)
        partial.replace(target)
    return target


def slot_columns(lang: str) -> list[str]:
    """Published-CSV columns of `lang` by slot: the original sentence (slot 0), then distractors 1..4."""
    return [PUBLISHED_LANG_COLUMNS[lang]] + [f"{lang}_adv{k}" for k in range(1, N_DISTRACTORS + 1)]


def published_columns(languages: list[str]) -> list[str]:
    """The columns a published-format CLSD CSV must have for `languages`."""
    names = ["Index"] + [PUBLISHED_LANG_COLUMNS[lang] for lang in languages]
    return names + [column for lang in languages for column in slot_columns(lang)[1:]]


def read_published_csv(path: str | Path, languages: list[str]) -> pl.DataFrame:
    """Read a CLSD CSV in the published format (Index, French, German, de_adv1..4, fr_adv1..4).

    The English-pivot files (`MT_M2M_*`) carry an extra unnamed leading column, which is dropped.
    Returns the required columns as strings plus `row` (1-based data row).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("CSV file not found", path=path)
    text = decode_utf8(path.read_bytes(), path)
    try:
        frame = pl.read_csv(io.StringIO(text), infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"not a readable CSV ({exc})", path=path) from exc
    required = published_columns(languages)
    missing = [name for name in required if name not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}; found {frame.columns}", path=path, field=missing[0])
    frame = frame.select(required).with_row_index("row", offset=1).with_columns(pl.col("row").cast(pl.Int64))
    for name in required:
        empty = frame.filter(pl.col(name).is_null() | (pl.col(name).str.strip_chars() == ""))
        if empty.height:
            raise InputError("empty cell", path=path, row=int(empty["row"][0]), field=name)
    bad_index = frame.filter(pl.col("Index").cast(pl.Int64, strict=False).is_null())
    if bad_index.height:
        raise InputError("Index is not an integer", path=path, row=int(bad_index["row"][0]), field="Index")
    return frame.with_columns(pl.col("Index").cast(pl.Int64))


def parallel_from_published(frame: pl.DataFrame, languages: list[str]) -> pl.DataFrame:
    """The parallel pairs of a published CSV: id (its Index), row, one column per language."""
    return frame.select(
        pl.col("Index").alias("id"),
        "row",
        *[pl.col(PUBLISHED_LANG_COLUMNS[lang]).alias(lang) for lang in languages],
    )


def distractors_from_published(
    frame: pl.DataFrame, lang: str, *, generator: str, source: Source
) -> pl.DataFrame:
    """Long distractor table (id, lang, k, text, generator, source) for `lang` from a published CSV."""
    parts = [
        frame.select(
            pl.col("Index").alias("id"),
            pl.lit(lang).alias("lang"),
            pl.lit(k, dtype=pl.Int64).alias("k"),
            pl.col(slot_columns(lang)[k]).alias("text"),
        )
        for k in range(1, N_DISTRACTORS + 1)
    ]
    return (
        pl.concat(parts)
        .sort("id", "k")
        .with_columns(pl.lit(generator).alias("generator"), pl.lit(source.path).alias("source"))
    )


def check_same_pairs(parallel: pl.DataFrame, published: pl.DataFrame, languages: list[str], path: str | Path) -> None:
    """Fail unless a published CSV holds the first pairs of `parallel` (all of them, or a head), in order.

    A head (e.g. the first 50 items of a published set) is accepted so that a selection from the raw corpus
    can be checked against a sample; the items beyond it get no distractors and are left out of scoring.
    """
    if published.height > parallel.height:
        raise InputError(
            f"has {published.height} items but the dataset's corpus selection has {parallel.height}", path=path
        )
    if published.height < parallel.height:
        log.warning("%s covers the first %d of %d selected items", path, published.height, parallel.height)
    head = parallel.head(published.height)
    for lang in languages:
        column = PUBLISHED_LANG_COLUMNS[lang]
        differs = (head[lang] != published[column]).arg_true()
        if len(differs):
            row = int(differs[0])
            raise InputError(
                f"text differs from the corpus item {row} ({head[lang][row]!r})",
                path=path,
                row=int(published["row"][row]),
                field=column,
            )


def build_parallel(spec: dict[str, Any], languages: list[str], cache_dir: str | Path) -> tuple[pl.DataFrame, dict]:
    """The parallel table of a dataset (id, row, one column per language) and its provenance record."""
    source = spec["source"]
    kind = source["kind"]
    limit = spec.get("select", {}).get("limit")
    if kind == "published_csv":
        path = fetch(source["path"], cache_dir)
        frame = parallel_from_published(read_published_csv(path, languages), languages)
        frame = frame.head(limit) if limit else frame
        return frame, {"kind": kind, "sources": [Source.of(path).as_dict()], "selection": {"limit": limit}}
    files = source["files"] if kind == "files" else sacrebleu_files(source["test_set"], source["langpair"])
    missing = [lang for lang in languages if lang not in files]
    if missing:
        raise InputError(f"no corpus file for language(s) {missing}", field="source.files")
    raw, sources = load_parallel_files({lang: files[lang] for lang in languages})
    select = spec["select"]
    frame = with_ids(select_min_words(raw, select["lang"], select["min_words"]))
    frame = frame.head(limit) if limit else frame
    log.info("selected %d of %d pairs (%s >= %d words)", frame.height, raw.height, select["lang"], select["min_words"])
    meta = {
        "kind": kind,
        "sources": [s.as_dict() for s in sources],
        "selection": {**select, "n_raw": raw.height, "n_selected": frame.height},
    }
    return frame.select("id", "row", *languages), meta
