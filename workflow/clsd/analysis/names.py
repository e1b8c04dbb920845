"""Nouns the CLSD annotators tag PROPN where a tagger says NOUN, and compounds they leave NOUN.

The annotators tag as names the nouns that name a nation or a body: nationality nouns (*Franzose*, *Belgierin*),
institutions written as common nouns (*Bundesrat*, *Europarat*, *Landtag*) and compounds whose first part is a
party, a country or an institution (*SPD-Abgeordneter*, *EU-Kommissar*); a compound whose first part is no such
name keeps the tag of its common-noun head (*Brexit-Verhandlungen*: NOUN). Each is recognised by a rule on the
word's form, with the language's data in the registry (`tagger.names`) and the place names of CLDR (Babel's
territory and language names in the language itself), not by a list of the words:

- demonym: the word less an inflection (`in`, `n`) and a demonym suffix (`er`, `ier`, `e`) is the stem of a place
  name less its ending (*Belgi-er-in*: Belg-ien; *Pol-e*: Pol-en; *Franzos-e*: Französ-isch);
- institution: a polity (a territory name, or `polities`: Bund, Land), a linking element and a body (`bodies`: rat,
  tag) make the whole word (*Europa-rat*, *Bund-es-rat*, *Land-tag*);
- name compound: a hyphenated compound whose first part is a place name, an institution, an abbreviation the
  dictionary knows without a plural (*SPD*, *EU*; *TV* and *Pkw* take one, *TVs*, *Pkws*: common nouns) or a party
  named by a nominalised adjective (*Grünen*, *Linken*).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from clsd.core.languages import language
from clsd.validate.lexicon import Lexicon

#: Shortest place stem a demonym suffix attaches to (*Pol-e*: Pol-en); below it a word is more likely a common noun
#: that happens to share the letters.
MIN_STEM = 3
#: Territory codes that name no place one belongs to: the world and ISO 3166's user-assigned codes.
PRIVATE_USE = re.compile(r"^(001|AA|Q[M-Z]|X[A-Z]|ZZ)$")
#: An abbreviation: capitals, with lower-case letters inside only (*SPD*, *AfD*, *NATO*).
ABBREVIATION = re.compile(r"^[A-ZÄÖÜ][A-Za-zäöüß]*[A-ZÄÖÜ]$")


def fold(word: str) -> str:
    """Lower case without diacritics, ß as ss (*Französ* → `franzos`): place stems and words compared alike."""
    decomposed = unicodedata.normalize("NFD", word.casefold().replace("ß", "ss"))
    return "".join(char for char in decomposed if not unicodedata.category(char).startswith("M"))


def _words(name: str) -> list[str]:
    """The folded words of a place or language name, less what it says in brackets (*Saudi-Arabien*: saudi,
    arabien; *Englisch (Vereinigtes Königreich)*: englisch)."""
    return [fold(word) for word in re.split(r"[\s\-–]+", re.sub(r"\(.*?\)", " ", name)) if word]


@lru_cache(maxsize=None)
def _territories(lang: str) -> frozenset[str]:
    """CLDR's territory names in `lang` that are one word (or hyphenated words: *Saudi-Arabien*), folded; the
    words of longer names (*Vereinigte Staaten*) are no names on their own."""
    return frozenset(word for name in _places(lang) if " " not in name.strip() for word in _words(name))


def _places(lang: str) -> list[str]:
    """CLDR's names of territories and regions in `lang`, less the world and the codes ISO 3166 leaves to private
    use (pseudo-locales, unknown region)."""
    from babel import Locale

    return [name for code, name in Locale.parse(lang).territories.items() if not PRIVATE_USE.match(code)]


@lru_cache(maxsize=None)
def place_stems(lang: str) -> frozenset[str]:
    """Stems of CLDR's place names in `lang`, folded: each one-word territory name whole and less one of the
    registry's `place_endings` (*Belgien* → belg), and the adjectives of longer territory names and of the names of
    the territories' official languages less one of its `language_endings` (*Britische Jungferninseln* → brit,
    *Französisch* → franzos)."""
    from babel import Locale
    from babel.languages import get_official_languages

    rules = language(lang).names
    locale = Locale.parse(lang)
    official = {code for territory in locale.territories for code in get_official_languages(territory, de_facto=True)}
    spoken = [name for code, name in locale.languages.items() if code in official]
    adjectives = {word for name in [*_places(lang), *spoken] for word in _words(name)}
    stems = set(_territories(lang))
    for words, endings in ((_territories(lang), rules.place_endings), (adjectives, rules.language_endings)):
        stems |= {word[:-len(end)] for word in words for end in endings
                  if word.endswith(end) and len(word) - len(end) >= MIN_STEM}
    return frozenset(stems)


def _uninflected(word: str, lang: str) -> list[str]:
    """`word` folded, and less each of the registry's `names.inflections` it ends in."""
    low = fold(word)
    return [low] + [low[:-len(end)] for end in language(lang).names.inflections
                    if low.endswith(end) and len(low) > len(end)]


def demonym(word: str, lang: str) -> bool:
    """Whether `word` is a nationality noun: a place stem with a demonym suffix and an inflection (*Belgierin*,
    *Franzosen*, *Deutscher*)."""
    rules, stems = language(lang).names, place_stems(lang)
    for body in _uninflected(word, lang):
        for suffix in rules.demonym_suffixes:
            stem = body[:len(body) - len(suffix)] if body.endswith(suffix) else None
            if stem is not None and len(stem) >= MIN_STEM and stem in stems:
                return True
    return False


def institution(word: str, lang: str) -> bool:
    """Whether `word` names an institution by a polity and a body: *Bundesrat*, *Europarat*, *Landtag*, and their
    inflected forms (*Bundesrats*)."""
    entry = language(lang)
    polities = entry.names.polities | _territories(lang)
    for body in _uninflected(word, lang):
        for head in entry.names.bodies:
            first = body[:-len(head)] if body.endswith(head) else ""
            if first and any(first.endswith(link) and first[:len(first) - len(link)] in polities
                             for link in entry.compound_links):
                return True
    return False


def _party(part: str, lang: str, lex: Lexicon) -> bool:
    """A party named by a nominalised adjective in a compound's first part (*Grünen*-, *Linken*-): capitalised, in
    one of the registry's `party_endings`, an adjective in lower case (its stem too, the ending's last letter left
    off: *grüne*)."""
    low = part[:1].lower() + part[1:]
    return (part[:1].isupper() and part.endswith(language(lang).names.party_endings) and lex.common(low)
            and lex.common(low[:-1]))


def name_part(part: str, lang: str, lex: Lexicon) -> bool:
    """Whether the first part of a hyphenated compound names a country, a party or an institution."""
    if ABBREVIATION.match(part) and sum(char.isupper() for char in part) >= 2:
        return lex.common(part) and not lex.common(part + "s")
    return fold(part) in _territories(lang) or institution(part, lang) or _party(part, lang, lex)


def compound(word: str, lang: str, lex: Lexicon) -> str | None:
    """PROPN for a hyphenated noun compound whose first part is a name (*SPD-Abgeordneter*, *EU-Kommissar*), NOUN
    for one whose head is a common noun after any other first part (*Brexit-Verhandlungen*), None for a word that is
    no such compound (its head written in lower case: *US-amerikanische* is an adjective)."""
    parts = word.split("-")
    head = parts[-1]
    if len(parts) < 2 or not parts[0] or not head[:1].isupper():
        return None
    if name_part(parts[0], lang, lex):
        return "PROPN"
    return "NOUN" if lex.common(head) else None
