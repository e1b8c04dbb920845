"""Corpora: the CLSD selection rule on the real WMT files, published CSV import, and bad-input errors."""

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import polars as pl
import pytest
from clsd.core.errors import InputError
from clsd.data import corpora
from conftest import PUBLISHED, ROOT, WMT, require_shared


def raw_wmt(year: str) -> dict[str, Path]:
    return {"fr": WMT / f"newstest{year}.fr-de.src.fr", "de": WMT / f"newstest{year}.fr-de.ref.de"}


@pytest.mark.parametrize(("year", "n_raw", "n_selected"), [("2019", 1701, 1473), ("2021", 1026, 893)])
def test_selection_reproduces_published_sets(year, n_raw, n_selected):
    require_shared()
    source = {"kind": "files", "files": raw_wmt(year)}
    frame, meta = corpora.build_parallel(source, {"lang": "de", "min_words": 9}, ["de", "fr"], "unused")
    assert meta["selection"]["n_raw"] == n_raw
    assert frame.height == n_selected == meta["selection"]["n_selected"]
    assert frame["id"].to_list() == list(range(n_selected))
    published = corpora.read_published_csv(PUBLISHED / f"CLSD_wmt{year}_adversarial_dataset.head50.csv", ["de", "fr"])
    head = frame.head(published.height)
    assert head["de"].to_list() == published["German"].to_list()
    assert head["fr"].to_list() == published["French"].to_list()
    # first and last sample items, exactly as published
    for i in (0, published.height - 1):
        assert (frame["fr"][i], frame["de"][i]) == (published["French"][i], published["German"][i])
    assert all(len(text.split()) >= 9 for text in frame["de"])
    assert {s["path"]: s["sha256"] for s in meta["sources"]} == {
        str(p): corpora.sha256_file(p) for p in raw_wmt(year).values()
    }


def test_check_same_pairs_accepts_published_and_names_first_difference():
    require_shared()
    path = PUBLISHED / "CLSD_wmt2019_adversarial_dataset.head50.csv"
    published = corpora.read_published_csv(path, ["de", "fr"])
    parallel = corpora.parallel_from_published(published, ["de", "fr"])
    corpora.check_same_pairs(parallel, published, ["de", "fr"], path)
    changed = parallel.with_columns(pl.when(pl.col("id") == 7).then(pl.lit("anders")).otherwise(pl.col("de")).alias("de"))
    with pytest.raises(InputError, match=r"row 8 \(line 9\), field 'German'"):
        corpora.check_same_pairs(changed, published, ["de", "fr"], path)
    with pytest.raises(InputError, match="has 50 items but the dataset's corpus selection has 10"):
        corpora.check_same_pairs(parallel.head(10), published, ["de", "fr"], path)
    corpora.check_same_pairs(parallel, published.head(20), ["de", "fr"], path)  # a head of the set is accepted


def test_published_csv_import_and_distractor_schema():
    require_shared()
    path = PUBLISHED / "CLSD_wmt2021_adversarial_dataset.head50.csv"
    frame = corpora.read_published_csv(path, ["de", "fr"])
    parallel = corpora.parallel_from_published(frame, ["de", "fr"])
    assert parallel.columns == ["id", "row", "de", "fr"]
    assert parallel["id"].to_list() == list(range(50))
    source = corpora.Source.of(path)
    distractors = corpora.distractors_from_published(frame, "fr", generator="gpt-4", source=source)
    assert distractors.columns == ["id", "lang", "k", "text", "generator", "source"]
    assert distractors.height == 200
    first = distractors.filter(pl.col("id") == 0)
    assert first["k"].to_list() == [1, 2, 3, 4]
    assert first["text"].to_list() == [frame[f"fr_adv{k}"][0] for k in range(1, 5)]


def test_pivot_csv_extra_leading_column_is_dropped():
    require_shared()
    frame = corpora.read_published_csv(PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv", ["de", "fr"])
    assert "" not in frame.columns
    assert frame["Index"].to_list() == list(range(50))


def test_project_sample_is_complete():
    frame = corpora.read_published_csv(ROOT / "resources/sample/clsd_sample.csv", ["de", "fr"])
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
        corpora.load_parallel_files({"fr": fr, "de": de})


def test_empty_segment_names_file_line_and_language(tmp_path):
    fr = write(tmp_path / "b.fr", "un\n  \ntrois\n".encode())
    de = write(tmp_path / "b.de", "eins\nzwei\ndrei\n".encode())
    with pytest.raises(InputError, match=r"b\.fr, row 2, field 'fr': empty segment"):
        corpora.load_parallel_files({"fr": fr, "de": de})


def test_undecodable_bytes_name_the_line(tmp_path):
    de = write(tmp_path / "c.de", b"eins\nzwei\n\xff drei\n")
    with pytest.raises(InputError, match=r"c\.de, line 3: not valid UTF-8"):
        corpora.read_segments(de)


def test_csv_missing_column_is_named(tmp_path):
    csv = write(tmp_path / "bad.csv", b"Index,French,German,de_adv1\n0,a,b,c\n")
    with pytest.raises(InputError, match=r"bad\.csv, field 'de_adv2': missing column"):
        corpora.read_published_csv(csv, ["de", "fr"])


def test_csv_empty_cell_is_named(tmp_path):
    header = ",".join(corpora.published_columns(["de", "fr"]))
    rows = ["0,fr,de,a,b,c,d,e,f,g,h", "1,fr,de,a,b,,d,e,f,g,h"]
    csv = write(tmp_path / "hole.csv", (header + "\n" + "\n".join(rows) + "\n").encode())
    with pytest.raises(InputError, match=r"row 2 \(line 3\), field 'de_adv3': empty cell"):
        corpora.read_published_csv(csv, ["de", "fr"])


def sample_lines() -> list[str]:
    return (ROOT / "resources/sample/clsd_sample.csv").read_text(encoding="utf-8").splitlines()


def test_blank_lines_and_byte_order_mark_are_not_data(tmp_path, caplog):
    lines = sample_lines()
    # the authors' English-pivot file has a blank line before its last row; Windows line ends and a BOM
    text = "\ufeff" + "\r\n".join(lines[:-1] + ["", lines[-1]]) + "\r\n\r\n"
    csv = write(tmp_path / "blank.csv", text.encode("utf-8"))
    with caplog.at_level("INFO", logger="clsd.data.corpora"):
        frame = corpora.read_published_csv(csv, ["de", "fr"])
    expected = corpora.read_published_csv(ROOT / "resources/sample/clsd_sample.csv", ["de", "fr"])
    assert frame.drop("line").equals(expected.drop("line"))
    assert frame["line"][-1] == len(lines) + 1  # the last row sits after the blank line
    assert "2 blank line(s) skipped" in caplog.text and "byte-order mark" in caplog.text


def test_blank_line_in_a_published_pivot_file_is_skipped(tmp_path):
    require_shared()
    lines = (PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv").read_text(encoding="utf-8").splitlines()
    csv = write(tmp_path / "MT_M2M.csv", "\n".join(lines[:-1] + ["", lines[-1]]).encode("utf-8"))
    frame = corpora.read_published_csv(csv, ["de", "fr"])
    assert frame["Index"].to_list() == list(range(50))


def test_index_must_count_from_zero_in_file_order(tmp_path):
    lines = sample_lines()
    swapped = lines[:3] + [lines[4], lines[3]] + lines[5:]  # rows with Index 2 and 3 swapped
    csv = write(tmp_path / "swapped.csv", "\n".join(swapped).encode("utf-8"))
    with pytest.raises(InputError, match=r"swapped\.csv, row 3 \(line 4\), field 'Index': Index 3 where file order expects 2"):
        corpora.read_published_csv(csv, ["de", "fr"])
    one_based = [lines[0]] + [line.replace(f"{i},", f"{i + 1},", 1) for i, line in enumerate(lines[1:])]
    csv = write(tmp_path / "one-based.csv", "\n".join(one_based).encode("utf-8"))
    with pytest.raises(InputError, match=r"row 1 \(line 2\), field 'Index': Index 1 where file order expects 0"):
        corpora.read_published_csv(csv, ["de", "fr"])


def test_row_with_a_missing_field_names_its_line(tmp_path):
    lines = sample_lines()
    lines[5] = lines[5].rsplit(",", 1)[0]
    csv = write(tmp_path / "short.csv", "\n".join(lines).encode("utf-8"))
    with pytest.raises(InputError, match=r"short\.csv, line 6: 10 fields where the header has 11"):
        corpora.read_published_csv(csv, ["de", "fr"])


class Files(BaseHTTPRequestHandler):
    """Serves {path: bytes} from the class attribute `files`; counts requests."""

    files: dict[str, bytes] = {}
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server's naming)
        Files.hits.append(self.path)
        body = self.files.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args):
        pass


@pytest.fixture
def file_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Files)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Files.files, Files.hits = {"/a/data.csv": b"first file", "/b/data.csv": b"second file"}, []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_downloads_are_cached_by_url_not_by_file_name(tmp_path, file_server):
    first = corpora.fetch(f"{file_server}/a/data.csv", tmp_path)
    second = corpora.fetch(f"{file_server}/b/data.csv", tmp_path)
    assert (first.read_bytes(), second.read_bytes()) == (b"first file", b"second file")
    assert corpora.fetch(f"{file_server}/a/data.csv", tmp_path) == first and len(Files.hits) == 2  # cached


def test_sha256_pin_is_checked_on_download_cache_and_local_files(tmp_path, file_server):
    url = f"{file_server}/a/data.csv"
    good = hashlib.sha256(b"first file").hexdigest()
    with pytest.raises(InputError, match=f"does not match the pinned sha256 {'0' * 64}"):
        corpora.fetch(url, tmp_path, "0" * 64)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]  # a mismatching download is not kept
    cached = corpora.fetch(url, tmp_path, good)
    cached.write_bytes(b"changed behind our back")
    with pytest.raises(InputError, match="does not match the pinned sha256"):
        corpora.fetch(url, tmp_path, good)
    local = write(tmp_path / "local.csv", b"first file")
    assert corpora.fetch(str(local), tmp_path, good) == local
    with pytest.raises(InputError, match=r"local\.csv: sha256 .* does not match"):
        corpora.fetch(str(local), tmp_path, "f" * 64)


def test_unknown_sacrebleu_test_set_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SACREBLEU", str(tmp_path))
    with pytest.raises(InputError, match="sacrebleu could not provide test set 'wmt99'"):
        corpora.sacrebleu_files("wmt99", "fr-de")


def test_selection_counts_whitespace_words():
    frame = pl.DataFrame({"de": ["a b c", "a\tb  c d", "a"], "fr": ["x", "y", "z"]})
    assert corpora.select_min_words(frame, "de", 4)["fr"].to_list() == ["y"]
    with pytest.raises(InputError, match="select.lang"):
        corpora.select_min_words(frame, "en", 1)


def test_dropped_items_carry_their_reason():
    from clsd.data import candidates

    parallel = pl.DataFrame({"id": [0, 1, 2], "row": [1, 2, 3], "de": ["a", "b", "c"], "fr": ["x", "y", "z"]})
    rows = lambda lang, ids: pl.DataFrame({"id": [i for i in ids for _ in range(4)], "lang": lang, "k": [1, 2, 3, 4] * len(ids),  # noqa: E731
                                           "text": "t"})
    de, fr = rows("de", [0, 1]), rows("fr", [0])
    metas = [{"lang": "de", "generator": "llm:m", "failed": [{"id": 2, "lang": "de", "reason": "1 valid distractors after 3 attempts"}]},
             {"lang": "fr", "source": {"path": "/data/head.csv"}}]
    kept, dropped = candidates.complete_items(parallel, [de, fr], ["de", "fr"], 4)
    assert kept["id"].to_list() == [0] and dropped == [1, 2]
    assert candidates.dropped_reasons(dropped, [de, fr], metas, ["de", "fr"], 4) == [
        {"id": 1, "reason": "fr: not in head.csv"},
        {"id": 2, "reason": "de: 1 valid distractors after 3 attempts and fr: not in head.csv"},
    ]
    both = candidates.dropped_reasons([1], [de.filter(pl.col("id") == 0), fr], [metas[1] | {"lang": "de"}, metas[1]], ["de", "fr"], 4)
    assert both == [{"id": 1, "reason": "not in head.csv"}]
