"""Label-id sequences -> spans, in C: the sequence labellers read spans from
every output they write (and SAPO from each of the n best), so this runs once
per doc at prediction time and a few numpy calls per doc cost more than the
search of a short sentence."""
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

import numpy

from ..core import marginals as _marginals
from ..core.marginals cimport DocPass, Lattice, LatticeThread, Transitions
from ..core.nothrow cimport la_assign, la_push, la_resize
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
    if seq.shape[0] and id_spans(&seq[0], seq.shape[0], &kind[0], &typ[0], kind.shape[0],
                                 &found) != 0:
        raise _no_memory(seq.shape[0])
    return [(found[j], found[j + 1], found[j + 2]) for j in range(0, found.size(), 3)]


def _no_memory(n):
    return MemoryError(f"no memory left for the spans of {n} labels: free memory, or "
                       "split the doc")


cdef int id_spans(const int* seq, int n, const signed char* kind, const int* typ, int n_actions,
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
            if _push_span(out, start, i, open_type) != 0:
                return -1
            start = -1
        if k != O:
            start, open_type = i, t
        prev_kind = k
    if start >= 0:
        return _push_span(out, start, n, open_type)
    return 0


cdef inline int _push_span(vector[int]* out, int start, int end, int typ) noexcept nogil:
    """Append a (start, end, type) triple; -1 where no memory was left."""
    if la_push(out[0], start) != 0 or la_push(out[0], end) != 0 or la_push(out[0], typ) != 0:
        return -1
    return 0


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
    if seq.shape[0] and id_spans(&seq[0], seq.shape[0], &kind[0], &typ[0], kind.shape[0],
                                 &spans) != 0:
        raise _no_memory(seq.shape[0])
    out = numpy.zeros((spans.size() // 3,), dtype="float32")
    if not spans.size():
        return out
    cdef float[::1] o = out
    cdef vector[int] lab
    cdef const int[:, ::1] pv = parts
    cdef const unsigned char[:, ::1] cv = closed
    if _segment_scores(lattice, seq.shape[0], spans, 0, spans.size(), &pv[0, 0], &cv[0, 0],
                       cv.shape[1], biluo, rtl, lab, &o[0]) != 0:
        raise MemoryError(f"no memory left for the labels of the spans of a doc of "
                          f"{seq.shape[0]} tokens: give it more memory")
    return out


def kept_spans(labels, starts, kept, counts, kinds, types):
    """For a batch whose n best were kept (DocsOutput.kept's first plane,
    (keep, N); doc k's at starts[k]:starts[k + 1], counts[k] of them, the
    first its best, also at labels): each doc's best's spans as ids_to_spans
    reads them, the docs' one after another ((n_spans, 3) int32), where each
    doc's begin (n_docs + 1,) int64, and whether each kept output of the
    span's doc holds exactly that span ((keep, n_spans) uint8; 0 past the
    doc's count): what span_probabilities sums, for the batch at once."""
    cdef const int[::1] best = numpy.ascontiguousarray(labels, dtype="int32")
    cdef const int64_t[::1] sv = numpy.ascontiguousarray(starts, dtype="int64")
    cdef const int[:, ::1] kv = numpy.ascontiguousarray(kept, dtype="int32")
    cdef const int[::1] nv = numpy.ascontiguousarray(counts, dtype="int32")
    cdef const signed char[::1] kind = numpy.ascontiguousarray(kinds, dtype="int8")
    cdef const int[::1] typ = numpy.ascontiguousarray(types, dtype="int32")
    cdef int n_docs = sv.shape[0] - 1, keep = kv.shape[0], i, j, n
    if nv.shape[0] != n_docs or best.shape[0] != (sv[n_docs] if n_docs >= 0 else 0) \
            or kv.shape[1] < best.shape[0]:
        raise ValueError("kept outputs, labels, starts and counts do not match")
    cdef vector[int] spans, other
    cdef vector[int64_t] span_starts
    cdef vector[unsigned char] holds
    cdef size_t x, y, first
    cdef int lost = -1  # the doc whose spans found no memory
    span_starts.push_back(0)
    with nogil:
        for i in range(n_docs):  # every doc's best's spans: the output's size
            n = <int>(sv[i + 1] - sv[i])
            if n and id_spans(&best[sv[i]], n, &kind[0], &typ[0], kind.shape[0], &spans) != 0 \
                    or la_push(span_starts, <int64_t>(spans.size() // 3)) != 0:
                lost = i
                break
        if lost < 0 and la_assign(holds, <size_t>keep * (spans.size() // 3), 0) != 0:
            lost = n_docs  # (the batch's table, not a doc's)
        for i in range(n_docs if lost < 0 else 0):
            n = <int>(sv[i + 1] - sv[i])
            first = <size_t>span_starts[i]
            if not n or <size_t>span_starts[i + 1] == first:
                continue
            for j in range(min(nv[i], keep)):
                other.clear()
                if id_spans(&kv[j, sv[i]], n, &kind[0], &typ[0], kind.shape[0], &other) != 0:
                    lost = i
                    break
                y = 0  # both in order of their starts (a token starts one span at most)
                for x in range(first, <size_t>span_starts[i + 1]):
                    while y < other.size() and other[y] < spans[3 * x]:
                        y += 3
                    if (y < other.size() and other[y] == spans[3 * x]
                            and other[y + 1] == spans[3 * x + 1]
                            and other[y + 2] == spans[3 * x + 2]):
                        holds[j * (spans.size() // 3) + x] = 1
            if lost >= 0:
                break
    if lost == n_docs:
        raise MemoryError(f"no memory left for which of {keep} kept outputs hold each of the "
                          f"batch's {spans.size() // 3} spans: keep fewer outputs, or pass "
                          "fewer docs at once")
    if lost >= 0:
        raise _no_memory(sv[lost + 1] - sv[lost])
    cdef size_t n_spans = spans.size() // 3
    spans_np = numpy.zeros((n_spans, 3), dtype="int32")
    if n_spans:
        spans_np.reshape(-1)[:] = <int[:3 * n_spans]>spans.data()
    holds_np = numpy.zeros((keep, n_spans), dtype="uint8")
    if n_spans and keep:
        holds_np.reshape(-1)[:] = <unsigned char[:keep * n_spans]>holds.data()
    return (spans_np, numpy.asarray(<int64_t[:span_starts.size()]>span_starts.data()).copy(),
            holds_np)


cdef class _SpanParts:
    """What the span scores read (span_scores' arguments), held as C views."""
    cdef const signed char[::1] kind
    cdef const int[::1] typ
    cdef const int[:, ::1] pv
    cdef const unsigned char[:, ::1] cv
    cdef bint biluo

    def __init__(self, kinds, types, parts, closed, bint biluo):
        self.kind = numpy.ascontiguousarray(kinds, dtype="int8")
        self.typ = numpy.ascontiguousarray(types, dtype="int32")
        self.pv = numpy.ascontiguousarray(parts, dtype="int32")
        self.cv = numpy.ascontiguousarray(closed, dtype="uint8")
        self.biluo = biluo

    cdef int spans(self, const int* labels, int n, vector[int]* out) noexcept nogil:
        """-1 where no memory was left (out then partly written)."""
        out.clear()
        if n:
            return id_spans(labels, n, &self.kind[0], &self.typ[0], self.kind.shape[0], out)
        return 0

    cdef int scores(self, Lattice lattice, int n, vector[int]& spans, bint rtl,
                    vector[int]& lab, float* out) noexcept nogil:
        """-1 where no memory was left (out then partly written)."""
        return _segment_scores(lattice, n, spans, 0, spans.size(), &self.pv[0, 0], &self.cv[0, 0],
                               self.cv.shape[1], self.biluo, rtl, lab, out)


def compact(values, starts, counts):
    """The first counts[k] values of each doc's slot (doc k's at
    starts[k]:starts[k + 1]) one after another, and where each doc's
    begin (n_docs + 1,) int64."""
    counts = numpy.asarray(counts, dtype="int64")
    starts = numpy.asarray(starts, dtype="int64")
    out_starts = numpy.zeros((len(counts) + 1,), dtype="int64")
    numpy.cumsum(counts, out=out_starts[1:])
    lengths = numpy.diff(starts)
    if out_starts[len(counts)] == len(values):
        return values, out_starts
    offset = numpy.arange(len(values)) - numpy.repeat(starts[:len(starts) - 1], lengths)
    return values[offset < numpy.repeat(counts, lengths)], out_starts


cdef class SpanScores(DocPass):
    """span_scores of each doc's output (the decoder's actions, or labels
    in document order at labels[starts[i]:starts[i + 1]] where the pass runs
    alone): doc i's spans' probabilities at scores[starts[i]:], counts[i] of
    them (a doc has no more spans than tokens); `compacted` joins them. A
    doc without spans needs no lattice; one whose lattice has another number
    of steps than its labels fails."""
    cdef const int64_t[::1] starts
    cdef const int[::1] given
    cdef _SpanParts parts
    cdef bint rtl
    cdef float[::1] scores_v
    cdef int[::1] counts_v
    cdef readonly object scores, counts, starts_np

    def __init__(self, docs, Weights W, double temperature, Transitions transitions, starts,
                 span_parts, bint rtl, labels=None):
        DocPass.__init__(self, docs, W, temperature, transitions)
        self.starts_np = numpy.ascontiguousarray(starts, dtype="int64")
        self.starts = self.starts_np
        N = self.starts_np[len(self.starts_np) - 1] if len(self.starts_np) else 0
        if len(self.starts_np) != self.n_docs + 1 or (labels is not None and len(labels) != N):
            raise ValueError(f"starts ({len(self.starts_np)}) must bound {self.n_docs} outputs "
                             f"over {N if labels is None else len(labels)} labels")
        if labels is not None:
            self.given = numpy.ascontiguousarray(labels, dtype="int32")
        self.parts = _SpanParts(*span_parts)
        self.rtl = rtl
        self.scores = numpy.zeros((N,), dtype="float32")
        self.counts = numpy.zeros((self.n_docs,), dtype="int32")
        self.scores_v, self.counts_v = self.scores, self.counts

    cdef void doc(self, LatticeThread th, int i, const int* actions, int k) noexcept nogil:
        cdef int64_t first = self.starts[i]
        cdef int n = <int>(self.starts[i + 1] - first), j
        cdef const int* labels
        if actions != NULL:  # in document order
            if k != n:
                self.fail(i)
                return
            if la_resize(th.labels, <size_t>n) != 0:
                self.lost(i)
                return
            for j in range(n):
                th.labels[j] = actions[n - 1 - j if self.rtl else j]
            labels = th.labels.data()
        else:
            labels = &self.given[first] if n else NULL
        if self.parts.spans(labels, n, &th.spans) != 0:
            self.lost(i)
            return
        self.counts_v[i] = th.spans.size() // 3
        if not th.spans.size():  # (no lattice)
            return
        self.open(th, i)
        if th.lattice.T != n:
            self.counts_v[i] = 0
            self.fail(i)
            return
        if self.parts.scores(th.lattice, n, th.spans, self.rtl, th.lab, &self.scores_v[first]) != 0:
            self.lost(i)

    def compacted(self):
        """(every span's probability, the docs' spans one after another
        (float32); where each doc's begin (n_docs + 1,) int64)."""
        if self.first_failed >= 0:
            i = self.first_failed
            raise ValueError(f"{self.starts[i + 1] - self.starts[i]} labels for doc {i} of the "
                             "batch, whose lattice has another number of steps")
        return compact(self.scores, self.starts_np, self.counts)


def batch_span_scores(instances, Weights W, double temperature, Transitions transitions, labels,
                      starts, kinds, types, parts, closed, bint biluo, bint rtl, int n_threads=1):
    """span_scores of a batch (Docs, or a list of instances): doc k's best
    output at labels[starts[k]:starts[k + 1]] (label ids in document order),
    no numpy per doc (SpanScores). Returns every span's probability, the
    docs' spans one after another (float32), and where each doc's begin
    (n_docs + 1,) int64."""
    job = SpanScores(instances, W, temperature, transitions, starts,
                     (kinds, types, parts, closed, biluo), rtl, labels)
    return job.run_on(n_threads).compacted()


cdef int _segment_scores(Lattice lattice, int n, const vector[int]& spans, size_t first,
                         size_t last, const int* pv, const unsigned char* cv, Py_ssize_t C,
                         bint biluo, bint rtl, vector[int]& lab, float* out) noexcept nogil:
    """span_scores' probabilities of the (start, end, type) triples at
    spans[first:last] (the spans of one doc of n steps), into out. pv:
    `parts` (types, 4); cv: `closed` (types, C). -1 where `lab` could not
    grow."""
    cdef int start, end, t, k, length, j = 0
    cdef size_t x
    cdef const unsigned char* ends_it
    for x in range(first, last, 3):
        start, end, t = spans[x], spans[x + 1], spans[x + 2]
        ends_it = NULL
        if not biluo:
            ends_it = &cv[t * C]
        length = end - start
        if la_resize(lab, <size_t>length) != 0:
            return -1
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
    return 0


cdef class BestParts(DocPass):
    """SAPO's decoder with marginal probabilities, per doc: its best
    derivation by Viterbi over its lattice (Lattice.best, as
    marginals.best_with_probabilities finds it), as labels in document order
    (reverse: the steps run from the last token) at labels[starts[i]:] (a
    slot of max_steps(i)), and the probabilities of its parts from the same
    lattice: each label's (spans None: the step's marginal, float64, in the
    labels' slot) or each span's (spans = (kinds, types, parts, closed,
    biluo): span_scores' figures, float32, counts[i] of them at the slot's
    start). A doc with no valid derivation fails (`first_failed`)."""
    cdef const int64_t[::1] starts
    cdef _SpanParts parts
    cdef bint reverse, pruned
    cdef double min_theta
    cdef int[::1] labels_v, counts_v, steps_v
    cdef double[::1] probs_v
    cdef float[::1] scores_v
    cdef readonly object labels, probs, scores, counts, starts_np, steps

    def __init__(self, docs, Weights W, double temperature, Transitions transitions,
                 bint reverse, spans=None):
        DocPass.__init__(self, docs, W, temperature, transitions)
        cdef int i, n = self.n_docs
        self.starts_np = numpy.zeros((n + 1,), dtype="int64")
        self.starts = self.starts_np
        cdef int64_t[::1] sv = self.starts_np
        for i in range(n):
            sv[i + 1] = sv[i] + self.docs.max_steps(i)
        N = self.starts_np[n]
        self.reverse = reverse
        self.pruned = _marginals.PRUNED_VITERBI
        self.min_theta = _marginals.MIN_THETA
        self.parts = None if spans is None else _SpanParts(*spans)
        self.labels = numpy.zeros((N,), dtype="int32")
        self.counts = numpy.zeros((n,), dtype="int32")
        self.steps = numpy.zeros((max(1, n),), dtype="int32")
        self.labels_v, self.counts_v, self.steps_v = self.labels, self.counts, self.steps
        if spans is None:
            self.probs = numpy.zeros((N,), dtype="float64")
            self.probs_v = self.probs
        else:
            self.scores = numpy.zeros((N,), dtype="float32")
            self.scores_v = self.scores

    cdef void doc(self, LatticeThread th, int i, const int* actions, int k) noexcept nogil:
        cdef int64_t at = self.starts[i]
        cdef int T, t
        cdef int* labels
        cdef bint valid = self.open(th, i)
        T = th.lattice.T
        self.steps_v[i] = T
        if not valid or T != self.starts[i + 1] - at:
            self.fail(i)
            return
        if not T:
            return
        labels = &self.labels_v[at]
        th.lattice._best(labels, self.pruned, self.min_theta)
        if th.lattice.no_memory:
            self.lost(i)
            return
        if self.parts is None:
            th.lattice._step_probabilities(labels, &self.probs_v[at])
            self.counts_v[i] = T
        if self.reverse:  # document order
            for t in range(T // 2):
                labels[t], labels[T - 1 - t] = labels[T - 1 - t], labels[t]
                if self.parts is None:
                    self.probs_v[at + t], self.probs_v[at + T - 1 - t] = \
                        self.probs_v[at + T - 1 - t], self.probs_v[at + t]
        if self.parts is not None:
            if self.parts.spans(labels, T, &th.spans) != 0:
                self.lost(i)
                return
            self.counts_v[i] = th.spans.size() // 3
            if th.spans.size() and self.parts.scores(th.lattice, T, th.spans, self.reverse,
                                                     th.lab, &self.scores_v[at]) != 0:
                self.lost(i)

    def found(self):
        """(labels (N,) int32, where each doc's begin (n + 1,) int64, the
        parts' probabilities, where each doc's begin (n + 1,) int64, the
        first doc with no valid derivation or -1)."""
        cdef int i = self.first_failed
        if i >= 0 and self.steps[i] != self.starts[i + 1] - self.starts[i]:
            raise ValueError(f"doc {i} of the batch has a lattice of {self.steps[i]} steps "
                             f"and {self.starts[i + 1] - self.starts[i]} steps at most")
        parts, part_starts = compact(self.probs if self.parts is None else self.scores,
                                     self.starts_np, self.counts)
        return self.labels, self.starts_np, parts, part_starts, i


def best_parts(instances, Weights W, double temperature, Transitions transitions, bint reverse,
               spans=None, int n_threads=1):
    """BestParts over a batch (Docs, or a list of instances; see there).
    Returns (labels (N,) int32, where each doc's begin (n + 1,) int64, the
    parts' probabilities, where each doc's begin (n + 1,) int64, the index
    of the first doc with no valid derivation or -1)."""
    return BestParts(instances, W, temperature, transitions, reverse, spans).run_on(
        n_threads).found()
