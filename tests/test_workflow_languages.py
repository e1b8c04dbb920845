"""Language pairs beyond German–French, by config alone: real WMT21 Japanese–English and FLORES Bengali–Hindi
sentences (../shared/data/wmt) in one run, with distractors made in the test (one word of the true target
replaced by a word of another item: a real change of meaning, in real words of the language)."""

from __future__ import annotations

import csv
import json

import polars as pl
import pytest

from clsd.core.items import N_DISTRACTORS
from clsd.core.words import word_spans
from clsd.data import corpora

from conftest import MODEL_STORE, WMT, require_shared
from test_workflow import MINILM, snakemake, write_config

pytestmark = [pytest.mark.workflow, pytest.mark.slow]

PAIRS = {
    "ja-en": {"files": {"ja": "newstest2021.ja-en.src.ja", "en": "newstest2021.ja-en.ref.en"}, "select": "ja"},
    "bn-hi": {"files": {"bn": "florestest2021.bn-hi.src.bn", "hi": "florestest2021.bn-hi.ref.hi"}, "select": "bn"},
}
LIMIT = 3


def replaced(text: str, lang: str, position: int, word: str) -> str:
    """`text` with its word at `position` (clsd.core.words) replaced by `word`."""
    start, end = word_spans(text, lang)[position]
    return text[:start] + word + text[end:]


def distractors(texts: list[str], lang: str) -> list[list[str]]:
    """Four distractors per text: words 1..4 replaced by words of the next item (never the same word)."""
    result = []
    for i, text in enumerate(texts):
        donor = texts[(i + 1) % len(texts)]
        donor_words = [donor[s:e] for s, e in word_spans(donor, lang)]
        own = [text[s:e] for s, e in word_spans(text, lang)]
        made = []
        for k in range(N_DISTRACTORS):
            position = 1 + k
            word = next(w for w in donor_words[k:] + donor_words if w != own[position])
            made.append(replaced(text, lang, position, word))
        result.append(made)
    return result


def distractor_csv(path, frame: pl.DataFrame, languages: list[str]) -> None:
    """A published-format CSV (Index, <lang>, <lang>_adv1..4 per language) for the selected pairs of `frame`."""
    made = {lang: distractors(frame[lang].to_list(), lang) for lang in languages}
    header = ["Index", *languages, *(f"{lang}_adv{k}" for lang in languages for k in range(1, N_DISTRACTORS + 1))]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in range(frame.height):
            writer.writerow([row, *(frame[lang][row] for lang in languages), *(d for lang in languages for d in made[lang][row])])


@pytest.fixture(scope="module")
def run(tmp_path_factory, minilm_folder):
    require_shared()
    folder = tmp_path_factory.mktemp("languages")
    datasets = {}
    for pair, spec in PAIRS.items():
        languages = list(spec["files"])
        files = {lang: str(WMT / name) for lang, name in spec["files"].items()}
        select = {"lang": spec["select"], "min_words": 9, "limit": LIMIT}
        frame, _ = corpora.build_parallel({"kind": "files", "files": files}, select, languages, folder)
        distractor_csv(folder / f"{pair}.csv", frame, languages)
        src, tgt = languages
        datasets[pair] = {"label": pair.upper(), "languages": languages, "directions": [f"{src}-{tgt}", f"{tgt}-{src}"],
                          "source": {"kind": "files", "files": files}, "select": select,
                          "distractors": {"kind": "published_csv", "path": f"{pair}.csv", "generator": "test edits"}}
    write_config(folder, {"model_store": str(MODEL_STORE), "datasets": datasets, "models": {"minilm": MINILM}})
    snakemake(folder)
    return folder


def test_every_pair_is_scored_under_its_own_directions(run):
    table = pl.read_csv(run / "results/tables/table2.csv")
    columns = [c for c in table.columns if "→" in c and not c.endswith(("ci_low", "ci_high"))]
    assert columns == ["BN-HI BN→HI", "BN-HI HI→BN", "JA-EN JA→EN", "JA-EN EN→JA"]
    assert table.filter(pl.col("view") == "n").select(columns).row(0) == (LIMIT,) * 4


def test_mteb_records_name_every_language_with_its_iso_639_3_and_script_code(run):
    languages = {}
    for pair in PAIRS:
        record = json.loads((run / f"results/mteb/minilm/{pair}.json").read_text(encoding="utf-8"))
        languages |= {s["hf_subset"]: s["languages"] for s in record["scores"]["test"]}
    assert languages == {"direct-ja-en": ["jpn-Jpan", "eng-Latn"], "direct-en-ja": ["eng-Latn", "jpn-Jpan"],
                         "direct-bn-hi": ["ben-Beng", "hin-Deva"], "direct-hi-bn": ["hin-Deva", "ben-Beng"]}


def test_japanese_words_are_icu_words_and_pos_says_why_it_is_missing(run):
    pairs = pl.read_parquet(run / "results/analysis/ja-en/single_word.parquet").filter(pl.col("lang") == "ja")
    assert pairs.height == LIMIT * N_DISTRACTORS  # every made distractor changes exactly one word
    assert set(pairs["tagger"]) == {"none: no tagger for ja"} and pairs["pos"].null_count() == pairs.height
    assert all(" " not in word for word in pairs["new"])  # a word, not a whitespace-delimited clause
    for lang in ("bn", "hi"):
        assert pl.read_parquet(run / "results/analysis/bn-hi/single_word.parquet").filter(pl.col("lang") == lang).height == LIMIT * N_DISTRACTORS


def test_selection_counts_words_of_the_script(run):
    meta = pl.read_parquet(run / "results/data/ja-en/parallel.parquet")
    assert meta.height == LIMIT
    assert all(len(word_spans(text, "ja")) >= 9 for text in meta["ja"])
