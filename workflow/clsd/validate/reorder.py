"""Reorders that certainly keep the meaning: which moves of the same units cannot change who did what to whom.

A distractor that only moves an adverbial, or swaps two coordinated items, does not test semantic
discrimination. `reorder_move` recognises, with the language's word lists (the registry's `validation` mapping):
an adverbial (opened by a word of `adverbial_heads`, or made of `time_words`) moved to or from an end of the
sentence without crossing a clause boundary (punctuation, a coordinator, a word of `clause_words`); in a
`verb_second` language an adverbial fronted with the subject and the finite verb trading places; a reported
clause and its reporting clause (`reporting` verbs) trading ends; two coordinated noun phrases (opened by
`noun_phrase_starts`, a number or a capital) trading places at an end of the sentence. Any other reorder is a
suspect. A language without these lists gets only the coordination swap of numbers and (in a cased script)
capitalised names: its other reorders stay suspects (the safe side).
"""

from __future__ import annotations

from typing import Sequence

from clsd.core.languages import language
from clsd.validate.tokens import Unit, forms, units

#: Longest speaker of a reporting clause ("der Minister", "la porte-parole du gouvernement").
MAX_SPEAKER = 6
#: Longest adverbial moved without a comma marking it off (longer ones must be set off by punctuation).
MAX_BARE_ADVERBIAL = 4


def is_adverbial(phrase: list[str], lang: str) -> bool:
    """A phrase opened by a preposition, subordinator or adverb that can move freely (`adverbial_heads`), or made
    of time words and numbers with at least one time word (mardi, lundi matin; a bare number is no adverbial)."""
    if not phrase:
        return False
    lists = language(lang).validation
    return phrase[0] in lists.adverbial_heads or (
        any(w in lists.time_words for w in phrase) and all(w in lists.time_words or w[:1].isdigit() for w in phrase))


def _set_off(sentence: Sequence[Unit], start: int, end: int) -> bool:
    """Whether punctuation separates units [start, end) from the unit before or the unit after them."""
    return (start > 0 and sentence[start].after_punct) or (end < len(sentence) and sentence[end].after_punct)


def _crosses_clause(forms: list[str], sentence: Sequence[Unit], start: int, end: int, lang: str) -> bool:
    """Whether units [start, end) hold a clause boundary: punctuation between two of them, a coordinator or a
    word that opens a clause (`clause_words`; an elided qu' too). An adverbial that jumps over one may change the
    clause it belongs to ("Il a dit lundi qu'elle partirait" → "Il a dit qu'elle partirait lundi")."""
    entry = language(lang)
    openers = entry.validation.clause_words | entry.coordinators
    if any(sentence[k].after_punct for k in range(start + 1, end)):
        return True
    return any(form in openers or form[:form.find("'") + 1] in openers for form in forms[start:end] if form)


def _edge_move(a: list[str], b: list[str], a_units: Sequence[Unit], b_units: Sequence[Unit], lang: str) -> bool:
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


def _verb_second_fronting(a: list[str], b: list[str], b_units: Sequence[Unit], lang: str) -> bool:
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


def _reporting_swap(a: list[str], b: list[str], a_units: Sequence[Unit], b_units: Sequence[Unit], lang: str) -> bool:
    """`a` = speaker + reporting verb + reported clause, `b` = reported clause + the reporting clause (speaker
    and verb in either order), the reported clause set off by punctuation in both ("Der Minister sagte, X" ↔
    "X, sagte der Minister"; "The minister said: X" ↔ "X, the minister said")."""
    verbs, n = language(lang).validation.reporting, len(a)
    for speaker in range(1, min(n - 1, MAX_SPEAKER + 1)):
        for size in (1, 2, 3):
            reporting, clause = a[:speaker + size], a[speaker + size:]
            verb = a[speaker:speaker + size]
            if not clause or not set(verb) <= verbs or not a_units[speaker + size].after_punct:
                continue
            if b in (clause + verb + a[:speaker], clause + reporting) and b_units[len(clause)].after_punct:
                return True
    return False


def _noun_phrase_start(forms: list[str], sentence: Sequence[Unit], index: int, lang: str) -> bool:
    """Whether the unit at `index` can open a noun phrase: a determiner or preposition (`noun_phrase_starts`, an
    elided l' or d' too), a number, or a capitalised word (a name, a German noun) inside the sentence."""
    starts = language(lang).validation.noun_phrase_starts
    form, unit = forms[index], sentence[index]
    return (form in starts or form[:form.find("'") + 1] in starts or unit.kind == "number"
            or (unit.text[:1].isupper() and not unit.opens))


def _coordination_swap(a: list[str], b: list[str], a_units: Sequence[Unit], b_units: Sequence[Unit], lang: str) -> bool:
    """Two noun phrases joined by a coordinator (and, und, et, or ...) trade places, and the pair starts or ends
    the sentence: "Paris et Lyon ont gagné" ↔ "Lyon et Paris ont gagné". Inside a sentence the swap could join
    the object of one clause to the subject of the next ("Le PSG a battu Lyon et Marseille a perdu"), and two
    coordinated verb phrases may tell events in order ("a pris sa clé et est sorti"); without a parser those
    are suspects."""
    coordinators = language(lang).coordinators
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
    t_units, d_units = units(target, lang), units(distractor, lang)
    t, d = forms(target, lang), forms(distractor, lang)
    for a, b, a_units, b_units in ((t, d, t_units, d_units), (d, t, d_units, t_units)):
        if _edge_move(a, b, a_units, b_units, lang) or _coordination_swap(a, b, a_units, b_units, lang):
            return True
        if language(lang).validation.verb_second and _verb_second_fronting(a, b, b_units, lang):
            return True
        if _reporting_swap(a, b, a_units, b_units, lang):
            return True
    return False
