"""Line alignment of corpus files (clsd.data.alignment) on real WMT and FLORES files: aligned pairs pass, a line
lost anywhere (or every line shifted) stops with both files, the line where the shift shows and the shares."""

from __future__ import annotations

import re

import pytest
from clsd.core.anchors import anchor_tokens, anchors
from clsd.core.errors import InputError
from clsd.data import corpora
from clsd.data.alignment import check_aligned
from conftest import WMT, require_shared

PAIRS = [("newstest2019.de-fr.src.de", "newstest2019.de-fr.ref.fr", "de", "fr"),
         ("newstest2021.ja-en.src.ja", "newstest2021.ja-en.ref.en", "ja", "en"),
         ("florestest2021.bn-hi.src.bn", "florestest2021.bn-hi.ref.hi", "bn", "hi")]


def lines(name: str) -> list[str]:
    return (WMT / name).read_text(encoding="utf-8").splitlines()


def test_anchors_are_names_and_numbers_in_any_digits():
    assert anchor_tokens("Le 3 mai 2025, Lyon a voté 0,25 point.") == {"Le", "3", "2025", "Lyon", "0,25"}
    assert anchors("২০২৫ সালে", "वर्ष 2025 में") == {"2025"}  # Bengali digits read as ASCII ones


@pytest.mark.parametrize("first, second, a, b", PAIRS, ids=[f"{p[2]}-{p[3]}" for p in PAIRS])
def test_aligned_files_pass_and_a_lost_line_is_found_where_it_shifts_the_pairs(first, second, a, b):
    require_shared()
    source, target = lines(first), lines(second)
    record = check_aligned({a: source, b: target}, {a: first, b: second})
    assert record["checked"] and record["same_line"] > 0.4 and record["next_line"] < 0.1 and record["previous_line"] < 0.1
    n = len(target)
    for lost in (100, n - 150):
        shifted = target[:lost - 1] + target[lost:] + ["Une ligne ajoutée à la fin."]
        with pytest.raises(InputError) as error:
            check_aligned({a: source, b: shifted}, {a: first, b: second})
        message = str(error.value)
        assert message.startswith(f"file {second}, line ") and f"is not line-aligned with {first} from line " in message
        line = int(re.search(r"line (\d+), field", message).group(1))
        assert lost - 2 <= line <= lost + 60, message  # about the first line whose names and numbers show the shift
        assert "share one with the previous line of" in message


def test_a_shifted_corpus_stops_the_parallel_job_before_any_generation(tmp_path):
    require_shared()
    de, fr = lines("newstest2019.de-fr.src.de"), lines("newstest2019.de-fr.ref.fr")
    (tmp_path / "c.de").write_text("\n".join(de) + "\n", encoding="utf-8")
    (tmp_path / "c.fr").write_text("\n".join(fr[1:] + [fr[0]]) + "\n", encoding="utf-8")  # one line moved to the end
    source = {"kind": "files", "files": {"de": str(tmp_path / "c.de"), "fr": str(tmp_path / "c.fr")}}
    # line 2: the first line with a line before it to compare with
    with pytest.raises(InputError, match=rf"file {re.escape(str(tmp_path / 'c.fr'))}, line 2, field 'fr': is not line-aligned"):
        corpora.build_parallel(source, {"lang": "de", "min_words": 9, "limit": 3}, ["de", "fr"], tmp_path)
    # the same files, aligned: the shares are in the provenance record
    (tmp_path / "c.fr").write_text("\n".join(fr) + "\n", encoding="utf-8")
    _, meta = corpora.build_parallel(source, {"lang": "de", "min_words": 9, "limit": 3}, ["de", "fr"], tmp_path)
    assert meta["alignment"]["checked"] and meta["alignment"]["same_line"] > 0.4
