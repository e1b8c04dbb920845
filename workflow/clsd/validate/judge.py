"""The optional LLM judge: does a distractor keep the meaning of its target (a paraphrase, not a distractor)?

Per item (`validation.judge_per: item`, the default): one request asks about every distractor of an item the rules
kept, numbered, and reads one verdict each (a JSON array of 0/1 of exactly that length where generation asks for
JSON answers, else one digit per numbered line); an answer with another number of verdicts is unusable and leaves
every distractor of the request unjudged (counted as judge_unclear, kept). Per distractor: one request per
(target, distractor), as before. Either way at temperature 0 to the same endpoint and model as generation, through
the same response store: a rerun asks nothing, and the validation stage reuses the generation's verdicts.
`judge_request_settings` is what its answers depend on (the validate rule's param): not the generation prompt,
temperature or attempts, so changing those reruns no validation of a published set. The Snakefile imports this
module while planning: the generator and endpoint are imported for their types only.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Mapping

from clsd.core.languages import language
from clsd.generate.settings import Settings, endpoint_settings, template_pattern

if TYPE_CHECKING:
    from clsd.generate.llm_endpoint import Endpoint
    from clsd.generate.llm import Generator

#: The answers of resources/prompts/judge-v2.txt: digits, whatever language the model answers in.
VERDICTS = {"1": True, "0": False}
JUDGE_MAX_TOKENS = 8
#: A per-item answer: one digit per sentence asked about (up to generation.candidates) with its number, or the JSON
#: array (about 15 tokens for four, 25 for six); room for a preamble.
ITEM_MAX_TOKENS = 64


def item_format(n: int) -> dict[str, Any]:
    """The JSON schema of a per-item answer about `n` distractors: exactly `n` verdicts, each 0 or 1."""
    return {"type": "json_schema", "json_schema": {"name": "verdicts", "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "required": ["verdicts"],
        "properties": {"verdicts": {"type": "array", "items": {"type": "integer", "enum": [0, 1]},
                                    "minItems": n, "maxItems": n}}}}}


def judge_settings(generation: Mapping[str, Any], template: str, endpoint: str, per: str = "distractor") -> Settings:
    """The judge's requests: the generation model and endpoint, greedy (temperature 0), a short answer (one digit
    per distractor, `per` item or distractor)."""
    return Settings(model=generation["model"], template=template, endpoint=endpoint, temperature=0.0, top_p=1.0,
                    max_tokens=ITEM_MAX_TOKENS if per == "item" else JUDGE_MAX_TOKENS, seed=generation["seed"],
                    max_attempts=1, concurrency=generation["concurrency"])


def judge_request_settings(generation: Mapping[str, Any], per: str = "item") -> dict[str, Any]:
    """Exactly what the judge's requests and their keys depend on (the validate rule's param when the judge is on):
    who answers, the seed, the judge's fixed sampling, whether it asks per item or per distractor and (per item)
    whether it asks for JSON."""
    fixed = judge_settings(generation, template="", endpoint="", per=per).sampling()
    return endpoint_settings(generation) | fixed | {"judge_per": per} | (
        {"answer_format": generation["answer_format"]} if per == "item" else {})


def judge_messages(template: str, lang: str, target: str, distractor: str) -> list[dict[str, str]]:
    """The judge's single user message."""
    content = (template.rstrip("\n").replace("{language}", language(lang).name)
               .replace("{target}", target).replace("{distractor}", distractor))
    return [{"role": "user", "content": content}]


def item_messages(template: str, lang: str, target: str, distractors: list[str]) -> list[dict[str, str]]:
    """The per-item judge's single user message: the distractors numbered 1., 2., ..."""
    numbered = "\n".join(f"{i}. {text}" for i, text in enumerate(distractors, 1))
    content = (template.rstrip("\n").replace("{language}", language(lang).name)
               .replace("{target}", target).replace("{distractors}", numbered))
    return [{"role": "user", "content": content}]


def item_verdicts(answer: str, n: int) -> list[bool] | None:
    """The `n` verdicts of a per-item answer: a JSON object's `verdicts` array, else one 0/1 per numbered line (`2. 0`,
    `2) 1`), else the answer's 0/1 digits in order; None unless exactly `n` come out (three verdicts for four
    distractors cannot say which one is missing)."""
    try:
        found = json.loads(answer)["verdicts"]
        digits = [str(value) for value in found] if isinstance(found, list) else []
    except (ValueError, TypeError, KeyError):
        numbered = re.findall(r"^\s*\d+\s*[.):]\s*\W*([01])\b", answer, flags=re.MULTILINE)
        digits = numbered or re.findall(r"(?<![\d.])[01](?![\d.])", answer)
    if len(digits) != n or any(digit not in VERDICTS for digit in digits):
        return None
    return [VERDICTS[digit] for digit in digits]


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


class ItemJudge:
    """`judge(target, distractors)` for one language: one request about the distractors of an item whose verdict is
    not known yet, a verdict each (None for each when the answer does not hold exactly one per distractor); `json`
    asks for a JSON array of that length (`generation.answer_format: json`).

    Every verdict read is remembered per (target, distractor), starting with those of the store's earlier per-item
    answers of this endpoint, model, language and template: a distractor kept after a re-ask, or checked again by the
    validation stage, is never asked about twice (per distractor, the store's request keys do this)."""

    def __init__(self, generator: Generator, template: str, lang: str, json_answer: bool) -> None:
        self.generator = generator
        self.template = template
        self.lang = lang
        self.json_answer = json_answer
        self.known: dict[tuple[str, str], bool] = {}
        settings = generator.settings
        pattern = item_pattern(template, lang)
        for messages, text in generator.store.answers(settings.endpoint, settings.model):
            match = pattern.fullmatch(messages[-1]["content"])
            if match is not None:
                self._remember(match.group("target"), re.findall(r"^\d+\. (.*)$", match.group("distractors"), re.M), text)

    def _remember(self, target: str, distractors: list[str], answer: str) -> list[bool] | None:
        found = item_verdicts(answer, len(distractors))
        if found is not None:
            self.known.update({(target, text): same for text, same in zip(distractors, found)})
        return found

    @classmethod
    def asking(cls, endpoint: Endpoint, template: str, lang: str, **origin: Any) -> ItemJudge:
        """The per-item judge of one job (see Judge.asking). Whether an answer is usable depends on how many
        distractors it is about, so the caller decides it (`usable` per request)."""
        settings = judge_settings(endpoint.generation, template, endpoint.id, per="item")
        return cls(endpoint.generator(settings, lang=lang, **origin), template, lang,
                   endpoint.generation["answer_format"] == "json")

    def __call__(self, target: str, distractors: list[str]) -> list[bool | None]:
        unknown = list(dict.fromkeys(text for text in distractors if (target, text) not in self.known))
        if unknown:
            n = len(unknown)
            extra = {"response_format": item_format(n)} if self.json_answer else {}
            response = self.generator.response(item_messages(self.template, self.lang, target, unknown), attempt=0,
                                               usable=lambda text: item_verdicts(text, n) is not None, extra=extra)
            self._remember(target, unknown, response.text)
        return [self.known.get((target, text)) for text in distractors]


def item_pattern(template: str, lang: str) -> re.Pattern[str]:
    """A pattern matching the per-item judge's message that `template` makes in `lang`, capturing the target and the
    numbered distractors."""
    return template_pattern(template, {"language": re.escape(language(lang).name), "target": "(?P<target>.*?)",
                                       "distractors": "(?P<distractors>(?:\\d+\\. .*\n?)+?)"})


def asking(endpoint: Endpoint, template: str, lang: str, per: str, **origin: Any) -> Judge | ItemJudge:
    """The judge of one job, per item or per distractor (`validation.judge_per`)."""
    return (ItemJudge if per == "item" else Judge).asking(endpoint, template, lang, **origin)


def validator_judge(judge: Judge | ItemJudge | None) -> dict[str, Any]:
    """The Validator argument that takes `judge`: `judge_item` for a per-item judge, `judge` for one per distractor."""
    if judge is None:
        return {}
    return {"judge_item": judge} if isinstance(judge, ItemJudge) else {"judge": judge}
