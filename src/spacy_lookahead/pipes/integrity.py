"""The sealed weights file: the weights with a header that says which
component type wrote them, and a checksum over the weights, the labels and
the feature settings they were trained with, so that a damaged, truncated or
swapped file is refused instead of predicting nonsense."""
import hashlib
from importlib import metadata
from typing import Any, Dict, List, Optional

import srsly

FORMAT = "spacy-lookahead.weights"
# 2: the checksum covers the header's fields too (1: the weights, labels
# and feature settings only; still read). 3: sealed as 2, but the weights
# may leave out running totals and clocks that are all 0 (Weights.to_bytes),
# which readers of 1 and 2 cannot read: they refuse the file by its version.
VERSION = 3
READABLE = (1, 2, 3)
# the header fields the version-2 checksum covers (all but the checksum)
HEADER_FIELDS = ("format", "version", "component", "written_by", "n_labels")


def _package_version() -> str:
    try:
        return metadata.version("spacy-lookahead")
    except metadata.PackageNotFoundError:  # run from a source tree
        return "unknown"


class ModelFileError(ValueError):
    """A weights file that does not belong to the component loading it."""


def _checksum(weights: bytes, labels: List[str], settings: Dict[str, Any],
              header: Optional[Dict[str, Any]] = None) -> str:
    """sha256 over the weights, the labels, the feature settings and (version
    2) the header's fields."""
    digest = hashlib.sha256(weights)
    digest.update(srsly.json_dumps([list(labels), settings], sort_keys=True).encode("utf8"))
    if header is not None:
        digest.update(srsly.json_dumps({k: header.get(k) for k in HEADER_FIELDS},
                                       sort_keys=True).encode("utf8"))
    return digest.hexdigest()


def _checksum_without_settings(weights: bytes, labels: List[str]) -> str:
    """The checksum of files saved before it covered the feature settings:
    recognised to say so, never accepted."""
    digest = hashlib.sha256(weights)
    digest.update(srsly.json_dumps(list(labels)).encode("utf8"))
    return digest.hexdigest()


def seal(component: str, labels: List[str], settings: Dict[str, Any], weights: bytes) -> bytes:
    """The weights bytes with their header; `settings`: the feature settings."""
    header = {"format": FORMAT, "version": VERSION, "component": component,
              "written_by": f"spacy-lookahead {_package_version()}", "n_labels": len(labels)}
    header["sha256"] = _checksum(weights, labels, settings, header)
    return srsly.msgpack_dumps({"header": header, "weights": weights})


def unseal(component: str, labels: List[str], settings: Dict[str, Any], data: bytes,
           source: str) -> bytes:
    """The weights bytes of a sealed file, checked against the component
    type, the labels and the feature settings of the model's cfg; `source`
    names the file in the errors."""
    fix = ("Save the pipeline again from an intact copy, or re-train it.")
    try:
        msg = srsly.msgpack_loads(data)
    except Exception as err:
        raise ModelFileError(f"{source} is damaged: it is not a weights file ({err}). {fix}") from err
    header: Dict[str, Any] = msg.get("header") if isinstance(msg, dict) else None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ModelFileError(
            f"{source} is not a sealed spacy-lookahead weights file (no header: damaged, or "
            f"saved by a version before checksums). {fix}")
    if header.get("version") not in READABLE:
        raise ModelFileError(f"{source} has weights format version {header.get('version')!r} "
                             f"(written by {header.get('written_by', 'an unknown version')}); "
                             f"this version of spacy-lookahead reads versions "
                             f"{', '.join(map(str, READABLE))}. "
                             "Load it with the version that saved it, or re-train.")
    if header.get("component") != component:
        raise ModelFileError(
            f"{source} holds the weights of a {header.get('component')!r} component, not of a "
            f"{component!r}: the model files are swapped or mismatched. Load each component "
            "from its own directory.")
    weights = msg.get("weights")
    if isinstance(weights, bytes) and header.get("sha256") == _checksum_without_settings(weights, labels):
        raise ModelFileError(
            f"{source} was saved by an earlier spacy-lookahead "
            f"({header.get('written_by', 'an unknown version')}) whose checksum leaves out the "
            "feature settings, which this version checks: the file is intact but cannot be "
            "verified. Re-train the model, or load it with the version that saved it.")
    covered = header if header.get("version", VERSION) >= 2 else None
    if not isinstance(weights, bytes) or \
            header.get("sha256") != _checksum(weights, labels, settings, covered):
        raise ModelFileError(
            f"{source} fails its checksum: the weights or the header are damaged, or do not "
            f"belong to the "
            f"labels and feature settings in the component's cfg ({len(labels)} labels, the "
            f"weights were saved with {header.get('n_labels')!r}; {settings}). {fix}")
    return weights
