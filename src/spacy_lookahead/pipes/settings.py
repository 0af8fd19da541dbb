"""The settings every transition-system component takes beside its search
and learner blocks (pipes/search.py, pipes/learners.py), with the same names
and meaning, and their one validator.

| setting | used by | meaning |
| --- | --- | --- |
| `search` | all | a `@search` block: Greedy, Lookahead (depth D), Beam (width k, update) or TopN |
| `learner` | all | a `@learners` block: MarginPerceptron (margin C), ViolationFixing, SAPO (n, learning_rate, learning_rate_decay, l2, average) |
| `n_threads` | all | threads that decode the docs of a batch at prediction time (0: every core) |
| `probabilities`, `temperature` | SAPO, sequence labellers | how tag and span probabilities are read (n best or exact marginals), the temperature tau of p(y given x) (None: fitted on the dev data during training, for first-order models of at most 256 labels; else 1) |

A setting the chosen learner does not use must keep its default: a changed
value would be silently ignored, so it is an error that says which learner
would use it.
"""
from typing import Any, Dict, Literal, get_args

from thinc.api import ConfigValidationError

from .learners import MarginPerceptron
from .search import Lookahead

# The choice settings as types: the factories' signatures carry them, so
# spaCy's config validation (`spacy debug config`, `spacy train`) names a
# wrong choice and the permitted ones before anything is built.
Direction = Literal["ltr", "rtl"]
Scheme = Literal["iob2", "biluo", "iob"]  # "iob": the old name of "iob2"
Feedback = Literal["recognition", "classification"]
Target = Literal["tag", "pos"]
# the parser's feature set: "base", or "rich" (Zhang and Nivre 2011's
# third-order and label-set features, and suffixes; systems/arc_standard.pyx)
ParserFeatures = Literal["base", "rich"]
# SAPO's probabilities of tags and spans: the mass of the n best that agree
# (Sun et al.), or exact marginals over all outputs (forward-backward); auto:
# the marginals where they are exact (first-order models of at most
# MAX_LABELS_LATTICE labels), else the n best
Probabilities = Literal["auto", "nbest", "marginals"]

DIRECTIONS = get_args(Direction)
PROBABILITIES = get_args(Probabilities)
PARSER_FEATURES = get_args(ParserFeatures)
MAX_TEMPERATURE = 100.0
# The lattice of exact marginals over a first-order model holds 16 T C^2
# bytes per doc of T tokens and C labels (2,262 labels: 4 GB for a 50-token
# doc); above this count the n best's probabilities do the work.
MAX_LABELS_LATTICE = 256

# Factory defaults shared by every component: depth-1 lookahead and the
# margin perceptron (Tsuruoka et al.); a component may change one (the span
# labellers' margin). SAPO.v1's defaults: the n best outputs per update (Sun
# et al. use n = 5), gamma 0.1 decaying by 0.8 per epoch (CoNLL-2000, 10
# epochs: test F1 93.80 vs 93.48 with a fixed rate, where F1 swings by 0.4
# between epochs) and lambda 1 (the L2 step shrinks the weights by
# gamma * lambda / |S| after each of the |S| training examples).
SEARCH_DEFAULTS: Dict[str, Any] = {
    "search": Lookahead().config(),
    "learner": MarginPerceptron().config(),
    "n_threads": 1,
}


# Defaults of earlier versions: a saved model's config.cfg spells out every
# setting, so a perceptron saved then still names them, and they mean "unused".
FORMER_DEFAULTS: Dict[str, tuple] = {"probabilities": ("nbest",)}


def config_error(name: str, key: str, message: str) -> ConfigValidationError:
    """A wrong setting as spaCy's own config errors: `spacy train` prints it
    as one line (components -> NAME -> KEY: message), not a traceback. A
    ConfigValidationError is a ValueError."""
    return ConfigValidationError(
        title=f"Invalid setting of component '{name}'",
        errors=[{"loc": ["components", name, key], "msg": message}], show_config=False)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_threads(name: str, n_threads: Any) -> None:
    if not _is_int(n_threads) or not 0 <= n_threads <= 1024:
        raise config_error(name, "n_threads", f"[{name}] n_threads must be an integer >= 0 (the "
                                              f"threads that decode a batch; 0: every core), got "
                                              f"{n_threads!r}")


def check_values(name: str, s: Dict[str, Any]) -> None:
    """Each setting on its own: type and range."""
    def fail(key: str, rule: str) -> None:
        raise config_error(name, key, f"[{name}] {key} must be {rule}, got {s[key]!r}")

    check_threads(name, s["n_threads"])
    if "direction" in s and s["direction"] not in DIRECTIONS:
        fail("direction", f"one of {DIRECTIONS}")
    if "probabilities" in s and s["probabilities"] not in PROBABILITIES:
        fail("probabilities", f"one of {PROBABILITIES}")
    if s.get("temperature") is not None and not (_is_number(s["temperature"])
                                                 and 0 < s["temperature"] <= MAX_TEMPERATURE):
        fail("temperature", "null (fitted on the dev data during training) or a number in "
                            f"(0, {MAX_TEMPERATURE:g}]")
    if "alternatives" in s and not isinstance(s["alternatives"], bool):
        fail("alternatives", "true or false")


# The settings only a probabilistic learner (SAPO) reads, and their defaults;
# a tagger's `alternatives` reads the temperature too.
PROBABILITY_SETTINGS: Dict[str, Any] = {"probabilities": "auto", "temperature": None}


def check_unused(name: str, s: Dict[str, Any], probabilistic: bool) -> None:
    """A probability setting changed where the learner gives none: an error
    that names the learner that would read it."""
    if probabilistic:
        return
    for key, default in PROBABILITY_SETTINGS.items():
        if key not in s or (key == "temperature" and s.get("alternatives")):
            continue
        if s[key] != default and s[key] not in FORMER_DEFAULTS.get(key, ()):
            raise config_error(
                name, key, f"[{name}] {key} = {s[key]!r} is read with @learners = "
                           f"\"spacy_lookahead.SAPO.v1\" only. Remove it from the config or set "
                           f"it back to {default!r}.")
