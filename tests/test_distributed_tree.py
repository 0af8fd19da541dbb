"""Parameter mixing as a tree reduction (issue 38, item 4): the pairwise
mix the workers compute equals mixing.mix's flat sum, bitwise for 1 and 2
shards (so one shard still reproduces spacy train, and two shards give the
weights they gave when the driver mixed), within 1e-12 for more."""
from typing import List

import numpy
import pytest

pytest.importorskip("distributed")

from spacy_lookahead.distributed.mixing import coefficients, mix  # noqa: E402
from spacy_lookahead.distributed.train import (_coefficients, _mix_pair, _scaled,  # noqa: E402
                                               pairwise, tree_mix)
from tables import dense, random_table  # noqa: E402


def tables_of(seed: int, n: int) -> List[dict]:
    rng = numpy.random.default_rng(seed)
    return [{"tagger": random_table(rng, 400, 12), "parser": random_table(rng, 300, 40)}
            for _ in range(n)]


def test_pairwise_reduces_in_shard_order_level_by_level():
    calls = []

    def combine(a, b, level, k):
        calls.append((a, b, level, k))
        return f"({a}+{b})"
    assert pairwise(list("abcde"), combine) == "(((a+b)+(c+d))+e)"
    assert [c[2:] for c in calls] == [(0, 0), (0, 1), (1, 0), (2, 0)]
    assert pairwise(["a"], combine) == "a"
    with pytest.raises(ValueError):
        pairwise([], combine)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("weighting", ["uniform", "updates"])
def test_the_tree_mix_is_the_flat_mix(n, weighting):
    tables = tables_of(n, n)
    rng = numpy.random.default_rng(100 + n)
    counts = [float(c) for c in rng.integers(1, 50, size=n)]
    mus = {name: coefficients(weighting, counts) for name in tables[0]}
    tree = tree_mix(tables, mus)
    for name in tables[0]:
        flat = mix([t[name] for t in tables], mus[name])
        if n <= 2:  # the same sums in the same order: bitwise
            for a, b in zip(tree[name], flat):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
        else:
            want, got = dense(flat), dense(tree[name])
            # an entry that sums to exactly 0 one way may be 1e-17 the other
            assert {k for k, v in want.items() if abs(v) > 1e-12} == \
                {k for k, v in got.items() if abs(v) > 1e-12}
            for k in set(want) | set(got):
                assert abs(want.get(k, 0.0) - got.get(k, 0.0)) <= 1e-12


def test_the_leaves_read_the_shards_results_as_the_driver_did():
    """_scaled reads a shard's changes as the task returns them and
    multiplies by the coefficient as mix() does (with a base: base plus
    changes first); _coefficients are mixing.coefficients of the shards'
    updates."""
    tables = tables_of(7, 2)
    results = [{"components": {name: {"raw": t, "avg": None}
                               for name, t in shard.items()}} for shard in tables]
    stats = [{"components": {name: {"updates": u, "ticks": 10} for name in shard}}
             for u, shard in zip((3.0, 1.0), tables)]
    mus = _coefficients("updates", stats)
    assert mus == {"tagger": [0.75, 0.25], "parser": [0.75, 0.25]}
    sides = {"tagger": "raw", "parser": "raw"}
    root = _mix_pair(_scaled(results[0], sides, mus, 0), _scaled(results[1], sides, mus, 1))
    for name in sides:
        flat = mix([t[name] for t in tables], mus[name])
        assert all(a.tobytes() == b.tobytes() for a, b in zip(root[name], flat))
    one = _scaled(results[0], sides, {"tagger": [1.0], "parser": [1.0]}, 0)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(one["tagger"], tables[0]["tagger"]))
    base = tables_of(8, 1)[0]
    based = _scaled(results[0], sides, mus, 0, base)
    for name in sides:  # mu 0.75: (base + changes) * 0.75, entry by entry
        got, want = dense(based[name]), dense(mix([base[name], tables[0][name]], [1.0, 1.0]))
        assert got.keys() == want.keys() and all(got[k] == want[k] * 0.75 for k in got)
