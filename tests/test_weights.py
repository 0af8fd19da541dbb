"""Weights: lazy averaging and lazy L2 scaling equal their explicit versions."""
import pickle
import random

import numpy
import pytest
from spacy_lookahead.core.weights import Weights


def dense(W, feats, nr_class):
    return numpy.array([[W.get(f, c) for c in range(nr_class)] for f in feats])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_average_is_mean_of_weights_after_each_tick(seed):
    rng = random.Random(seed)
    feats, nr_class = [11, 22, 33, 44], 3
    W = Weights()
    snapshots = []
    for _ in range(50):
        for _ in range(rng.randint(0, 3)):
            W.add(rng.choice(feats), rng.randrange(nr_class), rng.uniform(-2, 2))
        W.tick()
        snapshots.append(dense(W, feats, nr_class))
    expected = numpy.mean(snapshots, axis=0)
    numpy.testing.assert_allclose(dense(W.average(), feats, nr_class), expected, atol=1e-12)


def test_average_without_ticks_is_a_copy():
    W = Weights()
    W.add(5, 1, 2.5)
    assert W.average().get(5, 1) == 2.5


def test_lazy_l2_scaling_equals_explicit_scaling():
    rng = random.Random(3)
    feats, nr_class = [7, 8, 9], 2
    W = Weights()
    explicit = numpy.zeros((len(feats), nr_class))
    for step in range(200):
        i, c, d = rng.randrange(len(feats)), rng.randrange(nr_class), rng.uniform(-1, 1)
        W.add(feats[i], c, d)
        explicit[i, c] += d
        factor = 0.9  # strong decay: forces the scale to be folded in
        W.shrink(factor)
        explicit *= factor
    numpy.testing.assert_allclose(dense(W, feats, nr_class), explicit, rtol=1e-9, atol=1e-300)


def test_scores_sum_rows():
    W = Weights()
    W.add(1, 0, 1.0)
    W.add(1, 2, -0.5)
    W.add(2, 2, 2.0)
    assert W.scores([1, 2, 3], 3).tolist() == [1.0, 0.0, 1.5]


def test_serialisation_round_trip_is_exact():
    rng = random.Random(4)
    W = Weights()
    for _ in range(500):
        W.add(rng.getrandbits(64), rng.randrange(5), rng.gauss(0, 1))
        if rng.random() < 0.3:
            W.tick()
    for other in (Weights().from_bytes(W.to_bytes()), pickle.loads(pickle.dumps(W)), W.copy()):
        assert other.to_bytes() == W.to_bytes()
        assert other.time == W.time and len(other) == len(W)
        assert other.average().to_bytes() == W.average().to_bytes()


@pytest.mark.parametrize("data", [b"", b"not msgpack", b"\x81\xa1a\x01"])
def test_corrupt_bytes_raise_a_clear_error(data):
    with pytest.raises(ValueError, match="Corrupt or incompatible weights"):
        Weights().from_bytes(data)
