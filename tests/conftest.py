"""Shared fixtures: the project root, ../shared data (skipped with a reason when absent), real models; and how
the suite shares the machine when pytest-xdist runs it on several workers (`addopts` in pyproject.toml).

Workers take whole files (`--dist loadfile`: a module's fixtures, such as test_workflow.py's finished run, are built
once). A test marked `exclusive` has the machine to itself: llama.cpp's threads wait for each other at every step, so
its speed falls tenfold when another test keeps a core busy (measured: ~30 to 1-3 tokens/s), and timing assertions
need idle cores. Every other test holds a shared lock on one file for its setup, call and teardown; an exclusive one
announces itself, waits until the running tests end, and holds the lock alone, until the last of a run of exclusive
tests ends (MachineShare).
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CLSD_SHARED", ROOT.parent / "shared")).resolve()
WMT = SHARED / "data" / "wmt"
PUBLISHED = SHARED / "data" / "clsd-published-sample"
MODEL_STORE = Path(os.path.expanduser(os.environ.get("CLSD_MODEL_STORE", "~/.cache/clsd/models")))


def group_alive(pgid: int) -> bool:
    """Whether any process of the process group `pgid` still runs (a job and the local server it started)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def require_shared() -> None:
    """Skip (with the reason) when ../shared/data is not beside the project."""
    if not (WMT.is_dir() and PUBLISHED.is_dir()):
        pytest.skip(f"shared data not found at {SHARED} (set CLSD_SHARED or place shared/ beside the project)")


def pytest_configure(config: pytest.Config) -> None:
    """Under xdist, the controller rebuilds all-MiniLM-L6-v2 before any worker starts: workers that each found it
    missing would build it into the model store at once."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from clsd.serving.model_store import RECIPES, materialise

        materialise(RECIPES["all-MiniLM-L6-v2"], MODEL_STORE / "all-MiniLM-L6-v2")


class MachineShare:
    """The machine for each test of one xdist worker: shared with the other workers' tests, or (exclusive) alone.

    An exclusive test followed by another keeps the machine: released between them, the other worker would start a
    shared test at once (a real Snakemake run of minutes), and the next exclusive test would wait it out idle."""

    def __init__(self, run: str) -> None:
        self.lock = Path(tempfile.gettempdir()) / f"clsd-tests-{run}.lock"
        self.waiting = self.lock.with_suffix(".waiting")
        self.handle = None
        self.alone = False

    def take(self, exclusive: bool) -> None:
        if self.handle is not None:  # still held alone from the exclusive test before
            return
        self.handle = self.lock.open("a")
        if exclusive:
            self.waiting.touch()  # no shared test starts from now on
            fcntl.flock(self.handle, fcntl.LOCK_EX)
            self.waiting.unlink(missing_ok=True)
        else:
            while self.waiting.exists():
                time.sleep(0.2)
            fcntl.flock(self.handle, fcntl.LOCK_SH)
        self.alone = exclusive

    def give(self, keep: bool) -> None:
        if keep and self.alone:
            return
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()
        self.handle, self.alone = None, False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The order in which xdist hands out files (`--no-loadscope-reorder` in pyproject.toml keeps it; its own order,
    most tests first, put the few long files last, where one worker ran them alone for minutes): a file of exclusive
    tests first, while the other worker runs a file of short tests, so the exclusive one waits for a test of seconds;
    then the files with slow tests, most real Snakemake runs first; the short files last, to even out the workers' ends."""
    by_file: dict[Path, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(item.path, []).append(item)

    def marked(path: Path, *markers: str) -> int:
        """How many of the file's tests carry every one of `markers`."""
        return sum(all(item.get_closest_marker(m) is not None for m in markers) for item in by_file[path])

    exclusive = [path for path in by_file if marked(path, "exclusive") == len(by_file[path])]
    slow = sorted((path for path in by_file if path not in exclusive and marked(path, "slow")),
                  key=lambda path: (-marked(path, "slow", "workflow"), -marked(path, "slow")))
    short = sorted((path for path in by_file if path not in exclusive and path not in slow),
                   key=lambda path: -len(by_file[path]))
    items[:] = [item for path in exclusive + short[:1] + slow + short[1:] for item in by_file[path]]


_SHARE: MachineShare | None = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Each test's setup (module fixtures included), call and teardown under its share of the machine; with one
    process (no xdist) nothing runs beside a test."""
    global _SHARE
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return (yield)
    if _SHARE is None:
        _SHARE = MachineShare(run)
    exclusive = item.get_closest_marker("exclusive") is not None
    _SHARE.take(exclusive)
    try:
        return (yield)
    finally:
        _SHARE.give(keep=exclusive and nextitem is not None and nextitem.get_closest_marker("exclusive") is not None)


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    """all-MiniLM-L6-v2 rebuilt from its PyPI wheel (the real loading path, small enough for tests)."""
    from clsd.serving.model_store import RECIPES, materialise

    return materialise(RECIPES["all-MiniLM-L6-v2"], MODEL_STORE / "all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def minilm(minilm_folder: Path):
    from clsd.embed.loaded import load_model
    from clsd.embed.spec import ModelSpec

    spec = ModelSpec(key="minilm", name="all-MiniLM-L6-v2", load_from=str(minilm_folder))
    model, _ = load_model(spec, "cpu")
    return model


@pytest.fixture(scope="session")
def tiny_m2m(tmp_path_factory) -> Path:
    """A tiny random M2M100 saved as a transformers folder (see tests/tiny_m2m.py)."""
    from tiny_m2m import build_tiny_m2m

    return build_tiny_m2m(tmp_path_factory.mktemp("tiny-m2m"))


#: A CPU variant library that faults on purpose: ggml scores it above every real variant, and it executes an illegal
#: instruction when loaded (ud2: SIGILL, as AMX tile instructions do on a VM that advertises AMX without granting it).
FAULTY_VARIANT = r"""
int ggml_backend_score(void) { return 1 << 20; }
void * ggml_backend_init(void) { __builtin_trap(); return 0; }
"""


def llama_server_with_a_faulty_variant(folder: Path, *, tested: bool, source: str = FAULTY_VARIANT) -> Path:
    """A copy of the llama-server install.sh built, laid out under `folder` as install.sh lays it out under a prefix
    (`bin/llama-server`), with a variant `faulty` compiled from C `source` beside the real ones; `tested`: recorded as having passed
    this machine's self-test (its fault shows first at run time; the real variants keep this machine's outcomes), else
    no machine tested. The program's path."""
    import json
    import shutil
    import subprocess
    import sys

    from clsd.serving.server_variants import SELFTEST_GGUF, record, this_cpu, variant_files, write_tiny_gguf_with_sdist

    installed = (Path(sys.executable).parent / "llama-server").resolve().parent
    install = folder / "libexec" / "llama.cpp"
    shutil.copytree(installed, install, symlinks=True, ignore=shutil.ignore_patterns("views", "build.lock"))
    stamp = json.loads((install / "build.json").read_text())
    this_machine = stamp.pop("machines", {}).get(this_cpu())
    (install / "build.json").write_text(json.dumps(stamp))
    if not (install / SELFTEST_GGUF).is_file():
        write_tiny_gguf_with_sdist(install / SELFTEST_GGUF)
    (folder / "faulty.c").write_text(source)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(install / "libggml-cpu-faulty.so"), str(folder / "faulty.c")], check=True)
    if tested:  # this machine's own outcomes (a real variant may fault here too), and `faulty` passed
        outcomes = {name: "ok" for name in variant_files(install)} | (this_machine or {}).get("variants", {})
        record(install, this_cpu(), outcomes | {"faulty": "ok"}, "self-test")
    (folder / "bin").mkdir()
    (folder / "bin" / "llama-server").symlink_to(install / "llama-server")
    return folder / "bin" / "llama-server"
