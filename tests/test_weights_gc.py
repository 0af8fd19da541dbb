"""A weight table that a garbage cycle refers to is freed whole, without
crashing: Weights is outside the cycle collector (core/weights.pyx). Under
the collector, a table's map could be cleared before the table walked it
to free its rows, and the process aborted ("double free or corruption")."""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import gc, os
    import numpy
    from spacy_lookahead.distributed.mixing import training_weights, prediction_weights

    def rss_mb():  # (Linux; elsewhere only the crash is checked)
        if not os.path.exists("/proc/self/statm"):
            return 0.0
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    class Holder:
        pass

    n = 100_000  # 100k rows of 4 entries: ~15 MB of rows a training table
    table = (numpy.arange(1, n + 1, dtype="uint64"), numpy.full(n, 4, dtype="int32"),
             numpy.tile(numpy.arange(4, dtype="int32"), n), numpy.ones(4 * n))
    sizes = []
    for i in range(12):
        h = Holder()
        h.me = h  # a cycle, which only the collector frees
        h.w = training_weights(table)
        h.w.begin_round()  # (its round's snapshots too)
        h.w.add(1, 0, 1.0)
        h.frozen = prediction_weights(table)
        del h
        gc.collect()
        sizes.append(rss_mb())
    print(sizes[-1] - sizes[1])
""")


def test_a_table_in_a_garbage_cycle_is_freed_without_a_crash():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    growth = float(result.stdout.strip().splitlines()[-1])
    # ten tables leaked would be ~150 MB; freed, the memory is reused
    assert growth < 30, f"the process grew by {growth:.0f} MB over ten collected tables"
