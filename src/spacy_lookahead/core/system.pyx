"""The transition-system interface the search engine runs on.

Tagging, arc-standard parsing, ... subclass it in `spacy_lookahead.systems`
and override the cdef methods; the engine (`search`, `learn`) only ever
calls these, with the GIL released.
"""
from libc.math cimport INFINITY
from libc.string cimport memcpy, memset

from .weights cimport Weights, feat_t


cdef class TransitionSystem:
    cdef bint is_final(self, const void* state) noexcept nogil:
        return True

    cdef int set_valid(self, int* is_valid, const void* state) noexcept nogil:
        """Fill is_valid[0:nr_class] with 0/1; return the number valid."""
        cdef int i
        for i in range(self.nr_class):
            is_valid[i] = 1
        return self.nr_class

    cdef void apply(self, void* state, int clas) noexcept nogil:
        pass

    cdef void copy_state(self, void* dst, const void* src, size_t size) noexcept nogil:
        """Copy a state of `size` bytes (the instance's state_size). A system
        whose states are mostly unused room (a parser's stack has room for
        every word) copies only the used part, so that a copy costs what
        the state holds, not the length of the doc."""
        memcpy(dst, src, size)

    cdef int extract(self, feat_t* feats, const void* state) noexcept nogil:
        """Write the state's features (at most max_feats); return their number."""
        return 0

    cdef void score(self, double* scores, const void* state, Weights W, feat_t* feats,
                    void* cache) noexcept nogil:
        """scores[a] = w . phi(state, a) for every class; feats: room for
        max_feats features; cache: the caller's cache_size bytes. Systems may
        override this to reuse partial scores (incremental scoring); it must
        equal extract() followed by Weights.dot()."""
        memset(scores, 0, self.nr_class * sizeof(double))
        cdef int n = self.extract(feats, state)
        W.dot(scores, feats, n)

    cdef double upper(self, const void* state, Weights W, feat_t* feats,
                      void* cache) noexcept nogil:
        """An upper bound of max over a of score(state, a), for exact
        branch-and-bound lookahead: each feature's largest class weight
        (Weights.row_max), summed in the order score() sums the features, so
        that it bounds score()'s own rounded sums too (floating-point addition
        is monotone). Systems may override it with a tighter or cheaper bound,
        computed the same way."""
        cdef int n = self.extract(feats, state), i
        cdef double bound = 0.0
        for i in range(n):
            bound += W.row_max(feats[i])
        return bound

    cdef bint upper_is_best_score(self) noexcept nogil:
        """Whether upper() is the best valid action's score itself (a system
        whose scoring is as cheap as a bound): the search then scores the
        state where it keeps the scores, once, instead of calling upper()."""
        return False

    cdef double upper_after(self, const void* state, Weights W, feat_t* feats,
                            void* cache, double enough=INFINITY) noexcept nogil:
        """An upper bound of upper(child) over the children of a non-final
        state (0 for a final child, whose search value is 0): lets
        branch-and-bound skip an action two steps ahead. Only called where
        bounds_two_steps is set. A system may stop early and return +inf
        (no bound) once it knows its bound is at least `enough`: the caller
        then has no use for it."""
        return INFINITY

    cdef int sibling_group(self, const void* state, int action) noexcept nogil:
        """The group (< n_sibling_groups) of actions whose children share
        upper_group() bounds, -1 for none."""
        return -1

    cdef double upper_group(self, const void* state, int group, int steps, Weights W,
                            feat_t* feats, void* cache) noexcept nogil:
        """For every action a of the group, an upper bound of the best action
        score `steps` (>= 1) actions below it: of child_a (steps 1), of every
        child of child_a (steps 2), and so on; 0 for a final state (its
        search value is 0). +inf: no bound."""
        return INFINITY

    cdef int action_family(self, const void* state, int action) noexcept nogil:
        """The family (< n_action_families) of an action of the state."""
        return 0

    cdef double upper_group_families(self, const void* state, int group, int steps, Weights W,
                                     feat_t* feats, void* cache, double* by_family) noexcept nogil:
        """upper_group(), returned, and the same bound by family: by_family[F]
        bounds, for every action a of the group, the best action score
        `steps` actions below a on the paths whose action after a (at a's
        child) is of family F (action_family). -inf only where no child of
        the group has a valid action of family F. Where the children are
        final, 0 for family 0 and -inf for the others; where they have no
        valid action (stuck), +inf for every F (upper_group's value may then
        be finite). A path's value below a is then bounded by the largest
        by_family[F] (steps 1) + by_family[F] (steps 2): tighter than the
        two maxima added, as both steps go through the same child action.
        This default gives upper_group's bound for every family (looser,
        and sound).
        """
        cdef double bound = self.upper_group(state, group, steps, W, feats, cache)
        cdef int F
        for F in range(self.n_action_families):
            by_family[F] = bound
        return bound

    cdef int oracle(self, const void* state) noexcept nogil:
        """The gold action in this state, or -1 if the gold is unknown."""
        return -1

    cdef void emission(self, double* scores, const void* state, Weights W,
                       feat_t* feats) noexcept nogil:
        """homogeneous systems: the scores of the state's step that do not
        depend on the previous action (-inf where the step rules an action out)."""
        pass

    cdef void transition(self, double* scores, int prev, Weights W, feat_t* feats) noexcept nogil:
        """homogeneous systems: the scores of the actions after action `prev`
        (-1: at the first step) that do not depend on the step (-inf where
        not allowed after it)."""
        pass

    cdef bint history_restarts(self, const void* state) noexcept nogil:
        """homogeneous systems with Instance.breaks: whether the step of
        `state` starts the history again (its transitions are those of the
        first step, transition(-1), whatever action came before)."""
        return False

    # --- Python: the docs as the engine sees them ---------------------------
    def instance(self, doc_input, gold=None):
        """The `core.instance.Instance` of one doc (its inputs as the
        system's docs take them; gold for the oracle while training)."""
        raise NotImplementedError(f"{type(self).__name__} does not build instances")

    def instances(self, list inputs, golds=None):
        """Instances of a batch of docs, for the learners and decoders."""
        from .instance import make_instances
        return make_instances(self.instance, inputs, golds)
