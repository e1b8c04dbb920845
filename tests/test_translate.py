"""Pivot translation on a tiny random M2M100: both backends, token-level agreement, published files."""

import polars as pl
import pytest
from clsd.core.errors import InputError
from clsd.data import corpora
from clsd.translate import pivot
from conftest import PUBLISHED, require_shared

GERMAN = ["Der Stadtrat hat den Bau genehmigt.", "Die Zentralbank hebt den Leitzins an.", "Kurz."]
FRENCH = ["Le conseil municipal a approuvé la construction.", "La banque centrale relève son taux."]


def spec(backend: str, model, **changes) -> pivot.TranslatorSpec:
    settings = dict(backend=backend, model=str(model), target_lang="en", beam_size=1, batch_size=2, max_new_tokens=12, compute_type="float32")
    return pivot.TranslatorSpec(**{**settings, **changes})


@pytest.fixture(scope="module")
def converted(tiny_m2m, tmp_path_factory):
    return pivot.convert_to_ctranslate2(str(tiny_m2m), tmp_path_factory.mktemp("ct2") / "model", "float32")


def test_length_sorted_batches_cover_every_index_once():
    batches = pivot.length_sorted_batches(["a", "ccc", "bb", "dddd", "e"], 2)
    assert batches == [[3, 1], [2, 0], [4]]


def test_both_backends_translate_german_and_french(tiny_m2m, converted):
    hf = pivot.TransformersTranslator(spec("transformers", tiny_m2m), "cpu")
    ct2 = pivot.CTranslate2Translator(spec("ctranslate2", tiny_m2m), "cpu", converted)
    for texts, lang in ((GERMAN, "de"), (FRENCH, "fr")):
        a, b = hf.translate(texts, lang), ct2.translate(texts, lang)
        assert len(a) == len(b) == len(texts)
        assert a == b  # float32 greedy: same decoding → same text, in the input order
        assert all(text and not pivot.LANGUAGE_TOKEN.search(text) for text in a)
        assert hf.translate(texts, lang) == a  # deterministic


def test_ctranslate2_greedy_equals_transformers_token_for_token(tiny_m2m, converted):
    hf = pivot.TransformersTranslator(spec("transformers", tiny_m2m), "cpu")
    ct2 = pivot.CTranslate2Translator(spec("ctranslate2", tiny_m2m), "cpu", converted)
    tokenizer = hf.tokenizer
    tokenizer.src_lang = "de"
    encoded = tokenizer(GERMAN[:1], return_tensors="pt")
    generated = hf.model.generate(**encoded, forced_bos_token_id=tokenizer.get_lang_id("en"), num_beams=1, do_sample=False, max_new_tokens=12)
    hf_ids = generated[0].tolist()[1:]  # drop the decoder start token; keeps the forced __en__
    source = tokenizer.convert_ids_to_tokens(tokenizer.encode(GERMAN[0]))
    result = ct2.translator.translate_batch([source], target_prefix=[["__en__"]], beam_size=1, max_decoding_length=12)
    ct2_ids = tokenizer.convert_tokens_to_ids(result[0].hypotheses[0])
    assert ct2_ids[0] == tokenizer.get_lang_id("en")
    assert [i for i in hf_ids if i != tokenizer.pad_token_id] == ct2_ids


def test_translate_candidates_once_per_language_and_text(tiny_m2m):
    candidates = pl.DataFrame(
        {"id": [0, 0, 0, 1], "lang": ["de", "fr", "fr", "de"], "slot": [0, 0, 1, 0],
         "text": [GERMAN[0], FRENCH[0], FRENCH[1], GERMAN[0]]}
    )
    calls = []

    def fake(texts, lang):  # records what is asked; the real backends are tested above
        calls.append((lang, list(texts)))
        return [f"{lang}:{t}" for t in texts]

    table = pivot.translate_candidates(candidates, fake, "en")
    assert calls == [("de", [GERMAN[0]]), ("fr", [FRENCH[0], FRENCH[1]])]
    assert table.columns == ["text_id", "lang", "text", "en"]
    assert table["text_id"][0] == pivot.text_id(GERMAN[0])
    view = pivot.pivot_candidates(candidates, table, "en")
    assert view["text"].to_list() == [f"de:{GERMAN[0]}", f"fr:{FRENCH[0]}", f"fr:{FRENCH[1]}", f"de:{GERMAN[0]}"]
    assert view.select("id", "lang", "slot").equals(candidates.select("id", "lang", "slot"))


def test_texts_already_in_the_pivot_language_are_not_translated():
    candidates = pl.DataFrame({"id": [0, 0, 0], "lang": ["de", "en", "en"], "slot": [0, 0, 1],
                               "text": [GERMAN[0], "The council approved it.", "The council rejected it."]})
    calls = []

    def fake(texts, lang):
        calls.append(lang)
        return [f"{lang}:{t}" for t in texts]

    table = pivot.translate_candidates(candidates, fake, "en")
    assert calls == ["de"]  # the English side is used as it is
    view = pivot.pivot_candidates(candidates, table, "en")
    assert view["text"].to_list() == [f"de:{GERMAN[0]}", "The council approved it.", "The council rejected it."]


def test_published_translations_map_cells_positionally():
    require_shared()
    languages = ["de", "fr"]
    original = corpora.read_published_csv(PUBLISHED / "CLSD_wmt2019_adversarial_dataset.head50.csv", languages)
    english = corpora.read_published_csv(PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv", languages)
    from clsd.data import candidates as cand

    parallel = corpora.parallel_from_published(original, languages)
    source = corpora.Source.of(PUBLISHED / "CLSD_wmt2019_adversarial_dataset.head50.csv")
    distractors = [corpora.distractors_from_published(original, lang, generator="g", source=source) for lang in languages]
    table = cand.build(parallel, distractors, languages)
    translations = pivot.published_translations(table, english, languages, "mt.csv", "en")
    view = pivot.pivot_candidates(table, translations, "en")
    row = lambda i, lang, slot: view.filter((pl.col("id") == i) & (pl.col("lang") == lang) & (pl.col("slot") == slot))["text"][0]  # noqa: E731
    assert row(0, "de", 0) == english["German"][0]
    assert row(3, "fr", 2) == english["fr_adv2"][3]
    assert row(49, "de", 4) == english["de_adv4"][49]
    with pytest.raises(InputError, match="no English for item 10"):
        pivot.published_translations(table, english.head(10), languages, "mt.csv", "en")


def test_clean_removes_language_tokens():
    assert pivot.clean("__en__ Hello  __fr__world") == "Hello world"


def test_a_batch_returning_another_count_stops_the_job():
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    assert pivot.run_batches(texts, 2, lambda batch: [t.upper() for t in batch], "de→en") == [t.upper() for t in texts]
    # longest first: batches (eeeee, dddd), (ccc, bb), (a)
    with pytest.raises(RuntimeError, match=r"de→en: batch 2 \(2 texts, first 'ccc'\) returned 1 translations"):
        pivot.run_batches(texts, 2, lambda batch: [t.upper() for t in batch][: 1 if "bb" in batch else None], "de→en")


def published_pair():
    require_shared()
    languages = ["de", "fr"]
    original = corpora.read_published_csv(PUBLISHED / "CLSD_wmt2019_adversarial_dataset.head50.csv", languages)
    english = corpora.read_published_csv(PUBLISHED / "MT_M2M_CLSD_wmt2019_adversarial_dataset.head50.csv", languages)
    return original, english, languages


def test_published_pivot_file_must_hold_the_same_items_in_the_same_order():
    original, english, languages = published_pair()
    pivot.check_same_items(original, english, languages, "orig.csv", "mt.csv")  # the authors' files agree
    with pytest.raises(InputError, match="file mt.csv: has 49 items but its dataset orig.csv has 50"):
        pivot.check_same_items(original, english.head(49), languages, "orig.csv", "mt.csv")
    # the English rows shifted by one (Index renumbered, so the file itself looks well-formed)
    text_columns = [c for c in english.columns if c not in ("Index", "row", "line")]
    shifted = english.with_columns(pl.col(c).shift(1).fill_null(pl.col(c).last()) for c in text_columns)
    with pytest.raises(InputError, match=r"file mt.csv, row \d+ \(line \d+\), field 'German': rows are not in the order of orig.csv"):
        pivot.check_same_items(original, shifted, languages, "orig.csv", "mt.csv")
