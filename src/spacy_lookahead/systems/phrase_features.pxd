from libc.stdint cimport uint64_t

from ..core.weights cimport Weights, feat_t
from ..core.features cimport atom_at
from .phrase_doc cimport PhraseDocC


cdef class PhraseFeatures:
    """phi_w (the filters' word features) and phi_p (the score function's
    phrase features) for `nr_type` phrase types, flat or embedded."""
    cdef readonly int nr_type
    cdef readonly bint embedded
    cdef readonly int feature_set
    cdef readonly int max_length
    cdef uint64_t h_that
    cdef uint64_t[3] punct_tags
    cdef uint64_t[4] rel_tags
    cdef uint64_t h_quote1, h_quote2, h_cc, h_bvp, h_bsbar

    cdef inline uint64_t atom(self, const PhraseDocC* d, int i, int a) noexcept nogil:
        return atom_at(d.atoms, d.n, i, a)
    cdef int element(self, const uint64_t* w) noexcept nogil
    cdef uint64_t symbol(self, const PhraseDocC* d, int i) noexcept nogil
    cdef void prepare(self, PhraseDocC* d) noexcept nogil
    cdef bint can_start(self, const PhraseDocC* d, int i) noexcept nogil
    cdef bint can_end(self, const PhraseDocC* d, int i) noexcept nogil
    cdef int word_features(self, feat_t* f, const PhraseDocC* d, int i) noexcept nogil
    cdef void run_filters(self, PhraseDocC* d, Weights W) noexcept nogil
    cdef int chunk_start_feats(self, feat_t* f, const PhraseDocC* d, int s) noexcept nogil
    cdef int chunk_end_feats(self, feat_t* f, const PhraseDocC* d, int e) noexcept nogil
    cdef int chunk_word_feats(self, feat_t* f, const PhraseDocC* d, int i, int gram) noexcept nogil
    cdef int chunk_joint_feats(self, feat_t* f, const PhraseDocC* d, int s, int e) noexcept nogil
    cdef void chunk_tables(self, PhraseDocC* d, Weights W) noexcept nogil
    cdef inline double chunk_static_score(self, const PhraseDocC* d, int s, int e, int k) noexcept nogil:
        cdef int n = d.n, K = d.K
        cdef const double* uni = d.bag
        cdef const double* bi = &d.bag[(n + 1) * K]
        cdef const double* tri = &d.bag[2 * (n + 1) * K]
        cdef double v = d.at_start[s * K + k] + d.at_end[e * K + k]
        v += uni[(e + 1) * K + k] - uni[s * K + k]
        v += bi[(e + 1) * K + k] - bi[(s + 1) * K + k]
        if e >= s + 2:
            v += tri[(e + 1) * K + k] - tri[(s + 2) * K + k]
        return v
    cdef int phrase_features(self, feat_t* f, const PhraseDocC* d, int s, int e) noexcept nogil
    cdef int max_phrase_feats(self, int n) noexcept nogil
