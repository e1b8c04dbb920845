"""Extract and validate the sentences of an LLM answer: a numbered list in free text (`answer_format: numbered`,
the paper's) or the JSON object of four strings that `answer_format: json` asks for.

Small models add preambles ("Here are four sentences:"), trailing remarks, markdown, `1)` or `1.`
numbering, blank lines, copies of the original, duplicates and sentences in the wrong language. Every
candidate is kept or rejected with a reason, so nothing is dropped silently. An answer without any list (a
refusal, chatter) is rejected whole as `refusal`; a JSON answer that is not an object with exactly four strings
(cut at max_tokens, malformed) as `malformed_json`; a numbered list in free text where the JSON schema was asked for
(an endpoint that ignores `response_format`) as `free_text`: the answer is unusable and asked again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from clsd.core.detect import other_language
from clsd.core.text import normalise
from clsd.generate.settings import N_SENTENCES

WHOLE_ANSWER = ("refusal", "free_text", "malformed_json")  # reasons that reject an answer whole, not one of its sentences
#: Words of an unusable answer quoted where it is reported (a refusal's first words say what it was).
QUOTED_WORDS = 8
NUMBERED = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?\(?(\d{1,2})\s*[.):\]]\s*(?:\*\*)?\s*(.*\S)\s*$")
QUOTES = "\"'“”„«»‚‘’ "


@dataclass
class Parsed:
    """Accepted sentences (in answer order) and rejected candidates with their reasons."""

    accepted: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)

    @property
    def no_list(self) -> bool:
        """The answer held no list of sentences at all and was rejected whole: a refusal or chatter, or JSON that
        is not four strings."""
        return any(reason in WHOLE_ANSWER for _, reason in self.rejected)


def first_words(text: str, n: int = QUOTED_WORDS) -> str:
    """The first `n` words of an answer on one line, `…` when there are more (to quote a refusal)."""
    words = text.split()
    return " ".join(words[:n]) + (" …" if len(words) > n else "")


def quote_run(text: str, end: bool = False) -> int:
    """How many quotes (and spaces) `text` starts with, or with `end` ends with."""
    return len(text) - len(text.rstrip(QUOTES) if end else text.lstrip(QUOTES))


def cleaned(text: str, original: str = "") -> str:
    """A sentence without markdown emphasis and the quotes around it that `original` has not at the same end: a
    model wraps its sentences in quotes, while a target that opens or ends with a quotation keeps its own."""
    text = text.replace("**", "").strip()
    start = max(quote_run(text) - quote_run(original), 0)
    end = max(quote_run(text, end=True) - quote_run(original, end=True), 0)
    return text[start:len(text) - end].strip() if start + end < len(text) else ""


def numbered_lines(answer: str, original: str = "") -> list[str]:
    """The text of every numbered line, markdown emphasis and the quotes around it removed (`cleaned`)."""
    return [cleaned(match.group(2), original) for match in map(NUMBERED.match, answer.splitlines()) if match]


def json_sentences(answer: str, n: int = N_SENTENCES, original: str = "") -> list[str] | None:
    """The `n` strings of a JSON answer `{"sentences": [...]}`, a leading `1.`-style number (the paper's prompt
    asks for numbered sentences) and the quotes around them removed (`cleaned`); None when the answer is anything
    else."""
    try:
        data = json.loads(answer)
    except ValueError:
        return None
    sentences = data.get("sentences") if isinstance(data, dict) else None
    if not isinstance(sentences, list) or len(sentences) != n or not all(isinstance(s, str) for s in sentences):
        return None
    return [cleaned(match.group(2) if (match := NUMBERED.match(text)) else text, original) for text in sentences]


#: Words in a row that a sentence shares with the prompt (and not with the original) to be the prompt's own text.
PROMPT_RUN = 4


def word_runs(text: str, n: int = PROMPT_RUN) -> set[tuple[str, ...]]:
    """Every run of `n` consecutive words of `text`, case-folded, punctuation at their ends left out."""
    words = [word for word in (word.strip(".,;:!?\"'()[]{}«»“”„") for word in text.casefold().split()) if word]
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def prompt_copy(text: str, original: str, prompt: str) -> bool:
    """Whether `text` holds PROMPT_RUN words in a row of the `prompt` (its instructions and examples, the original
    sentence taken out) that the original does not hold: the model copied its instructions or an example into a
    variant (`…, in Icelandic, with another kind of edit`)."""
    return bool(prompt) and bool((word_runs(text) & word_runs(prompt.replace(original, " "))) - word_runs(original))


def parse_answer(answer: str, original: str, lang: str, truncated: bool = False, answer_format: str = "numbered",
                 prompt: str = "", n: int = N_SENTENCES) -> Parsed:
    """The answer's sentences (its numbered lines, or with `answer_format` json its JSON strings) that are
    non-empty, not a copy of `original` (up to case, spacing and the language's final punctuation), not
    duplicates, and in `lang` (the validator's language check, clsd.core.detect.other_language: any registry
    language or foreign script).

    `truncated`: the answer was cut at `max_tokens` (finish_reason `length`), so its last sentence may stop
    mid-word; it is rejected (`truncated`), never taken as a distractor. Scripts that cost many tokens per word
    (Bengali, Hindi) reach the limit first. A cut JSON answer does not parse: `malformed_json`. A sentence that
    copies the `prompt`'s own wording (`prompt_copy`) is rejected as `prompt_text`. A JSON answer holds `n`
    strings (`generation.candidates`)."""
    result = Parsed()
    copy = normalise(original, lang)
    seen = {copy}
    if answer_format == "json":
        lines = json_sentences(answer, n, original)
        if lines is None:
            reason = "malformed_json" if answer.lstrip().startswith("{") else "free_text" if numbered_lines(answer) else "refusal"
            result.rejected.append((answer, reason))
            return result
        truncated = False  # n complete strings: a closed JSON object was not cut
    else:
        lines = numbered_lines(answer, original)
        if not lines:
            result.rejected.append((answer, "refusal"))
            return result
    for position, text in enumerate(lines, 1):
        key = normalise(text, lang)
        if truncated and position == len(lines):
            reason = "truncated"
        elif not key:
            reason = "empty"
        elif key == copy:
            reason = "copy"
        elif key in seen:
            reason = "duplicate"
        elif other_language(original, text, lang) is not None:
            reason = "wrong_language"
        elif prompt_copy(text, original, prompt):
            reason = "prompt_text"
        else:
            seen.add(key)
            result.accepted.append(text)
            continue
        result.rejected.append((text, reason))
    return result
