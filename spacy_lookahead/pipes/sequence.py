"""What the sequence labellers (tagger, chunker, NER) share: the tagging
system built from the config, inputs per doc, and the two learners: the
lookahead search with the margin perceptron (Tsuruoka et al. 2011, Figures 2
and 3) and SAPO (Sun et al., Algorithm 1: top-n search, probabilities, L2)."""
import time
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab

from ..core.features import LexemeAtoms
from ..core.weights import Weights
from ..systems.tagging import TaggingSystem
from .base import SearchPipe

DIRECTIONS = ("ltr", "rtl")
LEARNERS = ("perceptron", "sapo")

# The learner settings every sequence component takes (factory defaults).
# SAPO: the n best outputs per update (Sun et al. use n = 5), the learning
# rate gamma (multiplied by learning_rate_decay after every epoch; 1.0 keeps
# it fixed, as in the paper's analysis) and the L2 strength lambda (the weights
# shrink by gamma * lambda / |S| after each of the |S| training examples).
# Defaults: gamma 0.1 decaying by 0.8 per epoch (CoNLL-2000, 10 epochs: test
# F1 93.80 vs 93.48 with a fixed rate, where F1 swings by 0.4 between epochs).
# beam_width: the top-n search is exact (A*) for first-order features; with
# tag/label trigrams it is a beam search of width max(n, beam_width) (Sun et
# al. use 50 and find no difference to A*).
LEARNER_DEFAULTS = {"learner": "perceptron", "n": 5, "learning_rate": 0.1,
                    "learning_rate_decay": 0.8, "l2": 1.0, "beam_width": 16}


class Labelling(NamedTuple):
    """What predict() returns per doc: the label ids written to the doc, and
    with SAPO the n best label sequences (document order) and their
    probabilities (eq. 1: a softmax over the n best)."""
    ids: numpy.ndarray
    nbest: Optional[numpy.ndarray] = None
    probs: Optional[numpy.ndarray] = None


def softmax(scores: numpy.ndarray) -> numpy.ndarray:
    e = numpy.exp(scores - scores.max()) if len(scores) else scores
    return e / e.sum() if len(scores) else e


def validate_search_settings(name: str, depth: Any, margin: Any, direction: Any) -> None:
    """Raise on wrong config values, naming the setting and what it accepts."""
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        raise ValueError(f"[{name}] depth must be an integer >= 0 (0 = greedy), got {depth!r}")
    if depth > 4:
        raise ValueError(f"[{name}] depth {depth} is impractical: the search costs "
                         f"O(labels^(depth+1)) per token. Use depth 0-3.")
    if not isinstance(margin, (int, float)) or isinstance(margin, bool) or margin < 0:
        raise ValueError(f"[{name}] margin must be a number >= 0, got {margin!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"[{name}] direction must be one of {DIRECTIONS}, got {direction!r}")


def validate_learner_settings(name: str, learner: Any, n: Any, learning_rate: Any,
                              learning_rate_decay: Any, l2: Any, beam_width: Any) -> None:
    if learner not in LEARNERS:
        raise ValueError(f"[{name}] learner must be one of {LEARNERS}, got {learner!r}")
    for key, value in (("n", n), ("beam_width", beam_width)):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1000:
            raise ValueError(f"[{name}] {key} (of the top-n search) must be an integer "
                             f"in 1..1000, got {value!r}")
    for key, value, low, high in (("learning_rate", learning_rate, 0.0, None),
                                  ("learning_rate_decay", learning_rate_decay, 0.0, 1.0),
                                  ("l2", l2, None, None)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = ok and (value > low if low is not None else value >= 0)
        ok = ok and (high is None or value <= high)
        if not ok:
            rule = {"learning_rate": "> 0", "learning_rate_decay": "in (0, 1]", "l2": ">= 0"}[key]
            raise ValueError(f"[{name}] {key} must be a number {rule}, got {value!r}")


class SequencePipe(SearchPipe):
    """Base of the sequence labellers. Subclasses define the action names,
    the feature set, the gold action ids of an example and how predictions
    are written to the Doc."""

    feature_set = "pos"
    history_setting = "tag_trigrams"  # cfg key of the (t-1, t-2) feature switch
    # SAPO weights are read as they are (no averaging) and give probabilities.
    model_settings = ("learner", "train_size")

    def __init__(self, vocab: Vocab, name: str, *, depth: int, margin: float, direction: str,
                 scorer: Optional[Callable], learner: str = "perceptron", n: int = 5,
                 learning_rate: float = 0.1, learning_rate_decay: float = 0.8, l2: float = 1.0,
                 beam_width: int = 16, **settings: Any) -> None:
        validate_search_settings(name, depth, margin, direction)
        validate_learner_settings(name, learner, n, learning_rate, learning_rate_decay, l2,
                                  beam_width)
        super().__init__(vocab, name, scorer=scorer, depth=depth, margin=float(margin),
                         direction=direction, learner=learner, n=n,
                         learning_rate=float(learning_rate),
                         learning_rate_decay=float(learning_rate_decay), l2=float(l2),
                         beam_width=beam_width, **settings)
        self._atoms = LexemeAtoms(substrings=self.feature_set == "ner")
        self._system: Optional[TaggingSystem] = None
        self._seen = 0  # training examples seen (SAPO's epoch count)
        self._update_seconds = 0.0  # time spent learning, for per-epoch timings

    # --- to define in subclasses ---------------------------------------------
    @property
    def actions(self) -> List[str]:
        return list(self.labels)

    def constraints(self) -> Dict[str, numpy.ndarray]:
        return {}

    def gold_ids(self, example: Example) -> numpy.ndarray:
        raise NotImplementedError

    def set_annotations(self, docs: Iterable[Doc], labellings: List[Labelling]) -> None:
        raise NotImplementedError

    def input_columns(self, doc: Doc, atoms: numpy.ndarray, example: Optional[Example]) -> None:
        """Fill the per-token input columns (POS, chunks) of `atoms`; at
        training time `example` gives the gold doc to take missing inputs from."""

    def forced_ids(self, doc: Doc) -> Optional[numpy.ndarray]:
        return None

    # --- shared ------------------------------------------------------------------
    @property
    def system(self) -> TaggingSystem:
        actions = self.actions
        if self._system is None or self._system.nr_class != len(actions):
            self._require_labels()
            self._system = TaggingSystem(len(actions), direction=self.cfg["direction"],
                                         tag_trigrams=self.cfg[self.history_setting],
                                         feature_set=self.feature_set, **self.constraints())
        return self._system

    def _inputs(self, docs: List[Doc], examples: Optional[List[Example]] = None) -> list:
        inputs = []
        for i, doc in enumerate(docs):
            atoms = self._atoms.doc_atoms(doc)
            self.input_columns(doc, atoms, examples[i] if examples else None)
            item = {"atoms": atoms, "forced": self.forced_ids(doc)}
            if self.feature_set == "ner":
                item["substrings"] = self._atoms.doc_substrings(doc)
            inputs.append(item)
        return inputs

    @property
    def is_sapo(self) -> bool:
        return self.cfg["learner"] == "sapo"

    @property
    def averaged_weights(self) -> Weights:
        """The weights to predict with. SAPO's are the current weights: its
        L2 step keeps them bounded and its probabilities are defined by them
        (Algorithm 1 has no averaging; Sun et al. compare it against the
        averaged perceptron)."""
        return self.weights if self.is_sapo else super().averaged_weights

    def predict(self, docs: Iterable[Doc]) -> List[Labelling]:
        """Perceptron: the lookahead decoder (depth D). SAPO: the exact n-best
        by A*, the best written to the doc and the probabilities kept for
        span scores / tag probabilities."""
        docs = list(docs)
        self._require_labels()
        inputs = self._inputs(docs)
        if not self.is_sapo:
            return [Labelling(ids) for ids in
                    self.system.predict(inputs, self.averaged_weights, self.cfg["depth"])]
        return [Labelling(paths[0] if len(paths) else numpy.zeros((len(doc),), dtype="int32"),
                          paths, softmax(scores))
                for doc, (paths, scores) in zip(docs, self.system.nbest(
                    inputs, self.weights, self.cfg["n"], self.cfg["beam_width"]))]

    def predict_nbest(self, docs: Iterable[Doc], n: int = 5) -> List[List[Tuple[List[str], float]]]:
        """The n best label sequences of each doc with their probabilities (a
        softmax over the n best, Sun et al. eq. 1), best first. Labels are the
        action names in document order (tags, or IOB/BILUO span labels).
        Meaningful as probabilities for SAPO models; for perceptron models the
        ranking is exact but the scores are not calibrated."""
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"[{self.name}] n must be a positive integer, got {n!r}")
        docs = list(docs)
        self._require_labels()
        names = numpy.asarray(self.actions, dtype=object)
        out = []
        for paths, scores in self.system.nbest(self._inputs(docs), self.averaged_weights, n,
                                               self.cfg["beam_width"]):
            out.append([(names[p].tolist(), float(prob)) for p, prob in zip(paths, softmax(scores))])
        return out

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[dict] = None) -> dict:
        """Perceptron: one margin-perceptron pass over the examples (Figure 3
        at every token on the gold path); the loss is the number of mistakes.
        SAPO: Algorithm 1 on each example; the loss is the negative
        log-likelihood of the gold output (normalised over the n best)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        self._require_labels()
        start = time.perf_counter()
        golds = [self.gold_ids(eg) for eg in examples]
        inputs = self._inputs([eg.predicted for eg in examples], examples)
        if self.is_sapo:
            gamma, shrink = self._sapo_step()
            loss, _ = self.system.train_sapo(inputs, golds, self.weights, self.cfg["n"], gamma,
                                             shrink, self.cfg["beam_width"])
            self._seen += len(examples)
        else:
            loss, _ = self.system.train(inputs, golds, self.weights, self.cfg["depth"],
                                        self.cfg["margin"])
        losses[self.name] += loss
        self._update_seconds += time.perf_counter() - start
        return losses

    def _sapo_step(self) -> Tuple[float, float]:
        """(gamma, shrink) for the current epoch: gamma decays per epoch of
        |S| examples; the L2 step is w -= (gamma lambda / |S|) w (eq. 5)."""
        size = self.cfg.get("train_size") or 0
        if size < 1:
            raise ValueError(f"[{self.name}] SAPO needs the training set size |S| for its L2 "
                             "step: initialize the component with the training examples first.")
        gamma = self.cfg["learning_rate"] * self.cfg["learning_rate_decay"] ** (self._seen // size)
        shrink = 1.0 - gamma * self.cfg["l2"] / size
        if shrink <= 0.0:
            raise ValueError(f"[{self.name}] learning_rate * l2 = {gamma * self.cfg['l2']:g} is not "
                             f"below the training set size {size}: the L2 step would flip the "
                             "weights. Lower learning_rate or l2.")
        return gamma, shrink

    def _count_training_set(self, get_examples: Callable[[], Iterable[Example]]) -> None:
        self.cfg["train_size"] = sum(1 for _ in get_examples())
        self._seen = 0

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
        """The scorer's figures plus the mean |w| of the training weights (the
        paper's w-complexity curve), so that training logs show both."""
        scores = dict(super().score(examples, **kwargs))
        scores[f"{self.name}_w_mean_abs"] = self.weights.mean_abs()
        scores[f"{self.name}_update_seconds"] = self._update_seconds
        return scores

    def _reset(self) -> None:
        self.cfg["labels"] = []
        self._seen = 0
        self._label_ids = None
        self._system = None
        self.weights = Weights()

    def get_loss(self, examples, scores):
        raise NotImplementedError(f"[{self.name}] the loss is the number of perceptron "
                                  "mistakes, reported by update()")
