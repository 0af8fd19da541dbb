"""Exact top-n search (A* with the backward-Viterbi heuristic, Sun et al.
Section 2) against brute-force enumeration of all label sequences."""
import itertools
import random

import numpy
import pytest
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.systems.tagging import TaggingSystem
from engine import WORDS, a_batch, atoms_of, random_weights, step_scores

from spacy_lookahead.systems.schemes import label_constraints, scheme_actions
from engine import learners, nbest, predict, views  # noqa: F401


def all_sequences(system, atoms, W, constraints=None):
    """(score, labels in document order) of every valid label sequence."""
    T = len(atoms)
    out = []
    for seq in itertools.product(range(system.nr_class), repeat=T):
        if constraints is not None and not valid(seq, constraints, system.direction):
            continue
        score = sum(step_scores(system, atoms, list(seq[:t]), W)[a] for t, a in enumerate(seq))
        doc_order = seq[::-1] if system.direction == "rtl" else seq
        out.append((score, list(doc_order)))
    out.sort(key=lambda x: -x[0])
    return out


def valid(seq, constraints, direction):
    """seq in tagging order; the scheme's constraints as TaggingSystem reads them."""
    allowed, start, end = (constraints[k] for k in ("allowed", "at_doc_start", "at_doc_end"))
    doc = seq[::-1] if direction == "rtl" else seq
    if not start[doc[0]] or not end[doc[-1]]:
        return False
    prev = -1
    for a in seq:
        if not allowed[prev + 1][a]:
            return False
        prev = a
    return True


@pytest.mark.parametrize("n", [1, 5, 20])
@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_astar_equals_brute_force(n, direction):
    rng = random.Random(n * 3 + (direction == "rtl"))
    system = TaggingSystem(3, direction=direction)
    atoms = atoms_of(WORDS[:4])
    W = random_weights(system, atoms, rng)
    expected = all_sequences(system, atoms, W)[:n]
    [(paths, scores)] = nbest(system, [atoms], W, n)
    assert paths.shape == (min(n, 3 ** 4), 4)
    numpy.testing.assert_allclose(scores, [s for s, _ in expected], rtol=1e-12)
    assert paths.tolist() == [p for _, p in expected]  # random weights: no ties
    assert len({tuple(p) for p in paths.tolist()}) == len(paths)  # unique outputs


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_astar_obeys_the_scheme(direction):
    """IOB2 constraints: only valid sequences, still the exact n best."""
    actions = scheme_actions(["NP", "VP"], "iob2")
    constraints = label_constraints(actions, "iob2", direction)
    system = TaggingSystem(len(actions), direction=direction, **constraints)
    atoms = atoms_of(WORDS[:4])
    W = random_weights(system, atoms, random.Random(11))
    expected = all_sequences(system, atoms, W, constraints)[:20]
    [(paths, scores)] = nbest(system, [atoms], W, 20)
    numpy.testing.assert_allclose(scores, [s for s, _ in expected], rtol=1e-12)
    assert paths.tolist() == [p for _, p in expected]


def test_fewer_outputs_than_asked():
    system = TaggingSystem(2)
    atoms = atoms_of(WORDS[:2])
    W = random_weights(system, atoms, random.Random(3))
    [(paths, scores)] = nbest(system, [atoms], W, 10)
    assert paths.shape == (4, 2) and numpy.all(numpy.diff(scores) <= 0)


def test_empty_doc_has_one_empty_output():
    system = TaggingSystem(2)
    [(paths, scores)] = nbest(system, [numpy.zeros((0, 18), dtype="uint64")], Weights(), 5)
    assert paths.shape == (1, 0) and scores.tolist() == [0.0]


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_beam_topn_with_trigrams_equals_brute_force_when_wide(direction):
    """(t-1, t-2) history features: top-n by beam search; a beam as wide as
    the label sequences makes it exact, and its outputs are unique."""
    rng = random.Random(21 + (direction == "rtl"))
    system = TaggingSystem(3, direction=direction, tag_trigrams=True)
    atoms = atoms_of(WORDS[:4])
    W = random_weights(system, atoms, rng)
    expected = all_sequences(system, atoms, W)[:10]
    [(paths, scores)] = nbest(system, [atoms], W, 10, 81)
    numpy.testing.assert_allclose(scores, [s for s, _ in expected], rtol=1e-12)
    assert paths.tolist() == [p for _, p in expected]
    [(narrow, narrow_scores)] = nbest(system, [atoms], W, 5, 5)
    assert len({tuple(p) for p in narrow.tolist()}) == 5
    assert list(narrow_scores) == sorted(narrow_scores, reverse=True)


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("exact", [True, False])
def test_decode_docs_keeps_each_docs_n_best(direction, exact):
    """decode_docs with DocsOutput's keep = n gives each doc of a batch the n
    best that nbest() gives its instance (A* where exact_topn, else a beam
    of width n + 2): the outputs, best first, their scores and how many,
    the best written as the doc's output; in one call and in three threads
    sharing the batch. Exact top-n needs a keep."""
    from concurrent.futures import ThreadPoolExecutor

    from spacy_lookahead.core.decode import DocsOutput, decode_docs, nbest as nbest_of
    system, batch, starts, W = a_batch(direction, True, 21 + (direction == "rtl"), n_docs=120)
    n, width = 4, 0 if exact else 6
    found = nbest_of(system.batch_instances(batch), W, n, width, exact)
    docs = system.batch_docs(batch)
    for threads in (1, 3):
        out = DocsOutput(docs, n)
        with ThreadPoolExecutor(threads) as pool:
            [f.result() for f in [pool.submit(decode_docs, docs, W, 0, out, width, None, exact)
                                  for _ in range(threads)]]
        kept, scores, counts = out.kept
        for i, (outputs, doc_scores) in enumerate(found):
            a, b = starts[i], starts[i + 1]
            assert counts[i] == (len(outputs) if b > a else 0)
            if b == a:
                continue
            assert out.labels[a:b].tolist() == outputs[0].tolist()
            for j, output in enumerate(outputs):
                assert kept[j, 0, a:b].tolist() == output.tolist()
            assert scores[i, :len(outputs)].tolist() == doc_scores.tolist()
    assert sum(len(o) > 1 for o, _ in found) > 50
    with pytest.raises(ValueError, match="keeps the n best"):
        decode_docs(docs, W, 0, DocsOutput(docs), 0, None, True)
