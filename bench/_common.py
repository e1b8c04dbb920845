"""What every benchmark script shares: its figures printed as plain log lines (the libraries' own chatter quieted),
and written as one JSON file under bench/results/."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger("bench")


def log_to_stdout(*noisy: str) -> None:
    """Log lines to stdout as bare messages; the loggers named in `noisy` only from WARNING."""
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    for name in noisy:
        logging.getLogger(name).setLevel(logging.WARNING)


def write_figures(path: Path, figures: dict[str, Any]) -> None:
    """Write the figures as indented JSON at `path` (its folder made when missing) and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    log.info("saved %s", path)
