from .weights cimport Weights, feat_t


cdef class TransitionSystem:
    """What a task tells the search engine. A state is a flat C struct of
    `state_size` bytes (copied with copy_state, in C: search never calls
    Python). The
    score of action a in state S is w . phi(S, a), with phi(S, a) the state's
    features conjoined with a, so one pass scores every action."""
    cdef readonly int nr_class
    cdef readonly int max_feats
    # Bytes of scratch score() may keep between its calls within one search
    # (a cache of partial scores): each Workspace and Beam owns such a buffer,
    # zeroed when allocated, so that it is never shared between searches or
    # threads. 0: the system keeps nothing.
    cdef readonly size_t cache_size
    cdef readonly size_t state_size
    # True when w . phi(S, a) depends only on the step and the previous
    # action (a linear chain): top-n search can then be exact (A*, topn).
    cdef readonly bint first_order
    # A first-order system whose scores and validity split into a part of the
    # step and a part of the previous action p (-1: none), the same at every
    # step: score(state at step t after p)[c] = emission(t)[c] +
    # transition(p)[c], bit for bit, -inf where invalid. The marginals then
    # factor the lattice (an exp per entry of the C x C transition matrix
    # once per doc, not per step).
    cdef readonly bint homogeneous

    cdef bint is_final(self, const void* state) noexcept nogil
    cdef int set_valid(self, int* is_valid, const void* state) noexcept nogil
    cdef void apply(self, void* state, int clas) noexcept nogil
    cdef void copy_state(self, void* dst, const void* src, size_t size) noexcept nogil
    cdef int extract(self, feat_t* feats, const void* state) noexcept nogil
    cdef void score(self, double* scores, const void* state, Weights W, feat_t* feats,
                    void* cache) noexcept nogil
    cdef double upper(self, const void* state, Weights W, feat_t* feats,
                      void* cache) noexcept nogil
    cdef bint upper_is_best_score(self) noexcept nogil
    # True when upper_after() is implemented (branch-and-bound two steps ahead)
    cdef readonly bint bounds_two_steps
    cdef double upper_after(self, const void* state, Weights W, feat_t* feats,
                            void* cache, double enough=*) noexcept nogil
    # Groups of sibling actions that share bounds (upper_group); 0: none
    cdef readonly int n_sibling_groups
    cdef int sibling_group(self, const void* state, int action) noexcept nogil
    cdef double upper_group(self, const void* state, int group, int steps, Weights W,
                            feat_t* feats, void* cache) noexcept nogil
    # Families of a state's actions (< n_action_families) whose bounds
    # upper_group_families gives apart; 0: none (only upper_group's)
    cdef readonly int n_action_families
    cdef int action_family(self, const void* state, int action) noexcept nogil
    cdef double upper_group_families(self, const void* state, int group, int steps, Weights W,
                                     feat_t* feats, void* cache, double* by_family) noexcept nogil
    cdef int oracle(self, const void* state) noexcept nogil
    cdef void emission(self, double* scores, const void* state, Weights W,
                       feat_t* feats) noexcept nogil
    cdef void transition(self, double* scores, int prev, Weights W, feat_t* feats) noexcept nogil
    # homogeneous systems whose history starts again at some steps (a tagging
    # doc's sentence starts, Instance.breaks): whether the step of `state`
    # is one, where every previous action's transition is transition(-1)
    cdef bint history_restarts(self, const void* state) noexcept nogil
    # True where history_restarts is implemented (else a doc with breaks is
    # summed row by row)
    cdef readonly bint factors_across_breaks


cdef inline double partial_bound(const double* row, int nr_class, Weights W, const feat_t* feats,
                                 int n_feats) noexcept nogil:
    """An upper bound of max over a of (row[a] + w . phi_rest(a)), for a
    system that scores a cached partial row and then adds the features
    `feats`: the row's best plus each feature's largest weight, added in the
    order the score adds them (floating-point addition is monotone, so the
    bound holds for the rounded sums too)."""
    cdef double bound = row[0]
    cdef int a, i
    for a in range(1, nr_class):
        if row[a] > bound:
            bound = row[a]
    for i in range(n_feats):
        bound += W.row_max(feats[i])
    return bound
