"""A re-ask that says what was wrong (`generation.reask_prompt`): the conversation so far, then what the last answer
got wrong and what is kept, and a request for only the distractors still missing.

Without a re-ask prompt an item is asked the same question again (a new attempt number, the paper's way). With one,
attempt n + 1 sends the first question, the model's last answer as its own turn, and the re-ask prompt filled in:
`{problems}`, one line per sentence of that answer not kept and why (a copy, a repeat, another language, too far
from the sentence, ...); `{kept}`, the distractors kept so far; `{count}`, how many are still missing; `{language}`.
With `answer_format: json` the response format asks for exactly `{count}` strings, so a re-ask for one distractor
decodes one sentence, not four. Everything in the messages comes from stored answers and deterministic checks, so a
rerun builds the same messages and replays the stored answer.
"""

from __future__ import annotations

import copy
from typing import Any

from clsd.core.languages import language
from clsd.generate.settings import RESPONSE_FORMAT

#: Why a sentence was not kept, as the model is told (`{language}` is filled in); reasons not listed are told as
#: GENERIC. Keys are the reasons of clsd.generate.parse and clsd.validate.verdicts.
WHY = {
    "copy": "it is the sentence itself",
    "duplicate": "it repeats another variant",
    "surface_only": "it differs from the sentence only in case, spacing or punctuation",
    "reorder": "it only moves words around, which keeps the meaning",
    "wrong_language": "it is not in {language}",
    "unrelated": "it changes too much: keep the words and the structure of the sentence",
    "non_word": "it has a word that does not exist in {language}",
    "judged_equivalent": "it means the same as the sentence",
    "truncated": "it was cut off",
    "empty": "it is empty",
}
GENERIC = "it cannot be used"
#: What the model is told when its whole answer was unusable (no list, no JSON of the asked length).
WHOLE = "Your answer held no usable list of variants."
#: `{kept}` when nothing is kept yet.
NONE_KEPT = "(none yet)"


def response_format(count: int) -> dict[str, Any]:
    """The JSON schema of `answer_format: json` asking for exactly `count` sentences."""
    found = copy.deepcopy(RESPONSE_FORMAT)
    found["json_schema"]["schema"]["properties"]["sentences"] |= {"minItems": count, "maxItems": count}
    return found


def problems(rejected: list[tuple[str, str]], lang: str, whole: bool = False) -> str:
    """One line per rejected sentence of the last answer, saying why (`whole`: the answer was unusable whole)."""
    name = language(lang).name
    lines = [WHOLE] if whole else []
    lines += [f"- “{text}”: {WHY.get(reason, GENERIC).format(language=name)}." for text, reason in rejected]
    return "\n".join(lines)


def messages(first: list[dict[str, str]], answer: str, template: str, lang: str, kept: list[str],
             rejected: list[tuple[str, str]], count: int, whole: bool = False) -> list[dict[str, str]]:
    """The re-ask after `answer` to the `first` messages: the model's answer as its turn, then `template` filled in
    with what was wrong (`rejected`: sentence and reason), the `kept` distractors and the `count` still missing."""
    content = (template.rstrip("\n").replace("{language}", language(lang).name).replace("{count}", str(count))
               .replace("{problems}", problems(rejected, lang, whole))
               .replace("{kept}", "\n".join(f"- “{text}”" for text in kept) or NONE_KEPT))
    return [*first, {"role": "assistant", "content": answer}, {"role": "user", "content": content}]
