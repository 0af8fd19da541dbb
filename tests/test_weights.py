"""Weights: lazy averaging and lazy L2 scaling equal their explicit versions."""
import pickle
import random

import numpy
import pytest
import srsly
from spacy_lookahead.core.weights import SERIAL_VERSION, Weights


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


def test_the_average_under_l2_is_the_mean_of_the_true_weights():
    """Hand-worked: w = 1 at tick 1; shrink by 1/2, so 0.5 at tick 2; the
    average is 0.75 (not the final scale times the mean stored value, 0.5)."""
    W = Weights()
    W.add(5, 0, 1.0)
    W.tick()
    W.shrink(0.5)
    W.tick()
    assert W.average().get(5, 0) == 0.75


@pytest.mark.parametrize("seed", [0, 1])
def test_average_under_l2_and_folding_is_the_mean_of_the_true_weights(seed):
    """SAPO's pattern (update, shrink, tick), strong enough decay that the
    scale is folded into the weights several times; a table saved and
    reloaded half-way goes on to the same average."""
    rng = random.Random(seed)
    feats, nr_class = [11, 22, 33], 2
    W = Weights()
    snapshots = []
    for step in range(120):
        if step == 60:
            W = Weights().from_bytes(W.to_bytes())
        for _ in range(rng.randint(0, 2)):
            W.add(rng.choice(feats), rng.randrange(nr_class), rng.uniform(-2, 2))
        W.shrink(0.7)  # 0.7 ** 39 < 1e-6: folded three times
        W.tick()
        snapshots.append(dense(W, feats, nr_class))
    expected = numpy.mean(snapshots, axis=0)
    numpy.testing.assert_allclose(dense(W.average(), feats, nr_class), expected,
                                  rtol=1e-9, atol=1e-12)


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


def test_totals_and_clocks_of_zeros_are_left_out_and_read_back_as_zeros():
    """A frozen table (a saved model) has no running totals or clocks: its
    bytes leave them out, and the bytes that spell them out as zeros (what
    earlier versions wrote) give the same table, frozen or not. A trained
    table keeps them; one shrunk by L2 keeps its clock even without clocks."""
    W, _, _ = trained_table(3)
    assert {"total", "clock", "clocks"} <= set(srsly.msgpack_loads(W.to_bytes()))
    frozen = W.average()
    msg = srsly.msgpack_loads(frozen.to_bytes())
    assert not {"total", "times", "clock", "clocks"} & set(msg)
    n = len(numpy.frombuffer(msg["w"], dtype="float64"))
    spelled = srsly.msgpack_dumps({**msg, "total": bytes(8 * n), "times": bytes(8 * n)})
    for as_frozen in (False, True):
        assert (Weights().from_bytes(spelled, frozen=as_frozen).to_bytes()
                == Weights().from_bytes(frozen.to_bytes(), frozen=as_frozen).to_bytes()
                == frozen.to_bytes())
    fresh = Weights().from_bytes(frozen.to_bytes())
    fresh.shrink(0.5)
    fresh.tick()  # no update: every total and clock still 0, the clock (0.5) not the time
    msg = srsly.msgpack_loads(fresh.to_bytes())
    assert msg["clock"] == fresh.clock == 0.5 and not {"total", "times", "clocks"} & set(msg)
    again = Weights().from_bytes(fresh.to_bytes())
    assert again.to_bytes() == fresh.to_bytes() and again.clock == fresh.clock
    assert again.average().to_bytes() == fresh.average().to_bytes()
    for as_frozen in (False, True):
        with pytest.raises(ValueError, match="array lengths do not agree"):
            Weights().from_bytes(srsly.msgpack_dumps({**msg, "total": bytes(8 * (n - 1))}),
                                 frozen=as_frozen)


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("time", ["3", 1.5, -1, 2 ** 63, None])
def test_a_tick_count_that_is_not_a_whole_number_is_refused(time, frozen):
    msg = srsly.msgpack_loads(Weights().to_bytes())
    with pytest.raises(ValueError, match="Corrupt or incompatible weights.*tick count"):
        Weights().from_bytes(srsly.msgpack_dumps({**msg, "time": time}), frozen=frozen)


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("data", [b"", b"not msgpack", b"\x81\xa1a\x01"])
def test_corrupt_bytes_raise_a_clear_error(data, frozen):
    with pytest.raises(ValueError, match="Corrupt or incompatible weights"):
        Weights().from_bytes(data, frozen=frozen)


def trained_table(seed, n_feats=300, nr_class=7, with_zero_key=True, long_rows=False):
    """A table after random updates and ticks, with L2 scaling, over random
    64-bit keys (and the key 0). long_rows: 60 classes, a few features
    updated often, each over a window of classes, so that frozen, most
    rows of 8+ classes are span rows (kept dense over their class range) and
    the rest sparse; the key 0 among the often-updated ones."""
    rng = random.Random(seed)
    feats = [rng.getrandbits(64) for _ in range(n_feats)] + ([0] if with_zero_key else [])
    W = Weights()
    if long_rows:
        nr_class = 60
        hot = feats[-12:]
        window = {f: (rng.randrange(40), rng.choice([10, 20, 60])) for f in hot}
    for step in range(400):
        for _ in range(rng.randint(0, 6)):
            W.add(rng.choice(feats), rng.randrange(nr_class), rng.choice([-1.0, 1.0, 0.37]))
        if long_rows:
            for _ in range(rng.randint(0, 8)):
                f = rng.choice(hot)
                lo, width = window[f]
                W.add(f, min(nr_class - 1, lo + rng.randrange(width)), rng.choice([-1.0, 0.5, 2.0]))
        W.tick()
        if step % 50 == 49:
            W.shrink(0.9)
    return W, feats, nr_class


TABLES = ["short_rows", "long_rows"]


def table_of(kind, seed):
    W, feats, nr_class = trained_table(seed, long_rows=kind == "long_rows")
    if kind == "long_rows":  # the span rows and the sparse ones are both there
        frozen = W.average()
        assert 0 < frozen.n_span_rows < len(frozen)
    return W, feats, nr_class


def unfrozen(table):
    copy = Weights()
    copy.from_bytes(table.to_bytes())
    return copy


@pytest.mark.parametrize("kind", TABLES)
@pytest.mark.parametrize("seed", [0, 1])
def test_frozen_average_scores_bitwise_as_an_unfrozen_table(seed, kind):
    """average() is frozen (packed rows, open addressing, long rows dense over
    their class range); its scores are the same sums, bit for bit, as a table
    of rows holding the same weights, and it gives back the same rows, in
    their order."""
    W, feats, nr_class = table_of(kind, seed)
    avg = W.average()
    assert avg.frozen and not W.frozen
    plain = unfrozen(avg)
    assert not plain.frozen
    rng = random.Random(seed)
    for _ in range(200):
        fs = [rng.choice(feats + [12345, 99]) for _ in range(rng.randint(1, 30))]
        assert avg.scores(fs, nr_class).tobytes() == plain.scores(fs, nr_class).tobytes()
    for f in feats[:50]:
        for c in range(nr_class):
            assert avg.get(f, c) == plain.get(f, c)
    assert avg.to_bytes() == plain.to_bytes()
    assert len(avg) == len(plain)
    assert avg.mean_abs() == pytest.approx(plain.mean_abs())


@pytest.mark.parametrize("kind", TABLES)
@pytest.mark.parametrize("seed", [0, 3])
def test_loading_frozen_is_freezing_what_was_loaded(seed, kind):
    """from_bytes(frozen=True), as a model is loaded to predict with, gives
    the table that from_bytes() and then frozen_copy() give: the same rows
    (zero weights dropped, and the rows left empty), bytes, bounds and
    scores bit for bit; from a training table (L2-scaled: its weights times
    the scale), its average and a frozen table's bytes. The rows' keys
    given in another order (a crafted file) or twice are read as before."""
    W, feats, nr_class = table_of(kind, seed)
    W.add(feats[0], 0, 1.0)
    W.add(feats[0], 0, -1.0)  # (a weight of 0 kept in a row)
    zero_row = 0xDEADBEEF
    W.add(zero_row, 1, 2.0)
    W.add(zero_row, 1, -2.0)  # (a row of zeros only)
    assert W.scale != 1.0
    rng = random.Random(seed)
    for source in (W, W.average(), W.frozen_copy()):
        data = source.to_bytes()
        loaded = Weights().from_bytes(data, frozen=True)
        expected = Weights().from_bytes(data).frozen_copy()
        assert loaded.frozen and loaded.to_bytes() == expected.to_bytes()
        assert len(loaded) == len(expected) and loaded.top == expected.top
        assert loaded.n_span_rows == expected.n_span_rows
        assert loaded.max_weight(zero_row) == 0.0 and loaded.get(zero_row, 1) == 0.0
        for _ in range(100):
            fs = [rng.choice(feats + [zero_row, 12345]) for _ in range(rng.randint(1, 30))]
            assert loaded.scores(fs, nr_class).tobytes() == expected.scores(fs, nr_class).tobytes()
    msg = srsly.msgpack_loads(W.to_bytes())
    keys = numpy.frombuffer(msg["keys"], dtype="uint64")
    lengths = numpy.frombuffer(msg["lengths"], dtype="int32")
    rows = numpy.split(numpy.arange(len(numpy.frombuffer(msg["classes"], dtype="int32"))),
                       numpy.cumsum(lengths)[:-1])
    order = numpy.arange(len(keys))[::-1]  # the rows backwards: keys not increasing
    picked = numpy.concatenate([rows[r] for r in order])
    for field, dtype in (("classes", "int32"), ("w", "float64"), ("total", "float64"),
                         ("times", "int64")):
        if field in msg:
            msg[field] = numpy.frombuffer(msg[field], dtype=dtype)[picked].tobytes()
    msg["keys"], msg["lengths"] = keys[order].tobytes(), lengths[order].tobytes()
    shuffled = srsly.msgpack_dumps(msg)
    assert (Weights().from_bytes(shuffled, frozen=True).to_bytes()
            == Weights().from_bytes(W.to_bytes()).frozen_copy().to_bytes())
    # a row of no entries (a crafted file, or a table saved after a
    # distributed round's restore), among weights none of which is 0
    msg = srsly.msgpack_loads(W.average().to_bytes())
    kept = numpy.frombuffer(msg["keys"], dtype="uint64")
    msg["keys"] = numpy.append(kept, kept[-1] + 1).tobytes()
    msg["lengths"] = numpy.append(numpy.frombuffer(msg["lengths"], dtype="int32"),
                                  numpy.int32(0)).astype("int32").tobytes()
    empty_row = srsly.msgpack_dumps(msg)
    assert (Weights().from_bytes(empty_row, frozen=True).to_bytes()
            == Weights().from_bytes(empty_row).frozen_copy().to_bytes())
    msg = srsly.msgpack_loads(shuffled)
    msg["keys"] = numpy.concatenate([keys[order][:-1], keys[order][:1]]).tobytes()
    for frozen in (False, True):
        with pytest.raises(ValueError, match="given twice"):
            Weights().from_bytes(srsly.msgpack_dumps(msg), frozen=frozen)


@pytest.mark.parametrize("kind", TABLES)
def test_row_max_bounds_every_class(kind):
    W, feats, nr_class = table_of(kind, 2)
    avg = W.average()
    for f in feats + [4242]:
        row = [avg.get(f, c) for c in range(nr_class)]
        assert avg.max_weight(f) == max([0.0] + row)
        assert W.max_weight(f) == pytest.approx(max([0.0] + [W.get(f, c) for c in range(nr_class)]))


@pytest.mark.parametrize("kind", TABLES)
@pytest.mark.parametrize("seed", [2, 5])
def test_row_group_max_is_row_max_per_group(seed, kind):
    """row_group_max: the largest weight of each group of classes (absent
    classes 0), frozen or not; over one group, row_max."""
    W, feats, nr_class = table_of(kind, seed)
    rng = random.Random(seed)
    group_of = [rng.randrange(3) for _ in range(nr_class)]
    for table in (W, W.average()):
        for f in feats + [4242]:
            got = table.group_max_weights(f, group_of)
            for g in range(3):
                row = [table.get(f, c) for c in range(nr_class) if group_of[c] == g]
                assert got[g] == pytest.approx(max([0.0] + row), abs=0, rel=1e-15)
            assert table.group_max_weights(f, [0] * nr_class) == [table.max_weight(f)]
        # a family of features at once (the probes batched): the max of each one's
        family = feats + [4242] * 3
        each = [table.group_max_weights(f, group_of) for f in family]
        assert table.family_max_weights(family, group_of) == [max(e[g] for e in each)
                                                             for g in range(3)]


@pytest.mark.parametrize("kind", TABLES)
@pytest.mark.parametrize("seed", [3, 7])
@pytest.mark.parametrize("layout", ["runs", "scattered"])
def test_bounded_scores_add_in_order_and_bound_every_stand_in(seed, kind, layout):
    """dot_bounded: dot() where a bounded feature adds its group's bound to
    every class, the terms added in the features' order (the same rounded
    sums as adding them one by one); with each bound a group maximum of the
    rows it stands for, the scores bound dot() of every choice of them. The
    groups in a few runs of classes (a parser's: shifts, left arcs, right
    arcs, then a shift again; a bound is added a run at once) or scattered
    (with the long rows' 60 classes, more runs than that path takes: class
    by class)."""
    W, feats, nr_class = table_of(kind, seed)
    rng = random.Random(seed)
    if layout == "runs":
        third = max(1, (nr_class - 2) // 2)
        group_of = [0] + [1] * third + [2] * (nr_class - 2 - third) + [0]
    else:
        group_of = [c % 3 for c in range(nr_class)]
    assert len(group_of) == nr_class and len(set(group_of)) == 3
    for table in (W, W.average()):
        picked = [rng.choice(feats) for _ in range(6)]
        bounded = [0, 1, 0, 0, 1, 0]
        # each bounded position stands for a family of three features
        families = {i: [rng.choice(feats + [4242]) for _ in range(3)] for i in (1, 4)}
        bounds = [table.family_max_weights(families[i], group_of) if bounded[i] else [0.0] * 3
                  for i in range(6)]
        got = table.bounded_scores(picked, nr_class, bounded, bounds, group_of)
        want = [0.0] * nr_class
        for i, f in enumerate(picked):
            for c in range(nr_class):
                want[c] += bounds[i][group_of[c]] if bounded[i] else table.get(f, c)
        assert got.tolist() == want
        assert table.bounded_scores(picked, nr_class, [0] * 6, [[0.0] * 3] * 6,
                                    group_of).tobytes() == table.scores(picked, nr_class).tobytes()
        for a in families[1]:
            for b in families[4]:
                exact = table.scores([picked[0], a, picked[2], picked[3], b, picked[5]], nr_class)
                assert all(got >= exact)


@pytest.mark.parametrize("more", [0, 1 << 16])
def test_keys_that_share_a_run_of_slots_are_told_apart_when_frozen(more):
    """A frozen table finds a row by open addressing from its slot (the
    key's low bits): keys with the same slot, present and absent,
    interleaved in one run of slots, are found (or not) by their
    whole key, one probe at a time or batched; in a table of 32 slots or
    of 2^17."""
    keys = [(0xAB << 56) | (i << 32) | 0x1234 for i in range(1, 41)]
    present, absent = keys[::2], keys[1::2]
    rows = list(present)
    if more:  # more rows, spread over the slots
        spread = numpy.arange(1, 1 + more, dtype="uint64") * numpy.uint64(0x9E3779B97F4A7C15)
        rows += [int(k) for k in spread if int(k) not in keys]
    n = len(rows)
    plain = Weights().from_bytes(srsly.msgpack_dumps({
        "serial_version": SERIAL_VERSION, "time": 0, "scale": 1.0,
        "keys": numpy.asarray(rows, dtype="uint64").tobytes(),
        "lengths": numpy.ones(n, dtype="int32").tobytes(),
        "classes": numpy.asarray([i % 3 for i in range(n)], dtype="int32").tobytes(),
        "w": numpy.asarray([1.0 + i for i in range(n)]).tobytes(),
        "total": numpy.zeros(n).tobytes(), "times": numpy.zeros(n, dtype="int64").tobytes()}))
    frozen = plain.frozen_copy()
    assert frozen.frozen and len(frozen) == n
    for i, k in enumerate(present):
        assert frozen.get(k, i % 3) == 1.0 + i
    assert all(frozen.get(k, c) == 0.0 for k in absent for c in range(3))
    for batch in (keys, absent + present, present[::-1], absent):
        assert frozen.scores(batch, 3).tobytes() == plain.scores(batch, 3).tobytes()


def test_a_table_of_megabytes_freezes_and_scores_as_it_reads():
    """A frozen table of 2 MB or more gets its memory another way (aligned,
    for huge pages, zeroed by hand): its empty slots must read as empty and
    its rows as written."""
    rng = numpy.random.default_rng(0)
    n = 200_000  # slots: 512k x 16 bytes; arena: 600k doubles
    keys = numpy.unique(rng.integers(1, 2**63, size=n, dtype="uint64"))
    n = len(keys)
    classes = rng.integers(0, 5, size=n, dtype="int32")
    ws = rng.normal(size=n)
    plain = Weights().from_bytes(srsly.msgpack_dumps({
        "serial_version": SERIAL_VERSION, "time": 0, "scale": 1.0, "keys": keys.tobytes(),
        "lengths": numpy.ones(n, dtype="int32").tobytes(), "classes": classes.tobytes(),
        "w": ws.tobytes(), "total": numpy.zeros(n).tobytes(),
        "times": numpy.zeros(n, dtype="int64").tobytes()}))
    frozen = plain.frozen_copy()
    picked = [int(k) for k in keys[::997]] + [12345, 99, 7]  # (the last three absent)
    assert frozen.scores(picked, 5).tobytes() == plain.scores(picked, 5).tobytes()
    assert [frozen.get(int(k), int(c)) for k, c in zip(keys[:500], classes[:500])] == list(ws[:500])
    assert len(frozen) == n and frozen.to_bytes() == plain.frozen_copy().to_bytes()


def test_a_row_that_names_a_class_twice_scores_as_it_reads_when_frozen():
    """A crafted file's row may name a class twice: the weights add up as
    they do unfrozen, long row or not (such a row is never kept dense)."""
    keys = numpy.array([7, 9], dtype="uint64")
    lengths = numpy.array([10, 10], dtype="int32")
    classes = numpy.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 3] + list(range(10)), dtype="int32")
    ws = numpy.array([0.5 + i for i in range(20)], dtype="float64")
    data = srsly.msgpack_dumps({"serial_version": SERIAL_VERSION, "time": 0, "scale": 1.0,
                                "keys": keys.tobytes(), "lengths": lengths.tobytes(),
                                "classes": classes.tobytes(), "w": ws.tobytes(),
                                "total": numpy.zeros(20).tobytes(),
                                "times": numpy.zeros(20, dtype="int64").tobytes()})
    plain = Weights().from_bytes(data)
    frozen = plain.frozen_copy()
    assert frozen.n_span_rows == 1  # key 9's row; key 7's names class 3 twice
    for fs in ([7], [9], [7, 9, 7]):
        assert frozen.scores(fs, 10).tobytes() == plain.scores(fs, 10).tobytes()
    assert frozen.scores([7], 10)[3] == 3.5 + 9.5
    assert frozen.to_bytes() == plain.frozen_copy().to_bytes()
    assert frozen.to_arrays()[2].tolist() == classes.tolist()


def test_freezing_costs_memory_by_the_rows_not_by_the_largest_class_id():
    """Class ids near 2**31 (from_bytes without n_classes accepts them): the
    frozen table keeps them, span row or not, without scratch memory of the
    ids' size."""
    import tracemalloc
    top = 2**31 - 1
    plain = Weights()
    for c in range(top - 9, top + 1):  # a long row at the very top: a span row
        plain.add(5, c, 1.0 + (c % 7))
    plain.add(9, top, 2.5)
    plain.add(9, 3, -1.0)
    tracemalloc.start()
    try:
        frozen = plain.frozen_copy()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert frozen.n_span_rows == 1
    assert [frozen.get(5, c) for c in range(top - 10, top + 1)] == [
        0.0] + [1.0 + (c % 7) for c in range(top - 9, top + 1)]
    assert frozen.get(9, top) == 2.5 and frozen.get(9, 3) == -1.0
    assert frozen.to_bytes() == plain.frozen_copy().to_bytes()


def test_family_maxima_over_many_groups():
    """family_max_weights with more groups than the batched path's old
    limit (8), frozen or not: the largest weight of each group."""
    W = Weights()
    for c in range(200):
        W.add(5, c, 1.0 + c)
        W.add(6, c, 300.0 - c)
    group_of = numpy.arange(200, dtype="int32") // 2
    want = [max(2.0 * g + 2.0, 300.0 - 2 * g) for g in range(100)]
    for table in (W, W.average()):
        assert table.family_max_weights([5, 6, 7, 5], group_of) == want


@pytest.mark.parametrize("kind", TABLES)
def test_frozen_tables_refuse_updates_and_survive_pickle(kind):
    W, feats, nr_class = table_of(kind, 3)
    avg = W.average()
    with pytest.raises(RuntimeError, match="frozen"):
        avg.add(feats[0], 0, 1.0)
    with pytest.raises(RuntimeError, match="frozen"):
        avg.tick()
    back = pickle.loads(pickle.dumps(avg))
    assert back.frozen
    assert back.scores(feats, nr_class).tobytes() == avg.scores(feats, nr_class).tobytes()
    again = avg.average()
    assert again.frozen and again.to_bytes() == avg.to_bytes()
    assert back.n_span_rows == again.n_span_rows == avg.n_span_rows
    empty = Weights().average()
    assert empty.frozen and len(empty) == 0 and empty.scores([1, 2], 3).tolist() == [0, 0, 0]


def test_versions_are_never_repeated_across_tables():
    """Caches key scores by (table address, version): a new table that reuses
    a freed table's address must not reuse its version, so every table and
    every write gets a version no other table had (a process-wide clock)."""
    seen = set()
    for _ in range(20):
        W = Weights()
        assert W.version not in seen
        seen.add(W.version)
        W.add(1, 0, 0.5)
        assert W.version not in seen
        seen.add(W.version)
        for made in (W.frozen_copy(), W.average(), W.copy()):
            assert made.version not in seen
            seen.add(made.version)


def test_the_average_keeps_the_rows_of_features_0_and_1():
    """preshed keeps keys 0 and 1 outside its cells (its empty and deleted
    markers) and leaves them out of its count: with both present, the
    average was sized one row short and wrote past its arrays."""
    W = Weights()
    for feat in (1, 0, 5, 7):
        W.add(feat, 0, float(feat + 1))
    W.tick()
    A = W.average()
    assert [A.get(feat, 0) for feat in (0, 1, 5, 7)] == [1.0, 2.0, 6.0, 8.0]
    assert len(A) == 4
