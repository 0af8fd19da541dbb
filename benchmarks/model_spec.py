"""Model arguments of the speed harnesses: `NAME=MODEL_DIR`, optionally with
settings changed at load time, `NAME=MODEL_DIR@depth=2,n_threads=2`: each
key is set on every component of the pipeline whose config has it (the
search settings are read from the config at load, so one trained model
can be timed at every depth). The harnesses take `n_process` as the
argument of nlp.pipe, e.g. `NAME=MODEL_DIR@n_process=2`."""
from pathlib import Path
from typing import Any, Dict, Tuple

import srsly


def parse_spec(spec: str) -> Tuple[str, str, Dict[str, Any]]:
    """(name, model directory, {key: value}) of a model argument."""
    name, sep, rest = spec.partition("=")
    if not sep:
        name, rest = Path(spec.split("@")[0]).name, spec
    model, _, settings = rest.partition("@")
    overrides = {}
    for item in filter(None, settings.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"setting {item!r} of {spec!r} is not KEY=VALUE")
        try:
            overrides[key] = srsly.json_loads(value)
        except ValueError:
            overrides[key] = value
    return name, model, overrides


def load(model: str, overrides: Dict[str, Any]):
    """spacy.load(model) with the overrides set on every component that has
    the keys; an override no component takes is an error."""
    import spacy
    from spacy.util import load_config

    config = load_config(Path(model) / "config.cfg")
    changes: Dict[str, Dict[str, Any]] = {}
    for key, value in overrides.items():
        hit = [c for c, block in config["components"].items() if key in block]
        if not hit:
            raise ValueError(f"no component of {model} has a setting {key!r}")
        for component in hit:
            changes.setdefault(component, {})[key] = value
    return spacy.load(model, config={"components": changes} if changes else {})
