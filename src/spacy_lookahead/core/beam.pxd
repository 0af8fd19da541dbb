from cymem.cymem cimport Pool

from .system cimport TransitionSystem
from .weights cimport Weights, feat_t


cdef class Beam:
    """Beam search (Huang et al. 2012, Algorithm 7) over any TransitionSystem.

    API (all cdef methods except reset() run without the GIL):
      reset(start, max_steps)  copy the start state into item 0 of step 0
                               (allocates; needs the GIL): reserve(max_steps),
                               then restart(start).
      reserve(max_steps)       room for derivations of max_steps actions (GIL);
      restart(start)           then, without the GIL, a new search from start.
      advance(W)               one step: BEST_k of all one-action extensions
                               of the current items; a final item is carried
                               over unchanged (action -1), so derivations of
                               different lengths compete on their scores.
                               Returns 0 if every item was already final.
      search(W)                advance() until every item is final; returns
                               the number of steps (= the last lattice row).
      Lattice row t (0 <= t <= step) holds size_at(t) items sorted by score,
      best first (ties: earlier parent, then lower action): parent_at(t, j)
      (index in row t - 1), action_at(t, j) (-1 = carried final item) and
      score_at(t, j) (w . Phi of the prefix). Items of a row are unique
      action prefixes. path(t, j, out) writes item j's actions (no -1s) from
      the start and returns their number. state(j) is item j's current state.
    Top-n search: after search(), row `step` is the n-best list, sorted.
    """
    cdef Pool mem
    cdef readonly TransitionSystem system
    cdef readonly int width
    cdef readonly int nr_class
    cdef readonly size_t state_size
    cdef readonly int step
    cdef readonly int max_steps
    cdef int size
    cdef char* states
    cdef char* next_states
    # lattice: row t at [t * width, (t + 1) * width)
    cdef int* parents
    cdef int* actions
    cdef double* scores
    cdef int* sizes
    # scratch of advance()
    cdef double* action_scores
    cdef int* valid
    cdef feat_t* feats
    cdef void* cache           # the system's score cache (cache_size bytes)
    cdef double* top_scores
    cdef int* top_parents
    cdef int* top_actions

    cdef void _push(self, int* n, double score, int parent, int action) noexcept nogil
    cdef int reset(self, const void* start, int max_steps) except -1
    cdef int reserve(self, int max_steps) except -1
    cdef void restart(self, const void* start) noexcept nogil
    cdef int advance(self, Weights W) noexcept nogil
    cdef int search(self, Weights W) noexcept nogil
    cdef bint is_done(self) noexcept nogil
    cdef int path(self, int t, int j, int* out) noexcept nogil

    cdef inline void* state(self, int j) noexcept nogil:
        return self.states + j * self.state_size

    cdef inline int size_at(self, int t) noexcept nogil:
        return self.sizes[t]

    cdef inline int parent_at(self, int t, int j) noexcept nogil:
        return self.parents[t * self.width + j]

    cdef inline int action_at(self, int t, int j) noexcept nogil:
        return self.actions[t * self.width + j]

    cdef inline double score_at(self, int t, int j) noexcept nogil:
        return self.scores[t * self.width + j]


cdef size_t padded_size(size_t state_size) noexcept nogil
cdef Beam beam_for(Beam beam, TransitionSystem system, size_t state_size, int width)
