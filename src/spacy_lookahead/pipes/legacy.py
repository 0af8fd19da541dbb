"""Configs written before the search and the learner became blocks: a
component's flat settings (`search = "beam"`, `beam_width = 16`,
`learner = "sapo"`, `l2 = 2.0` ...) as the blocks they meant.
`python -m spacy_lookahead migrate-config PATH` rewrites a config or a saved
pipeline with them (spaCy's config validation refuses the flat settings and
names that command: search.BLOCK_HINT); the weights load unchanged."""
from pathlib import Path
from typing import Any, Dict, List, Tuple

from thinc.api import Config

from .learners import SAPO, Learner, MarginPerceptron, ViolationFixing
from .search import Beam, Greedy, Lookahead, Search, TopN

# the flat settings of the search and learner, and what they defaulted to
FLAT_DEFAULTS: Dict[str, Any] = {
    "search": "lookahead", "depth": 1, "margin": 1.0, "beam_width": 8,
    "update": "max_violation", "learner": "perceptron", "n": 5, "learning_rate": 0.1,
    "learning_rate_decay": 0.8, "l2": 1.0, "average": False,
}
# the former defaults of the components whose own differed
COMPONENT_FLAT_DEFAULTS: Dict[str, Dict[str, Any]] = {
    "lookahead_tagger": {"beam_width": 16},
    "lookahead_chunker": {"beam_width": 16, "margin": 50.0},
    "lookahead_ner": {"beam_width": 16, "margin": 50.0},
    "arc_standard_parser": {},
}


def flat_of(search: Search, learner: Learner) -> Dict[str, Any]:
    """The flat settings that mean these blocks (the inverse of `blocks`)."""
    flat: Dict[str, Any] = {"search": "lookahead" if isinstance(search, TopN) else search.kind,
                            "depth": search.depth, "learner": learner.kind}
    if isinstance(search, (Beam, TopN)):
        flat.update(beam_width=search.width, update=search.update)
    if isinstance(learner, MarginPerceptron):
        flat["margin"] = learner.margin
    elif isinstance(learner, SAPO):
        flat.update(n=learner.n, learning_rate=learner.learning_rate,
                    learning_rate_decay=learner.learning_rate_decay, l2=learner.l2,
                    average=learner.average)
    return flat


def blocks(flat: Dict[str, Any], defaults: Dict[str, Any] = FLAT_DEFAULTS
           ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The search and learner blocks (as config sections) that flat settings
    meant (`defaults` where one is missing). With learner = "sapo",
    search = "lookahead" was SAPO's exact top-n search. A setting the blocks
    do not read, changed from its default, is an error (as it was)."""
    s = {**FLAT_DEFAULTS, **defaults, **flat}
    sapo = s["learner"] == "sapo"
    if s["search"] == "beam":
        search = {"@search": Beam.registered, "width": s["beam_width"], "update": s["update"]}
    elif sapo:
        search = {"@search": TopN.registered, "width": s["beam_width"], "update": s["update"]}
    elif s["search"] == "greedy":
        search = {"@search": Greedy.registered}
    else:
        search = {"@search": Lookahead.registered, "depth": s["depth"]}
    if sapo:
        learner = {"@learners": SAPO.registered, "n": s["n"], "learning_rate": s["learning_rate"],
                   "learning_rate_decay": s["learning_rate_decay"], "l2": s["l2"],
                   "average": s["average"]}
    elif s["search"] == "beam":
        learner = {"@learners": ViolationFixing.registered}
    else:
        learner = {"@learners": MarginPerceptron.registered, "margin": s["margin"]}
    known = {**FLAT_DEFAULTS, **defaults}
    read = {"search", "learner", *search, *learner, *(["beam_width"] if "width" in search else [])}
    for key, value in flat.items():
        if key in read or value == known[key] or (key == "depth" and value == 0):
            continue
        raise ValueError(
            f"{key} = {value!r} is not read with search = {s['search']!r} and learner = "
            f"{s['learner']!r} ({search['@search']}, {learner['@learners']}): remove it or set "
            f"it back to {known[key]!r}")
    return search, learner


def migrate_config(config: Config) -> List[str]:
    """Rewrite, in place, the flat search and learner settings of every
    component of ours in a config (not interpolated) as blocks; returns the
    names of the components rewritten."""
    done = []
    for name, section in config.get("components", {}).items():
        migrated = migrate_section(section.get("factory", ""), section)
        if migrated != section:
            section.clear()
            section.update(migrated)
            done.append(name)
    return done


def migrate_section(factory: str, section: Dict[str, Any]) -> Dict[str, Any]:
    """A component's settings (a config section, or add_pipe's config) with
    its flat search and learner settings as blocks; the same settings where
    it has none, or the factory is not one of ours that took them."""
    flat = {key: value for key, value in section.items()
            if key in FLAT_DEFAULTS and not isinstance(value, dict)}
    if factory not in COMPONENT_FLAT_DEFAULTS or not flat:
        return section
    search, learner = blocks(flat, {**FLAT_DEFAULTS, **COMPONENT_FLAT_DEFAULTS[factory]})
    return {**{k: v for k, v in section.items() if k not in flat},
            "search": search, "learner": learner}


def migrate_path(path: Path) -> List[str]:
    """migrate_config on a config file, or on a saved pipeline's config.cfg."""
    path = Path(path)
    file = path / "config.cfg" if path.is_dir() else path
    config = Config().from_disk(file, interpolate=False)
    done = migrate_config(config)
    if done:
        config.to_disk(file)
    return done
