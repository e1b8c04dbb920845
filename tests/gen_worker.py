"""Generation in a separate process, wired like the generate_distractors script (the endpoint factory with its
recorded run and SIGTERM taken as Ctrl-C), for the kill and interrupt tests:

    python gen_worker.py BASE_URL STORE N CONCURRENCY [LATENCY]

BASE_URL `local` starts a stand-in local server (tests/fault_server.py run as a program, answering after LATENCY
seconds) through the factory, like llama-server; `llama` starts the real llama-server with the real local model
(CONCURRENCY slots). Prints the report's figures as JSON.
"""

import functools
import json
import os
import sys
from pathlib import Path

from clsd.generate import llm
from clsd.generate.llm_endpoint import open_endpoint
from clsd.serving.server import LlamaServer
from clsd.generate.settings import generation_settings
from conftest import MODEL_STORE
from fault_server import job_config

ROOT = Path(__file__).resolve().parents[1]

base_url, store_path, n, concurrency = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
latency = sys.argv[5] if len(sys.argv) > 5 else "0"
local, real = base_url in ("local", "llama"), base_url == "llama"
os.environ["CLSD_WORKER_KEY"] = "k"
if real:
    gguf = MODEL_STORE / "qwen2.5-coder-1.5b-instruct-q4_k_m" / "model.gguf"
    server = LlamaServer
else:
    gguf = store_path.with_suffix(".gguf")
    gguf.write_bytes(b"a stand-in for the weights")
    server = functools.partial(LlamaServer, program=[sys.executable, str(ROOT / "tests/fault_server.py"), "--latency", latency])
config = job_config(store_path, None if local else base_url, gguf, api_key_env="CLSD_WORKER_KEY", timeout=120 if real else 10,
                    concurrency=concurrency)
config["generation"]["local"] |= {"slots": concurrency, "n_ctx": 1024 if real else 256}
items = [(i, f"Der Stadtrat Nummer {i} hat am Dienstag den Bau von drei neuen Schulen genehmigt.") for i in range(n)]

with open_endpoint(config, [], os.cpu_count() if real else 1, os.devnull, server=server) as endpoint:
    settings = generation_settings(config["generation"], (ROOT / "resources/prompts/paper-v1.txt").read_text(), endpoint.id)
    generator = endpoint.generator(settings, dataset="worker", lang="de", run=endpoint.start_run("worker", "de"))
    table, report = llm.generate(items, "de", generator, {"prompt_per_1k": 1.0, "completion_per_1k": 1.0}, "llm:fault")
print(json.dumps({"new_responses": report["new_responses"], "rows": table.height, "all_runs": report["all_runs"]}))
