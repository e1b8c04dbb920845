"""What generation will send and cost, known before a request is sent.

For one dataset and language: the items, the requests the response store already answers (free: a rerun replays
them), the requests still to send, their expected prompt and completion tokens, the judge's requests and tokens,
and the cost at `generation.prices`. Nothing here contacts an endpoint.

- Prompt tokens are counted from the real messages (the prompt with each sentence filled in), at the characters
  per token the store's history of this endpoint and model shows, else DEFAULT_CHARS_PER_TOKEN, plus a chat
  template overhead per request.
- Completion tokens and the re-ask rate come from the same history (answers and further attempts per item),
  else from stated defaults: `generation.candidates` sentences about as long as the one asked about, and
  DEFAULT_REASK_RATE.
- An item whose first request is stored is taken as replayed whole (its re-asks were stored in the same run).
- With `generation.batch` generation's tokens cost `generation.prices.batch_discount` of the price (OpenAI's Batch
  API: half); the judge always asks synchronously, at the full price.

Every assumption is written next to the figures (`Estimate.assumptions`), so a reader knows what to trust.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clsd.core.io import sha256_file
from clsd.core.languages import language
from clsd.generate.llm import BATCH_DISCOUNT, job_cost, messages_for
from clsd.generate.settings import Settings, template_pattern
from clsd.generate.store import ResponseStore, request_key

#: Characters per prompt token without a history: OpenAI's rule of thumb for English (German and French run
#: somewhat fewer characters per token, other scripts far fewer: the history replaces it after a first run).
DEFAULT_CHARS_PER_TOKEN = 4.0
#: Tokens a chat template adds to every request (role markers, the assistant's turn).
TEMPLATE_TOKENS = 8
#: Further requests per item without a history: measured on the default run with the local 1.5B model (32
#: requests for 24 item-languages); a strong model re-asks less.
DEFAULT_REASK_RATE = 0.33
#: Tokens around the sentences of an answer (JSON keys and quotes, or numbering).
ANSWER_OVERHEAD_TOKENS = 16
#: The judge's answer: one digit per distractor asked about, and per item their numbers or JSON around them.
JUDGE_COMPLETION_TOKENS = {"distractor": 1, "item": 16}


@dataclass(frozen=True)
class History:
    """What the store's earlier answers of one endpoint and model show: characters per prompt token, completion
    tokens per character of the sentence asked about, requests per item, and how many answers say so."""

    chars_per_token: float | None = None
    completion_per_char: float | None = None
    requests_per_item: float | None = None
    answers: int = 0


def content_chars(messages: list[dict[str, str]]) -> int:
    return sum(len(message["content"]) for message in messages)


def history(store_path: Path, endpoint: str, model: str, template: str) -> History:
    """The history of `endpoint` and `model` in the store at `store_path` (an empty History without one): only
    generation answers of this prompt `template` count for completions and re-asks (the judge's answers are short)."""
    if not store_path.exists():
        return History()
    with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT messages, attempt, prompt_tokens, completion_tokens FROM responses "
                          "WHERE endpoint = ? AND model = ? AND prompt_tokens IS NOT NULL", (endpoint, model)).fetchall()
    pattern = template_pattern(template, {"language": ".*?", "sentence": "(?P<sentence>.*)"})
    prompt_chars = prompt_tokens = sentence_chars = completions = firsts = asks = 0
    for messages_json, attempt, prompt, completion in rows:
        messages = json.loads(messages_json)
        prompt_chars += content_chars(messages)
        prompt_tokens += max(prompt - TEMPLATE_TOKENS, 1)
        match = pattern.fullmatch(messages[-1]["content"])
        if match is None or completion is None:
            continue  # a judge's request, or another prompt
        sentence = match.group("sentence")
        asks += 1
        firsts += attempt == 0
        sentence_chars += len(sentence)
        completions += completion
    return History(chars_per_token=prompt_chars / prompt_tokens if prompt_tokens else None,
                   completion_per_char=completions / sentence_chars if sentence_chars else None,
                   requests_per_item=asks / firsts if firsts else None, answers=asks)


@dataclass
class Estimate:
    """One dataset and language: what generation (and its judge) will send, and what it costs."""

    dataset: str
    lang: str
    items: int
    stored_items: int
    requests: float
    prompt_tokens: float
    completion_tokens: float
    judge_requests: float = 0.0
    judge_prompt_tokens: float = 0.0
    judge_completion_tokens: float = 0.0
    cost: float | None = None
    assumptions: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        """The figures rounded for a table (cost in USD, None without prices)."""
        data = {key: value for key, value in asdict(self).items() if key != "assumptions"}
        return {key: round(value) if isinstance(value, float) and key != "cost" else value for key, value in data.items()} | {
            "cost": None if self.cost is None else round(self.cost, 2)}


#: Column headers of the estimate table (Markdown).
HEADERS = {"dataset": "Dataset", "lang": "Language", "items": "Items", "stored_items": "Answered by the store",
           "requests": "Requests to send", "prompt_tokens": "Prompt tokens", "completion_tokens": "Completion tokens",
           "judge_requests": "Judge requests", "judge_prompt_tokens": "Judge prompt tokens",
           "judge_completion_tokens": "Judge completion tokens", "cost": "Cost (USD)"}


def estimate(dataset: str, lang: str, items: list[tuple[int, str]], settings: Settings, store: ResponseStore,
             prices: dict[str, float | None], judge: tuple[str, str] | None = None, batch: bool = False) -> Estimate:
    """What generating distractors for `items` (id, sentence) in `lang` will send and cost (see the module); `judge`
    is the judge's template and whether it asks per item or per distractor, when it is on; `batch`: generation's
    requests go through a Batch API, at `generation.prices.batch_discount` of the price (the judge's do not)."""
    past = history(Path(store.path), settings.endpoint, settings.model, settings.template)
    cpt = past.chars_per_token or DEFAULT_CHARS_PER_TOKEN
    per_item = past.requests_per_item or 1 + DEFAULT_REASK_RATE
    to_ask = []
    for _, sentence in items:
        messages = messages_for(settings.template, lang, sentence, settings.prompt_quotes)
        params = settings.item_params(sentence, lang)
        if store.get(request_key(settings.endpoint, settings.model, messages, params, 0)) is None:
            to_ask.append((sentence, messages))
    requests = per_item * len(to_ask)
    prompt = per_item * sum(math.ceil(content_chars(messages) / cpt) + TEMPLATE_TOKENS for _, messages in to_ask)
    if past.completion_per_char is not None:
        completion = per_item * sum(past.completion_per_char * len(sentence) for sentence, _ in to_ask)
    else:
        completion = per_item * sum(settings.candidates * len(sentence) / cpt + ANSWER_OVERHEAD_TOKENS
                                     for sentence, _ in to_ask)
    result = Estimate(dataset, lang, len(items), len(items) - len(to_ask), requests, prompt, completion)
    source = f"the store's {past.answers} earlier answers of this endpoint and model" if past.answers else "defaults"
    result.assumptions = [
        f"{per_item:.2f} requests per item to ask ({'history' if past.requests_per_item else f'default re-ask rate {DEFAULT_REASK_RATE}'}); "
        f"an item whose first request is stored is replayed whole",
        f"{cpt:.2f} characters per prompt token ({'history' if past.chars_per_token else 'default'}) + {TEMPLATE_TOKENS} per request",
        "completion tokens from " + (source if past.completion_per_char is not None
                                     else f"{settings.candidates} sentences as long as the one asked about + {ANSWER_OVERHEAD_TOKENS}"),
    ]
    if judge is not None:
        template, per = judge
        # the judge sees every sentence the rules keep: about `candidates` per generation answer, one request per item
        mean_sentence = sum(len(sentence) for sentence, _ in to_ask) / len(to_ask) if to_ask else 0.0
        asked = 1 + (settings.candidates if per == "item" else 1)  # the target and the distractors of one request
        chars = len(re.sub(r"\{\w+\}", "", template)) + len(language(lang).name) + asked * (mean_sentence + 4)
        result.judge_requests = requests * (1 if per == "item" else settings.candidates)
        result.judge_prompt_tokens = result.judge_requests * (math.ceil(chars / cpt) + TEMPLATE_TOKENS)
        result.judge_completion_tokens = result.judge_requests * JUDGE_COMPLETION_TOKENS[per]
        result.assumptions.append(f"the judge asks once per {per} ({settings.candidates} sentences per generation answer), "
                                  f"{JUDGE_COMPLETION_TOKENS[per]} completion tokens per request")
    result.cost = job_cost((round(result.prompt_tokens), round(result.completion_tokens)),
                           (round(result.judge_prompt_tokens), round(result.judge_completion_tokens)), prices, batch)
    if result.cost is None:
        result.assumptions.append("no cost: generation.prices is not set")
    elif batch:
        discount = prices.get("batch_discount", BATCH_DISCOUNT)
        result.assumptions.append(f"cost at generation.prices, generation's requests at the batch price: {discount:g} of it "
                                  "(generation.prices.batch_discount; the judge pays the full price)")
    else:
        result.assumptions.append("cost at generation.prices")
    return result


def planned_endpoint(generation: dict[str, Any], recipe_sha256: str | None) -> str:
    """The endpoint id generation will use (clsd.generate.llm_endpoint.endpoint_id), known without building or
    starting anything: the base URL, the sha256 of a GGUF file, or `recipe_sha256`, the one a PyPI recipe verifies."""
    if generation["base_url"] is not None:
        return generation["base_url"].rstrip("/")
    if generation["local"]["gguf"] is not None:
        return "gguf:" + sha256_file(Path(generation["local"]["gguf"]).expanduser())
    return f"gguf:{recipe_sha256}"


def log_lines(found: Estimate) -> list[str]:
    """The estimate as log lines: the figures, then each assumption."""
    cost = "no prices set" if found.cost is None else f"USD {found.cost:.2f}"
    judge = (f"; judge: {found.judge_requests:.0f} requests, {found.judge_prompt_tokens:.0f} prompt tokens"
             if found.judge_requests else "")
    return [f"estimate {found.dataset} {found.lang}: {found.items} items, {found.stored_items} answered by the store, "
            f"{found.requests:.0f} requests to send, {found.prompt_tokens:.0f} prompt and {found.completion_tokens:.0f} "
            f"completion tokens{judge}; {cost}"] + [f"  assumed: {line}" for line in found.assumptions]
