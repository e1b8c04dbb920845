"""Forget unusable LLM answers, so that the next generation run asks for them again.

An endpoint that answered HTTP 200 with a refusal or an unusable text had every answer stored (it was paid
for), and a rerun replays them. After fixing the endpoint:

    python -m clsd.generate.forget --store ~/.cache/clsd/llm-responses.sqlite --dataset wmt19 --dry-run
    python -m clsd.generate.forget --store ~/.cache/clsd/llm-responses.sqlite --dataset wmt19
    snakemake --forcerun generate_distractors          # or delete results/distractors/wmt19/

Only answers marked unusable (no accepted numbered sentence, or an unreadable judge verdict) are forgotten,
never a usable one. Forgotten rows are moved to the store's `superseded` table, not deleted: they stay
paid-for (cost accounting) and auditable. Answers stored before usability was recorded are decided on their
next read: run the generation once (it asks nothing for them), then forget.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from clsd.core.errors import InputError
from clsd.generate.store import Response, ResponseStore, Selection

log = logging.getLogger(__name__)
DEFAULT_STORE = "~/.cache/clsd/llm-responses.sqlite"


@dataclass(frozen=True)
class Forgotten:
    """What was (or, in a dry run, would be) forgotten, and what could not be judged yet."""

    rows: list[Response]
    undecided: int
    dry_run: bool

    def groups(self) -> Counter:
        """Rows per (dataset, lang, model, endpoint)."""
        return Counter((r.dataset, r.lang, r.model, r.endpoint) for r in self.rows)


def forget(store: ResponseStore, selection: Selection, *, dry_run: bool = False) -> Forgotten:
    """Supersede the unusable answers among `selection` (all of them at once, in one transaction)."""
    rows = store.unusable(selection)
    if rows and not dry_run:
        store.supersede([r.key for r in rows], reason="forget")
    return Forgotten(rows, store.undecided(selection), dry_run)


def summary(result: Forgotten) -> list[str]:
    """Lines telling the user what was forgotten, per dataset, language, model and endpoint, with an example."""
    verb = "would forget" if result.dry_run else "forgot"
    lines = [f"{verb} {len(result.rows)} unusable answer(s)"]
    for (dataset, lang, model, endpoint), count in sorted(result.groups().items(), key=lambda kv: tuple(map(str, kv[0]))):
        example = next(r.text for r in result.rows if (r.dataset, r.lang, r.model, r.endpoint) == (dataset, lang, model, endpoint))
        lines.append(f"  {count} × dataset {dataset}, lang {lang}, model {model}, endpoint {endpoint}: e.g. {example[:80]!r}")
    if result.undecided:
        lines.append(f"{result.undecided} answer(s) of this model/endpoint were stored before usability was recorded and are "
                     "not judged yet: run the generation once (it asks nothing for them), then forget again")
    if result.rows and not result.dry_run:
        lines.append("rerun the generation to ask again: snakemake --forcerun generate_distractors "
                     "(or delete the dataset's results/distractors/ folder)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="clsd-forget", description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=DEFAULT_STORE, help=f"the response store (generation.store; default {DEFAULT_STORE})")
    parser.add_argument("--dataset", help="only answers first asked for this dataset")
    parser.add_argument("--lang", help="only answers first asked for this language (its registry code, e.g. de or ja)")
    parser.add_argument("--model", help="only answers of this model name (generation.model)")
    parser.add_argument("--endpoint", help="only answers of this endpoint: its base URL, or gguf:<sha256> for a local server")
    parser.add_argument("--dry-run", action="store_true", help="print what would be forgotten, change nothing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    path = Path(args.store).expanduser()
    if not path.is_file():
        raise InputError("no response store here (generation.store)", path=path)
    store = ResponseStore(path)
    try:
        endpoint = args.endpoint.rstrip("/") if args.endpoint else None
        result = forget(store, Selection(args.dataset, args.lang, args.model, endpoint), dry_run=args.dry_run)
    finally:
        store.close()
    for line in summary(result):
        log.info("%s", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
