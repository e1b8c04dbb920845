"""Parallel corpora and distractor sets: raw line-aligned files, sacrebleu test sets, published CLSD CSVs.

Every loader validates strictly (encoding, line counts, empty segments, columns) and raises
`InputError` naming the file, row and field, so bad data stops the run before any model is loaded.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from tenacity import (
    retry,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from clsd.core.errors import InputError
from clsd.core.io import sha256_file
from clsd.core.items import N_DISTRACTORS
from clsd.core.languages import language
from clsd.core.words import words
from clsd.data import alignment, langcheck

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Source:
    """One input file and its checksum, recorded in every output derived from it."""

    path: str
    sha256: str
    url: str | None = None

    @classmethod
    def of(cls, path: str | Path, url: str | None = None) -> "Source":
        return cls(str(path), sha256_file(path), url)

    def as_dict(self) -> dict[str, str]:
        record = {"path": self.path, "sha256": self.sha256}
        return record | ({"url": self.url} if self.url else {})


def decode_utf8(data: bytes, path: str | Path) -> str:
    """Decode bytes as strict UTF-8; on failure name the line holding the first bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start}; save the file as UTF-8)", path=path, line=line) from exc
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise InputError("NUL byte in the text (a binary or UTF-16 file?)", path=path, line=line)
    return text


def read_segments(path: str | Path) -> list[str]:
    """Lines of a line-aligned corpus file (one segment a line, final newline optional). Line ends are LF or CRLF, or
    CR alone (old Mac files, read as such and logged); a file without any line is an error."""
    path = Path(path)
    if not path.is_file():
        raise InputError("corpus file not found", path=path)
    text = decode_utf8(path.read_bytes(), path)
    if "\r" in text and "\n" not in text:
        log.info("%s: CR line ends (no LF): one segment per CR", path)
        text = text.replace("\r", "\n")
    if not text.strip():
        raise InputError("empty file: no lines to align", path=path)
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
    """Keep rows whose `lang` side has at least `min_words` words (clsd.core.words: whitespace tokens, or ICU word
    breaks for scripts without spaces), order kept.

    This is the CLSD selection rule: with lang="de", min_words=9 on the WMT19/WMT21 fr-de test sets
    it yields exactly the 1473 and 893 published items.
    """
    if lang not in frame.columns:
        raise InputError(f"selection language {lang!r} is not a language of this dataset", field="select.lang")
    counts = pl.Series([len(words(text, lang)) for text in frame[lang]], dtype=pl.Int64)
    return frame.filter(counts >= min_words)


def with_ids(frame: pl.DataFrame) -> pl.DataFrame:
    """Number the selected items 0..n-1 in order (the published sets' `Index`)."""
    return frame.with_row_index("id").with_columns(pl.col("id").cast(pl.Int64))


def is_url(path_or_url: str) -> bool:
    return path_or_url.startswith(("http://", "https://"))


def check_pin(path: Path, expected: str | None, origin: str) -> str:
    """The file's sha256; fails when a configured `sha256:` pin does not match."""
    actual = sha256_file(path)
    if expected is not None and actual != expected.lower():
        raise InputError(f"sha256 {actual} does not match the pinned sha256 {expected} (from {origin})", path=path)
    return actual


@retry(retry=retry_if_exception(lambda exc: isinstance(exc, OSError) and not isinstance(exc, urllib.error.HTTPError)
                                 or isinstance(exc, urllib.error.HTTPError) and exc.code >= 500),
       wait=wait_random_exponential(multiplier=2, max=30), stop=stop_after_attempt(4), reraise=True)
def download(url: str) -> bytes:
    """The bytes at `url`; connection faults, timeouts and server errors (5xx) are retried with backoff, a 4xx is not."""
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def fetch(path_or_url: str, cache_dir: str | Path, sha256: str | None = None) -> Path:
    """A local path for `path_or_url`, checked against an optional sha256 pin.

    URLs are downloaded once into `cache_dir`, under a folder named by the URL's own hash (two URLs with the
    same file name never share a cache entry); a download that does not match its pin is not kept.
    """
    if not is_url(path_or_url):
        path = Path(path_or_url)
        if not path.is_file():
            raise InputError("file not found", path=path)
        check_pin(path, sha256, path_or_url)
        return path
    url_key = hashlib.sha256(path_or_url.encode("utf-8")).hexdigest()[:16]
    target = Path(cache_dir).expanduser() / url_key / path_or_url.rsplit("/", 1)[-1]
    if target.exists():
        check_pin(target, sha256, path_or_url)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("downloading %s", path_or_url)
    try:
        data = download(path_or_url)
    except OSError as exc:
        raise InputError(f"could not download {path_or_url} ({exc})") from exc
    partial = target.with_suffix(target.suffix + ".part")
    partial.write_bytes(data)
    try:
        actual = check_pin(partial, sha256, path_or_url)
    except InputError:
        partial.unlink()
        raise
    partial.replace(target)
    if sha256 is None:
        log.info("%s has sha256 %s; pin it with `sha256:` in the config to detect a changed file", path_or_url, actual)
    return target


def original_column(lang: str) -> str:
    """Published-CSV column of a language's original sentences: the authors' name (French, German), else the code."""
    return language(lang).published or lang


def slot_columns(lang: str) -> list[str]:
    """Published-CSV columns of `lang` by slot: the original sentence (slot 0), then distractors 1..4."""
    return [original_column(lang)] + [f"{lang}_adv{k}" for k in range(1, N_DISTRACTORS + 1)]


def published_columns(languages: list[str]) -> list[str]:
    """The columns a published-format CLSD CSV must have for `languages`."""
    names = ["Index"] + [original_column(lang) for lang in languages]
    return names + [column for lang in languages for column in slot_columns(lang)[1:]]


#: Separators a CSV saved by a spreadsheet in another locale may use, by name.
SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def check_separator(header: list[str], path: str | Path) -> None:
    """A header read as one field that holds another separator: the file is not comma-separated (a spreadsheet in
    a locale whose decimal mark is the comma saves CSV with semicolons)."""
    if len(header) != 1:
        return
    found = [sep for sep in SEPARATORS if sep in header[0]]
    if found:
        sep = max(found, key=header[0].count)
        raise InputError(f"the header is one field: the file is separated by {SEPARATORS[sep]} ({sep!r}), not commas; save it "
                         f"as comma-separated CSV (header: {header[0][:60]!r})", path=path, line=1)


def csv_records(text: str, path: str | Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and (line, fields) records of a CSV text, `line` the record's first line; blank lines (every field
    empty) are skipped and logged. A record whose quoted field runs across lines (an unbalanced quote swallows the
    lines after it) stops here, naming the line the quote opens on."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    records: list[tuple[int, list[str]]] = []
    blank: list[int] = []
    end = 0
    try:
        for fields in reader:
            start, end = end + 1, reader.line_num
            if not any(field.strip() for field in fields):
                blank.append(start)
                continue
            spanning = next((i for i, field in enumerate(fields) if "\n" in field or "\r" in field), None)
            if spanning is not None:
                name = header[spanning] if header is not None and spanning < len(header) else f"column {spanning + 1}"
                raise InputError(f"a quoted field runs across lines {start} to {end}: a quote opened on line {start} is "
                                 "not closed where its sentence ends", path=path, line=start, field=name)
            if header is None:
                header = fields
                check_separator(header, path)
            elif len(fields) != len(header):
                raise InputError(f"{len(fields)} fields where the header has {len(header)}", path=path, line=start)
            else:
                records.append((start, fields))
    except csv.Error as exc:
        raise InputError(f"not a readable CSV ({exc})", path=path, line=reader.line_num) from exc
    if header is None:
        raise InputError("empty CSV file", path=path)
    if not records:
        raise InputError(f"header and no data rows (the header: {', '.join(header)})", path=path)
    if blank:
        shown = ", ".join(map(str, blank[:10])) + (", ..." if len(blank) > 10 else "")
        log.info("%s: %d blank line(s) skipped (line %s)", path, len(blank), shown)
    return header, records


def read_published_csv(path: str | Path, languages: list[str]) -> pl.DataFrame:
    """Read a CLSD CSV in the published format (Index, French, German, de_adv1..4, fr_adv1..4).

    The English-pivot files (`MT_M2M_*`) carry an extra unnamed leading column, which is dropped. A UTF-8
    byte-order mark and blank lines are not data and are skipped. `Index` must be 0..n-1 in file order:
    distractors and translations attach to items by it. Returns the required columns as strings, `Index`
    as an integer, `row` (1-based data row) and `line` (1-based line of the file).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("CSV file not found", path=path)
    text = decode_utf8(path.read_bytes(), path)
    if text.startswith("\ufeff"):
        log.info("%s: UTF-8 byte-order mark skipped", path)
        text = text[1:]
    header, records = csv_records(text, path)
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise InputError(f"column(s) {repeated} appear more than once in the header", path=path, line=1, field=repeated[0])
    required = published_columns(languages)
    missing = [name for name in required if name not in header]
    if missing:
        raise InputError(f"missing column(s) {missing}; found {header}", path=path, field=missing[0])
    extra = [name for name in header for lang in languages
             if re.fullmatch(rf"{re.escape(lang)}_adv[0-9]+", name) and name not in required]
    if extra:
        raise InputError(f"column(s) {extra} beyond the four distractors of each language: a CLSD item has exactly "
                         f"{N_DISTRACTORS} (remove them, or move them to another file)", path=path, line=1, field=extra[0])
    positions = {name: header.index(name) for name in required}
    for row, (line, fields) in enumerate(records, start=1):
        for name, position in positions.items():
            if not fields[position].strip():
                raise InputError("empty cell", path=path, row=row, line=line, field=name)
        index = fields[positions["Index"]].strip()
        if not re.fullmatch(r"-?[0-9]+", index):
            raise InputError(f"Index {index!r} is not an integer written with the digits 0-9", path=path, row=row, line=line, field="Index")
        if int(index) != row - 1:
            raise InputError(
                f"Index {index} where file order expects {row - 1}: Index must be 0..n-1 in file order",
                path=path, row=row, line=line, field="Index",
            )
    columns = {name: [fields[position] for _, fields in records] for name, position in positions.items()}
    frame = pl.DataFrame(columns, schema={name: pl.String for name in required})
    return frame.with_columns(
        pl.col("Index").cast(pl.Int64),
        pl.Series("row", range(1, len(records) + 1), dtype=pl.Int64),
        pl.Series("line", [line for line, _ in records], dtype=pl.Int64),
    )


def parallel_from_published(frame: pl.DataFrame, languages: list[str]) -> pl.DataFrame:
    """The parallel pairs of a published CSV: id (its Index), row, one column per language."""
    return frame.select(
        pl.col("Index").alias("id"),
        "row",
        *[pl.col(original_column(lang)).alias(lang) for lang in languages],
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
        column = original_column(lang)
        differs = (head[lang] != published[column]).arg_true()
        if len(differs):
            row = int(differs[0])
            raise InputError(
                f"text differs from the corpus item {row} ({head[lang][row]!r})",
                path=path,
                row=int(published["row"][row]),
                line=int(published["line"][row]),
                field=column,
            )


def located_reference(reference: dict[str, Any], local_path: str | None) -> dict[str, Any]:
    """A file reference ({path, sha256}) from a rule's param ({url, sha256}: a URL, or only the pin of a local file)
    and its input (the local file's path, None for a URL): paths on this machine are inputs, never params."""
    return {"path": local_path if local_path is not None else reference["url"], "sha256": reference["sha256"]}


def located_source(source: dict[str, Any], files: dict[str, str], csv: str | None) -> dict[str, Any]:
    """A dataset's source as build_parallel reads it, from its param (kind, ids, `reference` of a published CSV) and
    its inputs (line-aligned `files` by language, or the local published `csv`)."""
    located = {key: value for key, value in source.items() if key != "reference"}
    if source["kind"] == "files":
        located["files"] = files
    elif source["kind"] == "published_csv":
        located |= located_reference(source["reference"], csv)
    return located


def local_copy(reference: dict[str, Any], cache_dir: str | Path) -> tuple[Path, Source]:
    """The local file of a `{path, sha256}` reference (a path or a URL, downloaded once) and its Source record."""
    location = reference["path"]
    path = fetch(location, cache_dir, reference.get("sha256"))
    return path, Source.of(path, location if is_url(location) else None)


def build_parallel(
    source: dict[str, Any], select: dict[str, Any], languages: list[str], cache_dir: str | Path
) -> tuple[pl.DataFrame, dict]:
    """The parallel table of a dataset (id, row, one column per language) and its provenance record (with the
    language check of every column, clsd.data.langcheck)."""
    kind = source["kind"]
    limit = select.get("limit")
    if kind == "published_csv":
        path, origin = local_copy(source, cache_dir)
        frame = parallel_from_published(read_published_csv(path, languages), languages)
        checked = langcheck.check_columns({original_column(lang): (lang, frame[lang].to_list()) for lang in languages}, path)
        frame = frame.head(limit) if limit else frame
        return frame, {"kind": kind, "sources": [origin.as_dict()], "selection": {"limit": limit}, "language_check": checked}
    files = source["files"] if kind == "files" else sacrebleu_files(source["test_set"], source["langpair"])
    missing = [lang for lang in languages if lang not in files]
    if missing:
        raise InputError(f"no corpus file for language(s) {missing}", field="source.files")
    raw, sources = load_parallel_files({lang: files[lang] for lang in languages})
    checked = {
        str(files[lang]): report
        for lang in languages
        for report in langcheck.check_columns({lang: (lang, raw[lang].to_list())}, files[lang]).values()
    }
    aligned = alignment.check_aligned({lang: raw[lang].to_list() for lang in languages}, {lang: files[lang] for lang in languages})
    frame = with_ids(select_min_words(raw, select["lang"], select["min_words"]))
    frame = frame.head(limit) if limit else frame
    log.info("selected %d of %d pairs (%s >= %d words)", frame.height, raw.height, select["lang"], select["min_words"])
    if frame.height == 0:
        log.warning("no pair has %d or more %s words: nothing to score (lower select.min_words?)", select["min_words"], select["lang"])
    meta = {
        "kind": kind,
        "sources": [s.as_dict() for s in sources],
        "selection": {**select, "n_raw": raw.height, "n_selected": frame.height},
        "language_check": checked,
        "alignment": aligned,
    }
    return frame.select("id", "row", *languages), meta
