"""What the sequence labellers (tagger, chunker, NER) share: the tagging
system built from the config, inputs per doc, the lookahead search and the
margin-perceptron pass (Tsuruoka et al. 2011, Figures 2 and 3)."""
from typing import Any, Callable, Dict, Iterable, List, Optional

import numpy
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab

from ..core.features import LexemeAtoms
from ..core.weights import Weights
from ..systems.tagging import TaggingSystem
from .base import SearchPipe

DIRECTIONS = ("ltr", "rtl")
A_CHUNK = 17  # input column of the atoms array (core/features.pxd)


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


class SequencePipe(SearchPipe):
    """Base of the sequence labellers. Subclasses define the action names,
    the feature set, the gold action ids of an example and how predictions
    are written to the Doc."""

    feature_set = "pos"
    history_setting = "tag_trigrams"  # cfg key of the (t-1, t-2) feature switch

    def __init__(self, vocab: Vocab, name: str, *, depth: int, margin: float, direction: str,
                 scorer: Optional[Callable], **settings: Any) -> None:
        validate_search_settings(name, depth, margin, direction)
        super().__init__(vocab, name, scorer=scorer, depth=depth, margin=float(margin),
                         direction=direction, **settings)
        self._atoms = LexemeAtoms(substrings=self.feature_set == "ner")
        self._system: Optional[TaggingSystem] = None

    # --- to define in subclasses ---------------------------------------------
    @property
    def actions(self) -> List[str]:
        return list(self.labels)

    def constraints(self) -> Dict[str, numpy.ndarray]:
        return {}

    def gold_ids(self, example: Example) -> numpy.ndarray:
        raise NotImplementedError

    def set_annotations(self, docs: Iterable[Doc], label_ids: List[numpy.ndarray]) -> None:
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

    def predict(self, docs: Iterable[Doc]) -> List[numpy.ndarray]:
        docs = list(docs)
        self._require_labels()
        return self.system.predict(self._inputs(docs), self.averaged_weights, self.cfg["depth"])

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[dict] = None) -> dict:
        """One margin-perceptron pass over the examples (Figure 3 at every
        token on the gold path); the loss is the number of mistakes."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        self._require_labels()
        golds = [self.gold_ids(eg) for eg in examples]
        inputs = self._inputs([eg.predicted for eg in examples], examples)
        mistakes, _ = self.system.train(inputs, golds, self.weights, self.cfg["depth"],
                                        self.cfg["margin"])
        losses[self.name] += mistakes
        return losses

    def _reset(self) -> None:
        self.cfg["labels"] = []
        self._label_ids = None
        self._system = None
        self.weights = Weights()

    def get_loss(self, examples, scores):
        raise NotImplementedError(f"[{self.name}] the loss is the number of perceptron "
                                  "mistakes, reported by update()")
