from libcpp.vector cimport vector


# The spans a label-id sequence encodes (ids_to_spans), appended to `out` as
# (start, end, type) triples; an id below 0 counts from the end of the
# actions, as a Python index does. 0, or -1 where `out` could not grow (no
# memory left: it then holds part of them).
cdef int id_spans(const int* seq, int n, const signed char* kind, const int* typ, int n_actions,
                  vector[int]* out) noexcept nogil
