"""The offline round trip with a batch runner (vLLM's `python -m vllm.entrypoints.openai.run_batch`): the requests a
job still needs, written as a batch input file, and the runner's output file read into the response store.

Both files are OpenAI's Batch API format: one JSON object a line, a request (`custom_id` = its request key,
`method`, `url`, `body`) or its result (`custom_id`, `response: {status_code, body: chat.completion}`, `error`).
An output line is stored as the same Response row a request sent by the job writes (counted as new in the job's
run), so the store's guarantees hold; a line already stored is skipped, a failed line is left to the next
requests file. Every `custom_id` must be a request of this job (an item of its dataset and language, an attempt
up to `max_attempts`): any other is an error naming the file and line, so an output of another job, prompt or
model is never read as this one's.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from clsd.core.errors import InputError
from clsd.generate.batch import Request, jsonl, read_line, request_line
from clsd.generate.llm import Generator

log = logging.getLogger(__name__)


def answer(path: str | Path, generator: Generator, items: list[tuple[int, str]], lang: str, requests_file: str) -> None:
    """Read the output file at `path` into the store (`ingest`); then raise InputError when items still need a
    request (their next attempt), naming `requests_file`, where the `generation_requests` rule writes them."""
    ingest(path, generator, items, lang)
    missing = generator.missing(items, lang)
    if missing:
        raise InputError(f"{len(missing)} requests of this job are not answered by {path}: build {requests_file} "
                         f"(`snakemake --cores 1 {requests_file}`), run it through the batch runner and append its output "
                         f"to {path}, then run again (generation.batch_output sends no request)")


def write_requests(path: str | Path, requests: dict[str, Request], model: str) -> None:
    """The requests as a batch input file (written whole, then renamed: never half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(jsonl([request_line(request, model) for request in requests.values()]))
    partial.replace(path)


def ingest(path: str | Path, generator: Generator, items: list[tuple[int, str]], lang: str) -> int:
    """Store every answered line of the batch output file at `path` that the store lacks; how many were new.
    Raises InputError naming the file and line for a line that is not JSON or answers no request of this job."""
    path = Path(path)
    known = generator.requests(items, lang)
    new = failed = 0
    with path.open(encoding="utf-8") as lines:
        for number, text in enumerate(lines, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}, line {number}: not a JSON object ({exc})") from None
            key = line.get("custom_id") if isinstance(line, dict) else None
            if key not in known:
                raise InputError(f"{path}, line {number}: custom_id {key!r} is no request of this job (dataset "
                                 f"{generator.dataset}, language {lang}, model {generator.settings.model}, this prompt and "
                                 f"sampling, attempts up to {generator.settings.max_attempts}): is it another job's output?")
            found = read_line(line)
            if isinstance(found, str):
                failed += 1
                log.warning("%s, line %d: the request failed (%s); it is written to the next requests file", path, number, found)
            elif generator.store.get(key) is None:
                generator.keep(known[key], found, lang)
                new += 1
    log.info("%s: %d new answers stored, %d failed lines", path, new, failed)
    return new
