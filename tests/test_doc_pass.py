"""Passes over the lattices of a batch's docs (core/marginals.pyx: DocPass,
StepAlternatives; systems/span_ids.pyx: SpanScores, BestParts), run alone
on any number of threads or on each doc right after its search
(decode_docs(..., then=pass)): every doc's figures are those of its own
lattice (Lattice, whose sums test_marginals checks against brute force),
bit for bit, whichever thread took it."""
from concurrent.futures import ThreadPoolExecutor

import numpy
import pytest

from spacy_lookahead.core.decode import DocsOutput, decode_docs
from spacy_lookahead.core.instance import InstanceDocs
from spacy_lookahead.core.marginals import Lattice, StepAlternatives, step_alternatives
from spacy_lookahead.systems.span_ids import BestParts, SpanScores, ids_to_spans, span_scores

from engine import a_batch, atoms_of, constrained_system

TAU = 0.7
# IOB2 over the 3 labels: O, B-X, I-X (kinds, types, parts B/I/L/U, closed: O and B end an X)
SPAN_PARTS = ([0, 1, 2], [0, 0, 0], numpy.array([[1, 2, 2, 1]], dtype="int32"),
              numpy.array([[1, 1, 0]], dtype="uint8"), False)


def on_threads(threads, call):
    with ThreadPoolExecutor(threads) as pool:
        [f.result() for f in [pool.submit(call) for _ in range(threads)]]


def doc_order(values, rtl):
    return numpy.ascontiguousarray(values[::-1]) if rtl else values


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("constrained", [False, True])
def test_lattices_after_each_search_are_each_docs_own(direction, constrained):
    """StepAlternatives and SpanScores done by decode_docs after each doc's
    search (1, 2 and 5 threads sharing the batch), or run alone over the
    decoded labels (1 and 3 threads), give what each doc's own lattice gives
    for the search's output: its steps' marginals, the most probable other
    action and its marginal, and its spans' probabilities (span_scores)."""
    rtl = direction == "rtl"
    system, batch, starts, W = a_batch(direction, constrained, 3 + 5 * rtl + 7 * constrained)
    docs = system.batch_docs(batch)
    decoded = DocsOutput(docs)
    decode_docs(docs, W, 1, decoded)
    labels = decoded.labels
    own, alt, alt_p, scores, span_starts = [], [], [], [], [0]
    for k, inst in enumerate(system.batch_instances(batch)):
        lattice = Lattice(inst, W, TAU)
        best = labels[starts[k]:starts[k + 1]]
        path = doc_order(best, rtl)  # the steps' order
        m = lattice.marginals()
        steps = numpy.arange(lattice.T)
        own.append(doc_order(m[steps, path], rtl))
        m[steps, path] = -1.0
        alt.append(doc_order(m.argmax(axis=1).astype("int32"), rtl))
        alt_p.append(doc_order(m[steps, m.argmax(axis=1)], rtl))
        scores.append(span_scores(lattice, best, *SPAN_PARTS, rtl))
        span_starts.append(span_starts[-1] + len(scores[-1]))
    want = [numpy.concatenate(x) for x in (own, alt, alt_p, scores)]
    assert len(want[3]) > 50
    for threads in (1, 2, 5):
        out = DocsOutput(docs)
        steps_pass = StepAlternatives(docs, W, TAU, None, starts, None, rtl)
        on_threads(threads, lambda: decode_docs(docs, W, 1, out, 0, steps_pass))
        assert out.labels.tobytes() == labels.tobytes()
        for got, exp in zip(steps_pass.check().outputs(), want):
            assert got.tobytes() == exp.tobytes()
        out = DocsOutput(docs)
        spans_pass = SpanScores(docs, W, TAU, None, starts, SPAN_PARTS, rtl)
        on_threads(threads, lambda: decode_docs(docs, W, 1, out, 0, spans_pass))
        got, got_starts = spans_pass.compacted()
        assert got.tobytes() == want[3].tobytes() and got_starts.tolist() == span_starts
    # the pass without derivations only follows a search: alone, it says so
    with pytest.raises(ValueError, match="give it the derivations"):
        StepAlternatives(docs, W, TAU, None, starts, None, rtl).run_on(2)
    for threads in (1, 3):
        alone = StepAlternatives(docs, W, TAU, None, starts, labels, rtl).run_on(threads)
        for got, exp in zip(alone.check().outputs(), want):
            assert got.tobytes() == exp.tobytes()
        got, _ = SpanScores(docs, W, TAU, None, starts, SPAN_PARTS, rtl, labels).run_on(
            threads).compacted()
        assert got.tobytes() == want[3].tobytes()
    with pytest.raises(ValueError, match="made for another batch"):
        decode_docs(docs, W, 1, DocsOutput(docs), 0,
                    StepAlternatives(system.batch_docs(batch), W, TAU, None, starts, None, rtl))


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("by_span", [False, True])
def test_best_parts_are_each_docs_own_viterbi_and_probabilities(direction, by_span):
    """BestParts over a batch's Docs (1 and 3 threads) or over its
    instances: each doc's labels are the Viterbi best of its own lattice in
    document order, with that lattice's step probabilities (or its spans'
    probabilities, span_scores); nothing failed."""
    rtl = direction == "rtl"
    system, batch, starts, W = a_batch(direction, True, 40 + rtl)
    instances = system.batch_instances(batch)
    labels, parts, part_starts = [], [], [0]
    for inst in instances:
        lattice = Lattice(inst, W, TAU)
        path, _ = lattice.best()
        labels.append(inst.output(path))
        parts.append(span_scores(lattice, labels[-1], *SPAN_PARTS, rtl) if by_span
                     else doc_order(lattice.step_probabilities(path), rtl))
        part_starts.append(part_starts[-1] + len(parts[-1]))
    spans = SPAN_PARTS if by_span else None
    for source, threads in ((system.batch_docs(batch), 1), (system.batch_docs(batch), 3),
                            (instances, 1)):
        got = BestParts(source, W, TAU, None, rtl, spans).run_on(threads).found()
        assert got[0].tobytes() == numpy.concatenate(labels).tobytes()
        assert got[1].tolist() == starts.tolist()
        assert got[2].tobytes() == numpy.concatenate(parts).tobytes()
        assert got[3].tolist() == part_starts and got[4] == -1


def test_the_first_doc_without_a_valid_derivation_is_named():
    """Docs whose preset labels contradict the constraints (label 1 after
    label 0) have no valid derivation: BestParts names the first of them,
    on one thread as on three, and writes the others."""
    system, batch, starts, W = a_batch("ltr", True, 9, n_docs=60)
    forced = batch["forced"].copy()
    lengths = numpy.diff(starts)
    stuck = [k for k in range(len(lengths)) if lengths[k] >= 2][3::7]
    for k in stuck:
        forced[starts[k]:starts[k] + 2] = [0, 1]
    batch = {**batch, "forced": forced}
    for threads in (1, 3):
        found = BestParts(system.batch_docs(batch), W, TAU, None, False).run_on(threads)
        assert found.first_failed == stuck[0] and found.found()[4] == stuck[0]
        k = stuck[0] - 1
        lattice = Lattice(system.batch_instances(batch)[k], W, TAU)
        assert found.labels[starts[k]:starts[k + 1]].tolist() == lattice.best()[0].tolist()


def test_instance_lists_are_docs_of_one_system():
    """A pass takes a list of instances as Docs (InstanceDocs): one system
    and state size, and at least one instance."""
    system, batch, starts, W = a_batch("ltr", False, 5, n_docs=4)
    other = constrained_system(3, "ltr", True)
    mixed = system.batch_instances(batch)[:2] + other.batch_instances(batch)[:1]
    with pytest.raises(ValueError, match="share one system"):
        InstanceDocs(mixed)
    with pytest.raises(ValueError, match="at least one instance"):
        InstanceDocs([])
    with pytest.raises(ValueError, match="2 actions for a derivation of 3 steps"):
        step_alternatives(system.instances([atoms_of(["a", "b", "c"])]), [0, 1], [0, 2], W, TAU)
    assert ids_to_spans([1, 2, 0, 1], *SPAN_PARTS[:2]) == [(0, 2, 0), (3, 4, 0)]
