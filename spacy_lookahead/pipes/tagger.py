"""`lookahead_tagger`: POS tagging with depth-D lookahead search and the
margin perceptron (Tsuruoka et al. 2011, Sections 3 and 4.1)."""
from itertools import islice
from typing import Callable, Iterable, List, Optional

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import registry
from spacy.vocab import Vocab

from ..core.features import LexemeAtoms
from ..systems.tagging import TaggingSystem
from .base import SearchPipe

TARGETS = ("tag", "pos")
DIRECTIONS = ("ltr", "rtl")


def validate_settings(name: str, depth: int, margin: float, direction: str, target: str) -> None:
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
    if target not in TARGETS:
        raise ValueError(f"[{name}] target must be one of {TARGETS}, got {target!r}")


@Language.factory(
    "lookahead_tagger",
    assigns=["token.tag"],
    default_config={
        "depth": 1,
        "margin": 1.0,
        "direction": "ltr",
        "target": "tag",
        "tag_trigrams": False,
        "scorer": {"@scorers": "spacy_lookahead.tagger_scorer.v1"},
    },
    default_score_weights={"tag_acc": 1.0, "pos_acc": None},
)
def make_lookahead_tagger(nlp: Language, name: str, depth: int, margin: float, direction: str,
                          target: str, tag_trigrams: bool, scorer: Optional[Callable]) -> "LookaheadTagger":
    """Create a lookahead tagger.

    depth: lookahead depth D (0 = greedy; the paper's Table 1 uses 0-2).
    margin: the perceptron margin C of Figure 3.
    direction: "ltr" or "rtl", the order in which tokens are tagged.
    target: "tag" (token.tag_, e.g. PTB/XPOS) or "pos" (token.pos_, UPOS).
    tag_trigrams: add (t-1, t-2) history features (the paper's "+ tag trigram").
    """
    return LookaheadTagger(nlp.vocab, name, depth=depth, margin=margin, direction=direction,
                           target=target, tag_trigrams=tag_trigrams, scorer=scorer)


class LookaheadTagger(SearchPipe):
    """A history-based tagger: each token's label is chosen by a depth-D
    lookahead search over the labels of the next tokens (Figure 2) and
    learnt by the margin perceptron on the backed-up scores (Figure 3)."""

    feature_settings = ("direction", "tag_trigrams")

    def __init__(self, vocab: Vocab, name: str = "lookahead_tagger", *, depth: int = 1,
                 margin: float = 1.0, direction: str = "ltr", target: str = "tag",
                 tag_trigrams: bool = False, scorer: Optional[Callable] = None) -> None:
        validate_settings(name, depth, margin, direction, target)
        super().__init__(vocab, name, scorer=scorer, depth=depth, margin=float(margin),
                         direction=direction, target=target, tag_trigrams=bool(tag_trigrams))
        self._atoms = LexemeAtoms()
        self._system: Optional[TaggingSystem] = None

    @property
    def system(self) -> TaggingSystem:
        if self._system is None or self._system.nr_class != len(self.labels):
            self._require_labels()
            self._system = TaggingSystem(len(self.labels), direction=self.cfg["direction"],
                                         tag_trigrams=self.cfg["tag_trigrams"])
        return self._system

    @property
    def attr(self) -> str:
        return self.cfg["target"].upper()

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   labels: Optional[List[str]] = None) -> None:
        """Collect the label set from the training examples (or `labels`)."""
        validate_examples(get_examples(), "LookaheadTagger.initialize")
        self.cfg["labels"] = []
        self._label_ids = None
        from ..core.weights import Weights
        self.weights = Weights()
        if labels is not None:
            for label in labels:
                self.add_label(label)
        else:
            getter = f"{self.cfg['target']}_"
            seen = set()
            for example in get_examples():
                for token in example.reference:
                    value = getattr(token, getter)
                    if value and value not in seen:
                        seen.add(value)
            for label in sorted(seen):
                self.add_label(label)
        if not self.labels:
            raise ValueError(f"[{self.name}] no '{self.cfg['target']}' annotation found in the "
                             "training examples: they need gold tags to learn from.")

    def _doc_atoms(self, docs: Iterable[Doc]) -> list:
        return [self._atoms.doc_atoms(doc) for doc in docs]

    def predict(self, docs: Iterable[Doc]) -> List[numpy.ndarray]:
        docs = list(docs)
        self._require_labels()
        return self.system.predict(self._doc_atoms(docs), self.averaged_weights, self.cfg["depth"])

    def set_annotations(self, docs: Iterable[Doc], label_ids: List[numpy.ndarray]) -> None:
        strings = self.vocab.strings
        label_hashes = numpy.asarray([strings.add(label) for label in self.labels], dtype="uint64")
        for doc, ids in zip(docs, label_ids):
            if len(doc):
                doc.from_array([self.attr], label_hashes[ids].reshape((-1, 1)))

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[dict] = None) -> dict:
        """One margin-perceptron pass over the examples; the loss is the
        number of mistakes (updates)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "LookaheadTagger.update")
        self._require_labels()
        ids = self.label_ids
        golds = []
        for eg in examples:
            aligned = eg.get_aligned(self.attr, as_string=True)
            golds.append(numpy.asarray([ids.get(t, -1) if t else -1 for t in aligned], dtype="int32"))
        mistakes, _ = self.system.train(self._doc_atoms(eg.predicted for eg in examples), golds,
                                        self.weights, self.cfg["depth"], self.cfg["margin"])
        losses[self.name] += mistakes
        return losses

    def get_loss(self, examples, scores):
        raise NotImplementedError(f"[{self.name}] the loss is the number of perceptron mistakes, reported by update()")
