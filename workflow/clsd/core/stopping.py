"""One way every job that pays stops: SIGINT (Ctrl-C), SIGTERM (`kill`, `timeout`, a scheduler's time limit, systemd)
and SIGHUP (a closed terminal) all raise KeyboardInterrupt in the job's main thread, so one cleanup runs whichever
came: nothing new is sent, answers in flight are stored, the run's ledger row is marked `interrupted`, a local
server is stopped. A second signal while that cleanup runs is logged and ignored (the cleanup waits at most one
request's timeout; SIGKILL abandons it).

Snakemake itself takes SIGTERM as "finish the running jobs, then exit" and dies on SIGHUP, leaving its jobs running:
either way a paid job sent to Snakemake alone would go on asking. `pass_to_jobs`, called from the workflow's
`onstart` hook (after Snakemake installed its own handler), sends SIGTERM on to every process Snakemake started
before Snakemake's own handling runs, so the jobs stop as they do for Ctrl-C and Snakemake exits once they have.

A signal its process ignores at the start (`nohup` ignores SIGHUP; a shell's background job ignores SIGINT) stays
ignored: that was asked for by whoever started the run.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from types import FrameType
from typing import Any

log = logging.getLogger(__name__)

#: The signals that mean "stop this run" (SIGKILL cannot be caught).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: What Snakemake is sent alone that it would not pass to its jobs (SIGINT too: `kill -INT` to Snakemake alone makes it
#: wait for the running jobs, a generation job asking on to its end).
PASSED_TO_JOBS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

Handler = Callable[[int, FrameType | None], Any] | int | None


class _FirstStop:
    """A signal handler: the first stop signal raises KeyboardInterrupt, the later ones are logged only."""

    def __init__(self) -> None:
        self.stopping = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.stopping:
            log.warning("%s received while stopping: ignored; the job exits once the requests in flight are stored "
                        "(SIGKILL abandons them)", name)
            return
        self.stopping = True
        raise KeyboardInterrupt(f"signal {name}")


def _catchable(signum: int) -> bool:
    """Whether the process may take `signum` over: not when it was set to be ignored (nohup, a background job)."""
    return signal.getsignal(signum) is not signal.SIG_IGN


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within the block (in the main thread), SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt once; the handlers
    before it come back after. Outside the main thread it changes nothing (Python allows handlers there only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = install()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def install() -> dict[int, Handler]:
    """Take the stop signals over for the rest of the process (a job that cannot wrap its work in `stop_signals`);
    returns the handlers replaced."""
    handler = _FirstStop()
    return {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS if _catchable(signum)}


def drain(pool: ThreadPoolExecutor, futures: Collection[Future], why: BaseException, timeout: float, who: str,
          wait: bool = True) -> None:
    """After a stop signal or a job's first failure: cancel the requests not sent yet and, with `wait`, wait for those
    in flight (at most `timeout`: the client sends nothing new), so that the workers store the answers they were paid
    for before the run is closed; logs how many it waits for, named by `who`."""
    running = sum(future.running() for future in futures) if wait else 0
    if running:
        log.warning("%s: stopping (%s): nothing more is sent; waiting for the %d requests in flight, at most %g s, to "
                    "store what they bring", who, type(why).__name__, running, timeout)
    pool.shutdown(wait=wait, cancel_futures=True)


def descendants() -> list[Any]:
    """Every process this one started, and theirs (psutil.Process objects)."""
    import psutil

    return psutil.Process(os.getpid()).children(recursive=True)


def pass_to_jobs() -> None:
    """In Snakemake's process (its `onstart` hook): SIGINT, SIGTERM or SIGHUP sent to Snakemake alone is sent on as
    SIGTERM to every process it started, then handled as Snakemake handles it (SIGINT as Snakemake's own Ctrl-C, the
    others as its SIGTERM: no new job; exit once the running ones have ended). After a Ctrl-C in a terminal the jobs
    have the SIGINT already, and take the SIGTERM as a second signal, logged and ignored. Does nothing outside the main
    thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    graceful = signal.getsignal(signal.SIGTERM)
    own = {signal.SIGINT: signal.getsignal(signal.SIGINT)}

    def forward(signum: int, frame: FrameType | None) -> None:
        import psutil

        jobs = descendants()
        log.warning("%s: stopping the %d processes of the running jobs (SIGTERM), then exiting",
                    signal.Signals(signum).name, len(jobs))
        for process in jobs:
            try:
                process.send_signal(signal.SIGTERM)
            except psutil.Error:  # ended in between
                pass
        then = own.get(signum, graceful)
        if callable(then):
            then(signum, frame)

    for signum in PASSED_TO_JOBS:
        if _catchable(signum):
            signal.signal(signum, forward)
