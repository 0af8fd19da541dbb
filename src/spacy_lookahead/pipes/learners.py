"""The learner blocks of a component's config (`[components.NAME.learner]`):
what a training step does with the search's outputs, and which weights and
decoder prediction uses. Each is chosen once, from the config; the pipe asks
it, never which one it is.

    [components.tagger.learner]
    @learners = "spacy_lookahead.MarginPerceptron.v1"
    margin = 1.0

| block | the paper | searches | settings |
| --- | --- | --- | --- |
| `MarginPerceptron.v1` | Tsuruoka et al. 2011, Figure 3 | Greedy, Lookahead | `margin` C |
| `ViolationFixing.v1` | Huang et al. 2012, Algorithm 2 | Beam | none (the beam's `update`) |
| `SAPO.v1` | Sun et al., Algorithm 1 | TopN, Beam | `n`, `learning_rate`, `learning_rate_decay`, `l2`, `average` |

A new learner is one registered function returning a `Learner` (its
`learn` and `decoder`, over the engine's functions in core/); nothing else
changes (tests/test_learners.py adds one)."""
from dataclasses import asdict, dataclass
from typing import (TYPE_CHECKING, Any, Callable, ClassVar, Dict, Iterable, List, Tuple)

from thinc.api import ConfigValidationError

from .. import registry
from ..core import decode as decoding
from ..core import learners as engine
from .prediction import Prediction, nbest_prediction
from .search import (MIGRATE_HINT, Beam, Block, Greedy, Lookahead, Search, TopN,
                     block_error, check_int)

if TYPE_CHECKING:
    from .transition import TransitionPipe


@dataclass(frozen=True)
class Learner(metaclass=Block):
    """The learner's part of a component. `kind` is recorded with the
    weights: a model trained by one kind of learner loads only with it."""
    described: ClassVar[str] = ('a @learners block, e.g. @learners = '
                                '"spacy_lookahead.MarginPerceptron.v1" ' + MIGRATE_HINT)
    registered: ClassVar[str]  # the name under @learners
    kind: ClassVar[str]
    searches: ClassVar[Tuple[type, ...]]  # the search blocks it trains with
    # whether the model defines p(y | x) (SAPO): predictions come with the n
    # best and their probabilities, and the component has a temperature
    probabilistic: ClassVar[bool] = False

    def config(self) -> Dict[str, Any]:
        """The block as a config writes it (saved in the component's cfg)."""
        return {"@learners": self.registered, **asdict(self)}

    @property
    def averages(self) -> bool:
        """Whether prediction reads the averaged weights (Collins 2002)."""
        return True

    def check(self, name: str, search: Search) -> None:
        """The config error that names the searches this learner trains with."""
        if not isinstance(search, self.searches):
            names = " or ".join(f'"{s.registered}"' for s in self.searches)
            raise ConfigValidationError(
                title=f"Invalid setting of component '{name}'",
                errors=[{"loc": ["components", name, "search"], "msg":
                         f"{self.registered} trains with @search = {names}, not "
                         f"\"{search.registered}\""}], show_config=False)

    def initialize(self, pipe: "TransitionPipe") -> None:
        """Checks before training starts (a wrong setting fails here, not
        after the first epoch)."""

    def learn(self, pipe: "TransitionPipe", instances: Iterable) -> float:
        """One online pass over the instances; returns the loss."""
        raise NotImplementedError

    def decoder(self, pipe: "TransitionPipe") -> Tuple[Callable, tuple]:
        """The engine's decoder and its arguments after the instances."""
        search = pipe.search
        return decoding.decode, (pipe.averaged_weights, search.kind, search.depth,
                                 search.predict_beam_width(1))

    def predictions(self, pipe: "TransitionPipe", results: list) -> List[Prediction]:
        """The decoder's results as predictions (the best output of each doc)."""
        return [Prediction(out) for out in results]

    def scores(self, pipe: "TransitionPipe") -> Dict[str, float]:
        """What the learner adds to the component's scores."""
        return {}


@dataclass(frozen=True)
class MarginPerceptron(Learner):
    """The averaged perceptron with a margin on lookahead scores (Tsuruoka
    et al. 2011, Figure 3): along the gold path, an update wherever the
    gold action's backed-up score is not `margin` above another's; loss:
    the mistakes."""
    registered: ClassVar[str] = "spacy_lookahead.MarginPerceptron.v1"
    kind: ClassVar[str] = "perceptron"
    searches: ClassVar[Tuple[type, ...]] = (Greedy, Lookahead)
    margin: float = 1.0

    def learn(self, pipe: "TransitionPipe", instances: Iterable) -> float:
        mistakes, _ = engine.margin_perceptron(instances, pipe.weights, pipe.search.depth,
                                               self.margin)
        return mistakes


@dataclass(frozen=True)
class ViolationFixing(Learner):
    """The violation-fixing perceptron on the beam (Huang et al. 2012,
    Algorithm 2), with the beam's `update`; loss: the updates. Counts the
    updates and the invalid ones (no violation: the standard update only,
    Figure 5) in the component's scores."""
    registered: ClassVar[str] = "spacy_lookahead.ViolationFixing.v1"
    kind: ClassVar[str] = "perceptron"
    searches: ClassVar[Tuple[type, ...]] = (Beam,)

    def learn(self, pipe: "TransitionPipe", instances: Iterable) -> float:
        search = pipe.search
        stats = engine.violation_fixing_perceptron(instances, pipe.weights, search.width,
                                                   search.update)
        for key, value in stats.items():
            pipe.update_stats[key] += value
        return stats["updates"]

    def scores(self, pipe: "TransitionPipe") -> Dict[str, float]:
        return {f"{pipe.name}_beam_updates": pipe.update_stats["updates"],
                f"{pipe.name}_beam_invalid": pipe.update_stats["invalid"]}


@dataclass(frozen=True)
class SAPO(Learner):
    """SAPO (Sun et al., Algorithm 1): the n best outputs of the top-n
    search, their probabilities (eq. 1), w -= gamma sum_k P_k F(y_k);
    w += gamma F(y*), and the L2 step shrinking w by gamma lambda / |S|
    after each example (eq. 5); gamma decays by `learning_rate_decay` per
    epoch of |S| examples. Predicts with its own weights (Algorithm 1 has
    no averaging) unless `average`. Loss: the negative log-likelihood of
    the gold output over the n best."""
    registered: ClassVar[str] = "spacy_lookahead.SAPO.v1"
    kind: ClassVar[str] = "sapo"
    searches: ClassVar[Tuple[type, ...]] = (TopN, Beam)
    probabilistic: ClassVar[bool] = True
    n: int = 5
    learning_rate: float = 0.1
    learning_rate_decay: float = 0.8
    l2: float = 1.0
    average: bool = False

    @property
    def averages(self) -> bool:
        return self.average

    def step(self, pipe: "TransitionPipe") -> Tuple[float, float]:
        """(gamma, shrink) for the current epoch: the L2 step is
        w -= (gamma lambda / |S|) w (eq. 5)."""
        size = pipe.cfg.get("train_size") or 0
        if size < 1:
            raise ValueError(f"[{pipe.name}] SAPO needs the training set size |S| for its L2 "
                             "step: initialize the component with the training examples first.")
        gamma = self.learning_rate * self.learning_rate_decay ** (pipe.examples_seen // size)
        shrink = 1.0 - gamma * self.l2 / size
        if shrink <= 0.0:
            raise ValueError(f"[{pipe.name}] learning_rate * l2 = {gamma * self.l2:g} is not "
                             f"below the training set size {size}: the L2 step would flip the "
                             "weights. Lower learning_rate or l2.")
        return gamma, shrink

    def initialize(self, pipe: "TransitionPipe") -> None:
        try:
            self.step(pipe)
        except ValueError as err:
            raise ConfigValidationError(
                title=f"Invalid setting of component '{pipe.name}'",
                errors=[{"loc": ["components", pipe.name, "learner", "l2"], "msg": str(err)}],
                show_config=False) from err
        pipe.check_label_limits()

    def learn(self, pipe: "TransitionPipe", instances: Iterable) -> float:
        search = pipe.search
        exact = search.exact_topn(pipe.system, pipe.name)  # (before any change: it may raise)
        gamma, shrink = self.step(pipe)
        loss, _ = engine.sapo(instances, pipe.weights, self.n, gamma, shrink,
                              search.beam_width(1), exact, search.update)
        return loss

    def decoder(self, pipe: "TransitionPipe") -> Tuple[Callable, tuple]:
        search = pipe.search
        return decoding.nbest, (pipe.averaged_weights, self.n, search.predict_beam_width(1),
                                search.exact_topn(pipe.system, pipe.name))

    def predictions(self, pipe: "TransitionPipe", results: list) -> List[Prediction]:
        """(outputs, scores[, exact scores of the best's parts]) per doc:
        the best, the n best and their softmax at the temperature."""
        tau = pipe.temperature
        return [nbest_prediction(r[0], r[1], tau, r[2] if len(r) > 2 else None) for r in results]


@registry.learners(MarginPerceptron.registered)
def margin_perceptron(margin: float = 1.0) -> MarginPerceptron:
    """The averaged margin perceptron of Tsuruoka et al. (Figure 3), with a
    Greedy or Lookahead search."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or margin < 0:
        raise block_error("MarginPerceptron.v1", "margin", f"margin must be a number >= 0, "
                                                           f"got {margin!r}")
    return MarginPerceptron(float(margin))


@registry.learners(ViolationFixing.registered)
def violation_fixing() -> ViolationFixing:
    """The averaged violation-fixing perceptron of Huang et al. (2012), with a
    Beam search (its `update` picks the rule)."""
    return ViolationFixing()


@registry.learners(SAPO.registered)
def sapo(n: int = 5, learning_rate: float = 0.1, learning_rate_decay: float = 0.8,
         l2: float = 1.0, average: bool = False) -> SAPO:
    """SAPO (Sun et al.), with a TopN or Beam search."""
    block = "SAPO.v1"
    check_int(block, "n", n, 1, 1000, " (the n best outputs per update)")
    for key, value, ok, rule in (
            ("learning_rate", learning_rate, lambda v: v > 0, "a number > 0"),
            ("learning_rate_decay", learning_rate_decay, lambda v: 0 < v <= 1,
             "a number in (0, 1]"),
            ("l2", l2, lambda v: v >= 0, "a number >= 0")):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not ok(value):
            raise block_error(block, key, f"{key} must be {rule}, got {value!r}")
    if not isinstance(average, bool):
        raise block_error(block, "average", f"average must be true or false, got {average!r}")
    return SAPO(n, float(learning_rate), float(learning_rate_decay), float(l2), average)


LEARNERS: Tuple[type, ...] = (MarginPerceptron, ViolationFixing, SAPO)
