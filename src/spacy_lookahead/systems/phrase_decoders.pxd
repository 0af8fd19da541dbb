from ..core.weights cimport Weights
from .phrase_doc cimport PhraseDocC
from .phrase_features cimport PhraseFeatures

cdef void flat_context_dp(PhraseFeatures fx, PhraseDocC* d, int s) noexcept nogil
cdef int inner_tops_dp(PhraseFeatures fx, PhraseDocC* d, int s, int e, int* starts) noexcept nogil
cdef bint any_candidate(PhraseFeatures fx, const PhraseDocC* d, int s, int e) noexcept nogil
cdef void decode_flat(PhraseFeatures fx, PhraseDocC* d, Weights W) noexcept nogil
cdef void decode_embedded(PhraseFeatures fx, PhraseDocC* d, Weights W, int* starts) noexcept nogil
cdef int solution_flat(PhraseFeatures fx, const PhraseDocC* d, int* out) noexcept nogil
cdef int solution_embedded(PhraseFeatures fx, const PhraseDocC* d, int* out, int* stack) noexcept nogil
