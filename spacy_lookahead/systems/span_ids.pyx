"""Label-id sequences -> spans, in C: the sequence labellers read spans from
every output they write (and SAPO from each of the n best), so this runs once
per doc at prediction time and a few numpy calls per doc cost more than the
search of a short sentence."""
import numpy

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
    cdef const int[:] seq = numpy.asarray(ids, dtype="int32")
    cdef const signed char[:] kind = kinds
    cdef const int[:] typ = types
    cdef int n = seq.shape[0], i, k, t, start = -1, open_type = -1, prev_kind = O
    out = []
    for i in range(n):
        k = kind[seq[i]]
        t = typ[seq[i]]
        if start >= 0 and (prev_kind == B or prev_kind == I) and (k == I or k == L) \
                and t == open_type:
            prev_kind = k
            continue  # continues the open span
        if start >= 0:
            out.append((start, i, open_type))
            start = -1
        if k != O:
            start, open_type = i, t
        prev_kind = k
    if start >= 0:
        out.append((start, n, open_type))
    return out
