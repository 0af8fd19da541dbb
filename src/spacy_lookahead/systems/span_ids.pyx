"""Label-id sequences -> spans, in C: the sequence labellers read spans from
every output they write (and SAPO from each of the n best), so this runs once
per doc at prediction time and a few numpy calls per doc cost more than the
search of a short sentence."""
from libcpp.vector cimport vector

import numpy

from ..core.marginals cimport Lattice

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
    spans = ids_to_spans(best, kinds, types)
    out = numpy.zeros((len(spans),), dtype="float32")
    if not spans:
        return out
    cdef float[::1] o = out
    cdef const int[:, ::1] pv = parts
    cdef const unsigned char[:, ::1] cv = closed
    cdef int n = len(best), start, end, t, k, length, j = 0
    cdef vector[int] lab
    cdef const unsigned char* ends_it
    for start, end, t in spans:
        ends_it = NULL
        if not biluo:
            ends_it = &cv[t, 0]
        length = end - start
        lab.resize(length)
        if biluo and length == 1:
            lab[0] = pv[t, 3]
        else:
            lab[0] = pv[t, 0]
            for k in range(1, length):
                lab[k] = pv[t, 1]
            if biluo:
                lab[length - 1] = pv[t, 2]
        if rtl:  # steps run from the last token: the token after the span comes before it
            for k in range(length // 2):
                lab[k], lab[length - 1 - k] = lab[length - 1 - k], lab[k]
            o[j] = lattice.segment(n - end, lab.data(), length, ends_it, NULL)
        else:
            o[j] = lattice.segment(start, lab.data(), length, NULL, ends_it)
        j += 1
    return out
