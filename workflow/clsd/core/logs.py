"""Route a rule's logging, warnings and progress bars into its Snakemake log file."""

from __future__ import annotations

import logging
import sys
from pathlib import Path


def to_file(path: str | Path) -> None:
    """Send logging (INFO and up) and stderr (tqdm bars, library warnings) to `path`."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    stream = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (lives as long as the job)
    sys.stderr = stream
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.StreamHandler(stream)],
        force=True,
    )
    logging.captureWarnings(True)
