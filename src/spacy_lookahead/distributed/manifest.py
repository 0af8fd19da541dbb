"""The annotation manifest (OUTPUT_DIR/manifest.json) and atomic writes.

A shard file is written to a temporary name and renamed; its manifest entry
is written after it, also by rename. So a shard listed in the manifest is
complete, and a re-run skips exactly the listed shards."""
import hashlib
import os
from pathlib import Path
from typing import Any, Dict

import srsly

MANIFEST = "manifest.json"


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def model_checksum(model: Path) -> str:
    """sha256 over the relative paths and contents of a pipeline directory."""
    model = Path(model)
    if not model.is_dir():
        raise FileNotFoundError(f"model {model} is not a pipeline directory: give the path "
                                "of a saved spaCy pipeline (e.g. training/.../model-best).")
    digest = hashlib.sha256()
    for file in sorted(p for p in model.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(model)).encode("utf8") + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def read_manifest(output_dir: Path) -> Dict[str, Any]:
    path = Path(output_dir) / MANIFEST
    if not path.exists():
        return {}
    try:
        manifest = srsly.read_json(path)
    except ValueError as err:
        manifest = err
    if not isinstance(manifest, dict) or not isinstance(manifest.get("shards", {}), dict):
        why = manifest if isinstance(manifest, Exception) else "not a manifest"
        raise ValueError(f"{path} is damaged ({why}): it says which shards are complete, so "
                         "the run cannot resume. Give another output folder, or remove this "
                         "one to start again.")
    return manifest


def write_manifest(output_dir: Path, manifest: Dict[str, Any]) -> None:
    write_atomic(Path(output_dir) / MANIFEST, srsly.json_dumps(manifest, indent=2).encode("utf8"))


def check_resumable(old: Dict[str, Any], new: Dict[str, Any], output_dir: Path) -> None:
    """A re-run may only resume a run of the same input, model and shard size."""
    for key, what in (("input_checksum", "input"), ("model_checksum", "model"),
                      ("shard_size", "shard size")):
        if old.get(key) != new[key]:
            raise ValueError(
                f"{output_dir} holds the output of a run with another {what} "
                f"({old.get(key)!r}, now {new[key]!r}): it cannot be resumed. Use a new "
                "OUTPUT_DIR, or delete this one to start over.")
