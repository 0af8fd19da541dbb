"""Test shorthands over the engine's Python entry points (core.decode,
core.learners, core.views), as the components call them."""
import itertools

import numpy

from spacy_lookahead.core import decode as _decode
from spacy_lookahead.core import learners  # noqa: F401  (for the tests' imports)
from spacy_lookahead.core import views  # noqa: F401
from spacy_lookahead.core.features import token_atoms
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.systems.tagging import TaggingSystem


def nbest(system, docs, W, n, beam_width=16):
    """Per doc: (paths (k, length) int32 in document order, scores (k,))."""
    return [(numpy.asarray(outputs, dtype="int32").reshape((len(outputs), -1)), scores)
            for outputs, scores in _decode.nbest(system.instances(docs), W, n, beam_width)]


def predict(system, docs, W, search="lookahead", depth=0, beam_width=1):
    return _decode.decode(system.instances(docs), W, search, depth, beam_width)


def assert_fast_search_agrees(system, doc_input, history, W, depth, rng):
    """The production search (DP or branch-and-bound) against the exhaustive
    one: the same decision, and the winner's value and path bit for bit;
    also with a random favoured action and handicap (the margin
    perceptron's gold and C), where the favoured action's value and path
    must be exact too; and with a random hint (decode's: the rest of the
    previous decision's best path, a first root value to beat), which may
    name any actions, valid or not, and must not change a thing."""
    tables = (W, W.average()) if not W.frozen else (W,)  # training and frozen weights
    hint = [rng.randrange(system.nr_class) for _ in range(rng.randint(1, depth + 1))]
    for table in tables:  # (first-order systems: the DP with the one, bounds with the other)
        # a hint that is some first action's best path: its value is a tight
        # first root value, often tied with the best (small integer weights)
        _, _, paths = views.lookahead(system, doc_input, history, table, depth, exhaustive=True)
        tight = rng.choice([p for p in paths if p] or [hint])
        for favoured, handicap, given in [
                (-1, 0.0, ()), (-1, 0.0, hint), (-1, 0.0, tight),
                (rng.randrange(system.nr_class), rng.choice([0.0, 1.0, 2.5]), hint)]:
            ref = views.lookahead(system, doc_input, history, table, depth, exhaustive=True,
                                  favoured=favoured, handicap=handicap)
            fast = views.lookahead(system, doc_input, history, table, depth, favoured=favoured,
                                   handicap=handicap, hint=given)
            assert fast[0] == ref[0]
            for a in {ref[0], favoured} - {-1}:
                assert fast[1][a] == ref[1][a] and fast[2][a] == ref[2][a]


# --- a toy sentence, its atoms, scores and weights --------------------------
WORDS = ["The", "old", "man", "the", "boats", "."]


TAGS = ["DT", "JJ", "NN", "DT", "NNS", "."]


def atoms_of(words, tags=None):
    tags = tags or [None] * len(words)
    return numpy.array([token_atoms(w, t) for w, t in zip(words, tags)], dtype="uint64")


def step_scores(system, atoms, history, W):
    """Scores of every action after `history`, from phi() and the weights
    alone (no incremental cache)."""
    return W.scores(views.features(system, atoms, history), system.nr_class)


def random_weights(system, atoms, rng):
    W = Weights()
    n = len(atoms)
    for length in range(n):
        for history in itertools.product(range(system.nr_class), repeat=length):
            for f in views.features(system, atoms, list(history)):
                for c in range(system.nr_class):
                    if W.get(int(f), c) == 0.0:
                        W.add(int(f), c, rng.gauss(0, 1))
    return W


def constrained_system(nr_class, direction, constrained):
    extra = {}
    if constrained:  # label 1 never follows label 0; label 0 never ends the doc
        allowed = [[1] * nr_class] + [[1] * nr_class for _ in range(nr_class)]
        allowed[1][1] = 0
        extra = {"allowed": allowed, "at_doc_end": [0] + [1] * (nr_class - 1)}
    return TaggingSystem(nr_class, direction=direction, **extra)


def a_batch(direction, constrained, seed, n_docs=200):
    """A tagging system of 3 labels, a batch of short docs (empty ones,
    preset labels and sentence starts among them) and averaged weights
    trained on it."""
    rng = numpy.random.default_rng(seed)
    system = constrained_system(3, direction, constrained)
    lengths = rng.integers(0, 9, n_docs)
    starts = numpy.zeros((n_docs + 1,), dtype="int64")
    numpy.cumsum(lengths, out=starts[1:])
    words = [WORDS[i] for i in rng.integers(0, len(WORDS), int(starts[-1]))]
    batch = {"atoms": atoms_of(words).reshape((len(words), -1)), "starts": starts,
             "forced": numpy.where(rng.random(len(words)) < 0.1, 2, -1).astype("int32"),
             "sent_starts": rng.random(len(words)) < 0.2}
    golds = [rng.integers(1, 3, n).astype("int32") for n in lengths]
    W = Weights()
    for _ in range(3):
        learners.margin_perceptron(system.batch_instances(batch, golds)[:40], W, 1, 1.0)
    return system, batch, starts, W.average()
