"""A fault-injecting OpenAI-compatible embedding server on 127.0.0.1 (`POST /v1/embeddings`), for the endpoint tests.

Each request's behaviour comes from a plan per text fragment (a list consumed in order, one step per request holding
the fragment; "ok" once it runs out): ok, 429 (with Retry-After), 500, hang (answer after the client's timeout), short
(one vector less than the inputs), shuffled (the items in reverse order, each with its right index), repeated (index
0 twice), wrong_dims (vectors two dimensions short), nan (a NaN in the first vector), zeros (a first vector of zeros),
401, 404, 401_echo (the refused API key in the message), html (a web page with status 200), broken_json (a 200 whose
JSON body is cut off). The vector of a text is fixed by the text (`vector_of`), of
`dimensions` values when the request asks for them, else DIMENSION; `usage.prompt_tokens` counts its words plus two.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from dataclasses import dataclass, field

import numpy as np
from aiohttp import web
from fault_server import FaultServer

DIMENSION = 8


def vector_of(text: str, dimension: int = DIMENSION) -> list[float]:
    """The vector the server answers for `text`: random, unit length, seeded by the text."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(dimension)
    return (vector / np.linalg.norm(vector)).tolist()


def tokens_of(text: str) -> int:
    return len(text.split()) + 2


@dataclass
class Asked:
    time: float
    inputs: list[str]
    behaviour: str
    authorization: str


@dataclass
class EmbeddingServer(FaultServer):
    asked: list[Asked] = field(default_factory=list)

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_post("/v1/embeddings", self._embeddings)

    def texts_sent(self) -> list[str]:
        """Every input of every request, in the order they came (faults included)."""
        with self._lock:
            return [text for asked in self.asked for text in asked.inputs]

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        authorization = request.headers.get("Authorization", "")
        with self._lock:
            plan = next((steps for fragment, steps in self.plans.items() if any(fragment in text for text in inputs)), None)
            behaviour = plan.pop(0) if plan else "ok"
            self.asked.append(Asked(time.monotonic(), inputs, behaviour, authorization))
        if self.latency:
            await asyncio.sleep(self.latency)
        if behaviour == "429":
            return web.json_response({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": self.retry_after})
        if behaviour in ("500", "401", "404"):
            return web.json_response({"error": {"message": f"injected {behaviour}"}}, status=int(behaviour))
        if behaviour == "401_echo":
            key = authorization.removeprefix("Bearer ")
            return web.json_response({"error": {"message": f"Incorrect API key provided: {key}"}}, status=401)
        if behaviour == "html":  # a proxy's login page, a web UI on the configured port
            return web.Response(text="<!doctype html><html><body>Please log in</body></html>", content_type="text/html")
        if behaviour == "broken_json":
            return web.Response(text='{"object": "list", "data": [{"index": 0, "embedding": [0.1,', content_type="application/json")
        if behaviour == "hang":
            await asyncio.sleep(self.hang_seconds)
        dimension = body.get("dimensions") or DIMENSION
        data = [{"object": "embedding", "index": i, "embedding": vector_of(text, dimension)} for i, text in enumerate(inputs)]
        if behaviour == "short":
            data = data[:-1]
        elif behaviour == "shuffled":
            data = data[::-1]
        elif behaviour == "repeated":
            data[-1]["index"] = 0
        elif behaviour == "wrong_dims":
            data = [item | {"embedding": item["embedding"][:-2]} for item in data]
        elif behaviour == "nan":
            data[0]["embedding"] = [math.nan, *data[0]["embedding"][1:]]
        elif behaviour == "zeros":
            data[0]["embedding"] = [0.0] * dimension
        tokens = sum(tokens_of(text) for text in inputs)
        return web.json_response({"object": "list", "model": body["model"], "data": data,
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
