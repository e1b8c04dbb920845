"""How close a distractor stays to its target: the paper's distractors are adversarial *because* they keep most of
the target's words and structure while changing its meaning; a sentence that shares almost nothing with its target
is no adversarial example (any model ranks the true translation above it), and it makes an item easier without
anyone saying so.

Closeness is the Levenshtein ratio of the two sentences' units (clsd.validate.tokens.forms: words, numbers, signs,
symbols, case-folded where case carries no meaning; punctuation left out), i.e. 2 × (units the two share in the same
order) / (units of both): 1 for the same units in the same order, 0 for nothing in common. It is counted in words,
not in characters, because a character ratio depends on the script: two unrelated sentences of WMT news share a
character ratio of about 0.40 in French, German, Czech, Bengali or Hindi (common letters in any order) but 0.12 in
Japanese, while their word ratio is near 0 in every script (median 0-0.10; ICU words where the script has no spaces).

`MIN_CLOSENESS` (config `validation.min_closeness`) was chosen on the published GPT-4 distractors and on unrelated
sentence pairs (docs/validation.md, "Closeness"): at 0.25 it rejects 4 of the 800 GPT-4 distractors of the two
50-item published slices (0.5%: four complete rewrites on the same template) and keeps at most 0.4% of random
pairs of sentences of similar length from the WMT/FLORES test sets in French, German, English, Czech, Japanese,
Bengali and Hindi.
"""

from __future__ import annotations

from rapidfuzz.distance import Indel

from clsd.validate.tokens import forms

#: Distractors below this closeness to their target are `unrelated` (the default of `validation.min_closeness`).
MIN_CLOSENESS = 0.25


def closeness(target: str, distractor: str, lang: str) -> float:
    """The Levenshtein ratio of the two sentences' unit forms in language `lang`, in [0, 1] (see the module)."""
    return Indel.normalized_similarity(forms(target, lang), forms(distractor, lang))
