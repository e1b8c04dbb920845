"""A fault-injecting OpenAI-compatible chat server on 127.0.0.1, written for the generation tests.

Each request's behaviour comes from a per-sentence plan (a list consumed in order; "ok" once it runs out):
ok, three (only three items), preamble (chatter around the list), wrong_language, reorder (the first item is
the sentence with its words reordered), refusal (HTTP 200 with a refusal and no list), 429 (with
Retry-After), 500, hang (answer after the client's timeout), malformed (invalid JSON), not_completion (JSON that is
no chat completion), html (a web page), 400, 401, 401_echo
(the refused API key in the message), length (cut at max_tokens), malformed_json (an answer that is half a JSON
object). A request with `response_format` gets the JSON object of four strings instead of a numbered list (the
plan's faults applied to it: three strings, numbered strings for preamble, a cut object; free_text: the numbered list
of an endpoint that ignores response_format). Judge
requests ("Do these two ... sentences have the same meaning?") are answered 1 when sentence B contains one of
`equivalent`, else 0; per-item judge requests ("Does each numbered ...") get one such digit per numbered
distractor (a JSON array when the request asks for JSON).

Run as a program it stands in for llama.cpp's llama-server (`python fault_server.py --port N [--latency S]`;
the server's other arguments are accepted and ignored) and answers every request "ok". `job_config` is the
config a job asking it (or the stand-in) reads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from clsd.config import load_schema

ENDINGS = {"German": ["heute", "gestern", "morgen", "bald"], "French": ["aujourd'hui", "hier", "demain", "bientôt"]}
REFUSAL = "I'm sorry, but I can't help with creating misleading sentences."
ENGLISH = ["The council met today.", "The bank raised rates yesterday.", "Prices fell again this week.", "Flights were cancelled tomorrow."]


def defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """The defaults of an object schema, nested objects filled in too."""
    return {name: defaults(sub) if "properties" in sub else sub.get("default") for name, sub in schema["properties"].items()}


def job_config(store: Path, base_url: str | None, gguf: Path | None = None, **generation: Any) -> dict[str, Any]:
    """The config a job asking an endpoint reads (`generation:` with the schema's defaults, model `fault`): a remote
    endpoint at `base_url`, or (None) a local server loading the file `gguf`."""
    section = defaults(load_schema()["properties"]["generation"]) | {"model": "fault", "base_url": base_url, "store": str(store)}
    section["local"] |= {"gguf": None if gguf is None else str(gguf), "n_ctx": 256}
    return {"generation": section | generation}


def distractors_for(sentence: str, language: str) -> list[str]:
    """Four distinct, same-language variants: the sentence with a time word added."""
    stem = sentence.rstrip(".")
    return [f"{stem} {word}." for word in ENDINGS[language]]


#: Rewrites of a test sentence's end (its last k words replaced): the farther variants an endpoint asked for more than
#: four sentences (generation.candidates) writes after distractors_for's near-copies.
TAILS = {"German": [(3, "alten Sporthallen abgelehnt"), (6, "Verkauf des alten Rathauses an Investoren abgelehnt")],
         "French": [(3, "vieux gymnases fermés"), (6, "la vente de l'ancienne mairie à des investisseurs")]}


def candidates_for(sentence: str, language: str, n: int) -> list[str]:
    """`n` distinct variants: distractors_for's four near-copies, then rewrites of the sentence's end (TAILS)."""
    words = sentence.rstrip(".").split()
    rewrites = [" ".join(words[:-k] + [tail]) + "." for k, tail in TAILS[language]]
    variants = distractors_for(sentence, language) + rewrites
    if n > len(variants):
        raise ValueError(f"the fault server writes at most {len(variants)} variants, not {n}")
    return variants[:n]


def broken(sentence: str) -> str:
    """The sentence with its longest word broken as a small model breaks a copied word (a letter doubled:
    `Grundschulen` → `Grundschuulen`): a non_word, and a broken copy of a target word (clsd.validate.mend)."""
    word = max(sentence.rstrip(".").split(), key=len)
    return sentence.replace(word, word[:-4] + word[-4] + word[-4:], 1)


def fronted(sentence: str) -> str:
    """The test sentence with its time adverbial moved to the front, subject and verb inverted: the same meaning
    (`Der Stadtrat Q hat am Dienstag …` → `Am Dienstag hat der Stadtrat Q …`), a reorder the validator rejects."""
    match = re.fullmatch(r"Der (Stadtrat \S+) hat am Dienstag (.*)", sentence)
    if match is None:
        raise ValueError(f"not a test sentence: {sentence!r}")
    return f"Am Dienstag hat der {match.group(1)} {match.group(2)}"


@dataclass

class Seen:
    time: float
    sentence: str
    behaviour: str
    authorization: str
    body: dict[str, Any] = field(default_factory=dict)  # the request's JSON


@dataclass
class FaultServer:
    plans: dict[str, list[str]] = field(default_factory=dict)
    latency: float = 0.0
    hang_seconds: float = 3.0
    retry_after: str = "1"
    equivalent: tuple[str, ...] = ()
    port: int = 0
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> "FaultServer":
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fault server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        app = web.Application()
        self.routes(app)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()

    def routes(self, app: web.Application) -> None:
        """The endpoints served (tests/batch_server.py adds the Batch API's)."""
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)

    # -- handlers -------------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fault", "object": "model"}]})

    def requests_for(self, fragment: str) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if fragment in s.sentence]

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self.complete(await request.json(), request.headers.get("Authorization", ""))

    async def complete(self, body: dict[str, Any], authorization: str) -> web.Response:
        """The answer to one chat completion request `body` (sent with the `authorization` header)."""
        content = body["messages"][-1]["content"]
        if content.startswith("Do these two"):
            return self._judge(body, content)
        if content.startswith("Does each numbered"):
            return self._judge_item(body, content)
        language = "German" if "Answer in German!" in content else "French"
        sentence = content.split("\n", 1)[1].strip()
        with self._lock:
            plan = next((steps for fragment, steps in self.plans.items() if fragment in sentence), None)
            behaviour = plan.pop(0) if plan else "ok"
            self.seen.append(Seen(time.monotonic(), sentence, behaviour, authorization, body))
        if self.latency:
            await asyncio.sleep(self.latency)
        if behaviour == "429":
            return web.json_response({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": self.retry_after})
        if behaviour in ("500", "400", "401"):
            return web.json_response({"error": {"message": f"injected {behaviour}"}}, status=int(behaviour))
        if behaviour == "400_field":  # llama-server refusing one sampling field's value, in its own words
            message = "Field 'dry_penalty_last_n': Value must be between 0 <= value <= 2147483647, but got -1"
            return web.json_response({"error": {"message": message}}, status=400)
        if behaviour == "401_echo":  # a server that repeats the key it refused
            key = authorization.removeprefix("Bearer ")
            return web.json_response({"error": {"message": f"Incorrect API key provided: {key}"}}, status=401)
        if behaviour == "hang":
            await asyncio.sleep(self.hang_seconds)
        if behaviour == "malformed":
            return web.Response(text='{"id": "x", "choices": [', content_type="application/json")
        if behaviour == "not_completion":  # JSON, but no chat completion (a proxy's own answer)
            return web.json_response({"foo": 1})
        if behaviour == "html":  # a web page where the API should be (a wrong base_url behind a web server)
            return web.Response(text="<!doctype html><html><body>Welcome</body></html>", content_type="text/html")
        lines = distractors_for(sentence, language)
        if body.get("response_format"):
            return self._json_answer(body, behaviour, sentence, language, lines)
        if behaviour == "three":
            text = "\n".join(f"{i}. {t}" for i, t in enumerate(lines[:3], 1))
        elif behaviour == "preamble":
            text = "Sure! Here are four tricky sentences:\n\n" + "\n".join(f"{i}) **{t}**" for i, t in enumerate(lines, 1)) + "\n\nI hope this helps."
        elif behaviour == "reorder":
            text = "\n".join(f"{i}. {t}" for i, t in enumerate([fronted(sentence), *lines[1:]], 1))
        elif behaviour == "broken":
            text = "\n".join(f"{i}. {t}" for i, t in enumerate([broken(lines[0]), *lines[1:]], 1))
        elif behaviour == "broken_and_whole":  # a broken copy of a variant, then the variant itself
            text = "\n".join(f"{i}. {t}" for i, t in enumerate([broken(lines[0]), *lines[:3]], 1))
        elif behaviour == "length":  # cut at max_tokens in the middle of the fourth sentence
            text = "\n".join(f"{i}. {t}" for i, t in enumerate(lines, 1))[:-12]
            return self._answer(body, text, finish_reason="length")
        elif behaviour == "refusal":
            text = REFUSAL
        elif behaviour == "wrong_language":
            text = "\n".join(f"{i}. {t}" for i, t in enumerate(ENGLISH, 1))
        else:
            text = "\n".join(f"{i}. {t}" for i, t in enumerate(lines, 1))
        return self._answer(body, text)

    def _json_answer(self, body: dict, behaviour: str, sentence: str, language: str, lines: list[str]) -> web.Response:
        """What an endpoint decoding to the request's JSON schema answers: as many strings as it asks for, except for the faults a
        schema cannot rule out (cut at max_tokens, a refusal) and those of endpoints that ignore it (three
        strings, not JSON at all)."""
        n = body["response_format"]["json_schema"]["schema"]["properties"]["sentences"]["maxItems"]
        if n > len(lines):
            lines = candidates_for(sentence, language, n)
        sentences = {"three": lambda: lines[:3], "reorder": lambda: [fronted(sentence), *lines[1:]], "wrong_language": lambda: ENGLISH,
                     "broken": lambda: [broken(lines[0]), *lines[1:]],
                     "again": lambda: [f"Auch {line[:1].lower()}{line[1:]}" for line in lines],  # other sentences
                     "preamble": lambda: [f"{i}. {t}" for i, t in enumerate(lines, 1)]}.get(behaviour, lambda: lines)()
        text = json.dumps({"sentences": sentences}, ensure_ascii=False)
        if behaviour == "length":  # cut at max_tokens inside the fourth string
            return self._answer(body, text[:-12], finish_reason="length")
        if behaviour == "refusal":
            text = REFUSAL
        elif behaviour == "free_text":  # an endpoint that ignores response_format: the paper's numbered list
            text = "\n".join(f"{i}. {t}" for i, t in enumerate(lines, 1))
        elif behaviour == "malformed_json":
            text = text[: len(text) // 2]
        return self._answer(body, text)

    def _answer(self, body: dict, text: str, finish_reason: str = "stop") -> web.Response:
        return web.json_response({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 40, "total_tokens": 90},
        })

    def _judge(self, body: dict, content: str) -> web.Response:
        distractor = next(line for line in content.splitlines() if line.startswith("Sentence B: "))[len("Sentence B: "):]
        with self._lock:
            self.seen.append(Seen(time.monotonic(), distractor, "judge", ""))
        same = any(fragment in distractor for fragment in self.equivalent)
        return self._answer(body, "1" if same else "0")

    def _judge_item(self, body: dict, content: str) -> web.Response:
        """The per-item judge: one verdict per numbered distractor (a JSON array when asked for one); each
        distractor is recorded as judged."""
        distractors = re.findall(r"^\d+\. (.*)$", content.split("Reference: ", 1)[1], flags=re.MULTILINE)
        with self._lock:
            self.seen.extend(Seen(time.monotonic(), distractor, "judge", "") for distractor in distractors)
        same = [int(any(fragment in distractor for fragment in self.equivalent)) for distractor in distractors]
        if body.get("response_format"):
            return self._answer(body, json.dumps({"verdicts": same}))
        return self._answer(body, "\n".join(f"{i}. {verdict}" for i, verdict in enumerate(same, 1)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="a stand-in for llama.cpp's llama-server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=0.0)
    args, _ = parser.parse_known_args()
    server = FaultServer(port=args.port, latency=args.latency)
    asyncio.run(server._main())
