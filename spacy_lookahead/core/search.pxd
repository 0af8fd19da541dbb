from cymem.cymem cimport Pool

from .system cimport TransitionSystem
from .weights cimport Weights, feat_t


cdef class Workspace:
    # Scratch memory of one search: per depth level a state, scores and
    # validity; never shared between threads.
    cdef Pool mem
    cdef readonly TransitionSystem system
    cdef readonly int depth
    cdef int nr_class
    cdef size_t state_size
    cdef char* states
    cdef double* scores
    cdef int* valid
    cdef int* scratch_paths
    cdef feat_t* feats
    # Results of lookahead_first(), per first action a:
    cdef double* values      # best backed-up leaf score (-inf if invalid)
    cdef int* paths          # [a * (depth + 1) + k]: the best action path
    cdef int* path_lens

    cdef inline void* state_at(self, int level) noexcept nogil:
        return self.states + level * self.state_size



cdef int lookahead_first(Workspace ws, Weights W, const void* state) noexcept nogil
cdef int decode(Workspace ws, Weights W, void* state, int* actions, int max_actions) noexcept nogil
