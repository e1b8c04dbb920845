"""Which CPU variants of the built llama-server run on this machine: a variant is trusted only once it has run.

ggml loads the CPU variant whose score is best for what `cpuid` says (`libggml-cpu-<variant>.so` beside the
binary, clsd.serving.server_build). A virtual machine may advertise instructions it cannot execute: a VM that
lists AMX, whose tile instructions then raise SIGILL, crashes every start of the server. So each built variant is
run once per machine (its CPU flags are the key) through a real prompt and a few decoded tokens of a tiny GGUF
written with the pinned sdist's own gguf-py (`selftest.gguf`: Q4_0 and Q8_0 weights in shapes the AVX2 repack and
AMX kernels take), with a timeout. A variant that dies of a signal there, or later under the real model
(`LlamaServer` falls back, clsd.serving.server), is recorded in the install's `build.json` under `machines` with
its signal, and is never loaded again on that machine: the server then runs from a *view*, a folder of hard links
to the install that leaves the faulting variants out, so ggml's own choice falls on the next best.

    python -m clsd.serving.server_variants --prefix .venv    # install.sh runs it after the build

Nothing is moved or deleted in the install, so an environment shared by machines of several CPUs (a cluster's
file system) keeps every variant for the machines where it runs.
"""

from __future__ import annotations

import argparse
import fcntl
import http.client
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from clsd.core.stopping import stop_signals
from clsd.serving.server_build import download_sdist
from clsd.serving.server_build import machine_key as this_cpu

log = logging.getLogger(__name__)

STAMP = "build.json"
SELFTEST_GGUF = "selftest.gguf"
VIEWS = "views"
#: Seconds one variant's self-test may take (start, a prompt of some 120 tokens, 4 decoded).
SELFTEST_TIMEOUT = 60.0
#: The tiny model: every matrix a multiple of 32 in both dimensions (AMX tiles, the AVX2 Q4_0 repack).
N_EMBD, N_FF, N_HEAD, N_VOCAB = 256, 512, 4, 288
#: A prompt of many tokens: a matrix product over a batch (AMX runs batches of more than one row, VNNI single rows).
PROBE_PROMPT = "A variant is trusted only once it has run: " * 2
#: Signals a CPU variant's kernels die of (an instruction the CPU cannot run, a bad access); others (SIGKILL from the
#: out-of-memory killer, SIGTERM) come from outside and say nothing of the variant.
FAULT_SIGNALS = frozenset({"SIGILL", "SIGSEGV", "SIGBUS", "SIGFPE"})


def install_folder(program: str | Path) -> Path | None:
    """The install folder of a llama-server built by clsd.serving.server_build (the one holding build.json and
    the CPU variants), or None for any other program (a user's own build, a test's stand-in)."""
    folder = Path(program).resolve().parent
    if folder.parent.name == VIEWS:  # a view's program: its install is two folders up
        folder = folder.parent.parent
    return folder if (folder / STAMP).is_file() and any(folder.glob("libggml-cpu-*.so")) else None


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the install's lock: two jobs starting at once test and record one after the other."""
    with (folder / "build.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_stamp(folder: Path) -> dict:
    """The install's build.json."""
    return json.loads((folder / STAMP).read_text(encoding="utf-8"))


def write_stamp(folder: Path, stamp: Mapping) -> None:
    """build.json replaced whole (a reader never sees half of it)."""
    temporary = folder / f"{STAMP}.tmp"
    temporary.write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
    temporary.replace(folder / STAMP)


def variant_files(folder: Path) -> dict[str, Path]:
    """The CPU variants in `folder` by name (`libggml-cpu-zen4.so` -> `zen4`)."""
    return {path.name[len("libggml-cpu-"):-len(".so")]: path for path in sorted(folder.glob("libggml-cpu-*.so"))}


def scores(folder: Path) -> dict[str, int]:
    """Each variant's score on this CPU, by ggml's own `ggml_backend_score` of each library (0: unsupported), read in
    a child process, as ggml reads them before it loads the best."""
    code = ("import ctypes, json, sys\n"
            "print(json.dumps({p: ctypes.CDLL(p).ggml_backend_score() for p in sys.argv[1:]}))")
    files = variant_files(folder)
    result = subprocess.run([sys.executable, "-c", code, *map(str, files.values())], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"could not read the CPU variants' scores in {folder}: {result.stderr.strip()[-500:]}")
    by_path = json.loads(result.stdout)
    return {name: int(by_path[str(path)]) for name, path in files.items()}


def ggml_choice(folder: Path, excluded: Iterable[str] = ()) -> str | None:
    """The variant ggml loads from `folder` once `excluded` are left out: the best score above 0, or None."""
    excluded = set(excluded)
    left = {name: score for name, score in scores(folder).items() if name not in excluded and score > 0}
    return max(left, key=left.__getitem__) if left else None


def faulting(folder: Path, cpu: str) -> dict[str, str]:
    """The variants recorded as faulting on a machine with CPU flags `cpu`, with the signal they died of. Another
    failure of the self-test (an exit code, no answer) says nothing of the CPU: recorded, not held against it."""
    results = read_stamp(folder).get("machines", {}).get(cpu, {}).get("variants", {})
    return {variant: result for variant, result in results.items() if result in FAULT_SIGNALS}


def record(folder: Path, cpu: str, results: Mapping[str, str], how: str) -> None:
    """Record variants' outcomes (`ok` or a signal's name) for the machine `cpu`, and how they were found."""
    stamp = read_stamp(folder)
    machine = stamp.setdefault("machines", {}).setdefault(cpu, {"variants": {}})
    machine["variants"].update(results)
    machine.setdefault("found", []).append(f"{how} at {time.strftime('%Y-%m-%dT%H:%M:%S%z')}")
    write_stamp(folder, stamp)


def view(folder: Path, excluded: Iterable[str]) -> Path:
    """The llama-server of a folder holding the install less the `excluded` variants (hard links into the install);
    the install's own program when none is excluded. Made once, then reused, also by another job meanwhile."""
    left_out = sorted(set(excluded))
    if not left_out:
        return folder / "llama-server"
    target = folder / VIEWS / ("without-" + "-".join(left_out))
    if (target / "llama-server").is_file():
        return target / "llama-server"
    target.parent.mkdir(exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".view-", dir=target.parent))
    try:
        staging.chmod(0o755)  # as the install: an environment shared by several users
        skipped = {f"libggml-cpu-{name}.so" for name in left_out}
        for path in folder.iterdir():
            if path.is_file() and (path.name == "llama-server" or path.name.startswith("lib")) and path.name not in skipped:
                os.link(path, staging / path.name)
        staging.rename(target)
    except OSError:
        if not (target / "llama-server").is_file():  # else another job made the same view first
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target / "llama-server"


def died_of(returncode: int | None) -> str | None:
    """The signal's name when a process ended by a signal (a negative return code), else None."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def post(url: str, body: Mapping, timeout: float) -> None:
    """POST a JSON body; the answer is read and dropped (what counts is that the server computed it and lived)."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        response.read()


def probe(base_url: str, embeddings: bool, timeout: float) -> None:
    """One small request that runs the model's matrix products over a batch of prompt tokens, and, for a completion
    server, decodes a few tokens: what makes a variant's kernels (AMX's included) execute. `base_url` ends in /v1."""
    if embeddings:
        post(f"{base_url}/embeddings", {"input": PROBE_PROMPT}, timeout)
    else:
        post(f"{base_url}/completions", {"prompt": PROBE_PROMPT, "max_tokens": 4, "temperature": 0.0}, timeout)


def run_once(program: Path, gguf: Path, timeout: float) -> str:
    """Start `program` on the tiny GGUF, ask it once, stop it: `ok`, or why it failed (a signal's name, `exit N`, or
    `no answer` for a server that lived but did not answer in `timeout` seconds)."""
    from clsd.serving.server import free_port, wait_ready

    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    command = [str(program), "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--ctx-size", "256",
               "--threads", "2", "--no-webui"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    failure: Exception | None = None
    try:
        try:
            wait_ready(base_url, process, timeout)
            probe(base_url, False, timeout)
        except (RuntimeError, OSError, http.client.HTTPException) as exc:  # OSError: timeouts, refused connections
            failure = exc
        try:  # a fault while answering ends the process just after the connection
            process.wait(timeout=1.0 if failure else 0.2)
        except subprocess.TimeoutExpired:
            pass
        if process.poll() is not None:
            return died_of(process.returncode) or f"exit {process.returncode}"
        return "ok" if failure is None else f"no answer ({failure})"
    finally:  # also when the job is interrupted meanwhile: no server is left behind
        if process.poll() is None:
            process.kill()
            process.wait()


def self_test(folder: Path, timeout: float = SELFTEST_TIMEOUT) -> dict[str, str]:
    """Run every variant of the install alone on the tiny GGUF (each from a view of that variant only) and record
    the outcomes for this machine; the outcomes by variant."""
    gguf = folder / SELFTEST_GGUF
    if not gguf.is_file():
        write_tiny_gguf_with_sdist(gguf)
    names = list(variant_files(folder))
    supported = {name for name, score in scores(folder).items() if score > 0}
    results: dict[str, str] = {}
    for name in names:
        if name not in supported:
            continue  # ggml never loads it here
        results[name] = run_once(view(folder, [other for other in names if other != name]), gguf, timeout)
        if results[name] == "ok":
            log.info("llama-server CPU variant %s on this machine: runs", name)
        elif results[name] in FAULT_SIGNALS:
            log.warning("llama-server CPU variant %s on this machine: FAULTS (%s): it will not be loaded here", name, results[name])
        else:
            log.warning("llama-server CPU variant %s on this machine: the self-test could not run it (%s); it is kept", name, results[name])
    record(folder, this_cpu(), results, "self-test")
    return results


def checked_program(folder: Path) -> tuple[Path, dict[str, str]]:
    """The program to start on this machine: the install's, or a view without the variants that fault here (a
    self-test runs first on a machine the install has not seen), and the faulting variants with why."""
    cpu = this_cpu()
    with locked(folder):
        if cpu not in read_stamp(folder).get("machines", {}):
            log.info("llama-server's CPU variants have not run on this machine's CPU yet: testing each")
            try:
                self_test(folder)
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:  # e.g. the sdist not in reach offline
                log.warning("could not test llama-server's CPU variants here (%s); a variant that faults is left out "
                            "when it first does", exc)
                record(folder, cpu, {}, f"no self-test ({str(exc)[:200]})")
        faults = faulting(folder, cpu)
        if faults and ggml_choice(folder, faults) is None:  # none faulting: ggml chooses as it always does
            raise RuntimeError(no_variant_message(folder, faults))
        return view(folder, faults), faults


def record_faults(folder: Path, faults: Mapping[str, str]) -> None:
    """Record variants that died of a fault signal under the real model on this machine (the job calls it once the
    next variant has run the same model: a fault that every variant shows is the model's or the program's, and is
    held against none)."""
    with locked(folder):
        record(folder, this_cpu(), faults, "a run")


def no_variant_message(folder: Path, faults: Mapping[str, str]) -> str:
    """What to do when no variant runs here."""
    listed = ", ".join(f"{name} ({why})" for name, why in faults.items())
    return (f"no CPU variant of llama-server in {folder} runs on this machine (faulting: {listed}; the self-test's "
            f"outcomes are in {folder / STAMP}, under machines). Rebuild with more variants "
            "(`CLSD_LLAMA_CPU_VARIANTS=all bash install.sh`, which also tests them again), or set generation.local.server "
            "to a llama-server built for this machine")


def write_tiny_gguf(path: Path) -> None:
    """A one-layer llama model with random weights and a byte-level SentencePiece vocabulary, written with gguf-py
    (which must be importable): Q4_0 and Q8_0 matrices, float32 norms. Its answers mean nothing; running it
    executes the same kernels as a real quantised model."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(0)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("clsd llama-server self-test")
    writer.add_context_length(256)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(1)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{byte:02X}>" for byte in range(256))]
    tokens += [f"<unused{i}>" for i in range(N_VOCAB - len(tokens))]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL,
             *[gguf.TokenType.BYTE] * 256, *[gguf.TokenType.UNUSED] * (N_VOCAB - 259)]
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * N_VOCAB)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)

    def matrix(name: str, rows: int, cols: int, qtype: gguf.GGMLQuantizationType) -> None:
        weights = rng.normal(0.0, 0.05, size=(rows, cols)).astype(np.float32)
        writer.add_tensor(name, gguf.quants.quantize(weights, qtype), raw_dtype=qtype)  # shape read from the bytes

    q4, q8 = gguf.GGMLQuantizationType.Q4_0, gguf.GGMLQuantizationType.Q8_0
    matrix("token_embd.weight", N_VOCAB, N_EMBD, q8)
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        matrix(f"blk.0.{name}.weight", N_EMBD, N_EMBD, q4)
    matrix("blk.0.ffn_gate.weight", N_FF, N_EMBD, q4)
    matrix("blk.0.ffn_up.weight", N_FF, N_EMBD, q4)
    matrix("blk.0.ffn_down.weight", N_EMBD, N_FF, q8)
    matrix("output.weight", N_VOCAB, N_EMBD, q8)
    for name in ("blk.0.attn_norm", "blk.0.ffn_norm", "output_norm"):
        writer.add_tensor(f"{name}.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_tiny_gguf_with_sdist(path: Path) -> Path:
    """`write_tiny_gguf` run with the gguf-py of the pinned llama-cpp-python sdist (pip's cache makes it free after
    the install), in a child process so that the sdist's package does not stay imported here."""
    with tempfile.TemporaryDirectory(prefix="clsd-gguf-py-") as tmp:
        workdir = Path(tmp)
        with tarfile.open(download_sdist(workdir)) as archive:
            members = [m for m in archive.getmembers() if "/vendor/llama.cpp/gguf-py/" in m.name]
            archive.extractall(workdir, members=members, filter="data")
        gguf_py = next(workdir.glob("llama_cpp_python-*/vendor/llama.cpp/gguf-py"))
        staging = path.with_name(path.name + ".tmp")
        code = "import sys; from pathlib import Path; from clsd.serving.server_variants import write_tiny_gguf; write_tiny_gguf(Path(sys.argv[1]))"
        paths = [str(gguf_py), str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]
        result = subprocess.run([sys.executable, "-c", code, str(staging)], capture_output=True, text=True,
                                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)})
        if result.returncode != 0:
            raise RuntimeError(f"writing the self-test GGUF {path} failed: {result.stderr.strip()[-1000:]}")
        staging.replace(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description="Run each CPU variant of the built llama-server once on this machine.")
    parser.add_argument("--prefix", type=Path, required=True, help="the environment install.sh built llama-server into")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    folder = install_folder(args.prefix / "bin" / "llama-server")
    if folder is None:
        sys.exit(f"no llama-server built by clsd in {args.prefix} (run bash install.sh)")
    try:
        with stop_signals():  # a killed install stops the server under test too (run_once's finally)
            _, faults = checked_program(folder)
    except RuntimeError as exc:
        sys.exit(str(exc))
    choice = ggml_choice(folder, faults)
    outcome = read_stamp(folder).get("machines", {}).get(this_cpu(), {}).get("variants", {}).get(choice, "untested")
    if outcome != "ok":
        log.warning("llama-server will load CPU variant %s here, which did not pass the self-test (%s): the server may "
                    "not start (the whole outcome: %s)", choice, outcome, folder / STAMP)
        return
    log.info("llama-server runs here on CPU variant %s%s", choice,
             f" ({', '.join(f'{name} faults: {why}' for name, why in faults.items())})" if faults else "")


if __name__ == "__main__":
    main()
