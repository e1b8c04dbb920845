"""Route a rule's logging, warnings and progress bars into its Snakemake log file; its warnings to the terminal too."""

from __future__ import annotations

import logging
import sys
from pathlib import Path


class Ours(logging.Filter):
    """clsd's own records (its modules' loggers, and the root logger the rule scripts log to), not libraries'."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name == "root" or record.name == "clsd" or record.name.startswith("clsd.")


def job_name(path: str | Path) -> str:
    """The job a log file belongs to, from its path: `generate_distractors/gen/de` for
    results/logs/generate_distractors/gen/de.log."""
    parts = Path(path).with_suffix("").parts
    return "/".join(parts[parts.index("logs") + 1:] if "logs" in parts else parts[-1:])


def to_file(path: str | Path) -> None:
    """Send logging (INFO and up) and stderr (tqdm bars, library warnings) to `path`; clsd's warnings and errors go
    to the terminal as well (named by their job), where a successful job's log is never shown: an item that failed on
    refusals replayed from the store, a setting to change, are seen where the run is watched."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    stream = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (lives as long as the job)
    terminal = logging.StreamHandler(sys.stderr)
    terminal.setLevel(logging.WARNING)
    terminal.addFilter(Ours())
    terminal.setFormatter(logging.Formatter(f"%(levelname)s {job_name(path)}: %(message)s"))
    sys.stderr = stream
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.StreamHandler(stream), terminal],
        force=True,
    )
    logging.captureWarnings(True)
