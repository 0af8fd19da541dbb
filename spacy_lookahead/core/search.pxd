from cymem.cymem cimport Pool

from .system cimport TransitionSystem
from .weights cimport Weights, feat_t


cdef class Workspace:
    """Scratch memory of one search; never shared between threads. Who owns
    which part:
      levels 0..depth (state_at, scores, valid, scratch_paths): the lookahead
        search (lookahead_first) only;
      replay_state, replay_scores, replay_valid: a replay of actions from a
        given state outside the search: learn.add_path, sapo.path_score and
        topn.Chain (state_after, row). One replay at a time: a caller holding
        the replay state (Chain.state_after) finishes with it before it
        starts another replay;
      feats, cache: whoever is scoring or extracting right now (never kept
        across calls, except the system's own cache, see TransitionSystem);
      values, paths, path_lens: the results of the last lookahead_first();
      dp_*: the lookahead of a first-order system at depth >= 2 (lookahead_first
        only): per level 1..D, a base state, and per previous action p the
        state's action scores and validity, the best continuation's value
        and its first action;
      prefix, root_*, pruning: branch-and-bound (lookahead_first only)."""
    cdef Pool mem
    cdef readonly TransitionSystem system
    cdef readonly int depth
    cdef int nr_class
    cdef readonly size_t state_size
    cdef char* states          # depth + 1 levels
    cdef double* scores        # [level * nr_class + a]
    cdef int* valid            # [level * nr_class + a]
    cdef int* scratch_paths
    cdef char* replay_state
    cdef double* replay_scores
    cdef int* replay_valid
    cdef feat_t* feats         # room for max_feats features
    cdef void* cache           # the system's score cache (cache_size bytes)
    # Results of lookahead_first(), per first action a:
    cdef double* values      # best backed-up leaf score (-inf if invalid)
    cdef int* paths          # [a * (depth + 1) + k]: the best action path
    cdef int* path_lens
    cdef bint dp                # first-order system, depth >= 2: lookahead by DP
    cdef char* dp_base          # D + 1 states: level l's base (l - 1 zero actions)
    cdef char* dp_state         # one state: a level's base plus its previous action
    cdef double* dp_scores      # [(l * T + p) * T + b]
    cdef int* dp_valid          # [(l * T + p) * T + b]
    cdef double* dp_best        # [l * T + p]
    cdef int* dp_arg            # [l * T + p]: first action of the best continuation, -1: none
    # Branch-and-bound lookahead (depth >= 1; see _dp_pays for first-order systems)
    cdef public bint bnb
    cdef bint pruning           # a root value is known: prune what cannot beat it
    cdef double* prefix         # [level]: the score of the action taken at each level
    cdef double* children_bound # [level]: upper_after of the state there (+inf: none)
    cdef double* group_bound    # [(level * groups + g) * 2 + steps - 1]: upper_group there
    cdef bint* group_known      # the same: group_bound is computed
    cdef double root_best       # the best root value so far (handicap applied)
    cdef int root_best_a        # its first action
    cdef int cur_first          # the first action being evaluated

    cdef inline void* state_at(self, int level) noexcept nogil:
        return self.states + level * self.state_size

    cdef inline void* dp_base_at(self, int level) noexcept nogil:
        return self.dp_base + level * self.state_size



cdef int lookahead_first(Workspace ws, Weights W, const void* state, int favoured=*,
                         double handicap=*) noexcept nogil
cdef int decode(Workspace ws, Weights W, void* state, int* actions, int max_actions) noexcept nogil
