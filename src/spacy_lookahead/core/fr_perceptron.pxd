from cymem.cymem cimport Pool

from .weights cimport Weights, feat_t


cdef class PhraseInstance:
    """One document as the FR-Perceptron sees a filtering-ranking recogniser
    (Carreras et al. 2005): per phrase type k, a start filter (vector 3k), an
    end filter (3k + 1) and a score function (3k + 2) in one Weights table.
    Systems subclass it (systems/phrases)."""
    cdef readonly int n                # tokens
    cdef readonly int K                # phrase types
    cdef readonly int n_candidates     # |F(x)| of the last recognise()
    cdef readonly int max_length       # longest candidate phrase (0: no limit)
    cdef object gold                   # (m, 3) int32 (start, end inclusive, type), or None

    cdef int recognise(self, Weights W) except -1
    cdef double start_score(self, int i, int k) noexcept nogil
    cdef double end_score(self, int i, int k) noexcept nogil
    cdef bint can_start(self, int i) noexcept nogil
    cdef bint can_end(self, int i) noexcept nogil
    cdef bint may_be_candidate(self, int s, int e) noexcept nogil
    cdef int word_features(self, int i, const feat_t** out) noexcept nogil
    cdef int phrase_features_in(self, int s, int e, int[:, ::1] solution, int m,
                                const feat_t** out) except -1
    cdef int candidate_features(self, int s, int e, const feat_t** out) except -1
