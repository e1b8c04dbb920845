"""The optional LLM judge: does a distractor keep the meaning of its target (a paraphrase, not a distractor)?

One request per (target, distractor) at temperature 0 to the same endpoint and model as generation, through
the same response store: a rerun asks nothing, and the validation stage reuses the generation's verdicts.
"""

from __future__ import annotations

import re

from clsd.data.corpora import LANGUAGE_NAMES
from clsd.generate.llm import Generator

YES = {"yes", "ja", "oui", "same", "equivalent"}
NO = {"no", "nein", "non", "different"}
JUDGE_MAX_TOKENS = 8


def judge_messages(template: str, lang: str, target: str, distractor: str) -> list[dict[str, str]]:
    """The judge's single user message."""
    content = (template.rstrip("\n").replace("{language}", LANGUAGE_NAMES[lang])
               .replace("{target}", target).replace("{distractor}", distractor))
    return [{"role": "user", "content": content}]


def verdict(answer: str) -> bool | None:
    """True for "same meaning", False for "different", None when the first word says neither."""
    match = re.search(r"[^\W\d_]+", answer.casefold())
    if match is None:
        return None
    word = match.group()
    return True if word in YES else False if word in NO else None


class Judge:
    """`judge(target, distractor)` for one language, asking through a Generator whose settings are the judge's
    (temperature 0, a few tokens); answers are stored like every response."""

    def __init__(self, generator: Generator, template: str, lang: str) -> None:
        self.generator = generator
        self.template = template
        self.lang = lang

    def __call__(self, target: str, distractor: str) -> bool | None:
        response = self.generator.response(judge_messages(self.template, self.lang, target, distractor), attempt=0)
        return verdict(response.text)
