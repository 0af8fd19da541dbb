"""Running out of memory in a search on a C thread: a MemoryError that says
what ran out, never a partial answer, a crash or an error printed and
ignored. Each case runs in a child process whose address space is capped
(RLIMIT_AS) a little above what it holds before the search."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="caps the address space with RLIMIT_AS (/proc)")

PRELUDE = """
import resource, sys
import numpy
sys.path.insert(0, {tests!r})
from engine import WORDS, atoms_of, learners
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.systems.tagging import TaggingSystem


def batch_of(lengths):
    words = [WORDS[i % len(WORDS)] for i in range(sum(lengths))]
    starts = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype("int64")
    return {{"atoms": atoms_of(words), "starts": starts}}


def trained(C, lengths):
    # a batch of docs of these lengths and weights trained on it (no ties)
    batch = batch_of(lengths)
    system = TaggingSystem(C)
    rng = numpy.random.default_rng(0)
    golds = [rng.integers(0, C, n).astype("int32") for n in lengths]
    W = Weights()
    learners.margin_perceptron(system.batch_instances(batch, golds), W, 1, 1.0)
    return system, batch, W.average()


def cap(mb):
    vm = [int(line.split()[1]) for line in open("/proc/self/status")
          if line.startswith("VmSize")][0] * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (mb << 20), resource.RLIM_INFINITY))


def run(call):
    try:
        call()
        print("no error")
    except MemoryError as e:
        print("MemoryError:", e)
"""


def run_capped(body: str) -> str:
    script = PRELUDE.format(tests=str(Path(__file__).parent)) + textwrap.dedent(body)
    # (glibc's malloc: a fixed mmap threshold, which otherwise moves up to the
    # largest block freed, and one arena: a thread's own reserves 64 MB of
    # address space before the cap, and a block that mmap could not get would
    # be taken from there, uncounted)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MALLOC_MMAP_THRESHOLD_="131072", MALLOC_ARENA_MAX="1")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Exception ignored" not in done.stderr, done.stderr[-3000:]
    return done.stdout


def test_nbest_out_of_memory_raises():
    out = run_capped("""
        from spacy_lookahead.core.decode import nbest
        system, batch, W = trained(50, [30])
        instances = system.batch_instances(batch)
        cap(256)
        run(lambda: nbest(instances, W, 20000))
    """)
    assert "MemoryError: no memory left for the 20000 best outputs (A*)" in out


def test_top_n_on_c_threads_out_of_memory_raises():
    """decode_docs' A* (exact top-n) on two C threads: the thread that runs
    out stops the batch, and the runs raise (they had printed the error
    and kept the n best found so far)."""
    out = run_capped("""
        from spacy_lookahead.core.decode import DocsOutput, DocsRun
        from spacy_lookahead.core.threads import RunsStarted
        system, batch, W = trained(50, [30, 30, 30, 30])
        docs = system.batch_docs(batch)
        warm = DocsOutput(docs, 2)  # (the pool's threads started before the cap)
        RunsStarted([DocsRun(docs, W, 0, warm, 0, None, True) for _ in range(2)]).results()
        assert warm.kept[2].tolist() == [2, 2, 2, 2]
        out = DocsOutput(docs, 20000)
        runs = [DocsRun(docs, W, 0, out, 0, None, True) for _ in range(2)]
        cap(256)
        run(lambda: RunsStarted(runs).results())
    """)
    assert "MemoryError: no memory left for the top-n (A*) search of a doc of 30 tokens" in out


@pytest.mark.parametrize("factored", [False, True])
def test_lattice_out_of_memory_raises(factored):
    """A lattice pass (marginals) on two C threads that finds no memory:
    MemoryError. Unfactored, two docs whose rows are kept (14 MB: they
    were written past their end); factored (the default), two long docs
    whose sums' arrays do not fit (the process aborted: a C++ exception
    out of a noexcept function)."""
    out = run_capped(f"""
        from spacy_lookahead.core import marginals
        marginals.FACTORED = {factored}
        C, T, MB = 60, {20000 if factored else 250}, {12 if factored else 8}
        system, _, W = trained(C, [30])  # (trained on a short doc: little freed heap to reuse)
        def a_pass(lengths):
            batch = batch_of(lengths)
            return marginals.StepAlternatives(system.batch_docs(batch), W, 1.0, None,
                                              batch["starts"],
                                              numpy.zeros(sum(lengths), dtype="int32"))
        a_pass([3, 3]).run_on(2)  # (the pool's threads started before the cap)
        job = a_pass([T, T])
        cap(MB)
        run(lambda: job.run_on(2))
    """)
    assert "MemoryError: no memory left for a doc's lattice" in out


def test_spans_of_labels_out_of_memory_raise():
    """The spans of a label sequence (id_spans, also on the C threads of the
    span probabilities and in write_spans): a MemoryError naming the labels,
    never the first spans only."""
    out = run_capped("""
        from spacy_lookahead.systems.span_ids import ids_to_spans
        ids = numpy.zeros(16_000_000, dtype="int32")  # U-X at every token: a span each
        cap(160)  # (the spans need 192 MB)
        run(lambda: print(len(ids_to_spans(ids, numpy.array([4], dtype="int8"),
                                           numpy.array([0], dtype="int32")))))
    """)
    assert "MemoryError: no memory left for the spans of 16000000 labels" in out


def test_kept_outputs_table_out_of_memory_raises():
    """kept_spans' table of which kept output holds each span (keep x the
    batch's spans, made after the spans themselves): a MemoryError naming
    that table, not a doc (nor an abort: vector.assign)."""
    out = run_capped("""
        from spacy_lookahead.systems.span_ids import kept_spans
        n, keep = 1_000_000, 96
        labels = numpy.zeros(n, dtype="int32")  # U-X at every token: a span each
        kept = numpy.zeros((keep, n), dtype="int32")
        starts = numpy.array([0, n], dtype="int64")
        counts = numpy.array([keep], dtype="int32")
        cap(64)  # (the spans need 12-24 MB, the table 96 MB)
        run(lambda: kept_spans(labels, starts, kept, counts, numpy.array([4], dtype="int8"),
                               numpy.array([0], dtype="int32")))
    """)
    assert ("MemoryError: no memory left for which of 96 kept outputs hold each of the "
            "batch's 1000000 spans") in out
