"""What a transition-system component's predict() returns per doc, and the
softmax that turns the scores of the n best into probabilities (Sun et al.
eq. 1)."""
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

import numpy



class Prediction(NamedTuple):
    """What predict() returns per doc: the output written to the doc (labels
    in document order, or a tree), and with SAPO the n best outputs and their
    probabilities (eq. 1: a softmax over the n best); with SAPO and
    probabilities = "marginals", `scores`: the exact probability of each
    part of the best output (per token, or per span); a tagger with
    `alternatives`: each token's second-best tag id and its probability."""
    best: Any
    nbest: Optional[List[Any]] = None
    probs: Optional[numpy.ndarray] = None
    scores: Optional[numpy.ndarray] = None
    alternatives: Optional[Tuple[numpy.ndarray, numpy.ndarray]] = None


class Predictions(Sequence):
    """predict()'s output for a batch decoded at once (core.decode.decode_docs):
    every doc's best output, a label per token, in one array, doc k's at
    labels[starts[k]:starts[k + 1]] (the writers take it whole:
    spacy_io.write_tags, write_spans); predictions[k] is doc k's Prediction."""

    def __init__(self, labels: numpy.ndarray, starts: numpy.ndarray) -> None:
        self.labels = labels
        self.starts = starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, k: int) -> Prediction:
        a, b = self._bounds(k)
        return Prediction(self.labels[a:b])

    def _bounds(self, k: int) -> Tuple[int, int]:
        """Where doc k's tokens are in the batch's arrays (k < 0 from the end)."""
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        k %= len(self)
        return self.starts[k], self.starts[k + 1]


class TagPredictions(Predictions):
    """predict()'s output for a tagger with `alternatives`, or calibrated,
    whose batch was decoded at once: as Predictions, and over the same
    tokens with alternatives each token's most probable other tag (alt: its
    id, -1 where none) and its probability (alt_probs); calibrated, each
    tag's own probability (probs); None where not. predictions[k] is doc k's
    Prediction (scores, alternatives)."""

    def __init__(self, labels: numpy.ndarray, starts: numpy.ndarray,
                 alt: Optional[numpy.ndarray], alt_probs: Optional[numpy.ndarray],
                 probs: Optional[numpy.ndarray] = None) -> None:
        super().__init__(labels, starts)
        self.alt = alt
        self.alt_probs = alt_probs
        self.probs = probs

    def __getitem__(self, k: int) -> Prediction:
        a, b = self._bounds(k)
        return Prediction(self.labels[a:b], scores=None if self.probs is None else self.probs[a:b],
                          alternatives=None if self.alt is None or self.alt_probs is None
                          else (self.alt[a:b], self.alt_probs[a:b]))


class SpanPredictions(Predictions):
    """predict()'s output for a calibrated span labeller whose batch was
    decoded at once: as Predictions, and each span's probability
    (span_scores, float32: the docs' spans one after another, doc k's at
    span_starts[k]:span_starts[k + 1], in the order its labels encode
    them). predictions[k] is doc k's Prediction (scores)."""

    def __init__(self, labels: numpy.ndarray, starts: numpy.ndarray, span_scores: numpy.ndarray,
                 span_starts: numpy.ndarray) -> None:
        super().__init__(labels, starts)
        self.span_scores = span_scores
        self.span_starts = span_starts

    def __getitem__(self, k: int) -> Prediction:
        a, b = self._bounds(k)
        k %= len(self)
        return Prediction(self.labels[a:b],
                          scores=self.span_scores[self.span_starts[k]:self.span_starts[k + 1]])


class Trees(Predictions):
    """predict()'s output for a parser's batch decoded at once: every doc's
    best tree in one set of arrays over the docs' tokens (heads as
    positions in their doc, label ids; joint tagging: alts, 1 where the
    alternative tag was chosen), doc k's at starts[k]:starts[k + 1]
    (write_arcs takes them whole); a calibrated parser's head_probs, each
    token's head probability from the beam's n best (else None);
    predictions[k] is doc k's Prediction, its best (heads, labels[, alts])
    as the parser's decoder gives it."""

    def __init__(self, heads: numpy.ndarray, labels: numpy.ndarray,
                 alts: Optional[numpy.ndarray], starts: numpy.ndarray,
                 head_probs: Optional[numpy.ndarray] = None) -> None:
        super().__init__(labels, starts)
        self.heads = heads
        self.alts = alts
        self.head_probs = head_probs

    def __getitem__(self, k: int) -> Prediction:
        a, b = self._bounds(k)
        tree = (self.heads[a:b], self.labels[a:b])
        return Prediction(tree if self.alts is None else (*tree, self.alts[a:b]))


ONE = numpy.ones((1,))  # the probability of a single output
ONE.flags.writeable = False


def softmax(scores: numpy.ndarray) -> numpy.ndarray:
    """Over the last axis: of a vector, or of each row of a matrix on its
    own (the same figures as each row alone)."""
    if not scores.shape[-1]:
        return scores
    e = numpy.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def nbest_prediction(outputs: list, scores: Any, tau: float,
                     exact: Optional[numpy.ndarray] = None) -> Prediction:
    """A Prediction from the n best outputs (best first) and their scores:
    the best, the n best and their softmax at temperature tau (eq. 1)."""
    probs = softmax(numpy.asarray(scores) / tau) if len(scores) > 1 else ONE
    return Prediction(outputs[0], outputs, probs, exact)


def kept_probabilities(scores: numpy.ndarray, counts: numpy.ndarray, tau: float) -> numpy.ndarray:
    """(n_docs, keep): each doc's softmax at temperature tau of the scores of
    the n best it kept (DocsOutput.kept), as nbest_prediction gives them per
    doc (the docs of k outputs at once), 0 past them; a doc that kept one
    output, or none (no words: one empty output), 1."""
    probs = numpy.zeros(scores.shape, dtype="float64")
    for k in numpy.unique(counts).tolist():
        rows = numpy.flatnonzero(counts == k)
        if k <= 1:
            probs[rows, 0] = 1.0
        else:
            probs[rows, :k] = softmax(scores[rows, :k] / tau)
    return probs

