"""Batched generation in a separate process, wired like the generate_distractors script (the endpoint factory, a
recorded run, SIGTERM taken as Ctrl-C), for the kill test:

    python batch_worker.py BASE_URL STORE N POLL_S

Prints the report's figures as JSON.
"""

import json
import os
import sys
from pathlib import Path

from clsd.generate import llm
from clsd.generate.llm_endpoint import open_endpoint
from clsd.generate.settings import generation_settings
from fault_server import job_config

ROOT = Path(__file__).resolve().parents[1]

base_url, store_path, n, poll_s = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
os.environ["CLSD_WORKER_KEY"] = "worker-key"
config = job_config(store_path, base_url, api_key_env="CLSD_WORKER_KEY", batch=True, batch_poll_s=poll_s, answer_format="numbered")
items = [(i, f"Der Stadtrat Nummer {i} hat am Dienstag den Bau von drei neuen Schulen genehmigt.") for i in range(n)]

with open_endpoint(config, [], 1, os.devnull) as endpoint:
    settings = generation_settings(config["generation"], (ROOT / "resources/prompts/paper-v1.txt").read_text(), endpoint.id)
    generator = endpoint.generator(settings, dataset="worker", lang="de", run=endpoint.start_run("worker", "de"),
                                   batch=llm.Batching(poll_s, config["generation"]["retries"]))
    table, report = llm.generate(items, "de", generator, {"prompt_per_1k": 1.0, "completion_per_1k": 1.0}, "llm:fault")
print(json.dumps({"new_responses": report["new_responses"], "rows": table.height, "batches": report["batches"]}))
