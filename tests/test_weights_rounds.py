"""Rounds of distributed training on one table (Weights.begin_round,
round_changes, end_round, apply_changes) and the merge that mixes tables
(weights.sum_pair): what distributed/train.py ships between workers is what
a round changed, so these must give exactly what whole tables gave."""
import random

import numpy
import pytest

from spacy_lookahead.core.weights import Weights, sum_pair
from spacy_lookahead.distributed.mixing import table_of, training_weights
from tables import dense, random_table


def trained(rng: random.Random, n: int, shrink: float = 1.0, W=None, feats: int = 60) -> Weights:
    W = W if W is not None else Weights()
    for _ in range(n):
        W.add(rng.randrange(feats), rng.randrange(6), rng.choice([-1.0, 1.0, 0.5]))
        if rng.random() < 0.3:
            W.tick()
            if shrink != 1.0:
                W.shrink(shrink)
    return W


def without_empty_rows(arrays):
    keys, lengths, classes, ws = arrays[:4]
    keep = lengths > 0
    return keys[keep], lengths[keep], classes, ws


def test_round_changes_by_hand():
    """Start w[1, 0] = 2. Round: +1 on (1, 0), tick, -1 on (5, 2), tick.
    Raw changes: +1 and -1. Averaged over the round's 2 ticks: (1, 0) was 3
    after both (+1); (5, 2) was 0 then -1 (mean -0.5). Row 9, untouched,
    is in neither."""
    W = Weights()
    W.add(1, 0, 2.0)
    W.add(9, 3, 4.0)
    W = training_weights(table_of(W))
    W.begin_round()
    W.add(1, 0, 1.0)
    W.tick()
    W.add(5, 2, -1.0)
    W.tick()
    assert dense(W.round_changes(False)) == {(1, 0): 1.0, (5, 2): -1.0}
    assert dense(W.round_changes(True)) == {(1, 0): 1.0, (5, 2): -0.5}
    W.add(9, 3, 5.0)  # the bound of every weight grows ...
    assert W.top == 9.0
    W.end_round()
    assert dense(without_empty_rows(W.to_arrays())) == {(1, 0): 2.0, (9, 3): 4.0}
    assert (W.time, W.clock, W.scale, len(W), W.top) == (0, 0.0, 1.0, 2, 4.0)  # ... and is back


@pytest.mark.parametrize("shrink", [1.0, 0.9, 0.01])  # 0.01: the scale folds mid-round
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_round_changes_are_the_tables_difference_and_end_round_restores(seed, shrink):
    """Against whole tables, as the rounds were mixed before: the raw
    changes are the round's weights minus its start, the averaged ones the
    round's average (a fresh table's, time 0) minus its start, entry by
    entry; end_round gives the start back bitwise. Twice in a row from the
    same table (the next shard on the same worker)."""
    rng = random.Random(seed)
    start = training_weights(table_of(trained(rng, 200)))
    before = start.to_arrays()[:4]
    for _ in range(2):
        fresh = training_weights(table_of(start))  # what a shard got as bytes before
        start.begin_round()
        for W in (start, fresh):
            trained(random.Random(seed + 10), 150, shrink, W=W, feats=90)
        s = dense(before)
        for averaged in (False, True):
            whole = dense(table_of(fresh.average() if averaged else fresh))
            changes = dense(start.round_changes(averaged))
            for key in set(whole) | set(s):
                want = whole.get(key, 0.0) - s.get(key, 0.0)
                assert changes.get(key, 0.0) == pytest.approx(want, abs=1e-12), key
            if shrink == 1.0:  # only the rows the round updated
                assert len(start.round_changes(averaged)[0]) < len(table_of(fresh)[0])
        start.end_round()
        after = without_empty_rows(start.to_arrays())
        assert all(a.tobytes() == b.tobytes() for a, b in zip(after, before))
        assert (start.time, start.scale, start.in_round) == (0, 1.0, False)


def test_applying_changes_in_place_or_from_the_beginning_gives_one_table():
    """A worker that trained the last round applies its mix to its table;
    one that never saw the run applies every round's from the initial
    weights: the same table bitwise, so a shard's start does not depend on
    the worker it lands on."""
    rng = random.Random(3)
    initial = trained(rng, 50).to_bytes()
    here = Weights().from_bytes(initial)
    rounds = []
    for r in range(4):
        here.begin_round()
        trained(random.Random(r), 80, W=here, feats=70)
        rounds.append(here.round_changes(False))
        here.end_round()
        here.apply_changes(*rounds[-1])
    elsewhere = Weights().from_bytes(initial)
    for changes in rounds:
        elsewhere.apply_changes(*changes)
    a, b = here.to_arrays(), elsewhere.to_arrays()
    assert here.top == elsewhere.top and len(here) == len(elsewhere)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(without_empty_rows(a),
                                                           without_empty_rows(b)))


def test_rounds_refuse_the_wrong_order():
    W = trained(random.Random(0), 20)
    with pytest.raises(RuntimeError, match="outside a round"):
        W.round_changes(False)
    with pytest.raises(RuntimeError, match="outside a round"):
        W.end_round()
    W.begin_round()
    with pytest.raises(RuntimeError, match="under way"):
        W.begin_round()
    with pytest.raises(RuntimeError, match="during a round"):
        W.apply_changes(*table_of(W))
    W.end_round()
    keys, lengths, classes, ws = table_of(W)
    bad_lengths = lengths.copy()
    bad_lengths[:2] = [lengths[0] + lengths[1] + 1, -1]
    bad_classes = classes.copy()
    bad_classes[0] = -3
    for table in ((keys, lengths, classes, ws[:-1]), (keys, bad_lengths, classes, ws),
                  (keys, lengths, bad_classes, ws), (keys[:-1], lengths, classes, ws)):
        with pytest.raises(ValueError, match="not a table"):
            W.apply_changes(*table)
        with pytest.raises(ValueError, match="not a table"):
            sum_pair(table, table_of(W), 1.0, 1.0)
    shuffled = (keys[::-1].copy(), lengths[::-1].copy(), classes, ws)  # rows out of key order
    with pytest.raises(ValueError, match="not sorted"):
        sum_pair(table_of(W), shuffled, 1.0, 1.0)
    with pytest.raises(RuntimeError, match="frozen"):
        W.average().begin_round()


@pytest.mark.parametrize("seed", range(6))
def test_sum_pair_is_the_entrywise_sum(seed):
    """ca * a + cb * b entry by entry, each (ca * a) + (cb * b) as floats;
    zeros dropped (a table minus itself is empty); keys sorted and each
    row's classes sorted; an empty side gives the other, sorted."""
    rng = numpy.random.default_rng(seed)
    a, b = random_table(rng, 80, 9), random_table(rng, 60, 9)
    empty = tuple(x[:0] for x in a)
    for x, y, ca, cb in ((a, b, 0.25, 0.75), (a, b, 1.0, 1.0), (a, a, 1.0, -1.0),
                         (empty, b, 1.0, 1.0), (a, empty, 0.5, 1.0)):
        got = sum_pair(x, y, ca, cb)
        dx, dy = dense(x), dense(y)
        want = {}
        for key in set(dx) | set(dy):
            v = (dx[key] * ca + dy[key] * cb if key in dx and key in dy
                 else dx[key] * ca if key in dx else dy[key] * cb)
            if v != 0.0:
                want[key] = v
        assert dense(got) == want
        keys, lengths, classes, ws = got
        assert numpy.all(keys[1:] > keys[:-1]) and numpy.all(lengths > 0)
        rows = numpy.repeat(numpy.arange(len(keys)), lengths)
        assert numpy.all((rows[1:] > rows[:-1]) | (classes[1:] > classes[:-1]))
    assert len(sum_pair(a, a, 1.0, -1.0)[0]) == 0


def test_a_start_that_failed_is_redone_not_taken_for_progress():
    """distributed.train._start: a change that fails to apply leaves the
    worker's table part-way; the next task must start over from the
    initial weights (re-applying on top would count changes twice)."""
    from types import SimpleNamespace

    from spacy_lookahead.distributed.train import _start

    rng = random.Random(5)
    initial = trained(rng, 40)
    nlp = SimpleNamespace(get_pipe=lambda name: SimpleNamespace(weights=initial))
    changes = []
    for r in range(2):
        W = Weights().from_bytes(initial.to_bytes())
        W.begin_round()
        trained(random.Random(r), 60, W=W)
        changes.append({"t": W.round_changes(False)})
    keys, lengths, classes, ws = changes[1]["t"]
    broken = {"t": (keys, lengths, classes, ws[:-1])}
    cache: dict = {}
    _start(cache, nlp, "t", "mix", [])  # the worker's table, at the initial weights
    with pytest.raises(ValueError, match="not a table"):  # the first applies, the second fails
        _start(cache, nlp, "t", "mix", [changes[0], broken])
    got = _start(cache, nlp, "t", "mix", changes)
    want = Weights().from_bytes(initial.to_bytes())
    for change in changes:
        want.apply_changes(*change["t"])
    assert all(a.tobytes() == b.tobytes() for a, b in zip(without_empty_rows(got.to_arrays()),
                                                           without_empty_rows(want.to_arrays())))
