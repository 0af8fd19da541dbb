"""Learners over the search engine: the margin perceptron on lookahead scores
(Tsuruoka et al. 2011, Figure 3)."""

from .search cimport Workspace, lookahead_first
from .system cimport TransitionSystem
from .weights cimport Weights


cdef void add_path(Workspace ws, Weights W, const void* state, const int* path,
                   int n, double delta) except *:
    """w += delta * phi(path): replay the actions from `state`, adding the
    features of every (state, action) on the way."""
    cdef TransitionSystem sys = ws.system
    cdef void* s = ws.replay.state
    cdef int k, n_feats
    sys.copy_state(s, state, ws.state_size)
    for k in range(n):
        n_feats = sys.extract(ws.feats, s)
        W.update_all(ws.feats, n_feats, path[k], delta)
        sys.apply(s, path[k])


cdef int update_weight(Workspace ws, Weights W, const void* state, int gold,
                       double margin) except -1:
    """UPDATEWEIGHT(C, D, S0, a_c) of Figure 3. The correct action's backed-up
    score is lowered by the margin C; if another action then scores higher,
    w += phi(S*_c) - phi(S*), where S*_c and S* are the best leaves below the
    correct and the winning action. Returns 1 if it updated."""
    cdef int D = ws.depth
    if gold < 0:
        lookahead_first(ws, W, state)
        return 0
    # the correct action's value with the margin taken off decides (first in
    # class order on ties); its path and the winner's are exact
    cdef int best_a = lookahead_first(ws, W, state, gold, margin)
    if ws.path_lens[gold] == 0 or best_a == gold:
        return 0
    # Both paths are read before either update is applied.
    add_path(ws, W, state, &ws.paths[gold * (D + 1)], ws.path_lens[gold], 1.0)
    add_path(ws, W, state, &ws.paths[best_a * (D + 1)], ws.path_lens[best_a], -1.0)
    return 1


cdef int train_sequence(Workspace ws, Weights W, void* state, double margin,
                        int* actions, int max_actions, int* n_decisions) except -1:
    """One training pass over a sequence of decisions: at each state on the
    gold path, UPDATEWEIGHT with the oracle's action, then take that action.
    Where the gold is unknown (missing annotation) the model's own best action
    is taken and nothing is learnt. The caller ticks the averaging clock
    (once per doc, see core.learners)."""
    cdef TransitionSystem sys = ws.system
    cdef int n = 0, gold, mistakes = 0
    n_decisions[0] = 0
    ws.start_derivation()
    while n < max_actions and not sys.is_final(state):
        ws.step = n
        gold = sys.oracle(state)
        if gold >= 0:
            mistakes += update_weight(ws, W, state, gold, margin)
            n_decisions[0] += 1
            actions[n] = gold
        else:
            actions[n] = lookahead_first(ws, W, state)
            if actions[n] < 0:
                break
        sys.apply(state, actions[n])
        n += 1
    ws.step = -1
    return mistakes
