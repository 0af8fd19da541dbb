"""Label-id sequences -> spans, in C: the sequence labellers read spans from
every output they write (and SAPO from each of the n best), so this runs once
per doc at prediction time and a few numpy calls per doc cost more than the
search of a short sentence."""
from libc.math cimport INFINITY
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

import numpy

from ..core import marginals as _marginals
from ..core.clock cimport add_since, now_ns
from ..core.instance cimport Instance
from ..core.marginals cimport Lattice, Transitions
from ..core.search cimport Workspace, workspace_for
from ..core.weights cimport Weights

cdef enum:
    O = 0
    B = 1
    I = 2
    L = 3


def ids_to_spans(ids, kinds, types):
    """(start, end, type index) of the spans a label-id sequence encodes,
    read as conlleval does: an I/L that does not continue a span of its type
    starts one (B or I continues, I or L of the same type continues it);
    U is a span of one token. kinds: O/B/I/L/U per action (int8); types: the
    span type per action (int32)."""
    cdef const int[::1] seq = numpy.ascontiguousarray(ids, dtype="int32")
    cdef const signed char[::1] kind = numpy.ascontiguousarray(kinds, dtype="int8")
    cdef const int[::1] typ = numpy.ascontiguousarray(types, dtype="int32")
    cdef vector[int] found
    cdef size_t j
    if seq.shape[0]:
        id_spans(&seq[0], seq.shape[0], &kind[0], &typ[0], kind.shape[0], &found)
    return [(found[j], found[j + 1], found[j + 2]) for j in range(0, found.size(), 3)]


cdef void id_spans(const int* seq, int n, const signed char* kind, const int* typ, int n_actions,
                   vector[int]* out) noexcept nogil:
    cdef int i, a, k, t, start = -1, open_type = -1, prev_kind = O
    for i in range(n):
        a = seq[i] if seq[i] >= 0 else n_actions + seq[i]
        k = kind[a]
        t = typ[a]
        if start >= 0 and (prev_kind == B or prev_kind == I) and (k == I or k == L) \
                and t == open_type:
            prev_kind = k
            continue  # continues the open span
        if start >= 0:
            out.push_back(start)
            out.push_back(i)
            out.push_back(open_type)
            start = -1
        if k != O:
            start, open_type = i, t
        prev_kind = k
    if start >= 0:
        out.push_back(start)
        out.push_back(n)
        out.push_back(open_type)


def span_scores(Lattice lattice, best, kinds, types, parts, closed, bint biluo, bint rtl):
    """Each span of `best` (label ids in document order): the probability
    under the lattice that its tokens take exactly its labels (B-X I-X ...,
    or B-X ... L-X / U-X) and, in IOB2, that the next token does not
    continue it (the token after it is not I-X). parts: (types, 4) action
    ids of B, I, L, U per span type; closed: (types, C) 0/1, the actions
    that do not continue a span of the type. For rtl the lattice's steps run
    from the last token. In C, one call per doc."""
    cdef const int[::1] seq = numpy.ascontiguousarray(best, dtype="int32")
    cdef const signed char[::1] kind = numpy.ascontiguousarray(kinds, dtype="int8")
    cdef const int[::1] typ = numpy.ascontiguousarray(types, dtype="int32")
    cdef vector[int] spans
    if seq.shape[0]:
        id_spans(&seq[0], seq.shape[0], &kind[0], &typ[0], kind.shape[0], &spans)
    out = numpy.zeros((spans.size() // 3,), dtype="float32")
    if not spans.size():
        return out
    cdef float[::1] o = out
    cdef vector[int] lab
    cdef const int[:, ::1] pv = parts
    cdef const unsigned char[:, ::1] cv = closed
    _segment_scores(lattice, seq.shape[0], spans, 0, spans.size(), &pv[0, 0], &cv[0, 0],
                    cv.shape[1], biluo, rtl, lab, &o[0])
    return out


def batch_span_scores(instances, Weights W, double temperature, Transitions transitions, labels,
                      starts, kinds, types, parts, closed, bint biluo, bint rtl):
    """span_scores of a batch: instance k's best output at
    labels[starts[k]:starts[k + 1]] (label ids in document order), each
    doc's lattice made in turn (one Lattice, chain and Workspace reused, as
    marginals.step_alternatives), no numpy per doc. Returns every span's
    probability, the docs' spans one after another (float32), and where each
    doc's begin (n_docs + 1,) int64."""
    cdef const int[::1] seq = numpy.ascontiguousarray(labels, dtype="int32")
    cdef const int64_t[::1] sv = numpy.ascontiguousarray(starts, dtype="int64")
    cdef const signed char[::1] kind = numpy.ascontiguousarray(kinds, dtype="int8")
    cdef const int[::1] typ = numpy.ascontiguousarray(types, dtype="int32")
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    if sv.shape[0] != len(instances) + 1 or sv[sv.shape[0] - 1] != seq.shape[0]:
        raise ValueError(f"starts ({sv.shape[0]}) must bound {len(instances)} outputs over "
                         f"{seq.shape[0]} labels")
    cdef const int[:, ::1] pv = parts
    cdef const unsigned char[:, ::1] cv = closed
    cdef vector[int] spans
    span_starts_np = numpy.zeros((len(instances) + 1,), dtype="int64")
    cdef int64_t[::1] span_starts = span_starts_np
    cdef int k
    for k in range(len(instances)):  # every doc's spans first: the output's size
        if sv[k + 1] > sv[k]:
            id_spans(&seq[sv[k]], <int>(sv[k + 1] - sv[k]), &kind[0], &typ[0], kind.shape[0],
                     &spans)
        span_starts[k + 1] = spans.size() // 3
    out = numpy.zeros((spans.size() // 3,), dtype="float32")
    cdef float[::1] o = out
    cdef Lattice lattice = Lattice.__new__(Lattice)
    cdef Workspace ws = None
    cdef Instance inst
    cdef vector[int] lab
    cdef int64_t t0
    k = 0
    for inst in instances:
        if span_starts[k + 1] > span_starts[k]:  # (a doc without spans needs no lattice)
            ws = workspace_for(ws, inst.system, inst.state_size, 0)
            lattice._reset(inst, W, temperature, True, transitions, ws)
            transitions = lattice.trans if lattice.trans is not None else transitions
            if lattice.T != sv[k + 1] - sv[k]:
                raise ValueError(f"{sv[k + 1] - sv[k]} labels for a doc of {lattice.T} steps")
            t0 = now_ns()
            with nogil:
                _segment_scores(lattice, lattice.T, spans, <size_t>span_starts[k] * 3,
                                <size_t>span_starts[k + 1] * 3, &pv[0, 0], &cv[0, 0],
                                cv.shape[1], biluo, rtl, lab, &o[span_starts[k]])
            add_since(t0)
        k += 1
    return out, span_starts_np


cdef void _segment_scores(Lattice lattice, int n, const vector[int]& spans, size_t first,
                          size_t last, const int* pv, const unsigned char* cv, Py_ssize_t C,
                          bint biluo, bint rtl, vector[int]& lab, float* out) noexcept nogil:
    """span_scores' probabilities of the (start, end, type) triples at
    spans[first:last] (the spans of one doc of n steps), into out. pv:
    `parts` (types, 4); cv: `closed` (types, C)."""
    cdef int start, end, t, k, length, j = 0
    cdef size_t x
    cdef const unsigned char* ends_it
    for x in range(first, last, 3):
        start, end, t = spans[x], spans[x + 1], spans[x + 2]
        ends_it = NULL
        if not biluo:
            ends_it = &cv[t * C]
        length = end - start
        lab.resize(length)
        if biluo and length == 1:
            lab[0] = pv[t * 4 + 3]
        else:
            lab[0] = pv[t * 4]
            for k in range(1, length):
                lab[k] = pv[t * 4 + 1]
            if biluo:
                lab[length - 1] = pv[t * 4 + 2]
        if rtl:  # steps run from the last token: the token after the span comes before it
            for k in range(length // 2):
                lab[k], lab[length - 1 - k] = lab[length - 1 - k], lab[k]
            out[j] = lattice.segment(n - end, lab.data(), length, ends_it, NULL)
        else:
            out[j] = lattice.segment(start, lab.data(), length, NULL, ends_it)
        j += 1


def best_parts(instances, Weights W, double temperature, Transitions transitions, bint reverse,
               spans=None):
    """For each instance in turn (e.g. a chunk of a batch): its best
    derivation by Viterbi over its lattice (Lattice.best, as
    marginals.best_with_probabilities finds it), as labels in document
    order (reverse: the steps run from the last token), and the
    probabilities of its parts from the same lattice: each label's (spans
    None: the step's marginal, float64) or each span's (spans = (kinds,
    types, parts, closed, biluo): span_scores' figures, float32). One
    lattice, chain and Workspace reused, no numpy per doc. Returns (labels
    (N,) int32, where each instance's begin (n + 1,) int64, the parts'
    probabilities, where each instance's begin (n + 1,) int64, the index of
    the first instance with no valid derivation or -1); from that instance
    on, nothing is decoded."""
    cdef bint pruned = _marginals.PRUNED_VITERBI
    cdef double min_theta = _marginals.MIN_THETA
    cdef bint by_span = spans is not None
    cdef const signed char[::1] kind
    cdef const int[::1] typ
    cdef const int[:, ::1] pv
    cdef const unsigned char[:, ::1] cv
    cdef bint biluo = False
    if by_span:
        kinds, types, parts, closed, biluo = spans
        kind = numpy.ascontiguousarray(kinds, dtype="int8")
        typ = numpy.ascontiguousarray(types, dtype="int32")
        pv = numpy.ascontiguousarray(parts, dtype="int32")
        cv = numpy.ascontiguousarray(closed, dtype="uint8")
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    cdef vector[int] labels, found, lab
    cdef vector[double] probs
    cdef vector[float] scores
    cdef vector[int64_t] label_starts, part_starts
    cdef Lattice lattice = Lattice.__new__(Lattice)
    cdef Workspace ws = None
    cdef Instance inst
    cdef int stuck = -1, k = 0, T, t
    cdef size_t at, first
    cdef int64_t t0
    label_starts.push_back(0)
    part_starts.push_back(0)
    for inst in instances:
        ws = workspace_for(ws, inst.system, inst.state_size, 0)
        lattice._reset(inst, W, temperature, True, transitions, ws)
        transitions = lattice.trans if lattice.trans is not None else transitions
        T = lattice.T
        if T and lattice.log_z == -INFINITY:
            stuck = k
            break
        at = labels.size()
        labels.resize(at + T)
        if not by_span:
            probs.resize(at + T)
        first = found.size()
        t0 = now_ns()
        with nogil:
            if T:
                lattice._best(&labels[at], pruned, min_theta)
                if not by_span:
                    lattice._step_probabilities(&labels[at], &probs[at])
                if reverse:  # document order
                    for t in range(T // 2):
                        labels[at + t], labels[at + T - 1 - t] = labels[at + T - 1 - t], labels[at + t]
                        if not by_span:
                            probs[at + t], probs[at + T - 1 - t] = probs[at + T - 1 - t], probs[at + t]
                if by_span:
                    id_spans(&labels[at], T, &kind[0], &typ[0], kind.shape[0], &found)
                    scores.resize(found.size() // 3)
                    if found.size() > first:
                        _segment_scores(lattice, T, found, first, found.size(), &pv[0, 0],
                                        &cv[0, 0], cv.shape[1], biluo, reverse, lab,
                                        &scores[first // 3])
        add_since(t0)
        label_starts.push_back(labels.size())
        part_starts.push_back(found.size() // 3 if by_span else probs.size())
        k += 1
    labels_np = numpy.zeros((labels.size(),), dtype="int32")
    if labels.size():
        labels_np[:] = <int[:labels.size()]>labels.data()
    if by_span:
        parts_np = numpy.zeros((scores.size(),), dtype="float32")
        if scores.size():
            parts_np[:] = <float[:scores.size()]>scores.data()
    else:
        parts_np = numpy.zeros((probs.size(),), dtype="float64")
        if probs.size():
            parts_np[:] = <double[:probs.size()]>probs.data()
    return (labels_np, numpy.asarray(<int64_t[:label_starts.size()]>label_starts.data()).copy(),
            parts_np, numpy.asarray(<int64_t[:part_starts.size()]>part_starts.data()).copy(),
            stuck)
