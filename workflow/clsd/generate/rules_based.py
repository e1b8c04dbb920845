"""A rule-based distractor baseline in the spirit of XSim++: deterministic edits that change meaning.

The paper asks whether "simpler methods might suffice"; this generator answers with the same output
schema as the LLM. Edits, in order: change the first number, swap a word along a cycle (weekday, month,
place, country, number word, actor), replace a word by its antonym, insert a negation after the first
auxiliary/finite verb. The first four distinct results are kept; items with fewer fail with a reason.

The word lists of a language are data (resources/rules/<file>.yaml, schema workflow/schemas/rules.schema.yaml):
a file that does not match the schema is an error naming the file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from clsd.core.items import N_DISTRACTORS
from clsd.core.workflow import read_checked_yaml

#: The schema of the word lists: part of the code identity of the rules that read them (clsd.core.code).
DATA_FILES = ("workflow/schemas/rules.schema.yaml",)

NUMBER = re.compile(r"\d+")
WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Lexicon:
    """Word lists of one language (resources/rules/<lang>.yaml)."""

    cycles: list[list[str]]
    antonyms: dict[str, str]
    negate_after: list[str]
    negated: str  #: the negated form of a verb, e.g. "ne {verb} pas"
    elided: str | None = None  #: the form before a letter of `elide_before`, e.g. "n'{verb} pas"
    elide_before: str = ""

    @classmethod
    def load(cls, path: str | Path) -> "Lexicon":
        """The word lists of `path`, checked against the schema (InputError naming the file and the key)."""
        data = read_word_lists(path)
        antonyms = dict(data["antonyms"])
        antonyms |= {b: a for a, b in data["antonyms"].items() if b not in antonyms}
        negation = data["negation"]
        return cls(data["cycles"], antonyms, negation["after"], negation["form"], negation.get("elided"),
                   negation.get("elide_before", ""))

    def negate(self, verb: str) -> str:
        """The negated form of a finite verb in this language (the word lists say how)."""
        form = self.elided if self.elided and verb[:1].lower() in self.elide_before else self.negated
        return form.format(verb=verb)


def read_word_lists(path: str | Path) -> dict:
    """The word lists of `path` as YAML data, valid against workflow/schemas/rules.schema.yaml."""
    return read_checked_yaml(Path(path), DATA_FILES[0], "the rule-based word lists")


def replace_word(sentence: str, old: str, new: str) -> str:
    """Replace the first whole-word occurrence of `old`, keeping the rest byte for byte."""
    return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new, sentence, count=1)


def change_number(sentence: str) -> str | None:
    match = NUMBER.search(sentence)
    if match is None:
        return None
    value = int(match.group())
    return sentence[: match.start()] + str(value + 1 if value < 1000 else value + 10) + sentence[match.end() :]


def cycle_swaps(sentence: str, lexicon: Lexicon) -> list[str]:
    words = WORD.findall(sentence)
    results = []
    for cycle in lexicon.cycles:
        for word in words:
            if word in cycle:
                results.append(replace_word(sentence, word, cycle[(cycle.index(word) + 1) % len(cycle)]))
                break
    return results


def antonym_swap(sentence: str, lexicon: Lexicon) -> str | None:
    word = next((w for w in WORD.findall(sentence) if w in lexicon.antonyms), None)
    return None if word is None else replace_word(sentence, word, lexicon.antonyms[word])


def negate(sentence: str, lexicon: Lexicon) -> str | None:
    """The sentence with its first finite verb of the word lists negated."""
    tokens = sentence.split(" ")
    for i, token in enumerate(tokens):
        if token in lexicon.negate_after:
            tokens[i] = lexicon.negate(token)
            return " ".join(tokens)
    return None


def perturb(sentence: str, lexicon: Lexicon) -> list[str]:
    """Up to four distinct meaning-changing edits of `sentence`, in a fixed order."""
    candidates = [change_number(sentence), *cycle_swaps(sentence, lexicon), antonym_swap(sentence, lexicon), negate(sentence, lexicon)]
    unique: list[str] = []
    for text in candidates:
        if text and text != sentence and text not in unique:
            unique.append(text)
    return unique[:N_DISTRACTORS]


def generate(items: list[tuple[int, str]], lang: str, lexicon: Lexicon, label: str) -> tuple[pl.DataFrame, list[dict[str, object]]]:
    """Distractor rows of every item with four edits, and the failures (fewer applicable edits)."""
    rows, failures = [], []
    for item_id, sentence in items:
        edits = perturb(sentence, lexicon)
        if len(edits) < N_DISTRACTORS:
            failures.append({"id": item_id, "lang": lang, "reason": f"only {len(edits)} rule-based edits apply"})
            continue
        rows += [{"id": item_id, "lang": lang, "k": k, "text": t, "generator": label, "source": "rules"} for k, t in enumerate(edits, 1)]
    schema = {"id": pl.Int64, "lang": pl.String, "k": pl.Int64, "text": pl.String, "generator": pl.String, "source": pl.String}
    return pl.DataFrame(rows, schema=schema), failures
