"""The search and learner settings every transition-system component takes,
with the same names and meaning, and their one validator.

| setting | used by | meaning |
| --- | --- | --- |
| `search` | all | "greedy", "lookahead" (depth D, Tsuruoka et al. 2011) or "beam" (Huang et al. 2012) |
| `depth` | lookahead | lookahead depth D, 0-3 |
| `margin` | perceptron, greedy/lookahead | the margin C of Figure 3 |
| `beam_width` | beam; SAPO's n-best where not exact | the beam width k |
| `update` | beam (perceptron; SAPO's n-best beam) | standard, early, max_violation, hybrid, latest |
| `learner` | all | "perceptron" or "sapo" (Sun et al., Algorithm 1) |
| `n`, `learning_rate`, `learning_rate_decay`, `l2` | sapo | top-n, gamma, its decay per epoch, lambda |
| `n_threads` | all | threads that decode the docs of a batch at prediction time (0: every core) |
| `probabilities`, `temperature`, `average` | sapo, sequence labellers | how tag and span probabilities are read (n best or exact marginals), the temperature tau of p(y given x) (None: fitted on the dev data during training, for first-order models of at most 256 labels; else 1), prediction with the averaged weights |

With `learner = "sapo"` the search is SAPO's top-n search: "lookahead" (the
default) asks for the exact one (A*) where the system is first-order and a
beam of width max(n, beam_width) otherwise; "beam" always uses the beam.
With the beam, `update` = "standard" is Sun et al.'s update on complete
outputs; the others compare the n best prefixes at the step they pick with
the gold prefix (Huang et al.'s violation fixing, applied to SAPO).

A setting the chosen search and learner do not use must keep its default:
a changed value would be silently ignored, so it is an error that says
which search or learner would use it.
"""
from typing import Any, Dict, Literal, Optional, get_args

from thinc.api import ConfigValidationError

from ..core.learners import UPDATES

# The choice settings as types: the factories' signatures carry them, so
# spaCy's config validation (`spacy debug config`, `spacy train`) names a
# wrong choice and the permitted ones before anything is built.
Search = Literal["greedy", "lookahead", "beam"]
Learner = Literal["perceptron", "sapo"]
Direction = Literal["ltr", "rtl"]
Update = Literal["standard", "early", "max_violation", "hybrid", "latest"]
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

SEARCHES = get_args(Search)
LEARNERS = get_args(Learner)
DIRECTIONS = get_args(Direction)
PROBABILITIES = get_args(Probabilities)
PARSER_FEATURES = get_args(ParserFeatures)
MAX_DEPTH = 3
MAX_TEMPERATURE = 100.0
# Exact search over a first-order model scores every (previous label, label)
# pair: A* top-n (SAPO's update and n-best) and the lattice of marginals cost
# T * C^2 per doc of T tokens and C labels, and the lattice holds 16 T C^2
# bytes (2,262 labels: 39 s per epoch of 200 sentences against 1 s with the
# beam; the lattice of a 50-token doc 4 GB). Above these counts the beam
# (T * beam_width * C) and the n best's probabilities do the work.
MAX_LABELS_EXACT_TOPN = 1000
MAX_LABELS_LATTICE = 256
assert set(get_args(Update)) == set(UPDATES)

# Factory defaults shared by every component (a component may change one,
# e.g. the span labellers' margin). SAPO: the n best outputs per update (Sun
# et al. use n = 5), gamma 0.1 decaying by 0.8 per epoch (CoNLL-2000, 10
# epochs: test F1 93.80 vs 93.48 with a fixed rate, where F1 swings by 0.4
# between epochs) and lambda 1 (the L2 step shrinks the weights by
# gamma * lambda / |S| after each of the |S| training examples).
SEARCH_DEFAULTS: Dict[str, Any] = {
    "search": "lookahead",
    "depth": 1,
    "margin": 1.0,
    "beam_width": 8,
    "update": "max_violation",
    "learner": "perceptron",
    "n": 5,
    "learning_rate": 0.1,
    "learning_rate_decay": 0.8,
    "l2": 1.0,
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

    if s["search"] not in SEARCHES:
        fail("search", f"one of {SEARCHES}")
    if s["learner"] not in LEARNERS:
        fail("learner", f"one of {LEARNERS}")
    if s["update"] not in UPDATES:
        fail("update", f"one of {UPDATES} (Huang et al. 2012, Sections 4-5)")
    if not _is_int(s["depth"]) or not 0 <= s["depth"] <= MAX_DEPTH:
        fail("depth", f"an integer 0-{MAX_DEPTH} (the lookahead depth D; the search costs "
                      "O(D actions) scorings per decision for first-order systems, "
                      "O(actions^(D+1)) otherwise)")
    if not _is_number(s["margin"]) or s["margin"] < 0:
        fail("margin", "a number >= 0")
    for key in ("beam_width", "n"):
        if not _is_int(s[key]) or not 1 <= s[key] <= 1000:
            fail(key, "an integer in 1..1000")
    if not _is_number(s["learning_rate"]) or s["learning_rate"] <= 0:
        fail("learning_rate", "a number > 0")
    if not _is_number(s["learning_rate_decay"]) or not 0 < s["learning_rate_decay"] <= 1:
        fail("learning_rate_decay", "a number in (0, 1]")
    if not _is_number(s["l2"]) or s["l2"] < 0:
        fail("l2", "a number >= 0")
    check_threads(name, s["n_threads"])
    if "direction" in s and s["direction"] not in DIRECTIONS:
        fail("direction", f"one of {DIRECTIONS}")
    if "probabilities" in s and s["probabilities"] not in PROBABILITIES:
        fail("probabilities", f"one of {PROBABILITIES}")
    if s.get("temperature") is not None and not (_is_number(s["temperature"])
                                                 and 0 < s["temperature"] <= MAX_TEMPERATURE):
        fail("temperature", "null (fitted on the dev data during training) or a number in "
                            f"(0, {MAX_TEMPERATURE:g}]")
    if "average" in s and not isinstance(s["average"], bool):
        fail("average", "true or false")
    if "alternatives" in s and not isinstance(s["alternatives"], bool):
        fail("alternatives", "true or false")


def unused_settings(s: Dict[str, Any]) -> Dict[str, str]:
    """The settings the chosen search and learner do not read, each with
    what would read it."""
    unused = {}
    sapo = s["learner"] == "sapo"
    if sapo:
        unused["margin"] = "learner = perceptron"
        unused["depth"] = "learner = perceptron with search = lookahead"
    else:
        for key in ("n", "learning_rate", "learning_rate_decay", "l2", "probabilities",
                    "temperature", "average"):
            if key in s and not (key == "temperature" and s.get("alternatives")):
                unused[key] = "learner = sapo"
        if s["search"] != "lookahead":
            unused["depth"] = "search = lookahead"
        if s["search"] == "beam":
            unused["margin"] = "search = greedy or lookahead"
        else:
            unused["beam_width"] = "search = beam (or learner = sapo)"
            unused["update"] = "search = beam"
    return unused


def validate_search_settings(name: str, settings: Dict[str, Any],
                             defaults: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Check the settings (values, and that none is set but unused); returns
    them with margin etc. as floats."""
    defaults = {**SEARCH_DEFAULTS, **(defaults or {})}
    s = {**defaults, **settings}
    check_values(name, s)
    if s["learner"] == "sapo" and s["search"] == "greedy":
        raise config_error(name, "search", f"[{name}] learner = sapo searches the n best outputs: use search = "
                         "lookahead (exact top-n where possible) or beam, not greedy")
    for key, user in unused_settings(s).items():
        if s[key] != defaults[key] and not (key == "depth" and s[key] == 0) \
                and s[key] not in FORMER_DEFAULTS.get(key, ()):
            raise config_error(name, key,
                f"[{name}] {key} = {s[key]!r} is not used with search = {s['search']!r} and "
                f"learner = {s['learner']!r} (it is read with {user}). Remove it from the "
                f"config or set it back to {defaults[key]!r}.")
    for key in ("margin", "learning_rate", "learning_rate_decay", "l2"):
        s[key] = float(s[key])
    return s
