"""Distractor validity: rules that catch a "distractor" that certainly keeps the meaning of its target.

A distractor that only moves an adverbial, swaps two coordinated items, changes punctuation, case or
whitespace, copies the target, is written in another language or contains a misspelt word does not test
semantic discrimination: a model that ranks it first is not wrong about meaning, or the item tests spelling.
The rules reject only what certainly keeps the meaning. A reorder they cannot prove harmless (a subject and an
object trading places, two numbers trading places, a negation moving to another verb) is kept and noted as
`reorder_suspect`: role swaps are exactly where the paper found models fail. The rules run on every distractor
set (LLM, rule-based and published); an optional LLM judge (clsd.validate.judge) then sees every distractor
the rules kept, suspects included, and catches paraphrases the rules cannot see. Every language is handled the
same way; what differs is data in the language registry (resources/languages.yaml).

Reasons, checked in this order (the first that applies is reported):
- copy: equal to the target up to case, spacing and the language's final punctuation (clsd.core.text.normalise),
  where case does not carry meaning, or the whole target in capitals or small letters in any language;
- surface_only: the same units (clsd.validate.tokens: words, numbers, signs, symbols) in the same order; only
  punctuation, case, whitespace, apostrophe style, hyphenation or marks optional in writing (Arabic harakat: the
  registry's `validation.optional_marks`) differ. Case is kept where it carries meaning (German `Sie`/`sie`:
  `validation.case_sensitive`);
- reorder: the same units in another order, by a move that cannot change who did what to whom
  (clsd.validate.reorder). Any other reorder is kept and noted `reorder_suspect`;
- cut_off: the target's first or last units only, at least two left out, or a sentence that stops where its target
  ends its sentence (clsd.validate.cutoff): less of the same meaning, or no sentence, not another meaning;
- wrong_language: the distractor is in another language than the target or holds letters of a script neither
  its language nor the target uses (clsd.core.detect.other_language), or holds words its own lexicon lacks
  and a foreign lexicon knows (*backers* in French: clsd.validate.lexicon.foreign_words);
- unrelated: the distractor shares too little with its target to be an adversarial example: its closeness
  (clsd.validate.closeness, the Levenshtein ratio of the two sentences' words) is below `min_closeness`. It also
  catches a sentence in another language that the language detector is not sure of;
- non_word: a word that is not in the target and that the language's lexicon does not know
  (clsd.validate.lexicon; names are left out where case shows them). In a script without case a name cannot be
  told from a misspelling, nor a lower-case word several other languages list (a brand, a name), nor a rare loan
  reading one edit from a far more frequent word (*tackelte*, *wackelte*): such a distractor is kept and noted
  `non_word_suspect` (clsd.validate.lexicon.undecided). A capital is evidence of a name only where something
  attests it (the lexicon, the target, other languages' word lists): an unattested first word one edit from a
  frequent word is a misspelling (non_word); an unattested capitalised word elsewhere is `wrong_language` when
  another language's lexicon knows it (`du Stalemate` in French), else kept as `non_word_suspect`
  (clsd.validate.lexicon.unattested_capitals). A word whose case breaks inside it (*VerzöGERung*, *katjaKipping*)
  is a non_word where it is a known word or the target's own miscased or run together, and kept as
  `non_word_suspect` where nothing attests it or shows it broken (clsd.validate.miscased).

Generation may mend before it drops (`generation.mend_broken_words`, clsd.validate.mend): a sentence rejected as
non_word, or kept as a non_word_suspect, only for words that are its target's words broken while copied is checked
again with them put back, and kept as mended, with what was written listed, when that passes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable

from clsd.core.detect import other_language
from clsd.core.languages import language
from clsd.core.text import normalise
from clsd.validate.closeness import MIN_CLOSENESS, closeness
from clsd.validate.cutoff import cut_off
from clsd.validate.lexicon import Capitals, Lexicon, foreign_words, lexicon, undecided, unattested_capitals, unknown_words
from clsd.validate.mend import mended
from clsd.validate.miscased import Miscased, miscased_words
from clsd.validate.reorder import reorder_move
from clsd.validate.tokens import forms, surface
from clsd.validate.verdicts import (
    CUT_OFF,
    JUDGE_DIFFERENT,
    JUDGE_REASON,
    JUDGE_SAME,
    JUDGE_UNCLEAR,
    SUSPECT,
    UNKNOWN_SUSPECT,
    UNRELATED,
    Verdict,
)


def recased_whole(text: str) -> bool:
    """Whether every letter of `text` has the same case (`DER RAT HAT …`, `der rat hat …`): a sentence written so
    is its target re-cased, even in a language whose case carries meaning word by word (German Sie/sie)."""
    return text == text.upper() or text == text.lower()


def rule_verdict(target: str, distractor: str, lang: str, lex: Lexicon | None,
                 min_closeness: float = MIN_CLOSENESS) -> Verdict:
    """The first rule `distractor` breaks against `target` (clsd.validate.verdicts.RULE_REASONS, in that order), or
    a valid verdict, noted as a suspect when it is a reorder no rule can prove harmless. A distractor whose
    closeness to the target is below `min_closeness` is `unrelated` (its detail gives the closeness)."""
    if normalise(distractor, lang) == normalise(target, lang) and recased_whole(distractor):
        return Verdict("copy")  # the whole sentence in capitals or small letters: no word's case carries meaning then
    if surface(distractor, lang) == surface(target, lang):
        return Verdict("copy" if normalise(distractor, lang) == normalise(target, lang) else "surface_only")
    if Counter(forms(target, lang)) == Counter(forms(distractor, lang)):
        return Verdict("reorder") if reorder_move(target, distractor, lang) else Verdict(note=SUSPECT)
    cut = cut_off(target, distractor, lang)
    if cut is not None:
        return Verdict(CUT_OFF, detail=cut)
    other = other_language(target, distractor, lang)
    if other is not None:
        return Verdict("wrong_language", detail=other)
    close = closeness(target, distractor, lang)
    if close < min_closeness:
        return Verdict(UNRELATED, detail=f"closeness {close:.2f} < {min_closeness:g}")
    unknown = unknown_words(target, distractor, lex) if lex is not None else []
    foreign = foreign_words(unknown, lang) if unknown else None
    if foreign is not None:
        return Verdict("wrong_language", detail=f"{foreign[0]}: {', '.join(foreign[1])}")
    miscase = miscased_words(target, distractor, lex) if lex is not None else Miscased([], [])
    if unknown and not miscase.broken and (not language(lang).cased or undecided(unknown, lex)):
        return Verdict(note=UNKNOWN_SUSPECT, detail=", ".join(unknown), unknown=tuple(unknown))  # names or loans
    if unknown or miscase.broken:
        words = list(dict.fromkeys(unknown + miscase.broken))
        return Verdict("non_word", detail=", ".join(words), unknown=tuple(words))
    capitals = unattested_capitals(target, distractor, lex) if lex is not None else Capitals([], [], [])
    if capitals.misspelt:
        return Verdict("non_word", detail=", ".join(capitals.misspelt), unknown=tuple(capitals.misspelt))
    stray = foreign_words([word.lower() for word in capitals.unattested], lang) if capitals.unattested else None
    if stray is not None:  # a capitalised word of another language (du Stalemate), not a name
        return Verdict("wrong_language", detail=f"{stray[0]}: {', '.join(stray[1])}")
    if capitals.unattested or capitals.foreign or miscase.unattested:
        unattested = list(dict.fromkeys(capitals.unattested + capitals.foreign + miscase.unattested))
        return Verdict(note=UNKNOWN_SUSPECT, detail=", ".join(unattested), unknown=tuple(unattested))
    return Verdict()


@dataclass
class Validator:
    """Rule checks, then (optionally) the judge, for distractors in language `lang`.

    `check_item(target, distractors)` gives the full Verdict of each distractor of one item (a suspect is valid, so
    generation never re-asks it; it keeps one with unattested words only where too few others are valid). The judge sees every distractor the rules keep, suspects included: `judge_item(target,
    distractors)` in one request per item, or `judge(target, distractor)` once per distractor; each answers True when
    a distractor means the same as the target, False when it differs and None when its answer cannot be read
    (counted as `judge_unclear`, the distractor is kept).
    """

    lang: str
    rules: bool = True
    min_closeness: float = MIN_CLOSENESS
    judge: Callable[[str, str], bool | None] | None = None
    judge_item: Callable[[str, list[str]], list[bool | None]] | None = None
    unclear: Counter = field(default_factory=Counter)

    @property
    def lexicon_name(self) -> str | None:
        """Name and version of the lexicon the non_word rule uses (None: no lexicon, or rules off)."""
        lex = lexicon(self.lang) if self.rules else None
        return lex.name if lex is not None else None

    def check_item(self, target: str, distractors: list[str], mend: bool = False) -> list[Verdict]:
        """The verdict of each of one item's distractors. With `mend` (generation's `mend_broken_words`), a
        distractor rejected as non_word or kept as non_word_suspect whose unknown words are all broken copies of
        target words (clsd.validate.mend: *Grundschuulen* is no name when the target says *Grundschulen*) is checked
        again as mended, and kept as such (`Verdict.mended`) when that passes; the judge then reads the mended one."""
        verdicts = [self._rules(target, text) for text in distractors]
        if mend:
            verdicts = [self._mended(target, text, found) for text, found in zip(distractors, verdicts)]
        kept = [i for i, found in enumerate(verdicts) if found.reason is None]
        if not kept or (self.judge is None and self.judge_item is None):
            return verdicts
        texts = [found.mended or text for text, found in zip(distractors, verdicts)]
        if self.judge_item is not None:
            same = self.judge_item(target, [texts[i] for i in kept])
        else:
            same = [self.judge(target, texts[i]) for i in kept]
        for i, answer in zip(kept, same):
            if answer is None:
                self.unclear["judge_unclear"] += 1
                verdicts[i] = replace(verdicts[i], judged=JUDGE_UNCLEAR)
            elif answer:
                verdicts[i] = Verdict(JUDGE_REASON, note=verdicts[i].note, judged=JUDGE_SAME)
            else:
                verdicts[i] = replace(verdicts[i], judged=JUDGE_DIFFERENT)
        return verdicts

    def _rules(self, target: str, text: str) -> Verdict:
        return rule_verdict(target, text, self.lang, lexicon(self.lang), self.min_closeness) if self.rules else Verdict()

    def _mended(self, target: str, text: str, found: Verdict) -> Verdict:
        """`found`, or the verdict on `text` with its broken copies of target words put back where it was rejected
        as non_word, or kept as a suspect, for them alone and passes the rules so."""
        if not found.unknown:
            return found
        fixed = mended(target, text, found.unknown, self.lang)
        again = self._rules(target, fixed.text) if fixed is not None else None
        if again is None or again.reason is not None or again.unattested:
            return found
        return replace(again, mended=fixed.text, mends=fixed.detail())

    def check(self, target: str, distractor: str) -> Verdict:
        return self.check_item(target, [distractor])[0]

    def reason(self, target: str, distractor: str) -> str | None:
        return self.check(target, distractor).reason
