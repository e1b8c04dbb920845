"""What the validator can say about a distractor: the rejection reasons, the suspect note and the Verdict record
(its own module so the validation report reads them without loading the rules' lexicons and word breakers)."""

from __future__ import annotations

from dataclasses import dataclass

#: A distractor equal to an earlier one of its item (clsd.validate.report.flag): an item needs four different ones.
DUPLICATE = "duplicate"
#: A distractor that shares too little with its target to be an adversarial example (clsd.validate.closeness).
UNRELATED = "unrelated"
#: A distractor that is its target's first or last words only, or stops where its target goes on (clsd.validate.cutoff).
CUT_OFF = "cut_off"
#: Rejection reasons of the rules (clsd.validate.validator and the per-item duplicate check), in the order they are checked.
RULE_REASONS = ("copy", DUPLICATE, "surface_only", "reorder", CUT_OFF, "wrong_language", UNRELATED, "non_word")
#: Rejection reason of the LLM judge (clsd.validate.judge).
JUDGE_REASON = "judged_equivalent"
#: What the judge answered about a distractor (Verdict.judged, the validated set's `judge` column).
JUDGE_SAME, JUDGE_DIFFERENT, JUDGE_UNCLEAR = "same", "different", "unclear"
#: Kept and counted, never rejected: a reorder the rules cannot prove harmless (the judge decides when it is on).
SUSPECT = "reorder_suspect"
#: Kept and counted, never rejected: words no lexicon knows in a script without case, where a name cannot be told
#: from a misspelling (ग्रीनलैंड, গিংরিচ are names, not typos).
UNKNOWN_SUSPECT = "non_word_suspect"
#: Every note a valid distractor may carry, as the validation report counts them.
SUSPECTS = (SUSPECT, UNKNOWN_SUSPECT)


@dataclass(frozen=True)
class Verdict:
    """What the validator says about one distractor: `reason` rejects it (None: valid); `note` is one of SUSPECTS
    for a distractor kept on a guess; `detail` names the unknown words or the other language. A non_word verdict
    and a non_word_suspect note list their `unknown` words; a distractor kept once its broken copies of target words were put back
    (clsd.validate.mend, generation only) carries the sentence as `mended` and what was put back as `mends`."""

    reason: str | None = None
    note: str | None = None
    detail: str | None = None
    judged: str | None = None  # the judge's answer when it was asked: JUDGE_SAME, JUDGE_DIFFERENT or JUDGE_UNCLEAR
    unknown: tuple[str, ...] = ()
    mended: str | None = None
    mends: str | None = None

    @property
    def unattested(self) -> bool:
        """A kept distractor with words nothing attests (UNKNOWN_SUSPECT): generation keeps it only where too few
        others are valid."""
        return self.note == UNKNOWN_SUSPECT
