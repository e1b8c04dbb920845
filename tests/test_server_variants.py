"""A CPU variant of llama-server is trusted only once it has run (clsd.serving.server_variants): a variant library
that faults on purpose (built here, conftest.FAULTY_VARIANT: it scores above every real variant, then executes an
illegal instruction, as AMX tile instructions do on a VM that advertises AMX without granting it) is dropped by the self-test, and one
that faults only at run time is left out by the next start, which runs on the next best variant."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from clsd.serving.server import LlamaServer
from clsd.serving.server_variants import (SELFTEST_GGUF, died_of, faulting, ggml_choice, install_folder, record, scores,
                                           this_cpu, variant_files)
from conftest import FAULTY_VARIANT, llama_server_with_a_faulty_variant

INSTALLED = Path(sys.executable).parent / "llama-server"


@pytest.fixture
def prefix(tmp_path: Path) -> Path:
    """A copy of the installed llama-server with a variant `faulty` beside the real ones, no machine tested yet."""
    if not INSTALLED.is_file():
        pytest.skip(f"no llama-server at {INSTALLED} (bash install.sh builds it)")
    return llama_server_with_a_faulty_variant(tmp_path / "env", tested=False).parent.parent


def machine(prefix: Path) -> dict:
    return json.loads((prefix / "libexec/llama.cpp/build.json").read_text())["machines"][this_cpu()]


def test_a_signal_is_named_and_an_exit_code_is_not_a_signal():
    assert died_of(-4) == "SIGILL" and died_of(-11) == "SIGSEGV"
    assert died_of(1) is None and died_of(0) is None and died_of(None) is None


def test_the_self_test_drops_a_variant_that_faults_and_the_server_runs_on_the_next_best(prefix):
    folder = prefix / "libexec/llama.cpp"
    real = [name for name in variant_files(folder) if name != "faulty"]
    assert ggml_choice(folder) == "faulty"  # what ggml would load, trusting cpuid
    result = subprocess.run([sys.executable, "-m", "clsd.serving.server_variants", "--prefix", str(prefix)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "llama-server CPU variant faulty on this machine: FAULTS (SIGILL)" in result.stderr
    variants = machine(prefix)["variants"]
    supported = {name for name, score in scores(folder).items() if score > 0}
    assert variants["faulty"] == "SIGILL" and set(variants) == supported  # every variant this CPU runs ran alone, once
    faults = faulting(folder, this_cpu())  # on an AMX VM, a real one may fault too
    best = ggml_choice(folder, faults)
    assert best in real and f"runs here on CPU variant {best} (" in result.stderr and "faulty faults: SIGILL" in result.stderr
    # the server started from the environment loads the next best variant, and says which faulted
    server = LlamaServer(prefix / "libexec/llama.cpp" / SELFTEST_GGUF, n_ctx=256, threads=2, program=[str(prefix / "bin/llama-server")])
    with server:
        assert server.variant == best
        assert server.info()["cpu_variant"] == best and server.info()["cpu_variants_faulting"] == faults
    assert (folder / "libggml-cpu-faulty.so").is_file()  # left in the install, for a machine where it runs
    # a second run finds this machine tested and tests nothing again
    again = subprocess.run([sys.executable, "-m", "clsd.serving.server_variants", "--prefix", str(prefix)],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "FAULTS" not in again.stderr and len(machine(prefix)["found"]) == 1


def test_a_variant_that_faults_only_at_run_time_is_left_out_and_the_start_goes_on(prefix, caplog):
    folder = prefix / "libexec/llama.cpp"
    # as if the self-test had passed it on this machine: the fault shows first under a real load
    record(folder, this_cpu(), {name: "ok" for name in variant_files(folder)}, "self-test")
    program = [str(prefix / "bin/llama-server")]
    with caplog.at_level(logging.INFO, logger="clsd.serving.server"):
        server = LlamaServer(folder / SELFTEST_GGUF, n_ctx=256, threads=2, program=program)
        with server as base_url:
            assert base_url.startswith("http://127.0.0.1:")
            best = server.variant
    assert best != "faulty" and best in variant_files(folder)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "CPU variant faulty died of SIGILL on this machine; restarting on" in warnings[0]
    restarts = [w for w in warnings if "restarting on" in w]
    assert restarts[-1].endswith(f"restarting on {best}")  # one line each: which faulted, which runs now
    assert "are not loaded here again" in warnings[-1]  # recorded once the next variant ran the model
    assert machine(prefix)["variants"]["faulty"] == "SIGILL" and machine(prefix)["found"][-1].startswith("a run at ")
    # the next start leaves it out from the first try
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="clsd.serving.server"):
        with LlamaServer(folder / SELFTEST_GGUF, n_ctx=256, threads=2, program=program) as _:
            pass
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("starting llama-server" in r.getMessage() for r in caplog.records) == 1


#: A stand-in for llama-server that dies of SIGILL on its first completion while a library `libggml-cpu-faulty.so` lies
#: beside it, as the AMX variant dies on its first batch on a VM that advertises AMX: the fault comes after the start.
DIES_ON_FIRST_ANSWER = """#!{python}
import json, os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

FAULTY = (Path(sys.argv[0]).parent / "libggml-cpu-faulty.so").is_file()


class Handler(BaseHTTPRequestHandler):
    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer({{"object": "list", "data": [{{"id": "stand-in"}}]}})

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        if FAULTY:
            os.kill(os.getpid(), signal.SIGILL)
        self.answer({{"choices": [{{"text": "ok", "index": 0}}]}})


HTTPServer(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), Handler).serve_forever()
"""


def test_a_fault_on_the_first_answer_restarts_the_server_on_the_next_variant(tmp_path, caplog):
    """The probe: a server that starts and then dies of SIGILL on its first request is restarted without the
    variant ggml chose, before the job sends any request of its own."""
    if not INSTALLED.is_file():
        pytest.skip(f"no llama-server at {INSTALLED} (bash install.sh builds it)")
    program = llama_server_with_a_faulty_variant(tmp_path / "env", tested=True)
    folder = program.resolve().parent
    (folder / "llama-server").unlink()
    (folder / "llama-server").write_text(DIES_ON_FIRST_ANSWER.format(python=sys.executable))
    (folder / "llama-server").chmod(0o755)
    with caplog.at_level(logging.INFO, logger="clsd.serving.server"):
        server = LlamaServer(folder / SELFTEST_GGUF, n_ctx=256, program=[str(program)])
        with server as base_url:
            assert base_url.startswith("http://127.0.0.1:") and "without-faulty" in server.program[0]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "CPU variant faulty died of SIGILL on this machine; restarting on" in warnings[0]
    assert sum("starting llama-server" in r.getMessage() for r in caplog.records) == 2
    assert faulting(folder, this_cpu())["faulty"] == "SIGILL" and server.info()["cpu_variants_faulting"]["faulty"] == "SIGILL"


def test_a_fault_every_variant_shows_is_held_against_none(prefix):
    """Only the faulting variant is left in the install: its fault cannot be told from the model's or the program's,
    so the job stops saying so and records nothing (a later start, after a fix, tries it again)."""
    folder = prefix / "libexec/llama.cpp"
    for name, path in variant_files(folder).items():
        if name != "faulty":
            path.unlink()
    record(folder, this_cpu(), {"faulty": "ok"}, "self-test")
    with pytest.raises(RuntimeError, match=r"died of SIGILL on every CPU variant left here.*nothing was recorded"):
        with LlamaServer(folder / SELFTEST_GGUF, n_ctx=256, program=[str(prefix / "bin/llama-server")]):
            pass
    assert machine(prefix)["variants"] == {"faulty": "ok"}


def test_when_every_variant_faults_the_error_says_what_to_do(prefix):
    folder = prefix / "libexec/llama.cpp"
    record(folder, this_cpu(), {name: "SIGILL" for name in variant_files(folder)}, "self-test")
    with pytest.raises(RuntimeError, match=r"no CPU variant of llama-server .* runs on this machine .*"
                                           r"CLSD_LLAMA_CPU_VARIANTS=all bash install.sh.*generation.local.server"):
        with LlamaServer(folder / SELFTEST_GGUF, n_ctx=256, program=[str(prefix / "bin/llama-server")]):
            pass


def test_a_variant_that_dies_of_something_else_is_not_held_against_the_cpu(tmp_path):
    """abort() (SIGABRT: an assertion, not an instruction the CPU lacks) is recorded by the self-test but the variant
    is kept, and a server that dies of it says so instead of falling back."""
    if not INSTALLED.is_file():
        pytest.skip(f"no llama-server at {INSTALLED} (bash install.sh builds it)")
    aborts = FAULTY_VARIANT.replace("__builtin_trap()", "abort()")
    program = llama_server_with_a_faulty_variant(tmp_path / "env", tested=False, source="#include <stdlib.h>\n" + aborts)
    result = subprocess.run([sys.executable, "-m", "clsd.serving.server_variants", "--prefix", str(tmp_path / "env")],
                            capture_output=True, text=True, timeout=300)
    assert "variant faulty on this machine: the self-test could not run it (SIGABRT); it is kept" in result.stderr
    assert machine(tmp_path / "env")["variants"]["faulty"] == "SIGABRT"
    with pytest.raises(RuntimeError, match="llama-server was ended by SIGABRT before it answered"):
        with LlamaServer(program.resolve().with_name(SELFTEST_GGUF), n_ctx=256, program=[str(program)]):
            pass


def test_only_a_server_clsd_built_is_managed(tmp_path):
    assert install_folder(Path(sys.executable)) is None
    (tmp_path / "llama-server").write_text("")
    assert install_folder(tmp_path / "llama-server") is None
