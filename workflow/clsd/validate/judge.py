"""The optional LLM judge: does a distractor keep the meaning of its target (a paraphrase, not a distractor)?

One request per (target, distractor) at temperature 0 to the same endpoint and model as generation, through
the same response store: a rerun asks nothing, and the validation stage reuses the generation's verdicts.
`judge_request_settings` is what its answers depend on (the validate rule's param): not the generation prompt,
temperature or attempts, so changing those reruns no validation of a published set. The Snakefile imports this
module while planning: the generator and endpoint are imported for their types only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping

from clsd.core.languages import language
from clsd.generate.settings import Settings, endpoint_settings

if TYPE_CHECKING:
    from clsd.generate.endpoint import Endpoint
    from clsd.generate.llm import Generator

#: The answers of resources/prompts/judge-v2.txt: digits, whatever language the model answers in.
VERDICTS = {"1": True, "0": False}
JUDGE_MAX_TOKENS = 8


def judge_settings(generation: Mapping[str, Any], template: str, endpoint: str) -> Settings:
    """The judge's requests: the generation model and endpoint, greedy (temperature 0), a one-word answer."""
    return Settings(model=generation["model"], template=template, endpoint=endpoint, temperature=0.0, top_p=1.0,
                    max_tokens=JUDGE_MAX_TOKENS, seed=generation["seed"], max_attempts=1, concurrency=generation["concurrency"])


def judge_request_settings(generation: Mapping[str, Any]) -> dict[str, Any]:
    """Exactly what the judge's requests and their keys depend on (the validate rule's param when the judge is on):
    who answers, the seed and the judge's fixed sampling."""
    return endpoint_settings(generation) | judge_settings(generation, template="", endpoint="").sampling()


def judge_messages(template: str, lang: str, target: str, distractor: str) -> list[dict[str, str]]:
    """The judge's single user message."""
    content = (template.rstrip("\n").replace("{language}", language(lang).name)
               .replace("{target}", target).replace("{distractor}", distractor))
    return [{"role": "user", "content": content}]


def verdict(answer: str) -> bool | None:
    """True for "same meaning" (1), False for "different" (0), None when the answer's first digit or word is neither:
    a digit does not depend on the language a model answers in (an unclear answer keeps the distractor)."""
    match = re.search(r"\w+", answer)
    return VERDICTS.get(match.group()) if match else None


class Judge:
    """`judge(target, distractor)` for one language, asking through a Generator whose settings are the judge's
    (temperature 0, a few tokens); answers are stored like every response."""

    def __init__(self, generator: Generator, template: str, lang: str) -> None:
        self.generator = generator
        self.template = template
        self.lang = lang

    @classmethod
    def asking(cls, endpoint: Endpoint, template: str, lang: str, **origin: Any) -> Judge:
        """The judge of one job, asking its endpoint and model through its response store; `origin` (dataset, run,
        reask_unusable) as the Generator takes it. An answer is usable when its verdict can be read."""
        settings = judge_settings(endpoint.generation, template, endpoint.id)
        return cls(endpoint.generator(settings, lang=lang, usable=lambda text: verdict(text) is not None, **origin), template, lang)

    def __call__(self, target: str, distractor: str) -> bool | None:
        response = self.generator.response(judge_messages(self.template, self.lang, target, distractor), attempt=0)
        return verdict(response.text)
