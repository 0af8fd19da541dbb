"""SAPO (Sun et al., Algorithm 1): the update against its definition, the
perceptron as its n = 1 case, and the lazy L2 step against explicit scaling."""
import collections
import random

import numpy
import pytest
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.systems.tagging import TaggingSystem
from engine import learners, nbest, predict, views  # noqa: F401
from engine import WORDS, atoms_of, random_weights


def F(system, atoms, labels):
    """The global feature vector F(x, y) as {(feature, class): count};
    labels in tagging order."""
    out = collections.Counter()
    for t, a in enumerate(labels):
        for f in views.features(system, atoms, list(labels[:t])):
            out[(int(f), a)] += 1
    return out


def snapshot(W, keys):
    return {k: W.get(*k) for k in keys}


def algorithm1(system, atoms, paths, scores, gold, gamma, to_steps=list):
    """The change Algorithm 1 makes: -gamma sum_k P_k F(y_k) + gamma F(y*),
    P the softmax of the n-best scores (eq. 1, 3, 4)."""
    delta = collections.Counter()
    for p, path in zip(softmax(scores), paths):
        for k, v in F(system, atoms, to_steps(path)).items():
            delta[k] -= gamma * p * v
    for k, v in F(system, atoms, to_steps(gold)).items():
        delta[k] += gamma * v
    return delta


def softmax(x):
    e = numpy.exp(numpy.asarray(x) - max(x))
    return e / e.sum()


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_update_is_algorithm_1(direction):
    """w - gamma sum_k P_k F(y_k) + gamma F(y*), with P the softmax of the
    n-best scores (eq. 1, 3, 4), searched with the weights before the update."""
    rng = random.Random(5)
    system = TaggingSystem(3, direction=direction)
    atoms = atoms_of(WORDS[:4])
    W = random_weights(system, atoms, rng)
    gold = numpy.array([0, 2, 1, 1], dtype="int32")
    [(paths, scores)] = nbest(system, [atoms], W, 5)
    to_steps = (lambda y: list(y[::-1])) if direction == "rtl" else list
    expected = algorithm1(system, atoms, paths, scores, gold, 0.3, to_steps)
    before = snapshot(W, expected)
    loss, wrong = learners.sapo(system.instances([atoms], [gold]), W, 5, 0.3, 1.0)
    after = snapshot(W, expected)
    for k in expected:
        assert after[k] == pytest.approx(before[k] + expected[k], abs=1e-9)
    assert loss > 0 and wrong == int(not numpy.array_equal(paths[0], gold))


def test_n1_without_l2_is_the_structured_perceptron():
    """n = 1, gamma = 1, no L2: w += F(y*) - F(y_hat), y_hat the Viterbi output."""
    rng = random.Random(8)
    system = TaggingSystem(3)
    atoms = atoms_of(WORDS[:5])
    W = random_weights(system, atoms, rng)
    [(paths, _)] = nbest(system, [atoms], W, 1)
    gold = (paths[0] + 1) % 3  # wrong everywhere: a real update
    expected = F(system, atoms, list(gold))
    expected.subtract(F(system, atoms, list(paths[0])))
    before = snapshot(W, expected)
    learners.sapo(system.instances([atoms], [gold]), W, 1, 1.0, 1.0)
    for k, v in expected.items():
        assert W.get(*k) == pytest.approx(before[k] + v, abs=1e-9)
    # ... and a correct output leaves every weight alone.
    [(paths, _)] = nbest(system, [atoms], W, 1)
    keys = F(system, atoms, list(paths[0])) | expected
    before = snapshot(W, keys)
    learners.sapo(system.instances([atoms], [paths[0]]), W, 1, 1.0, 1.0)
    assert snapshot(W, keys) == before


def test_lazy_l2_equals_explicit_scaling():
    """Every example ends with w -= (gamma lambda / |S|) w (eq. 5); the lazy
    global scale gives the weights of the explicit loop over all of them."""
    rng = numpy.random.default_rng(2)
    system = TaggingSystem(3)
    docs = [atoms_of([str(w) for w in rng.choice(WORDS, size=4)]) for _ in range(6)]
    golds = [rng.integers(0, 3, size=4).astype("int32") for _ in docs]
    gamma, lam, S = 0.5, 2.0, len(docs)
    shrink = 1.0 - gamma * lam / S
    lazy = Weights()
    explicit = collections.Counter()
    for atoms, gold in zip(docs, golds):
        # The explicit model: same search, same probabilities, then scaling.
        ref = Weights()
        for k, v in explicit.items():
            ref.add(k[0], k[1], v)
        [(paths, scores)] = nbest(system, [atoms], ref, 3)
        explicit.update(algorithm1(system, atoms, paths, scores, gold, gamma))
        for k in explicit:
            explicit[k] *= shrink
        learners.sapo(system.instances([atoms], [gold]), lazy, 3, gamma, shrink)
    assert lazy.scale == pytest.approx(shrink ** len(docs))
    for k, v in explicit.items():
        assert lazy.get(*k) == pytest.approx(v, abs=1e-9)


def test_loss_is_the_negative_log_likelihood():
    rng = random.Random(4)
    system = TaggingSystem(3)
    atoms = atoms_of(WORDS[:3])
    W = random_weights(system, atoms, rng)
    [(paths, scores)] = nbest(system, [atoms], W, 27)  # every output: the exact NLL
    gold = paths[4]
    loss, _ = learners.sapo(system.instances([atoms], [gold]), W.copy(), 27, 1.0, 1.0)
    assert loss == pytest.approx(-numpy.log(softmax(scores)[4]))
    loss, wrong = learners.sapo(system.instances([atoms], [paths[0]]), W.copy(), 27, 1.0, 1.0)
    assert loss == pytest.approx(-numpy.log(softmax(scores)[0])) and wrong == 0


def test_unknown_gold_is_completed_by_the_model():
    """Tokens without gold take the best labels given the known ones: if the
    model's best output agrees with the known labels, nothing is learnt at
    n = 1."""
    system = TaggingSystem(3)
    atoms = atoms_of(WORDS[:4])
    W = random_weights(system, atoms, random.Random(9))
    [(paths, _)] = nbest(system, [atoms], W, 1)
    gold = paths[0].copy()
    gold[[1, 3]] = -1
    keys = F(system, atoms, list(paths[0]))
    before = snapshot(W, keys)
    loss, wrong = learners.sapo(system.instances([atoms], [gold]), W, 1, 1.0, 1.0)
    assert wrong == 0 and loss == pytest.approx(0.0)
    assert snapshot(W, keys) == before


def test_update_with_trigrams_is_algorithm_1():
    """Second-order history (beam top-n): the update is still exactly
    w - gamma sum_k P_k F(y_k) + gamma F(y*), feature vector by feature vector."""
    system = TaggingSystem(3, tag_trigrams=True)
    atoms = atoms_of(WORDS[:4])
    W = random_weights(system, atoms, random.Random(6))
    gold = numpy.array([1, 0, 2, 2], dtype="int32")
    [(paths, scores)] = nbest(system, [atoms], W, 5, 81)
    expected = algorithm1(system, atoms, paths, scores, gold, 0.5)
    before = snapshot(W, expected)
    learners.sapo(system.instances([atoms], [gold]), W, 5, 0.5, 1.0, 81)
    for k in expected:
        assert W.get(*k) == pytest.approx(before[k] + expected[k], abs=1e-9)
