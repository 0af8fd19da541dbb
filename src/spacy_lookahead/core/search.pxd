from libc.stdint cimport int64_t
from cymem.cymem cimport Pool

from .system cimport TransitionSystem
from .weights cimport Weights, feat_t


cdef enum:
    MAX_FAMILIES = 16  # the most action families (TransitionSystem.n_action_families)


cdef struct Replay:
    # Scratch of a replay of actions from a given state, outside any search:
    # the state, and a row of scores and validity of its actions. Each
    # Replay has one owner and is written by it alone (replay_in allocates
    # one in the owner's Pool): a Workspace's, by the updates that replay a
    # path and are done with it when they return (learn.add_path,
    # sapo.path_score); a topn.Chain's, whose state it hands out
    # (Chain.state_after) for its caller to read until the next call.
    char* state
    double* scores
    int* valid


cdef class Workspace:
    """Scratch memory of one search; never shared between threads. Who owns
    which part:
      levels 0..depth (state_at, scores, valid, scratch_paths): the lookahead
        search (lookahead_first) only;
      replay: the path replays of the updates (see Replay);
      feats, cache: whoever is scoring or extracting right now (never kept
        across calls, except the system's own cache, see TransitionSystem);
      values, paths, path_lens: the results of the last lookahead_first();
      dp_*: the lookahead of a first-order system at depth >= 2 (lookahead_first
        only): in D + 1 slots, the action scores and validity of the state
        after each previous action p at one step of the derivation (kept for
        the next decisions, see `step`); per level 1..D, the best
        continuation's value and its first action;
      step: set by whoever searches the decisions of one derivation in
        order (decode, train_sequence): the actions taken before the state
        searched now, -1 where unknown (no DP rows are kept then). They
        call start_derivation() first;
      prefix, root_*, pruning, level1_of, kept_*: branch-and-bound
        (lookahead_first only);
      hint, carry_from: set by decode between its decisions, read by
        lookahead_first."""
    cdef Pool mem
    cdef readonly TransitionSystem system
    cdef readonly int depth
    cdef int nr_class
    cdef readonly size_t state_size
    cdef char* states          # depth + 1 levels
    cdef double* scores        # [level * nr_class + a]
    cdef int* valid            # [level * nr_class + a]
    cdef int* scratch_paths
    cdef Replay replay
    cdef feat_t* feats         # room for max_feats features
    cdef void* cache           # the system's score cache (cache_size bytes)
    # Results of lookahead_first(), per first action a:
    cdef double* values      # best backed-up leaf score (-inf if invalid)
    cdef int* paths          # [a * (depth + 1) + k]: the best action path
    cdef int* path_lens
    cdef bint dp                # first-order system, depth >= 2: lookahead by DP
    cdef char* dp_base          # one state: a level's base (l - 1 zero actions)
    cdef char* dp_state         # one state: a level's base plus its previous action
    cdef double* dp_scores      # [(slot * T + p) * T + b], -inf: b is not valid
    cdef int* dp_valid          # [b]: scratch of one state's validity
    cdef bint* dp_final         # [slot * T + p]: the state after p is final
    cdef long* dp_key           # [slot]: the step after the previous action (-1: none)
    cdef int64_t* dp_version    # [slot]: the weights' version the rows were made with
    cdef const void** dp_weights  # [slot]: ... and the weights
    cdef double* dp_best        # [l * T + p], l = 1 .. D + 1 (level D + 1: zeros)
    cdef int* dp_arg            # [l * T + p]: first action of the best continuation, -1: none
    cdef public long step
    # Branch-and-bound lookahead (depth >= 1; see _dp_pays for first-order systems)
    cdef public bint bnb
    cdef bint pruning           # a root value is known: prune what cannot beat it
    cdef double* prefix         # [level]: the score of the action taken at each level
    cdef double* children_bound # [level]: upper_after of the state there (+inf: none)
    cdef bint* children_known   # [level]: children_bound is made for the state there
    cdef double* group_bound    # [(level * groups + g) * 2 + steps - 1]: upper_group there
    cdef bint* group_known      # the same: group_bound is computed
    cdef double* family_bound   # [((level * groups + g) * 2 + steps - 1) * families + F]:
                                #   group_bound by action family (upper_group_families;
                                #   made at depth >= 2 only, where the search reads it)
    cdef double* path_bound     # [level * groups + g]: _path_bound there
    cdef bint* path_known       # the same: path_bound is computed
    cdef int* action_group      # [level * nr_class + a]: a's sibling group (_losing_groups)
    cdef double root_best       # the best root value so far (handicap applied)
    cdef int root_best_a        # its first action
    cdef int cur_first          # the first action being evaluated
    cdef int* hint              # decode's: the previous decision's best path after its
    cdef int hint_len           #   first action (a first root value to beat), 0: none
    cdef int level1_of          # the root action whose child's group bounds level 1 holds
    cdef double* kept_bound     # [a * groups * 2 + k]: the group bounds of root action a's
    cdef bint* kept_known       #   child after its search (_keep_child_bounds)
    cdef double* kept_family    # [(a * groups * 2 + k) * families + F]: ... by family
    cdef int carry_from         # decode's: the action taken, whose kept bounds are the
                                #   next root's (-1: none)

    cdef inline void* state_at(self, int level) noexcept nogil:
        return self.states + level * self.state_size

    cdef inline void start_derivation(self) noexcept nogil:
        """A new derivation is searched from its step 0: rows kept from
        another one do not apply."""
        cdef int k
        self.step = 0
        self.hint_len = 0
        self.carry_from = -1
        if self.dp:
            for k in range(self.depth + 1):
                self.dp_key[k] = -1


cdef Replay replay_in(Pool mem, size_t state_size, int nr_class) except *
cdef Workspace workspace_for(Workspace ws, TransitionSystem system, size_t state_size, int depth)
cdef int lookahead_first(Workspace ws, Weights W, const void* state, int favoured=*,
                         double handicap=*) noexcept nogil
cdef int decode(Workspace ws, Weights W, void* state, int* actions, int max_actions) noexcept nogil
