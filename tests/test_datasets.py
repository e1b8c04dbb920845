"""Corpora: the CLSD selection rule on the real WMT files, published CSV import, and bad-input errors."""

from pathlib import Path

import polars as pl
import pytest

from clsd import datasets
from clsd.errors import InputError

from conftest import PUBLISHED, ROOT, WMT, require_shared


def raw_wmt(year: str) -> dict[str, Path]:
    return {"fr": WMT / f"newstest{year}.fr-de.src.fr", "de": WMT / f"newstest{year}.fr-de.ref.de"}


@pytest.mark.parametrize(("year", "n_raw", "n_selected"), [("2019", 1701, 1473), ("2021", 1026, 893)])
def test_selection_reproduces_published_sets(year, n_raw, n_selected):
    require_shared()
    spec = {"source": {"kind": "files", "files": raw_wmt(year)}, "select": {"lang": "de", "min_words": 9}}
    frame, meta = datasets.build_parallel(spec, ["de", "fr"], "unused")
    assert meta["selection"]["n_raw"] == n_raw
    assert frame.height == n_selected == meta["selection"]["n_selected"]
    assert frame["id"].to_list() == list(range(n_selected))
    published = datasets.read_published_csv(PUBLISHED / f"CLSD_wmt{year}_adversarial_dataset.head50.csv", ["de", "fr"])
    head = frame.head(published.height)
    assert head["de"].to_list() == published["German"].to_list()
    assert head["fr"].to_list() == published["French"].to_list()
    # first and last sample items, exactly as published
    for i in (0, published.height - 1):
        assert (frame["fr"][i], frame["de"][i]) == (published["French"][i], published["German"][i])
    assert all(len(text.split()) >= 9 for text in frame["de"])
    assert {s["path"]: s["sha256"] for s in meta["sources"]} == {
        str(p): datasets.sha256_file(p) for p in raw_wmt(year).values()
    }


def test_check_same_pairs_accepts_published_and_names_first_difference():
    require_shared()
    path = PUBLISHED / "CLSD_wmt2019_adversarial_dataset.head50.csv"
    published = datasets.read_published_csv(path, ["de", "fr"])
    parallel = datasets.parallel_from_published(published, ["de", "fr"])
    datasets.check_same_pairs(parallel, published, ["de", "fr"], path)
    changed = parallel.with_columns(pl.when(pl.col("id") == 7).then(pl.lit("anders")).otherwise(pl.col("de")).alias("de"))
    with pytest.raises(InputError, match=r"row 8, field 'German'"):
        datasets.check_same_pairs(changed, published, ["de", "fr"], path)
    with pytest.raises(InputError, match="has 50 items but the dataset's corpus selection has 10"):
        datasets.check_same_pairs(parallel.head(10), published, ["de", "fr"], path)
    datasets.check_same_pairs(parallel, published.head(20), ["de", "fr"], path)  # a head of the set is accepted


def test_published_csv_import_and_distractor_schema():
    require_shared()
    path = PUBLISHED / "CLSD_wmt2021_adversarial_dataset.head50.csv"
    frame = datasets.read_published_csv(path, ["de", "fr"])
    parallel = datasets.parallel_from_published(frame, ["de", "fr"])
    assert parallel.columns == ["id", "row", "de", "fr"]
    assert parallel["id"].to_list() == list(range(50))
    source = datasets.Source.of(path)
    distractors = datasets.distractors_from_published(frame, "fr", generator="gpt-4", source=source)
    assert distractors.columns == ["id", "lang", "k", "text", "generator", "source"]
    assert distractors.height == 200
    first = distractors.filter(pl.col("id") == 0)
    assert first["k"].to_list() == [1, 2, 3, 4]
    assert first["text"].to_list() == [frame[f"fr_adv{k}"][0] for k in range(1, 5)]


def test_pivot_csv_extra_leading_column_is_dropped():
    require_shared()
    frame = datasets.read_published_csv(PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv", ["de", "fr"])
    assert "" not in frame.columns
    assert frame["Index"].to_list() == list(range(50))


def test_project_sample_is_complete():
    frame = datasets.read_published_csv(ROOT / "resources/sample/clsd_sample.csv", ["de", "fr"])
    assert frame.height >= 20
    for lang in ("de", "fr"):
        original = "German" if lang == "de" else "French"
        for k in range(1, 5):
            assert (frame[f"{lang}_adv{k}"] != frame[original]).all()


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_mismatched_line_counts_name_both_files(tmp_path):
    fr = write(tmp_path / "a.fr", "un\ndeux\ntrois\n".encode())
    de = write(tmp_path / "a.de", "eins\nzwei\n".encode())
    with pytest.raises(InputError, match=r"a\.fr: 3 lines.*a\.de: 2 lines"):
        datasets.load_parallel_files({"fr": fr, "de": de})


def test_empty_segment_names_file_line_and_language(tmp_path):
    fr = write(tmp_path / "b.fr", "un\n  \ntrois\n".encode())
    de = write(tmp_path / "b.de", "eins\nzwei\ndrei\n".encode())
    with pytest.raises(InputError, match=r"b\.fr, row 2, field 'fr': empty segment"):
        datasets.load_parallel_files({"fr": fr, "de": de})


def test_undecodable_bytes_name_the_line(tmp_path):
    de = write(tmp_path / "c.de", b"eins\nzwei\n\xff drei\n")
    with pytest.raises(InputError, match=r"c\.de, row 3: not valid UTF-8"):
        datasets.read_segments(de)


def test_csv_missing_column_is_named(tmp_path):
    csv = write(tmp_path / "bad.csv", b"Index,French,German,de_adv1\n0,a,b,c\n")
    with pytest.raises(InputError, match=r"bad\.csv, field 'de_adv2': missing column"):
        datasets.read_published_csv(csv, ["de", "fr"])


def test_csv_empty_cell_is_named(tmp_path):
    header = ",".join(datasets.published_columns(["de", "fr"]))
    rows = ["0,fr,de,a,b,c,d,e,f,g,h", "1,fr,de,a,b,,d,e,f,g,h"]
    csv = write(tmp_path / "hole.csv", (header + "\n" + "\n".join(rows) + "\n").encode())
    with pytest.raises(InputError, match=r"row 2, field 'de_adv3': empty cell"):
        datasets.read_published_csv(csv, ["de", "fr"])


def test_unknown_sacrebleu_test_set_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SACREBLEU", str(tmp_path))
    with pytest.raises(InputError, match="sacrebleu could not provide test set 'wmt99'"):
        datasets.sacrebleu_files("wmt99", "fr-de")


def test_selection_counts_whitespace_words():
    frame = pl.DataFrame({"de": ["a b c", "a\tb  c d", "a"], "fr": ["x", "y", "z"]})
    assert datasets.select_min_words(frame, "de", 4)["fr"].to_list() == ["y"]
    with pytest.raises(InputError, match="select.lang"):
        datasets.select_min_words(frame, "en", 1)
