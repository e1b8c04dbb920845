"""What the `non_word` rejects of a generator are: each unknown word set beside the words of its target.

A word the lexicon does not know is one of three kinds here: within two edits of a word of the target (*liberalale*
for *liberale*: the target's own word broken while being copied, which a sampler such as DRY forces where it
penalises the next piece of a copied word), two of the target's words run together (*derFreiheit*: a space left out),
or another broken word. bench/generate.py reports the counts per setting; run on a finished run's generation reports
(results/generation/<dataset>/<lang>.json, each rejected sentence with its reason) it prints them per dataset and
language.

Usage: python bench/non_words.py [ROOT]   (the folder a run ran in, holding its results/; default: the repository)
"""

from __future__ import annotations

import argparse
import json
import logging
import re
from collections import Counter
from pathlib import Path

from rapidfuzz.distance import Levenshtein

from _common import log_to_stdout

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("bench.non_words")

#: The kinds, in the order they are tried.
NEAR, RUN_TOGETHER, OTHER = "near a word of the target", "target words run together", "other"
#: Edits within which an unknown word counts as a broken word of the target.
MAX_EDITS = 2


def kind(word: str, target_words: list[str], run_together: set[str]) -> str:
    """NEAR, RUN_TOGETHER or OTHER for `word`, an unknown word of a distractor whose target has `target_words`
    (lower case), `run_together` every two of them written as one."""
    low = word.lower()
    if low in run_together:
        return RUN_TOGETHER
    if any(Levenshtein.distance(low, other, score_cutoff=MAX_EDITS) <= MAX_EDITS for other in target_words):
        return NEAR
    return OTHER


def kinds(rejected: list[tuple[str, str]], lang: str) -> dict[str, int]:
    """Counts per kind of the unknown words in `rejected`, (target, distractor) pairs the validator rejected as
    non_word in language `lang` (the words are those its verdict names). The target's words are its runs of word
    characters, not the validator's units: a hyphenated unit (*EU-Neustart*) is split, so that a broken part of it
    (*Neustrat*) is near its part."""
    from clsd.validate.lexicon import lexicon
    from clsd.validate.validator import rule_verdict

    lex, counts = lexicon(lang), Counter()
    for target, text in rejected:
        words = [word.lower() for word in re.findall(r"\w+", target)]
        run_together = {first + second for first in words for second in words}
        counts.update(kind(word, words, run_together) for word in rule_verdict(target, text, lang, lex).unknown)
    return {name: counts[name] for name in (NEAR, RUN_TOGETHER, OTHER)}


def run_kinds(root: Path) -> dict[str, dict[str, int]]:
    """The kinds per `<dataset>/<lang>` of every LLM generation report of the run in folder `root` (its results/)."""
    import polars as pl

    from clsd.core.paths import GENERATION_REPORT, PARALLEL

    found = {}
    for report in sorted(root.glob(GENERATION_REPORT.format(dataset="*", lang="*"))):
        record = json.loads(report.read_text(encoding="utf-8"))
        if "rejected" not in record:
            continue
        dataset, lang = record["dataset"], record["lang"]
        parallel = pl.read_parquet(root / PARALLEL.format(dataset=dataset))
        targets = dict(zip(parallel["id"].to_list(), parallel[lang].to_list()))
        found[f"{dataset}/{lang}"] = kinds([(targets[row["id"]], row["text"]) for row in record["rejected"]
                                            if row["reason"] == "non_word"], lang)
    return found


def main() -> None:
    log_to_stdout()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, nargs="?", default=ROOT, help="the folder the run ran in")
    for key, counts in run_kinds(parser.parse_args().root).items():
        log.info("%s: %s", key, ", ".join(f"{name} {count}" for name, count in counts.items()))


if __name__ == "__main__":
    main()
