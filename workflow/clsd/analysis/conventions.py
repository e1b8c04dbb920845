"""The UPOS of a changed word as the CLSD annotators tag it: the tagger's tag of the word that changed, corrected by
rules where taggers follow other conventions.

The paper's POS figures count the tag of the word a single-word distractor changed. Taggers follow their treebank's
conventions and tag whitespace tokens piece by piece; the annotators tag the word a reader sees change. Each rule
below is a convention, not a list of words (a language's data in the registry's `tagger` entry: `propn`, `names`),
and each tag records the rule that decided it (`pos_rule`; `tagger` when no rule applied):

- number: a number, whatever its separators and trailing punctuation (`1.500.000.`, `26.469,89`), is NUM;
- elision: an elided article or preposition (l', d', qu') is not the word that changed: the tag is that of the word
  after the apostrophe (`l’économie` is NOUN);
- participle: a participle the tagger calls VERB used attributively (before a noun, or right after one where
  adjectives follow their noun: *la décision annoncée*; `adjectives_after_nouns`), not right after an auxiliary
  (*a approuvé mardi*), is ADJ;
- adjective / degree: an adjective in its short form (STTS ADJD) is ADJ, predicative (*die Lage bleibt schwierig*,
  *das macht sie unruhig*) or adverbial (*er hat gut abgeschnitten*), as UD converts ADJD; ADV only as the degree of
  the adjective or adverb right after it (*extrem schwierig*);
- propn: words the language lists as names by convention (French months) are PROPN;
- demonym / institution / compound (languages with `names` in the registry; clsd.analysis.names): a nationality
  noun (*Franzose*), an institution named by a polity and a body (*Bundesrat*) and a hyphenated compound whose
  first part is a party, a country or an institution (*SPD-Abgeordneter*) are PROPN; a hyphenated compound with
  any other first part is its common-noun head, NOUN (*Brexit-Verhandlungen*);
- nominalised: a capitalised word the tagger calls PROPN after a determiner whose lower-case form is a common word
  (*die Grünen*, *den Linken*) is NOUN;
- name: a capitalised word inside the sentence that the tagger does not call PROPN and the dictionary does not know
  (a surname tagged NOUN, or ADV) is PROPN.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from clsd.analysis import names
from clsd.core.languages import Names, language
from clsd.validate.lexicon import Lexicon
from clsd.validate.tokens import OPENERS

#: A number as a whitespace token: digits with separators, signs, brackets and trailing punctuation.
NUMBER = re.compile(r"^[(\[«\"'„“]*[+\-−]?\d(?:[\d.,'’\u202f\u00a0]*\d)?[.,;:!?)\]»\"'“”%]*$")


class Token(NamedTuple):
    """One token a tagger sees: its span, UPOS, fine tag (STTS, spaCy's tag), features (UD FEATS) and lemma."""

    start: int
    end: int
    upos: str
    xpos: str = ""
    feats: str = ""
    lemma: str = ""


def inside(tokens: list[Token], start: int, end: int) -> list[Token]:
    """The tokens overlapping [start, end)."""
    return [token for token in tokens if token.start < end and token.end > start]


def content_start(text: str, start: int, end: int, lang: str) -> int:
    """Where the word at text[start:end] begins after an elided article or preposition (`l’économie`: at é)."""
    match = re.match(r"[(«\"„“]*(\w+)['’]", text[start:end])
    return start + match.end() if match and match.group(1).lower() in language(lang).elisions else start


def tagged_word(tokens: list[Token], start: int, end: int) -> Token | None:
    """The first non-punctuation token inside a word, else its first token."""
    found = inside(tokens, start, end)
    return next((token for token in found if token.upos != "PUNCT"), found[0] if found else None)


def _neighbours(tokens: list[Token], token: Token) -> tuple[Token | None, Token | None]:
    """The nearest non-punctuation tokens before and after `token` (itself punctuation or not)."""
    i = tokens.index(token)
    before = next((t for t in reversed(tokens[:i]) if t.upos != "PUNCT"), None)
    return before, next((t for t in tokens[i + 1:] if t.upos != "PUNCT"), None)


def _participle(token: Token) -> bool:
    return "VerbForm=Part" in token.feats or bool(re.match(r"^V[VAM]\(?PP", token.xpos))


def _degree(tokens: list[Token], token: Token) -> bool:
    """An adjective in its short form right before an adjective or adverb modifies it as a degree (*extrem
    schwierig*, *völlig neu*): the one adverbial use the annotators tag ADV."""
    i = tokens.index(token)
    return i + 1 < len(tokens) and tokens[i + 1].upos in ("ADJ", "ADV")


def _opens(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in OPENERS


def decide(text: str, start: int, end: int, lang: str, tokens: list[Token], lex: Lexicon | None) -> tuple[str, str]:
    """(UPOS, rule) of the word at text[start:end] as the annotators tag it; rule `tagger` when none applied."""
    word = text[start:end]
    if NUMBER.match(word):
        return "NUM", "number"
    begin = content_start(text, start, end, lang)
    token = tagged_word(tokens, begin, end)
    if token is None:
        return "X", "tagger"
    rule = "elision" if begin != start and token != tagged_word(tokens, start, end) else "tagger"
    entry = language(lang)
    core = text[begin:end].strip(".,;:!?()[]«»\"'„“”")
    if core.lower() in entry.propn_words:
        return "PROPN", "propn"
    before, after = _neighbours(tokens, token)
    if token.upos in ("VERB", "AUX") and _participle(token):
        attributive = (after is not None and after.upos == "NOUN") or (
            entry.adjectives_after_nouns and before is not None and before.upos == "NOUN")
        if attributive and (before is None or before.upos != "AUX"):  # a approuvé mardi: a compound tense
            return "ADJ", "participle"
    if token.xpos.startswith("ADJ(D)") or token.xpos == "ADJD":
        return ("ADV", "degree") if _degree(tokens, token) else ("ADJ", "adjective")
    capital = core[:1].isupper() and not core.isupper()
    if entry.names != Names() and token.upos in ("NOUN", "PROPN") and capital and lex is not None:
        if "-" in core:
            tag = names.compound(core, lang, lex)
            if tag is not None:
                return tag, "compound"
        elif names.demonym(core, lang):
            return "PROPN", "demonym"
        elif names.institution(core, lang):
            return "PROPN", "institution"
    if token.upos == "PROPN" and capital and before is not None and before.upos == "DET" and lex is not None \
            and lex.common(core.lower()):
        return "NOUN", "nominalised"
    if (token.upos != "PROPN" and capital and not _opens(text, start) and lex is not None
            and not lex.common(core) and not lex.common(core.lower())):
        return "PROPN", "name"
    return token.upos, rule
