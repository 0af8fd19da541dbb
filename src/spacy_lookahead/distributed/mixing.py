"""Parameter mixing of the components' weight tables (McDonald et al. 2010):
a weighted sum of sparse tables, as numpy arrays.

A table is Weights.to_arrays(): rows sorted by feature key, each with its
classes and weights. The true weight of an entry is `scale * w` (the lazy L2
scale of SAPO); mixed tables have scale 1."""
from typing import List, Sequence, Tuple

import numpy
import srsly

from ..core.weights import SERIAL_VERSION, Weights, _frozen_from_arrays, sum_pair

# keys, row lengths, classes, weights (true values)
Table = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]


def table_of(weights: Weights) -> Table:
    keys, lengths, classes, ws = weights.to_arrays()[:4]
    scale = 1.0 if weights.frozen else weights.scale
    return keys, lengths, classes, ws * scale if scale != 1.0 else ws


def mix(tables: Sequence[Table], coefficients: Sequence[float]) -> Table:
    """sum_i coefficients[i] * tables[i]; entries that sum to 0 are dropped.
    The classes of a mixed row are sorted (a training table keeps them in
    the order they were first updated), so scores are the same sums up to
    floating-point order. One table with coefficient 1 comes back as it is
    (bitwise: one shard reproduces serial training)."""
    if len(tables) != len(coefficients) or not tables:
        raise ValueError("mix() needs one coefficient per table, and at least one table")
    if len(tables) == 1 and coefficients[0] == 1.0:
        return tables[0]
    if len(tables) == 2:  # the same sums, by a merge of the sorted keys (core/weights.pyx)
        return sum_pair(tables[0], tables[1], coefficients[0], coefficients[1])
    keys = numpy.concatenate([numpy.repeat(t[0], t[1]) for t in tables])
    classes = numpy.concatenate([t[2] for t in tables])
    ws = numpy.concatenate([t[3] * c for t, c in zip(tables, coefficients)])
    if not len(keys):
        return tables[0]
    order = numpy.lexsort((classes, keys))
    keys, classes, ws = keys[order], classes[order], ws[order]
    new = numpy.ones(len(keys), dtype=bool)
    new[1:] = (keys[1:] != keys[:-1]) | (classes[1:] != classes[:-1])
    starts = numpy.flatnonzero(new)
    keys, classes, ws = keys[starts], classes[starts], numpy.add.reduceat(ws, starts)
    keep = ws != 0.0
    keys, classes, ws = keys[keep], classes[keep], ws[keep]
    row_keys, lengths = numpy.unique(keys, return_counts=True)
    return row_keys, lengths.astype("int32"), classes.astype("int32"), ws.astype("float64")


def plus(table: Table, changes: Table) -> Table:
    """table + changes (differences, Weights.round_changes' layout), each
    entry summed as a worker's Weights.apply_changes sums it (start, then
    change: the same float); entries that come to 0 are dropped. Either
    one empty: the other as it is (bitwise: the first round of one shard
    is its table)."""
    if not len(changes[2]):
        return table
    if not len(table[2]):
        return changes
    return mix([table, changes], [1.0, 1.0])


def table_from_bytes(data: bytes) -> Table:
    """The table of Weights.to_bytes() data, read straight into arrays:
    building the Weights (a hash map of rows) only to read it back costs
    ten times more, and the driver reads every shard's tables each round.
    Weights.from_bytes is the reference (tests/test_distributed.py)."""
    msg = srsly.msgpack_loads(data)
    if msg.get("serial_version") != SERIAL_VERSION:
        raise ValueError(f"unknown weights format {msg.get('serial_version')!r}")
    ws = numpy.frombuffer(msg["w"], dtype="float64")
    return (numpy.frombuffer(msg["keys"], dtype="uint64"),
            numpy.frombuffer(msg["lengths"], dtype="int32"),
            numpy.frombuffer(msg["classes"], dtype="int32"),
            ws * msg["scale"] if msg["scale"] != 1.0 else ws)


def table_to_bytes(table: Table) -> bytes:
    """Weights.to_bytes() data of a fresh training table holding these
    weights: time 0 and no running totals, so its average over the next
    epoch starts from them (totals and clocks of 0 are left out, as
    Weights.to_bytes leaves them out)."""
    keys, lengths, classes, ws = table
    return srsly.msgpack_dumps({
        "serial_version": SERIAL_VERSION, "time": 0, "scale": 1.0,
        "keys": numpy.ascontiguousarray(keys, dtype="uint64").tobytes(),
        "lengths": numpy.ascontiguousarray(lengths, dtype="int32").tobytes(),
        "classes": numpy.ascontiguousarray(classes, dtype="int32").tobytes(),
        "w": numpy.ascontiguousarray(ws, dtype="float64").tobytes(),
    })


def training_weights(table: Table) -> Weights:
    """A fresh training table holding these weights (see table_to_bytes)."""
    return Weights().from_bytes(table_to_bytes(table))


def prediction_weights(table: Table) -> Weights:
    """A frozen table to predict with (what a loaded model holds), built
    from the arrays as unpickling a frozen table does."""
    # writable arrays: the Cython side takes typed memoryviews
    arrays = [numpy.require(a, dtype=d, requirements=["C", "W"])
              for a, d in zip(table, ("uint64", "int32", "int32", "float64"))]
    return _frozen_from_arrays(*arrays)


def coefficients(weighting: str, counts: List[float]) -> List[float]:
    """McDonald et al.'s mixing coefficients: uniform, or proportional to
    each shard's number of updates (§4; uniform when no shard updated)."""
    if weighting == "uniform" or not sum(counts):
        return [1.0 / len(counts)] * len(counts)
    if weighting == "updates":
        total = float(sum(counts))
        return [c / total for c in counts]
    raise ValueError(f"unknown weighting {weighting!r}: use 'uniform' or 'updates'.")
