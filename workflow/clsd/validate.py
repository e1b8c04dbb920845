"""Distractor validity: rules that catch a "distractor" that cannot differ in meaning from its target.

A distractor that only reorders the target's words, changes only punctuation, case or whitespace, copies the
target or contains a word no dictionary knows does not test semantic discrimination: a model that ranks it
first is not wrong about meaning, or the item tests spelling. The rules run on every distractor set (LLM,
rule-based and published); an optional LLM judge (clsd.generate.judge) adds paraphrases the rules cannot see.

Reasons, checked in this order (the first that applies is reported):
- copy: equal to the target up to case, spacing and final punctuation (clsd.text.normalise);
- surface_only: the same words in the same order, only punctuation, case or whitespace differ;
- reorder: the same multiset of words in another order, unless exactly two words trade places: that
  exchanges roles ("Nantes beat Bordeaux" → "Bordeaux beat Nantes") and changes the meaning;
- non_word: a lower-case word that is not in the target and not in the language's wordfreq word list
  (German compounds count as known when they split into listed words).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from clsd.text import normalise

log = logging.getLogger(__name__)

RULE_REASONS = ("copy", "surface_only", "reorder", "non_word")
JUDGE_REASON = "judged_equivalent"
WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*|\d+", re.UNICODE)
# Elided words before an apostrophe (l'Europe, qu'il, jusqu'à) are no words of their own.
ELISIONS = {"c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu"}
# Shortest part of a German compound checked against the lexicon; linking elements between parts.
MIN_PART = 4
LINKS = ("", "s", "es", "n", "en", "e", "er")


def tokens(text: str) -> list[str]:
    """The words (letters, with inner hyphens and apostrophes) and numbers of a sentence, NFC-normalised (a
    decomposed accent is not a word boundary)."""
    return [match.group() for match in WORD.finditer(unicodedata.normalize("NFC", text))]


def words(text: str) -> list[str]:
    """The case-folded tokens of a sentence: what is compared for copies, surface edits and reorders."""
    return [token.casefold() for token in tokens(text)]


class WordList:
    """Known words of one language: wordfreq's `large` list (Wikipedia, subtitles, news, books, web; words seen
    at least about once per 10^8 words), a real packaged word list, not one we curate."""

    def __init__(self, lang: str) -> None:
        from wordfreq import get_frequency_dict

        self.lang = lang
        self._words = get_frequency_dict(lang, wordlist="large")
        self._compounds = lang == "de"

    def known(self, word: str) -> bool:
        """A listed word (also spelt with ss for ß, oe for œ, or ß for ss), a number, a combination of known parts joined
        by hyphens, or (German) a compound of listed words joined by a linking element."""
        word = word.lower()
        if word.isdigit() or word in self._words:
            return True
        if "-" in word:
            return all(not part or self.known(part) for part in word.split("-"))
        variants = {word.casefold(), word.replace("œ", "oe"), word.replace("ss", "ß")} - {word}  # wordfreq folds ß
        if any(variant in self._words for variant in variants):
            return True
        return self._compounds and self._compound(word)

    @lru_cache(maxsize=65536)
    def _compound(self, word: str) -> bool:
        for i in range(MIN_PART, len(word) - MIN_PART + 1):
            head, tail = word[:i], word[i:]
            if head not in self._words:
                continue
            for link in LINKS:
                rest = tail[len(link):] if tail.startswith(link) else None
                if rest and len(rest) >= MIN_PART and (rest in self._words or self._compound(rest)):
                    return True
        return False


@lru_cache(maxsize=None)
def word_list(lang: str) -> WordList | None:
    """The word list of `lang`, or None (logged) when wordfreq has none for it."""
    from wordfreq import available_languages

    if lang not in available_languages("large"):
        log.warning("wordfreq has no large word list for %r: the non_word rule is not applied", lang)
        return None
    return WordList(lang)


def checked_word(token: str) -> str | None:
    """The part of a token the word list is asked about: an elided article or pronoun (l', d', qu') is
    dropped; None for names and other capitalised words, which are open classes no word list covers (German
    nouns are capitalised too and are left unchecked)."""
    parts = re.split(r"['’]", token)
    if len(parts) > 1 and parts[0].lower() in ELISIONS:
        token = "'".join(parts[1:])
    return token if token and token[0].islower() else None


def unknown_words(target: str, distractor: str, lexicon: WordList) -> list[str]:
    """Lower-case words of `distractor` absent from `target` that the word list does not know."""
    in_target = set(words(target))
    checked = (checked_word(token) for token in tokens(distractor) if token.casefold() not in in_target)
    return [word for word in checked if word is not None and not all(lexicon.known(p) for p in re.split(r"['’]", word) if p)]


def is_exchange(target: list[str], distractor: list[str]) -> bool:
    """Two word sequences that differ only by two words trading places (a role swap)."""
    differing = [i for i, (a, b) in enumerate(zip(target, distractor)) if a != b]
    if len(target) != len(distractor) or len(differing) != 2:
        return False
    i, j = differing
    return target[i] == distractor[j] and target[j] == distractor[i]


def rule_reason(target: str, distractor: str, lexicon: WordList | None) -> str | None:
    """The first rule `distractor` breaks against `target` (see RULE_REASONS), or None when it passes."""
    if normalise(distractor) == normalise(target):
        return "copy"
    t, d = words(target), words(distractor)
    if t == d:
        return "surface_only"
    if Counter(t) == Counter(d) and not is_exchange(t, d):
        return "reorder"
    if lexicon is not None and unknown_words(target, distractor, lexicon):
        return "non_word"
    return None


@dataclass
class Validator:
    """Rule checks, then (optionally) the judge: `reason(target, distractor)` is None for a valid distractor.

    `judge(target, distractor)` answers True when the two sentences mean the same, False when they differ
    and None when its answer cannot be read (counted as `judge_unclear`, the distractor is kept).
    """

    lang: str
    rules: bool = True
    judge: Callable[[str, str], bool | None] | None = None
    unclear: Counter = field(default_factory=Counter)

    def reason(self, target: str, distractor: str) -> str | None:
        if self.rules:
            reason = rule_reason(target, distractor, word_list(self.lang))
            if reason is not None:
                return reason
        if self.judge is not None:
            verdict = self.judge(target, distractor)
            if verdict is None:
                self.unclear["judge_unclear"] += 1
            elif verdict:
                return JUDGE_REASON
        return None
