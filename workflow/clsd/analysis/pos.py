"""Universal POS tags of the word that a single-word distractor changed.

The paper's tagger is Stanza; it is used when its models are available locally (`stanza_dir`, loaded with
`download_method=None`; the Stanza language id comes from the language registry). Offline fallbacks, named by
the registry's `tagger.offline`: spaCy `fr_core_news_md` for French, HanTa (STTS mapped to UPOS, with context
rules) for German. A language with neither gets no tag: its pairs keep `pos` null and say why in `tagger`
("none: no tagger for ja"), and count under ANY only. The whole sentence is tagged and the tag aligned to the
word (clsd.core.words) by character offsets, and corrected where taggers and the CLSD annotators follow other
conventions (clsd.analysis.conventions: numbers, elided articles, participles, names); every tag records the tagger
that produced it and the rule that decided it (`pos_rule`).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import polars as pl

from clsd.analysis.conventions import Token, decide
from clsd.core.languages import language
from clsd.core.words import word_spans
from clsd.validate.lexicon import lexicon

log = logging.getLogger(__name__)

#: STTS (as HanTa writes it, bracketed suffixes stripped) → UPOS, following the UD German conversion.
STTS_TO_UPOS = {
    "ADJ": "ADJ", "ADJA": "ADJ", "ADJD": "ADJ", "ADV": "ADV", "APPR": "ADP", "APPRART": "ADP", "APPO": "ADP",
    "APZR": "ADP", "ART": "DET", "CARD": "NUM", "FM": "X", "ITJ": "INTJ", "KOUI": "SCONJ", "KOUS": "SCONJ",
    "KON": "CCONJ", "KOKOM": "CCONJ", "NN": "NOUN", "NNA": "NOUN", "NE": "PROPN", "PDS": "PRON", "PDAT": "DET", "PIS": "PRON",
    "PIAT": "DET", "PIDAT": "DET", "PPER": "PRON", "PPOSS": "PRON", "PPOSAT": "DET", "PRELS": "PRON",
    "PRELAT": "DET", "PRF": "PRON", "PWS": "PRON", "PWAT": "DET", "PWAV": "ADV", "PAV": "ADV", "PROAV": "ADV",
    "PTKZU": "PART", "PTKNEG": "PART", "PTKVZ": "ADP", "PTKANT": "INTJ", "PTKA": "PART", "TRUNC": "X",
    "VA": "AUX", "VM": "AUX", "VV": "VERB", "XY": "X", "$,": "PUNCT", "$.": "PUNCT", "$(": "PUNCT",
}


#: STTS tags of non-finite verb forms: a finite haben/sein/werden beside one of them is an auxiliary.
NON_FINITE = re.compile(r"^V[VAM]\((PP|INF|IZU)\)$|^V[VAM](PP|INF|IZU)$")


class Tagger(Protocol):
    name: str

    def tag(self, text: str) -> list[Token]:
        """Every token the tagger sees, with its span, UPOS, fine tag, features and lemma (where it gives them)."""


class StanzaTagger:
    """The paper's tagger, from locally installed Stanza models only (never downloads)."""

    def __init__(self, stanza_lang: str, model_dir: str | Path, mwt: bool = False) -> None:
        """`mwt`: the language's pipeline needs the multi-word token expander (the registry's `tagger.mwt`)."""
        import stanza

        self.name = f"stanza-{stanza.__version__}"
        processors = "tokenize,mwt,pos" if mwt else "tokenize,pos"
        self.pipeline = stanza.Pipeline(stanza_lang, dir=str(model_dir), processors=processors, download_method=None, verbose=False)

    def tag(self, text: str) -> list[Token]:
        document = self.pipeline(text)
        return [Token(t.start_char, t.end_char, t.words[0].upos, t.words[0].xpos or "", t.words[0].feats or "",
                      t.words[0].lemma or "") for s in document.sentences for t in s.tokens]


class SpacyTagger:
    """spaCy pipeline whose `pos_` is UPOS (fr_core_news_md)."""

    def __init__(self, model: str) -> None:
        import spacy

        self.name = f"spacy-{model}-{spacy.util.get_package_version(model)}"
        self.nlp = spacy.load(model, exclude=["ner", "parser", "lemmatizer"])

    def tag(self, text: str) -> list[Token]:
        return [Token(t.idx, t.idx + len(t.text), t.pos_, t.tag_, str(t.morph), t.lemma_) for t in self.nlp(text)]


class HanTaTagger:
    """HanTa's German model on spaCy's tokenisation of `lang` (the registry names HanTa for German alone), STTS
    mapped to UPOS with UD's conventions (`german_upos`)."""

    def __init__(self, lang: str) -> None:
        import spacy
        from HanTa import HanoverTagger

        self.name = "hanta-1.2.1-stts2upos-v3"
        self.tokenizer = spacy.blank(lang)
        self.tagger = HanoverTagger.HanoverTagger("morphmodel_ger.pgz")

    def tag(self, text: str) -> list[Token]:
        tokens = list(self.tokenizer(text))
        found = self.tagger.tag_sent([t.text for t in tokens], taglevel=1)
        stts = [tag for _, _, tag in found]
        return [Token(t.idx, t.idx + len(t.text), upos, tag, "", lemma)
                for t, upos, (_, lemma, tag) in zip(tokens, german_upos([t.text for t in tokens], stts), found)]


def stts_to_upos(tag: str) -> str:
    """Map an STTS tag (HanTa writes `VV(FIN)`, `ADJ(A)`) to UPOS; unknown tags become X."""
    return STTS_TO_UPOS.get(tag, STTS_TO_UPOS.get(re.sub(r"\(.*\)$", "", tag), "X"))


def german_upos(tokens: list[str], stts: list[str]) -> list[str]:
    """UPOS of a German sentence from its STTS tags, with the UD German conventions STTS does not encode:
    - haben, sein and werden (STTS VA) are auxiliaries only beside a participle or an infinitive; without one in
      the sentence they are main verbs (`Er hat ein Auto`: VERB);
    - capitalised words HanTa cannot place (STTS FM foreign material, XY non-word) are names (PROPN), not X."""
    has_non_finite = any(NON_FINITE.match(tag) for tag in stts)
    upos = []
    for token, tag in zip(tokens, stts):
        mapped = stts_to_upos(tag)
        if mapped == "AUX" and tag.startswith("VA") and not has_non_finite:
            mapped = "VERB"
        elif mapped == "X" and token[:1].isupper() and any(char.isalpha() for char in token):
            mapped = "PROPN"
        upos.append(mapped)
    return upos


def offline_tagger(spec: str, lang: str) -> Tagger:
    """The offline tagger the registry entry of `lang` names: `hanta` or `spacy:<model>`."""
    return HanTaTagger(lang) if spec == "hanta" else SpacyTagger(spec.split(":", 1)[1])


def make_tagger(lang: str, mode: str, stanza_dir: str | None) -> Tagger | None:
    """Stanza when asked for or (mode `auto`) when its local models load; else the language's offline tagger;
    None (logged) when the language has neither: its POS is not available."""
    entry = language(lang)
    if mode in ("stanza", "auto") and stanza_dir and entry.stanza:
        try:
            return StanzaTagger(entry.stanza, stanza_dir, entry.stanza_mwt)
        except Exception as exc:  # stanza raises its own ResourcesFileNotFoundError, FileNotFoundError, ImportError
            if mode == "stanza":
                raise
            log.warning("Stanza models for %s not usable from %s (%s); using the offline tagger", lang, stanza_dir, exc)
    elif mode == "stanza":
        raise ValueError("analysis.tagger is stanza but analysis.stanza_dir is not set" if not stanza_dir
                         else f"analysis.tagger is stanza but Stanza has no model for {entry.name}")
    if entry.offline_tagger is None:
        log.warning("POS not available for %s: no tagger (set analysis.stanza_dir to local Stanza models)", lang)
        return None
    return offline_tagger(entry.offline_tagger, lang)


def tag_pairs(pairs: pl.DataFrame, tagger_for: "TaggerFactory") -> pl.DataFrame:
    """Add `pos`, `tagger` and `pos_rule` to single-word pairs: the target's word for swaps, the added word otherwise,
    as the annotators tag it (clsd.analysis.conventions; pos null, and the reason in `tagger`, for a language
    without a tagger)."""

    @lru_cache(maxsize=None)
    def tagged(lang: str, text: str) -> tuple[Token, ...]:
        return tuple(tagger_for(lang).tag(text))

    tags, names, rules = [], [], []
    for row in pairs.iter_rows(named=True):
        tagger = tagger_for(row["lang"])
        if tagger is None:
            tags.append(None)
            names.append(f"none: no tagger for {row['lang']}")
            rules.append(None)
            continue
        sentence = row["target"] if row["operation"] == "swap" else row["distractor"]
        start, end = word_spans(sentence, row["lang"])[row["position"]]
        upos, rule = decide(sentence, start, end, row["lang"], list(tagged(row["lang"], sentence)), lexicon(row["lang"]))
        tags.append(upos)
        names.append(tagger.name)
        rules.append(rule)
    return pairs.with_columns(pl.Series("pos", tags, dtype=pl.String), pl.Series("tagger", names, dtype=pl.String),
                              pl.Series("pos_rule", rules, dtype=pl.String))


class TaggerFactory(Protocol):
    def __call__(self, lang: str) -> Tagger | None: ...


def tagger_factory(mode: str, stanza_dir: str | None) -> TaggerFactory:
    """One tagger per language (None: no tagger), built on first use."""
    cache: dict[str, Tagger | None] = {}

    def get(lang: str) -> Tagger | None:
        if lang not in cache:
            cache[lang] = make_tagger(lang, mode, stanza_dir)
        return cache[lang]

    return get
