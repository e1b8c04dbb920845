"""POS of changed tokens with the real offline taggers (spaCy French, HanTa German) and the Stanza fallback."""

import polars as pl
import pytest
from clsd.analysis import pos, swaps


@pytest.fixture(scope="module")
def taggers():
    return pos.tagger_factory("offline", None)


def tag_change(taggers, lang, target, distractor):
    pairs = swaps.find_pairs(pl.DataFrame({"id": [0, 0], "lang": [lang, lang], "slot": [0, 1], "text": [target, distractor]}))
    return pos.tag_pairs(pairs, taggers).row(0, named=True)


@pytest.mark.parametrize(
    ("target", "distractor", "upos"),
    [
        ("Der Stadtrat von Lyon hat am Dienstag den Bau genehmigt.", "Der Stadtrat von Lyon hat am Dienstag den Bau abgelehnt.", "VERB"),
        ("Der Stadtrat von Lyon hat am Dienstag den Bau genehmigt.", "Der Stadtrat von Lyon hat am Freitag den Bau genehmigt.", "NOUN"),
        ("Der Stadtrat von Lyon hat am Dienstag den Bau genehmigt.", "Der Stadtrat von Marseille hat am Dienstag den Bau genehmigt.", "PROPN"),
        ("Die Zahl ist um zwölf Prozent gestiegen.", "Die Zahl ist um zwanzig Prozent gestiegen.", "NUM"),
        ("Der Präsident hat die Schließung angekündigt.", "Der Präsident hat die dauerhafte Schließung angekündigt.", "ADJ"),
    ],
)
def test_german_with_hanta(taggers, target, distractor, upos):
    row = tag_change(taggers, "de", target, distractor)
    assert row["pos"] == upos
    assert row["tagger"].startswith("hanta")


@pytest.mark.parametrize(
    ("target", "distractor", "upos"),
    [
        ("Le conseil municipal de Lyon a approuvé mardi la construction.", "Le conseil municipal de Lyon a rejeté mardi la construction.", "VERB"),
        ("Le conseil municipal de Lyon a approuvé mardi la construction.", "Le conseil municipal de Marseille a approuvé mardi la construction.", "PROPN"),
        ("Le prix du gazole a baissé selon le ministère.", "Le prix du gazole a baissé selon le gouvernement.", "NOUN"),
        ("Les pompiers ont maîtrisé l'incendie de forêt.", "Les pompiers ont maîtrisé l'incendie de maison.", "NOUN"),
    ],
)
def test_french_with_spacy(taggers, target, distractor, upos):
    row = tag_change(taggers, "fr", target, distractor)
    assert row["pos"] == upos
    assert row["tagger"].startswith("spacy-fr_core_news_md")


def test_punctuation_attached_to_the_token_is_ignored(taggers):
    row = tag_change(taggers, "fr", "Il a fermé le musée jeudi.", "Il a fermé le musée dimanche.")
    assert row["new"] == "dimanche." and row["pos"] == "NOUN"


def test_alignment_picks_the_first_non_punctuation_token():
    spans = [(0, 3, "DET"), (4, 9, "NOUN"), (9, 10, "PUNCT")]
    assert pos.tag_of_token(spans, 4, 10) == "NOUN"
    assert pos.tag_of_token([(0, 1, "PUNCT")], 0, 1) == "PUNCT"
    assert pos.tag_of_token(spans, 20, 25) == "X"


def test_stts_mapping():
    assert [pos.stts_to_upos(t) for t in ["VV(FIN)", "VA(INF)", "ADJ(A)", "NE", "$.", "KOUS", "NONSENSE"]] == [
        "VERB", "AUX", "ADJ", "PROPN", "PUNCT", "SCONJ", "X"]


def test_auto_falls_back_to_offline_when_stanza_models_are_missing(tmp_path):
    tagger = pos.make_tagger("fr", "auto", str(tmp_path))
    assert tagger.name.startswith("spacy")
    with pytest.raises(Exception):
        pos.make_tagger("fr", "stanza", str(tmp_path))
    with pytest.raises(ValueError, match="stanza_dir is not set"):
        pos.make_tagger("fr", "stanza", None)
    assert pos.make_tagger("it", "offline", None) is None  # no tagger: POS not available, no crash


def test_a_language_without_a_tagger_keeps_its_pairs_untagged(taggers):
    row = tag_change(taggers, "ja", "東京の会社が新しい工場を建てた。", "大阪の会社が新しい工場を建てた。")
    assert (row["original"], row["new"]) == ("東京", "大阪")  # ICU words, not whitespace
    assert row["pos"] is None and row["tagger"] == "none: no tagger for ja"


@pytest.mark.parametrize(
    ("tokens", "stts", "expected"),
    [
        ("Er hat ein Auto .".split(), ["PPER", "VA(FIN)", "ART", "NN", "$."], ["PRON", "VERB", "DET", "NOUN", "PUNCT"]),
        ("Er hat das Auto gekauft .".split(), ["PPER", "VA(FIN)", "ART", "NN", "VV(PP)", "$."], ["PRON", "AUX", "DET", "NOUN", "VERB", "PUNCT"]),
        ("Sie wird Ärztin .".split(), ["PPER", "VA(FIN)", "NN", "$."], ["PRON", "VERB", "NOUN", "PUNCT"]),
        ("Sie wird kommen .".split(), ["PPER", "VA(FIN)", "VV(INF)", "$."], ["PRON", "AUX", "VERB", "PUNCT"]),
        ("Der Konzern Qvexor wächst .".split(), ["ART", "NN", "XY", "VV(FIN)", "$."], ["DET", "NOUN", "PROPN", "VERB", "PUNCT"]),
        ("Der Code x7 läuft .".split(), ["ART", "NN", "XY", "VV(FIN)", "$."], ["DET", "NOUN", "X", "VERB", "PUNCT"]),
    ],
)
def test_german_context_rules(tokens, stts, expected):
    assert pos.german_upos(tokens, stts) == expected


# The CLSD annotators' conventions (clsd.analysis.conventions), one case per kind the taggers get wrong alone.
@pytest.mark.parametrize(
    ("lang", "target", "distractor", "upos", "rule"),
    [
        # German (HanTa)
        ("de", "Das sagte gestern die Ministerin Kipping im Bundestag.", "Das sagte gestern die Ministerin Müller im Bundestag.",
         "PROPN", "name"),  # a surname HanTa tags NN (a swap tags the target's word)
        ("de", "Das Programm der Grünen wurde am Montag vorgestellt.", "Das Programm der Linken wurde am Montag vorgestellt.",
         "NOUN", "tagger"),  # a nominalised adjective (HanTa NNA), not a name
        ("de", "Die Grünen haben die Reform abgelehnt.", "Die Roten haben die Reform abgelehnt.", "NOUN", "tagger"),
        ("de", "Er hat die Reform schnell abgelehnt.", "Er hat die Reform langsam abgelehnt.", "ADV", "adverbial"),
        ("de", "Die Reform ist schnell.", "Die Reform ist langsam.", "ADJ", "predicative"),
        ("de", "Am Montag kamen 1.500.000 Menschen.", "Am Montag kamen 2.500.000. Menschen.", "NUM", "number"),
        ("de", "Die Polizei hat den geplanten Protest aufgelöst.", "Die Polizei hat den angemeldeten Protest aufgelöst.",
         "ADJ", "tagger"),
        ("de", "Der Stadtrat hat den Bau genehmigt.", "Der Stadtrat hat den Bau abgelehnt.", "VERB", "tagger"),
        # French (spaCy)
        ("fr", "La décision annoncée mardi a surpris les élus.", "La décision attendue mardi a surpris les élus.",
         "ADJ", "participle"),
        ("fr", "Le conseil a approuvé mardi la construction.", "Le conseil a rejeté mardi la construction.", "VERB", "tagger"),
        ("fr", "La réunion aura lieu en janvier prochain.", "La réunion aura lieu en février prochain.", "PROPN", "propn"),
        ("fr", "La réforme a été critiquée par Dupont hier.", "La réforme a été critiquée par Macron hier.", "PROPN", None),
        ("fr", "Le bilan s'élève à 26.469,89.", "Le bilan s'élève à 36.469,89.", "NUM", "number"),
        ("fr", "La crise frappe l’économie française.", "La crise frappe l’industrie française.", "NOUN", "elision"),
        ("fr", "La crise frappe l'économie française.", "La crise frappe l'industrie française.", "NOUN", "elision"),
    ],
)
def test_tags_follow_the_annotators_conventions(taggers, lang, target, distractor, upos, rule):
    row = tag_change(taggers, lang, target, distractor)
    assert row["pos"] == upos
    if rule is not None:
        assert row["pos_rule"] == rule


def test_a_number_is_num_whatever_its_separators_and_final_stop():
    from clsd.analysis.conventions import NUMBER
    assert all(NUMBER.match(word) for word in ("1.500.000.", "26.469,89", "(12)", "3,5%", "−5", "2019."))
    assert not any(NUMBER.match(word) for word in ("COVID-19", "3G", "A1", "x7"))
