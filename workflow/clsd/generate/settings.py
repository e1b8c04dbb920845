"""What LLM requests send, and what their answers depend on: the rules' params of generation and the judge.

`request_settings` is exactly what generation's requests and their keys depend on, so that it can be the
generate rule's param: the prompt and the judge prompt are inputs (their content counts, not their path),
`prices` only changes the cost estimate, `store`, `local.gguf` and `local.server` are paths on this machine (a
moved run reruns nothing), and the operational settings (`concurrency`, `local.slots`, `timeout`, `retries`,
`requests_per_minute`, `api_key_env`) change how fast requests go or whether the job fails, never an output it
writes. `answer_format` is part of every request (its response format) and so of the params. `local.recipe`
and `local.n_ctx` are no param either: the weights a local server loads are the job's input (their manifest,
or the GGUF file) and `gguf:<sha256>` of them is part of every request key, while a context size is in no key
(a stored answer is replayed whatever the server's n_ctx).

This module imports nothing heavy: the Snakefile imports it while planning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

N_SENTENCES = 4  # distractors per answer (clsd.core.items.N_DISTRACTORS, not imported: this module stays light)


def response_format(n: int = N_SENTENCES, pattern: str | None = None) -> dict[str, Any]:
    """`answer_format: json`: an object with exactly `n` non-empty strings (`generation.candidates`), each matching
    `pattern` when one is given (generation.constrain_script). Strict, so that OpenAI decodes to it too; llama.cpp
    and vLLM turn it into a grammar."""
    sentence: dict[str, Any] = {"type": "string", "minLength": 1} | ({"pattern": pattern} if pattern else {})
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "distractors",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"sentences": {"type": "array", "items": sentence,
                                             "minItems": n, "maxItems": n}},
                "required": ["sentences"],
                "additionalProperties": False,
            },
        },
    }


RESPONSE_FORMAT = response_format()


@dataclass(frozen=True)
class Settings:
    """What is sent for every request (all of it but `max_attempts` and `concurrency` is part of the request key)."""

    model: str
    template: str
    endpoint: str
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 512
    seed: int | None = None
    max_attempts: int = 3
    concurrency: int = 4
    answer_format: str = "numbered"
    extra: tuple[tuple[str, float], ...] = ()  # a local llama.cpp server's own sampling parameters (local.sampling)
    candidates: int = N_SENTENCES  # sentences asked per answer; above four, the four kept are chosen by closeness
    prompt_quotes: str = "as_written"  # curly: a target's straight double quotes are shown as “…” (clsd.generate.quotes)
    mend_broken_words: bool = False  # a non_word sentence's broken copies of target words put back (clsd.validate.mend)
    fallbacks_wait: bool = False  # a shortened or unattested sentence comes in only once the last attempt is answered
    constrain_script: bool = False  # each JSON sentence held to its target's script (clsd.generate.script_pattern)

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters of every request (the seed only when one is set), with `answer_format` json the
        response format (the JSON schema of `candidates` sentences the endpoint decodes to), and a local server's own
        sampling parameters as `extra_body` (sent in the request's JSON; none: the request is as before)."""
        params: dict[str, Any] = {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}
        if self.seed is not None:
            params["seed"] = self.seed
        if self.answer_format == "json":
            params["response_format"] = response_format(self.candidates)
        if self.extra:
            params["extra_body"] = dict(self.extra)
        return params

    def script_format(self, sentence: str, lang: str) -> dict[str, Any]:
        """What one item's requests send besides `sampling()`: with `constrain_script` (and JSON answers) the response
        format whose sentences are held to the characters of `sentence`'s script (clsd.generate.script_pattern),
        else nothing. Every request of the item, its key and the estimate take it alike."""
        if not (self.constrain_script and self.answer_format == "json"):
            return {}
        from clsd.generate.script_pattern import sentence_pattern  # not while planning: it reads Unicode's data

        return {"response_format": response_format(self.candidates, sentence_pattern(sentence, lang))}

    def item_params(self, sentence: str, lang: str) -> dict[str, Any]:
        """Everything one item's requests send, as their keys take it: `sampling()` with the item's own format."""
        return self.sampling() | self.script_format(sentence, lang)


def generation_settings(generation: Mapping[str, Any], template: str, endpoint: str, concurrency: int | None = None) -> Settings:
    """What every generation request sends, from the `generation:` config, the prompt template and the endpoint id;
    `concurrency` (a local server's slots) replaces `generation.concurrency`."""
    return Settings(
        model=generation["model"], template=template, endpoint=endpoint, temperature=generation["temperature"],
        top_p=generation["top_p"], max_tokens=generation["max_tokens"], seed=generation["seed"],
        max_attempts=generation["max_attempts"], concurrency=concurrency or generation["concurrency"],
        answer_format=generation["answer_format"], extra=local_sampling(generation), candidates=generation["candidates"],
        prompt_quotes=generation["prompt_quotes"], mend_broken_words=generation["mend_broken_words"],
        fallbacks_wait=generation["fallbacks_wait"], constrain_script=generation["constrain_script"],
    )


def local_sampling(generation: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    """`generation.local.sampling` (llama.cpp's own sampling parameters, e.g. XTC), sorted, when the local server
    answers; a remote endpoint gets none (it may not know them)."""
    if generation["base_url"] is not None:
        return ()
    return tuple(sorted(generation["local"].get("sampling", {}).items()))


def endpoint_settings(generation: Mapping[str, Any]) -> dict[str, Any]:
    """Who answers: the model name and the remote base URL as it enters the endpoint id (None: a local server,
    whose weights are the job's input)."""
    base_url = generation["base_url"]
    return {"model": generation["model"], "base_url": None if base_url is None else base_url.rstrip("/")}


def request_settings(generation: Mapping[str, Any]) -> dict[str, Any]:
    """Exactly what generation's requests, their keys and its outputs depend on (the generate rule's param):
    who answers, the sampling parameters, how often an item is re-asked, whether unusable answers are, and how many
    sentences an answer holds (above four, which four are kept depends on it), how a target's quotes are shown
    (only when not as written, so that a config without the key keeps its params) and whether broken copies of target
    words are mended, whether fallbacks wait for the last attempt and whether sentences are held to their target's
    script (only when they do, likewise)."""
    settings = generation_settings(generation, template="", endpoint="")
    quotes = {} if settings.prompt_quotes == "as_written" else {"prompt_quotes": settings.prompt_quotes}
    mend = {"mend_broken_words": True} if settings.mend_broken_words else {}
    wait = {"fallbacks_wait": True} if settings.fallbacks_wait else {}
    script = {"constrain_script": True} if settings.constrain_script else {}
    return endpoint_settings(generation) | settings.sampling() | {
        "max_attempts": settings.max_attempts, "reask_unusable": generation["reask_unusable"],
        "candidates": settings.candidates} | quotes | mend | wait | script


def template_pattern(template: str, fields: Mapping[str, str]) -> re.Pattern[str]:
    """A pattern matching the message `template` makes: each `{placeholder}` of `fields` replaced by its regex (the
    first occurrence of a capturing one), the rest of the template literal (a reader of the store finds the
    sentences its earlier messages were about)."""
    pattern = re.escape(template.rstrip("\n"))
    for name, regex in fields.items():
        pattern = pattern.replace(re.escape("{" + name + "}"), regex, 1 if "(?P<" in regex else -1)
    return re.compile(pattern, re.DOTALL)
