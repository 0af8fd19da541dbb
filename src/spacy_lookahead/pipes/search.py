"""The search blocks of a component's config (`[components.NAME.search]`):
how the engine looks for an output, in training and at prediction.

    [components.tagger.search]
    @search = "spacy_lookahead.Lookahead.v1"
    depth = 1

| block | the paper | settings |
| --- | --- | --- |
| `Greedy.v1` | one action at a time (lookahead of depth 0) | none |
| `Lookahead.v1` | Tsuruoka et al. 2011, Figure 2 | `depth` D |
| `Beam.v1` | Huang et al. 2012 | `width` k, violation-fixing `update`, `predict_width` |
| `TopN.v1` | Sun et al.: SAPO's top-n search | `width`, `update` (the beam where A* is not exact) |

A block holds only what its search reads, so a setting that does not apply
cannot be written; which learner trains with which search is the learner's
`searches` (pipes/learners.py)."""
import warnings
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Dict, Literal, Optional, Tuple, get_args

from thinc.api import ConfigValidationError

from .. import registry
from ..core.learners import UPDATES
from ..core.system import TransitionSystem

Update = Literal["standard", "early", "max_violation", "hybrid", "latest"]
assert set(get_args(Update)) == set(UPDATES)
MAX_DEPTH = 3
MAX_WIDTH = 1000
# Exact top-n search over a first-order model scores every (previous label,
# label) pair: A* costs T * C^2 per doc of T tokens and C labels (2,262
# labels: 39 s per epoch of 200 sentences against 1 s with the beam). Above
# this count the beam (T * width * C) does the work.
MAX_LABELS_EXACT_TOPN = 1000


def block_error(block: str, key: str, message: str) -> ConfigValidationError:
    """A wrong value of a block's setting, as spaCy's config errors show it."""
    return ConfigValidationError(title=f"Invalid setting of {block}",
                                 errors=[{"loc": [block, key], "msg": message}],
                                 show_config=False)


def check_int(block: str, key: str, value: Any, low: int, high: int, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise block_error(block, key, f"{key} must be an integer in {low}..{high}{why}, got "
                                      f"{value!r}")
    return value


class Block(type):
    """The type of a block class, named as spaCy's config validation shows
    it: a wrong value of `search` or `learner` (e.g. a config's flat
    `search = "beam"` of earlier versions) reads "'beam' is not a @search
    block ...", with the command that rewrites such a config."""
    def __repr__(cls) -> str:
        return getattr(cls, "described", cls.__name__)


MIGRATE_HINT = ("(a config of an earlier version, with flat settings such as `depth` or "
                "`beam_width`: rewrite it with `python -m spacy_lookahead migrate-config "
                "CONFIG_OR_PIPELINE`)")


@dataclass(frozen=True)
class Search(metaclass=Block):
    """What the engine's decoders read of a search: `kind` (core.decode's
    name), the lookahead depth and the beam width."""
    described: ClassVar[str] = ('a @search block, e.g. @search = '
                                '"spacy_lookahead.Lookahead.v1" ' + MIGRATE_HINT)
    registered: ClassVar[str]  # the name under @search
    kind: ClassVar[str]
    depth: ClassVar[int] = 0
    # the n best (predict_nbest, SAPO): exact A* where the system is
    # first-order, else a beam of width max(n, width)
    exact_nbest: ClassVar[bool] = True

    def config(self) -> Dict[str, Any]:
        """The block as a config writes it (saved in the component's cfg;
        a setting left at null is left out, as configs before it read)."""
        return {"@search": self.registered,
                **{k: v for k, v in asdict(self).items() if v is not None}}

    def beam_width(self, default: int) -> int:
        """The beam width k where a beam is used; `default` where this
        search has none (the n best of a lookahead model)."""
        return getattr(self, "width", default)

    def predict_beam_width(self, default: int) -> int:
        """The beam width at prediction (spaCy's evaluation during training
        too): a beam's `predict_width` where set, else beam_width()."""
        return getattr(self, "predict_width", None) or self.beam_width(default)

    def exact_topn(self, system: TransitionSystem, name: str) -> bool:
        """Whether the n best come from A* (exact): a first-order system
        within MAX_LABELS_EXACT_TOPN labels; past it, the error that names
        the beam."""
        exact = self.exact_nbest
        if exact and system.first_order and system.nr_class > MAX_LABELS_EXACT_TOPN:
            raise ConfigValidationError(
                title=f"Invalid setting of component '{name}'",
                errors=[{"loc": ["components", name, "search"], "msg":
                         f"exact top-n search (A*, {self.registered}) costs T * C^2 per doc "
                         f"of T tokens and C labels, and this model has {system.nr_class} "
                         f"labels (at most {MAX_LABELS_EXACT_TOPN}): use "
                         "@search = \"spacy_lookahead.Beam.v1\" (T * width * C)"}],
                show_config=False)
        return exact


@dataclass(frozen=True)
class Greedy(Search):
    registered: ClassVar[str] = "spacy_lookahead.Greedy.v1"
    kind: ClassVar[str] = "greedy"


@dataclass(frozen=True)
class Lookahead(Search):
    registered: ClassVar[str] = "spacy_lookahead.Lookahead.v1"
    kind: ClassVar[str] = "lookahead"
    depth: int = 1  # type: ignore[misc]  # (a field here, 0 for the others)


@dataclass(frozen=True)
class Beam(Search):
    registered: ClassVar[str] = "spacy_lookahead.Beam.v1"
    kind: ClassVar[str] = "beam"
    exact_nbest: ClassVar[bool] = False
    width: int = 8
    update: str = "max_violation"
    predict_width: Optional[int] = None


@dataclass(frozen=True)
class TopN(Search):
    registered: ClassVar[str] = "spacy_lookahead.TopN.v1"
    kind: ClassVar[str] = "topn"
    width: int = 16
    update: str = "max_violation"


@registry.search(Greedy.registered)
def greedy() -> Greedy:
    """The best-scoring action at each step (lookahead of depth 0)."""
    return Greedy()


@registry.search(Lookahead.registered)
def lookahead(depth: int = 1) -> Lookahead:
    """Each action chosen by the best score reachable within `depth` further
    actions (Tsuruoka et al. 2011, Figure 2); depth 0 is greedy."""
    return Lookahead(check_int("Lookahead.v1", "depth", depth, 0, MAX_DEPTH,
                               " (the search costs O(D actions) scorings per decision for "
                               "first-order systems, O(actions^(D+1)) otherwise)"))


@registry.search(Beam.registered)
def beam(width: int = 8, update: Update = "max_violation",
         predict_width: Optional[int] = None) -> Beam:
    """Beam search of `width` k; in training the violation-fixing `update`
    (Huang et al. 2012, Sections 4-5): standard, early, max_violation,
    hybrid or latest. `predict_width`: the beam at prediction, where it
    differs from training's (a wider one can find parses that score
    higher under the same weights; null: `width`)."""
    width = check_int("Beam.v1", "width", width, 1, MAX_WIDTH)
    if predict_width is not None:
        predict_width = check_int("Beam.v1", "predict_width", predict_width, 1, MAX_WIDTH,
                                  " or null (the training width)")
        if predict_width < width:
            warnings.warn(f"Beam.v1: predict_width = {predict_width} is narrower than the beam "
                          f"it trains with (width = {width}): prediction and the dev scores "
                          "during training use the narrower one. Set predict_width = null to "
                          "predict with width.", UserWarning, stacklevel=2)
    return Beam(width, _update("Beam.v1", update), predict_width)


@registry.search(TopN.registered)
def top_n(width: int = 16, update: Update = "max_violation") -> TopN:
    """SAPO's top-n search (Sun et al.): exact (A* with a backward Viterbi
    heuristic) where the system is first-order; otherwise a beam of width
    max(n, width) whose `update` compares complete outputs (standard) or
    prefixes (Huang et al.'s others)."""
    return TopN(check_int("TopN.v1", "width", width, 1, MAX_WIDTH), _update("TopN.v1", update))


def _update(block: str, update: str) -> str:
    if update not in UPDATES:
        raise block_error(block, "update", f"update must be one of {UPDATES} (Huang et al. "
                                           f"2012, Sections 4-5), got {update!r}")
    return update


SEARCHES: Tuple[type, ...] = (Greedy, Lookahead, Beam, TopN)
