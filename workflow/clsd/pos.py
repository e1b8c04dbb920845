"""Universal POS tags of the token that a single-word distractor changed.

The paper's tagger is Stanza; it is used when its models are available locally (`stanza_dir`, loaded with
`download_method=None`). Offline fallbacks: spaCy `fr_core_news_md` for French, HanTa (STTS mapped to
UPOS) for German. The whole sentence is tagged and the tag aligned to the whitespace token by character
offsets; every tag records the tagger that produced it.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import polars as pl

log = logging.getLogger(__name__)

#: STTS (as HanTa writes it, bracketed suffixes stripped) → UPOS, following the UD German conversion.
STTS_TO_UPOS = {
    "ADJ": "ADJ", "ADJA": "ADJ", "ADJD": "ADJ", "ADV": "ADV", "APPR": "ADP", "APPRART": "ADP", "APPO": "ADP",
    "APZR": "ADP", "ART": "DET", "CARD": "NUM", "FM": "X", "ITJ": "INTJ", "KOUI": "SCONJ", "KOUS": "SCONJ",
    "KON": "CCONJ", "KOKOM": "CCONJ", "NN": "NOUN", "NE": "PROPN", "PDS": "PRON", "PDAT": "DET", "PIS": "PRON",
    "PIAT": "DET", "PIDAT": "DET", "PPER": "PRON", "PPOSS": "PRON", "PPOSAT": "DET", "PRELS": "PRON",
    "PRELAT": "DET", "PRF": "PRON", "PWS": "PRON", "PWAT": "DET", "PWAV": "ADV", "PAV": "ADV", "PROAV": "ADV",
    "PTKZU": "PART", "PTKNEG": "PART", "PTKVZ": "ADP", "PTKANT": "INTJ", "PTKA": "PART", "TRUNC": "X",
    "VA": "AUX", "VM": "AUX", "VV": "VERB", "XY": "X", "$,": "PUNCT", "$.": "PUNCT", "$(": "PUNCT",
}

Span = tuple[int, int, str]


class Tagger(Protocol):
    name: str

    def tag(self, text: str) -> list[Span]:
        """(start, end, UPOS) of every token the tagger sees."""


class StanzaTagger:
    """The paper's tagger, from locally installed Stanza models only (never downloads)."""

    def __init__(self, lang: str, model_dir: str | Path) -> None:
        import stanza

        self.name = f"stanza-{stanza.__version__}"
        self.pipeline = stanza.Pipeline(lang, dir=str(model_dir), processors="tokenize,mwt,pos", download_method=None, verbose=False)

    def tag(self, text: str) -> list[Span]:
        document = self.pipeline(text)
        return [(t.start_char, t.end_char, t.words[0].upos) for s in document.sentences for t in s.tokens]


class SpacyTagger:
    """spaCy pipeline whose `pos_` is UPOS (fr_core_news_md)."""

    def __init__(self, model: str) -> None:
        import spacy

        self.name = f"spacy-{model}-{spacy.util.get_package_version(model)}"
        self.nlp = spacy.load(model, exclude=["ner", "parser", "lemmatizer"])

    def tag(self, text: str) -> list[Span]:
        return [(t.idx, t.idx + len(t.text), t.pos_) for t in self.nlp(text)]


class HanTaTagger:
    """HanTa's German model on spaCy's German tokenisation, STTS mapped to UPOS."""

    def __init__(self) -> None:
        import spacy
        from HanTa import HanoverTagger

        self.name = "hanta-1.2.1-stts2upos"
        self.tokenizer = spacy.blank("de")
        self.tagger = HanoverTagger.HanoverTagger("morphmodel_ger.pgz")

    def tag(self, text: str) -> list[Span]:
        tokens = list(self.tokenizer(text))
        tags = self.tagger.tag_sent([t.text for t in tokens], taglevel=0)
        return [(t.idx, t.idx + len(t.text), stts_to_upos(tag)) for t, tag in zip(tokens, tags)]


def stts_to_upos(tag: str) -> str:
    """Map an STTS tag (HanTa writes `VV(FIN)`, `ADJ(A)`) to UPOS; unknown tags become X."""
    return STTS_TO_UPOS.get(tag, STTS_TO_UPOS.get(re.sub(r"\(.*\)$", "", tag), "X"))


OFFLINE_TAGGERS = {"fr": lambda: SpacyTagger("fr_core_news_md"), "de": HanTaTagger}


def make_tagger(lang: str, mode: str, stanza_dir: str | None) -> Tagger:
    """Stanza when asked for or (mode `auto`) when its local models load; else the offline tagger."""
    if mode in ("stanza", "auto") and stanza_dir:
        try:
            return StanzaTagger(lang, stanza_dir)
        except Exception as exc:  # stanza raises its own ResourcesFileNotFoundError, FileNotFoundError, ImportError
            if mode == "stanza":
                raise
            log.warning("Stanza models for %s not usable from %s (%s); using the offline tagger", lang, stanza_dir, exc)
    elif mode == "stanza":
        raise ValueError("analysis.tagger is stanza but analysis.stanza_dir is not set")
    if lang not in OFFLINE_TAGGERS:
        raise ValueError(f"no offline POS tagger for language {lang!r}; set analysis.stanza_dir to Stanza models")
    return OFFLINE_TAGGERS[lang]()


def whitespace_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated tokens of `text`."""
    return [m.span() for m in re.finditer(r"\S+", text)]


def tag_of_token(spans: list[Span], start: int, end: int) -> str:
    """UPOS of a whitespace token: the first non-punctuation tagger token inside it, else the first one."""
    inside = [tag for s, e, tag in spans if s < end and e > start]
    if not inside:
        return "X"
    return next((tag for tag in inside if tag != "PUNCT"), inside[0])


def tag_pairs(pairs: pl.DataFrame, tagger_for: "TaggerFactory") -> pl.DataFrame:
    """Add `pos` and `tagger` to single-word pairs: the target's token for swaps, the added token otherwise."""

    @lru_cache(maxsize=None)
    def tagged(lang: str, text: str) -> tuple[Span, ...]:
        return tuple(tagger_for(lang).tag(text))

    tags, names = [], []
    for row in pairs.iter_rows(named=True):
        sentence = row["target"] if row["operation"] == "swap" else row["distractor"]
        start, end = whitespace_spans(sentence)[row["position"]]
        tags.append(tag_of_token(list(tagged(row["lang"], sentence)), start, end))
        names.append(tagger_for(row["lang"]).name)
    return pairs.with_columns(pl.Series("pos", tags, dtype=pl.String), pl.Series("tagger", names, dtype=pl.String))


class TaggerFactory(Protocol):
    def __call__(self, lang: str) -> Tagger: ...


def tagger_factory(mode: str, stanza_dir: str | None) -> TaggerFactory:
    """One tagger per language, built on first use."""
    cache: dict[str, Tagger] = {}

    def get(lang: str) -> Tagger:
        if lang not in cache:
            cache[lang] = make_tagger(lang, mode, stanza_dir)
        return cache[lang]

    return get
