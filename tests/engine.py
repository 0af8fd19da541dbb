"""Test shorthands over the engine's Python entry points (core.decode,
core.learners, core.views), as the components call them."""
import numpy

from spacy_lookahead.core import decode as _decode
from spacy_lookahead.core import learners  # noqa: F401  (for the tests' imports)
from spacy_lookahead.core import views  # noqa: F401


def nbest(system, docs, W, n, beam_width=16):
    """Per doc: (paths (k, length) int32 in document order, scores (k,))."""
    return [(numpy.asarray(outputs, dtype="int32").reshape((len(outputs), -1)), scores)
            for outputs, scores in _decode.nbest(system.instances(docs), W, n, beam_width)]


def predict(system, docs, W, search="lookahead", depth=0, beam_width=1):
    return _decode.decode(system.instances(docs), W, search, depth, beam_width)
