"""Generation in a separate process, for the kill test: python gen_worker.py BASE_URL STORE N CONCURRENCY."""

import sys
from pathlib import Path

from clsd.generate import llm
from clsd.generate.client import ChatClient
from clsd.generate.store import ResponseStore

ROOT = Path(__file__).resolve().parents[1]

base_url, store_path, n, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
settings = llm.Settings(model="fault", template=(ROOT / "resources/prompts/paper-v1.txt").read_text(), endpoint=base_url,
                        concurrency=concurrency)
store = ResponseStore(store_path)
generator = llm.Generator(settings, store, lambda: ChatClient(base_url=base_url, api_key="k", timeout=10, retries=2, requests_per_minute=None))
items = [(i, f"Der Stadtrat Nummer {i} hat am Dienstag den Bau von drei neuen Schulen genehmigt.") for i in range(n)]
table, report = llm.generate(items, "de", generator, {}, "llm:fault")
print(report["new_responses"], table.height)
