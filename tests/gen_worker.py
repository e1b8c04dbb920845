"""Generation in a separate process, wired like the generate_distractors script (connector, recorded run, SIGTERM
taken as Ctrl-C), for the kill and interrupt tests:

    python gen_worker.py BASE_URL STORE N CONCURRENCY [LATENCY]

BASE_URL `local` starts a stand-in local server (tests/fault_server.py run as a program, answering after LATENCY
seconds) through the connector, like a llama.cpp server. Prints the report's figures as JSON.
"""

import functools
import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path

from clsd.generate import llm
from clsd.generate.endpoint import connector
from clsd.generate.server import LlamaServer, sigterm_as_interrupt
from clsd.generate.store import ResponseStore

ROOT = Path(__file__).resolve().parents[1]

base_url, store_path, n, concurrency = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
latency = sys.argv[5] if len(sys.argv) > 5 else "0"
local = base_url == "local"
os.environ["CLSD_WORKER_KEY"] = "k"
generation = {"base_url": None if local else base_url, "api_key_env": "CLSD_WORKER_KEY", "local": {"n_ctx": 256}, "timeout": 10,
              "retries": 6, "requests_per_minute": None}
gguf = store_path.with_suffix(".gguf")
gguf.write_bytes(b"a stand-in for the weights")
server = functools.partial(LlamaServer, program=[sys.executable, str(ROOT / "tests/fault_server.py"), "--latency", latency])
endpoint = "gguf:test" if local else base_url
settings = llm.Settings(model="fault", template=(ROOT / "resources/prompts/paper-v1.txt").read_text(), endpoint=endpoint,
                        concurrency=concurrency)
items = [(i, f"Der Stadtrat Nummer {i} hat am Dienstag den Bau von drei neuen Schulen genehmigt.") for i in range(n)]

with sigterm_as_interrupt(), ExitStack() as stack:
    store = ResponseStore(store_path)
    run = store.start_run("worker", "de", endpoint, settings.model)
    generator = llm.Generator(settings, store, connector(generation, str(gguf), 1, os.devnull, stack, server=server),
                              dataset="worker", lang="de", run=run)
    table, report = llm.generate(items, "de", generator, {"prompt_per_1k": 1.0, "completion_per_1k": 1.0}, "llm:fault")
print(json.dumps({"new_responses": report["new_responses"], "rows": table.height, "all_runs": report["all_runs"]}))
