from libcpp.vector cimport vector


# The spans a label-id sequence encodes (ids_to_spans), appended to `out` as
# (start, end, type) triples; an id below 0 counts from the end of the
# actions, as a Python index does.
cdef void id_spans(const int* seq, int n, const signed char* kind, const int* typ, int n_actions,
                   vector[int]* out) noexcept nogil
