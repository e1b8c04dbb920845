"""Route a rule's logging, warnings and progress bars into its Snakemake log file; its warnings and its final error to
the terminal too."""

from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path
from types import TracebackType

from clsd.core.io import disk_full


class Ours(logging.Filter):
    """clsd's own records (its modules' loggers, and the root logger the rule scripts log to), not libraries'."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name == "root" or record.name == "clsd" or record.name.startswith("clsd.")


def job_name(path: str | Path) -> str:
    """The job a log file belongs to, from its path: `generate_distractors/gen/de` for
    results/logs/generate_distractors/gen/de.log."""
    parts = Path(path).with_suffix("").parts
    return "/".join(parts[parts.index("logs") + 1:] if "logs" in parts else parts[-1:])


def last_words(exc: BaseException) -> str:
    """The one line a job that stops on `exc` leaves in the terminal: a full disk in words (naming the file when the
    writer did, clsd.core.io.writing), else the error's type and message."""
    if disk_full(exc):
        if exc.filename and str(exc.strerror).startswith("no space left"):
            return str(exc.strerror)
        where = f" while writing {exc.filename}" if exc.filename else " while writing this job's outputs or its log"
        return f"no space left on device{where} (free space and rerun: finished jobs are kept)"
    return f"{type(exc).__name__}: {exc}"


def to_file(path: str | Path) -> None:
    """Send logging (INFO and up) and stderr (tqdm bars, library warnings) to `path`; clsd's warnings go to the terminal
    as well (named by their job), where a successful job's log is never shown: an item that failed on refusals
    replayed from the store, a setting to change, are seen where the run is watched. An error that ends the job is
    written to the log with its traceback, and to the terminal in one line when the log cannot take it (a full disk,
    where Snakemake would show an empty log)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    stream = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (lives as long as the job)
    name, console = job_name(path), sys.stderr
    terminal = logging.StreamHandler(console)
    terminal.setLevel(logging.WARNING)
    terminal.addFilter(Ours())
    terminal.setFormatter(logging.Formatter(f"%(levelname)s {name}: %(message)s"))
    sys.stderr = stream
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.StreamHandler(stream), terminal],
        force=True,
    )
    logging.captureWarnings(True)

    def report(kind: type[BaseException], exc: BaseException, trace: TracebackType | None) -> None:
        try:
            stream.write("".join(traceback.format_exception(kind, exc, trace)))
            stream.flush()
        except OSError:
            console.write(f"ERROR {name}: {last_words(exc)}\n")
            return
        if disk_full(exc):
            console.write(f"ERROR {name}: {last_words(exc)}\n")

    sys.excepthook = report
