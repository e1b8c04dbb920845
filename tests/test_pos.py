"""POS of changed tokens with the real offline taggers (spaCy French, HanTa German) and the Stanza fallback."""

import polars as pl
import pytest
from clsd.analysis import pos, swaps
from clsd.analysis.conventions import Token, tagged_word


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
    spans = [Token(0, 3, "DET"), Token(4, 9, "NOUN"), Token(9, 10, "PUNCT")]
    assert tagged_word(spans, 4, 10).upos == "NOUN"
    assert tagged_word([Token(0, 1, "PUNCT")], 0, 1).upos == "PUNCT"
    assert tagged_word(spans, 20, 25) is None


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
        # an ADJD adjective is ADJ, predicative or adverbial; ADV only as the degree of the adjective after it
        ("de", "Er hat die Reform schnell abgelehnt.", "Er hat die Reform langsam abgelehnt.", "ADJ", "adjective"),
        ("de", "Er hat gut abgeschnitten.", "Er hat schlecht abgeschnitten.", "ADJ", "adjective"),
        ("de", "Die Reform ist schnell.", "Die Reform ist langsam.", "ADJ", "adjective"),
        ("de", "Die Lage bleibt schwierig.", "Die Lage bleibt einfach.", "ADJ", "adjective"),
        ("de", "Die Lage ist schwierig geworden.", "Die Lage ist einfach geworden.", "ADJ", "adjective"),
        ("de", "Das macht sie unruhig.", "Das macht sie ruhig.", "ADJ", "adjective"),
        ("de", "Er hält den Plan für richtig.", "Er hält den Plan für falsch.", "ADJ", "adjective"),
        ("de", "Das war ein extrem schwieriges Jahr.", "Das war ein ziemlich schwieriges Jahr.", "ADV", "degree"),
        # nationality nouns, institutions written as common nouns, compounds whose first part is a name (PROPN) ...
        ("de", "Der Franzose gewann das Rennen.", "Der Belgier gewann das Rennen.", "PROPN", "demonym"),
        ("de", "Die Belgierin gewann das Rennen.", "Die Französin gewann das Rennen.", "PROPN", "demonym"),
        ("de", "Die Italiener wählten am Sonntag.", "Die Spanier wählten am Sonntag.", "PROPN", "demonym"),
        ("de", "Die Deutschen wählten am Sonntag.", "Die Polen wählten am Sonntag.", "PROPN", "demonym"),
        ("de", "Der Bundesrat hat das Gesetz gebilligt.", "Der Bundestag hat das Gesetz gebilligt.", "PROPN", "institution"),
        ("de", "Der Europarat hat das Gesetz kritisiert.", "Der Landtag hat das Gesetz kritisiert.", "PROPN", "institution"),
        ("de", "Der SPD-Abgeordnete stimmte dagegen.", "Der CDU-Abgeordnete stimmte dagegen.", "PROPN", "compound"),
        ("de", "Der EU-Kommissar stimmte dagegen.", "Der UN-Kommissar stimmte dagegen.", "PROPN", "compound"),
        ("de", "Die Grünen-Politikerin stimmte dagegen.", "Die Linken-Politikerin stimmte dagegen.", "PROPN", "compound"),
        ("de", "Der Frankreich-Besuch wurde verschoben.", "Der Spanien-Besuch wurde verschoben.", "PROPN", "compound"),
        # ... and what stays NOUN: a compound whose first part is no such name, common nouns that share letters
        ("de", "Die Kipping-Verhandlungen wurden vertagt.", "Die Brexit-Verhandlungen wurden vertagt.", "NOUN", "compound"),
        ("de", "Das TV-Duell wurde vertagt.", "Das PC-Duell wurde vertagt.", "NOUN", "compound"),
        ("de", "Der Täter wurde gefasst.", "Der Dieb wurde gefasst.", "NOUN", "tagger"),
        ("de", "Der Stadtrat hat den Bau genehmigt.", "Der Gemeinderat hat den Bau genehmigt.", "NOUN", "tagger"),
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


def test_the_published_sample_agrees_with_the_hand_tagged_pairs(taggers):
    """Every single-word pair of the published 50-item slices against its hand-made tag (tests/data): the tags agree
    except on the pairs the gold marks `tagger_says`, and the agreement is what docs/analysis.md states."""
    import yaml
    from conftest import PUBLISHED, ROOT, require_shared

    require_shared()
    gold = {(row["year"], row["index"], row["lang"], row["k"]): row
            for row in yaml.safe_load((ROOT / "tests/data/pos_published_sample.yaml").read_text(encoding="utf-8"))}
    rows = []
    for year in (2019, 2021):
        published = pl.read_csv(PUBLISHED / f"CLSD_wmt{year}_adversarial_dataset.head50.csv")
        for item in published.iter_rows(named=True):
            for lang, column in (("de", "German"), ("fr", "French")):
                texts = [item[column]] + [item[f"{lang}_adv{k}"] for k in range(1, 5)]
                rows += [{"id": year * 1000 + item["Index"], "lang": lang, "slot": slot, "text": text}
                         for slot, text in enumerate(texts)]
    tagged = pos.tag_pairs(swaps.find_pairs(pl.DataFrame(rows)), taggers)
    found = {(row["id"] // 1000, row["id"] % 1000, row["lang"], row["k"]): row for row in tagged.iter_rows(named=True)}
    assert set(found) == set(gold)
    for key, row in found.items():
        assert (row["original"] or row["new"]) == gold[key]["word"]
        assert row["pos"] == gold[key].get("tagger_says", gold[key]["upos"]), key
    agree = {lang: sum(found[key]["pos"] == gold[key]["upos"] for key in gold if key[2] == lang) for lang in ("de", "fr")}
    assert agree == {"de": 36, "fr": 17}  # of 39 and 17 pairs: 92.3% and 100% (README)


def test_names_are_told_by_their_form():
    """Nationality nouns from CLDR's place names, institutions from a polity and a body, and the first parts of name
    compounds, with the common nouns that share their letters or parts."""
    from clsd.analysis import names
    from clsd.validate.lexicon import lexicon

    lex = lexicon("de")
    assert all(names.demonym(word, "de") for word in
               ["Franzose", "Belgierin", "Italienern", "Deutscher", "Chinesen", "Europäer", "Amerikanerin", "Pole"])
    assert not any(names.demonym(word, "de") for word in ["Täter", "Welt", "Idee", "Sänger", "Insel", "Samen", "Akzente"])
    assert all(names.institution(word, "de") for word in ["Bundesrat", "Europarat", "Landtag", "Bundestages", "Europaparlament"])
    assert not any(names.institution(word, "de") for word in ["Stadtrat", "Bundesland", "Landtagswahl", "Bundeskanzler"])
    assert all(names.name_part(part, "de", lex) for part in ["SPD", "AfD", "EU", "Frankreich", "Bundestags", "Grünen"])
    assert not any(names.name_part(part, "de", lex) for part in ["TV", "Pkw", "KI", "Brexit", "Kipping", "Klima"])
    assert names.compound("US-amerikanische", "de", lex) is None  # an adjective: its head is lower case
