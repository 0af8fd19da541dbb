"""Search over a TransitionSystem: depth-D lookahead (Tsuruoka et al. 2011,
Figure 2). Depth 0 is plain greedy search.

Exhaustive search costs O(T^(D+1)) scorings per decision. Two exact
shortcuts, with the same decisions (the same sums in the same order, the
same paths, first in class order on ties):

* first-order systems (the scores of a state depend only on its step and the
  previous action: the tagging system without label trigrams) at depth >= 2:
  the best continuation of every first action is a Viterbi-style max over
  the next D steps, O(D T^2) additions; its scorings of T actions are
  kept along a derivation, so that a decision makes only the T of its
  deepest step (used where it is the faster of the two: _dp_pays);
* otherwise: branch-and-bound (at depth 1 it skips most first actions' T
  scores).
  Once one first action has been searched, an action whose last step leads
  to a state s is skipped when the path's score plus the system's admissible
  bound of s's best action score (TransitionSystem.upper) cannot beat the
  best root value found; an action with two steps below it, when its
  child's best action score plus the system's bound for any grandchild
  cannot (TransitionSystem.upper_after, where the system has one; made of
  the child's own group bounds where it groups sibling actions, so that
  the child's search reuses them). A group of sibling actions is skipped
  at once where its shared bounds cannot beat it. Where the system splits
  the child's actions into families (TransitionSystem.upper_group_families),
  a bound two steps down takes the child's step and the grandchild's
  through the same family (the largest one-step plus two-step bound of a
  family), not the two largest added, which may come from different
  families: tighter, at the same cost. The most promising first action (the
  best-scoring one) is searched first; before any search, a first root
  value comes from a path's own value: the greedy path from that action,
  and in decode() at depth >= 2 the rest of the previous decision's best
  path (its hint), often the better (a lower bound of the best value, so
  the decisions are the same); there the root also starts with the group
  bounds it got as that decision's child (the same state and weights: the
  same values). Where upper() is the best valid score itself
  (upper_is_best_score), a child one step from its end is scored once, in
  the row its search then reads.

With a favoured action and a handicap (the margin perceptron's gold action
and margin C), the decision is the argmax of the values with the handicap
subtracted from the favoured one's; the favoured action is searched first
and in full, so that its value and path are exact. Under branch-and-bound
the values and paths of the other first actions that lose are not computed
exactly (a pruned one has path length 0)."""
from libc.math cimport INFINITY
from libc.stdint cimport uint64_t
from libc.string cimport memcmp, memcpy
from cymem.cymem cimport Pool

from .system cimport TransitionSystem
from .weights cimport Weights, feat_t
from .scratch cimport scratch_pool


cdef class Workspace:
    def __init__(self, TransitionSystem system, int depth, size_t state_size=0):
        if depth < 0:
            raise ValueError(f"lookahead depth must be >= 0, got {depth}")
        if not 0 <= system.n_action_families <= MAX_FAMILIES:
            raise ValueError(f"{type(system).__name__} has {system.n_action_families} action "
                             f"families; the search takes at most {MAX_FAMILIES}")
        self.mem = scratch_pool()  # (one thread's: core/scratch.pxd)
        self.system = system
        self.depth = depth
        self.nr_class = system.nr_class
        self.state_size = state_size or system.state_size
        cdef int levels = depth + 1
        self.states = <char*>self.mem.alloc(levels, self.state_size)
        self.scores = <double*>self.mem.alloc(levels * self.nr_class, sizeof(double))
        self.valid = <int*>self.mem.alloc(levels * self.nr_class, sizeof(int))
        # a path of up to depth + 1 actions per level (rows of depth + 2)
        self.scratch_paths = <int*>self.mem.alloc(levels * (depth + 2), sizeof(int))
        self.replay = replay_in(self.mem, self.state_size, self.nr_class)
        self.feats = <feat_t*>self.mem.alloc(max(1, system.max_feats), sizeof(feat_t))
        self.cache = self.mem.alloc(max(1, system.cache_size), 1)
        self.values = <double*>self.mem.alloc(self.nr_class, sizeof(double))
        self.paths = <int*>self.mem.alloc(self.nr_class * (depth + 1), sizeof(int))
        self.path_lens = <int*>self.mem.alloc(self.nr_class, sizeof(int))
        self.dp = system.first_order and depth >= 2
        self.bnb = depth >= 1
        self.prefix = <double*>self.mem.alloc(depth + 1, sizeof(double))
        self.children_bound = <double*>self.mem.alloc(depth + 2, sizeof(double))
        self.children_known = <bint*>self.mem.alloc(depth + 2, sizeof(bint))
        self.group_bound = <double*>self.mem.alloc(
            (depth + 1) * max(1, system.n_sibling_groups) * 2, sizeof(double))
        self.group_known = <bint*>self.mem.alloc(
            (depth + 1) * max(1, system.n_sibling_groups) * 2, sizeof(bint))
        cdef int NF = max(1, system.n_action_families)
        self.family_bound = <double*>self.mem.alloc(
            (depth + 1) * max(1, system.n_sibling_groups) * 2 * NF, sizeof(double))
        self.path_bound = <double*>self.mem.alloc(
            (depth + 1) * max(1, system.n_sibling_groups), sizeof(double))
        self.path_known = <bint*>self.mem.alloc(
            (depth + 1) * max(1, system.n_sibling_groups), sizeof(bint))
        self.action_group = <int*>self.mem.alloc(levels * self.nr_class, sizeof(int))
        self.hint = <int*>self.mem.alloc(depth + 1, sizeof(int))
        cdef int T = self.nr_class
        self.kept_bound = <double*>self.mem.alloc(
            T * max(1, system.n_sibling_groups) * 2, sizeof(double))
        self.kept_known = <bint*>self.mem.alloc(
            T * max(1, system.n_sibling_groups) * 2, sizeof(bint))
        self.kept_family = <double*>self.mem.alloc(
            T * max(1, system.n_sibling_groups) * 2 * NF, sizeof(double))
        self.level1_of = -1
        self.carry_from = -1
        self.step = -1
        if self.dp:
            self.dp_base = <char*>self.mem.alloc(1, self.state_size)
            self.dp_state = <char*>self.mem.alloc(1, self.state_size)
            self.dp_scores = <double*>self.mem.alloc((depth + 1) * T * T, sizeof(double))
            self.dp_valid = <int*>self.mem.alloc(T, sizeof(int))
            self.dp_final = <bint*>self.mem.alloc((depth + 1) * T, sizeof(bint))
            self.dp_key = <long*>self.mem.alloc(depth + 1, sizeof(long))
            self.dp_version = <int64_t*>self.mem.alloc(depth + 1, sizeof(int64_t))
            self.dp_weights = <const void**>self.mem.alloc(depth + 1, sizeof(void*))
            for k in range(depth + 1):
                self.dp_key[k] = -1
            self.dp_best = <double*>self.mem.alloc((depth + 2) * T, sizeof(double))
            self.dp_arg = <int*>self.mem.alloc((depth + 1) * T, sizeof(int))


cdef Replay replay_in(Pool mem, size_t state_size, int nr_class) except *:
    """A Replay for states of state_size bytes and nr_class actions, in mem
    (its owner's)."""
    cdef Replay r
    r.state = <char*>mem.alloc(1, state_size)
    r.scores = <double*>mem.alloc(nr_class, sizeof(double))
    r.valid = <int*>mem.alloc(nr_class, sizeof(int))
    return r


cdef Workspace workspace_for(Workspace ws, TransitionSystem system, size_t state_size, int depth):
    """ws if it fits states of state_size bytes of the system at this depth,
    else a new Workspace: one is reused over the docs of a batch."""
    if ws is None or ws.system is not system or ws.state_size != state_size or ws.depth != depth:
        ws = Workspace(system, depth, state_size)
    return ws


cdef double _search(Workspace ws, Weights W, int level, int d, int* best_path,
                    int* best_len, bint expanded=False) noexcept nogil:
    """SEARCH(d, S) of Figure 2 for the state at `level`, where a leaf's score
    w.phi(S) is summed incrementally along the path: returns the best score of
    the paths of (at most) d + 1 actions from here and writes that path. A
    final state is a leaf. expanded: the state's scores are already there."""
    cdef int* cand = &ws.scratch_paths[level * (ws.depth + 2)]
    cdef int cand_len = 0, a, k
    cdef double v, best = -INFINITY
    best_len[0] = 0
    if not expanded and not _expand(ws, W, level):
        return 0.0
    _enter_node(ws, W, level, d)
    cdef uint64_t losing = _losing_groups(ws, W, level, d)
    cdef const int* group = &ws.action_group[level * ws.nr_class]
    for a in range(ws.nr_class):
        if not ws.valid[level * ws.nr_class + a]:
            continue
        if losing and group[a] >= 0 and losing >> group[a] & 1:
            continue  # (as _action_value would find: -inf, no path)
        v = _action_value(ws, W, level, a, d, cand, &cand_len)
        if v > best:
            best = v
            for k in range(cand_len):
                best_path[k] = cand[k]
            best_len[0] = cand_len
    return best


cdef uint64_t _losing_groups(Workspace ws, Weights W, int level, int d) noexcept nogil:
    """The sibling groups at `level` (a bit each) whose every action
    _action_value would prune by the group's shared bound: the test of its
    best-scoring valid member, as addition is monotone (a lower score gives
    a sum no larger, which loses too). Writes each action's group to
    action_group. 0 where _action_value makes no group test, or with more
    than 64 groups."""
    cdef int T = ws.nr_class, a, g, G = ws.system.n_sibling_groups
    cdef const int* ok = &ws.valid[level * T]
    cdef const double* row = &ws.scores[level * T]
    cdef int* group = &ws.action_group[level * T]
    cdef uint64_t present = 0, losing = 0
    cdef double top[64]
    if not ((d == 1 or d == 2) and ws.pruning and 0 < G <= 64):
        return 0
    for a in range(T):
        if not ok[a]:
            continue
        g = ws.system.sibling_group(ws.state_at(level), a)
        group[a] = g
        if g < 0:
            continue
        if not present >> g & 1:
            present |= <uint64_t>1 << g
            top[g] = row[a]
        elif row[a] > top[g]:
            top[g] = row[a]
    for g in range(G):
        if not present >> g & 1:
            continue
        # _action_value's test
        if _bound_loses(ws, level, top[g] + _path_bound(ws, W, level, g)
                        if d == 2 else top[g] + _group_bound(ws, W, level, g, 1)):
            losing |= <uint64_t>1 << g
    return losing


cdef void _enter_node(Workspace ws, Weights W, int level, int d) noexcept nogil:
    """Reset the node's shared bounds: one for every child (_children_bound),
    before each child's own, and per group of sibling actions one for their
    children and one for their grandchildren (upper_group, computed when
    first needed, with their parts by action family and their path bound:
    _forget_groups). Where _cannot_win_in_two has made them for this state
    (children_known), they are kept."""
    if not ws.children_known[level]:
        _forget_groups(ws, level)
    if d == 1 and ws.pruning and ws.system.bounds_two_steps:
        if not ws.children_known[level]:
            ws.children_bound[level] = _children_bound(ws, W, level, INFINITY)
    else:
        ws.children_bound[level] = INFINITY
    ws.children_known[level] = False


cdef inline void _forget_groups(Workspace ws, int level) noexcept nogil:
    """A new state at `level`: none of its group bounds is known yet."""
    cdef int k
    for k in range(ws.system.n_sibling_groups * 2):
        ws.group_known[level * ws.system.n_sibling_groups * 2 + k] = False
    for k in range(ws.system.n_sibling_groups):
        ws.path_known[level * ws.system.n_sibling_groups + k] = False
    if level == 1:
        ws.level1_of = ws.cur_first  # (the child of the root action being searched)


cdef void _keep_child_bounds(Workspace ws, int a) noexcept nogil:
    """After root action a's search: the group bounds its child (level 1)
    got, kept for decode's next decision, whose root that child is where a
    is taken (_carry_bounds). None where a's child was not searched."""
    cdef int G2 = ws.system.n_sibling_groups * 2, k
    cdef int NF = ws.system.n_action_families
    for k in range(G2):
        ws.kept_known[a * G2 + k] = ws.level1_of == a and ws.group_known[G2 + k]
        ws.kept_bound[a * G2 + k] = ws.group_bound[G2 + k]
    if NF and ws.level1_of == a:
        memcpy(&ws.kept_family[a * G2 * NF], &ws.family_bound[G2 * NF], G2 * NF * sizeof(double))


# For tests (check_carried_bounds): _carry_bounds also computes each bound
# it carries afresh, and counts those that differ
cdef bint _check_carried = False
cdef long _carried_compared = 0, _carried_differ = 0


def check_carried_bounds(bint on):
    """For tests: while on, each group bound decode carries to a root is
    also computed there afresh and compared. Returns (compared, differing)
    since the last call (one thread at a time)."""
    global _check_carried, _carried_compared, _carried_differ
    counts = (_carried_compared, _carried_differ)
    _check_carried, _carried_compared, _carried_differ = on, 0, 0
    return counts


cdef void _carry_bounds(Workspace ws, Weights W) noexcept nogil:
    """The root's group bounds that its search as the previous decision's
    child made (the same state and weights: the same values), if any."""
    global _carried_compared, _carried_differ
    cdef int G2 = ws.system.n_sibling_groups * 2, k, a = ws.carry_from, F
    cdef int NF = ws.system.n_action_families
    cdef double fresh[MAX_FAMILIES]
    ws.carry_from = -1
    if a < 0:
        return
    for k in range(G2):
        if ws.kept_known[a * G2 + k]:
            ws.group_known[k] = True
            ws.group_bound[k] = ws.kept_bound[a * G2 + k]
            for F in range(NF):
                ws.family_bound[k * NF + F] = ws.kept_family[(a * G2 + k) * NF + F]
            if _check_carried:
                _carried_compared += 1
                if not _group_valid(ws, k // 2) or ws.system.upper_group_families(
                        ws.state_at(0), k // 2, k % 2 + 1, W, ws.feats, ws.cache,
                        fresh) != ws.group_bound[k]:
                    _carried_differ += 1
                elif NF and memcmp(fresh, &ws.family_bound[k * NF], NF * sizeof(double)):
                    _carried_differ += 1


cdef bint _group_valid(Workspace ws, int g) noexcept nogil:
    """Whether a valid action of the root (expanded) is in sibling group g."""
    cdef int a
    for a in range(ws.nr_class):
        if ws.valid[a] and ws.system.sibling_group(ws.state_at(0), a) == g:
            return True
    return False


cdef double _children_bound(Workspace ws, Weights W, int level, double enough) noexcept nogil:
    """A bound of the best action score of every child of the (expanded)
    state at `level`: the system's upper_after, or where it groups sibling
    actions, the node's own one-step group bounds (then shared with its
    search) and upper() of each other valid child, in a scratch state one
    level down. +inf as soon as it reaches `enough` (no use to the caller)."""
    cdef int a, g
    cdef uint64_t seen = 0
    cdef double best = -INFINITY, bound
    if not ws.system.n_sibling_groups or ws.system.n_sibling_groups > 64 or level + 1 > ws.depth:
        return ws.system.upper_after(ws.state_at(level), W, ws.feats, ws.cache, enough)
    for a in range(ws.nr_class):
        g = _group_once(ws, level, a, &seen)
        if g == -2:
            continue
        bound = _child_bound(ws, W, level, a, g)
        if bound > best:
            best = bound
            if best >= enough:
                return INFINITY
    return best


cdef inline int _group_once(Workspace ws, int level, int a, uint64_t* seen) noexcept nogil:
    """Action a's sibling group at `level` (-1: none), or -2 where a is not
    valid or its group was met before (in seen, which this marks): each
    child's bound is then taken once."""
    cdef int g
    if not ws.valid[level * ws.nr_class + a]:
        return -2
    g = ws.system.sibling_group(ws.state_at(level), a)
    if g >= 0:
        if seen[0] & (<uint64_t>1 << g):
            return -2
        seen[0] |= <uint64_t>1 << g
    return g


cdef inline double _child_bound(Workspace ws, Weights W, int level, int a, int g) noexcept nogil:
    """A bound of the best action score of the child of action a (of sibling
    group g, -1: none) of the expanded state at `level`: the group's one-step
    bound, else upper() of the child, in a scratch state one level down (0
    where it is final: its search value)."""
    cdef void* child
    if g >= 0:
        return _group_bound(ws, W, level, g, 1)
    child = ws.state_at(level + 1)
    ws.system.copy_state(child, ws.state_at(level), ws.state_size)
    ws.system.apply(child, a)
    return 0.0 if ws.system.is_final(child) else ws.system.upper(child, W, ws.feats, ws.cache)


cdef double _children_path(Workspace ws, Weights W, int level, double best, double enough,
                           double* children) noexcept nogil:
    """For the (expanded) state at `level` (best: its best valid action
    score): a bound of its value two steps down (an action's score plus
    the best action score of its child), the largest over its valid
    actions of the action's score plus a bound of its child's best
    (_child_bound: per group of sibling actions, the group's best score
    plus its one-step bound, kept for the state's search), summed as
    _search sums them; children: the largest of those bounds of a child
    (_children_bound's value). Both +inf as soon as the first reaches
    `enough` (no use to the caller). Where the state's children are not
    bounded by group (_children_bound's upper_after): the state's best
    score plus children."""
    cdef int T = ws.nr_class, G = ws.system.n_sibling_groups, a, g
    cdef const int* ok = &ws.valid[level * T]
    cdef const double* row = &ws.scores[level * T]
    cdef const void* state = ws.state_at(level)
    cdef uint64_t present = 0, seen = 0
    cdef double top[64]
    cdef double path = -INFINITY, bound, largest = -INFINITY
    if not G or G > 64 or level + 1 > ws.depth:
        children[0] = _children_bound(ws, W, level, enough - best)
        return best + children[0]
    for a in range(T):  # each group's best score
        if ok[a]:
            g = ws.system.sibling_group(state, a)
            if g >= 0 and (not present >> g & 1 or row[a] > top[g]):
                present |= <uint64_t>1 << g
                top[g] = row[a]
    children[0] = INFINITY
    for a in range(T):
        g = _group_once(ws, level, a, &seen)
        if g == -2:
            continue
        bound = _child_bound(ws, W, level, a, g)
        if (top[g] if g >= 0 else row[a]) + bound > path:
            path = (top[g] if g >= 0 else row[a]) + bound
        if path >= enough:
            return INFINITY
        if bound > largest:
            largest = bound
    children[0] = largest
    return path


cdef double _group_bound(Workspace ws, Weights W, int level, int g, int steps) noexcept nogil:
    """upper_group of group g at the node at `level` (computed once per node),
    and where the system has action families, the same by family
    (family_bound)."""
    cdef int k = (level * ws.system.n_sibling_groups + g) * 2 + steps - 1
    cdef int NF
    if not ws.group_known[k]:
        NF = ws.system.n_action_families
        if NF and ws.depth >= 2:  # (read by _path_bound and _siblings_path only)
            ws.group_bound[k] = ws.system.upper_group_families(
                ws.state_at(level), g, steps, W, ws.feats, ws.cache, &ws.family_bound[k * NF])
        else:
            ws.group_bound[k] = ws.system.upper_group(ws.state_at(level), g, steps, W,
                                                      ws.feats, ws.cache)
        ws.group_known[k] = True
    return ws.group_bound[k]


cdef double _path_bound(Workspace ws, Weights W, int level, int g) noexcept nogil:
    """For every action a of group g at `level`: a bound of the value two
    steps below a (a's child's action score plus the best action score of
    the grandchild), summed as _search sums it: the two group bounds added
    (steps 1 and 2), or with action families, the largest sum of the two
    along one family of the child's action, which is tighter (computed
    once per node, as its bounds are)."""
    cdef int G = ws.system.n_sibling_groups, NF, F, k
    cdef const double* one
    cdef const double* two
    cdef double near, far, best = -INFINITY
    if ws.path_known[level * G + g]:
        return ws.path_bound[level * G + g]
    near = _group_bound(ws, W, level, g, 1)
    far = _group_bound(ws, W, level, g, 2)
    NF = ws.system.n_action_families
    if not NF:
        best = near + far
    else:
        k = (level * G + g) * 2
        one = &ws.family_bound[k * NF]
        two = &ws.family_bound[(k + 1) * NF]
        for F in range(NF):
            if one[F] > -INFINITY and one[F] + two[F] > best:
                best = one[F] + two[F]
        if best == -INFINITY:
            best = INFINITY
    ws.path_bound[level * G + g] = best
    ws.path_known[level * G + g] = True
    return best


cdef bint _expand(Workspace ws, Weights W, int level) noexcept nogil:
    """Score and validate every action of the state at `level`; False if the
    state is final."""
    cdef const void* state = ws.state_at(level)
    if ws.system.is_final(state):
        return False
    ws.system.score(&ws.scores[level * ws.nr_class], state, W, ws.feats, ws.cache)
    ws.system.set_valid(&ws.valid[level * ws.nr_class], state)
    return True


cdef double _action_value(Workspace ws, Weights W, int level, int a, int d, int* path,
                          int* path_len) noexcept nogil:
    """The score of action a at `level` plus that of the best d actions after
    it; writes the path (a first) and its length. Under pruning, an action
    whose bound cannot beat the root's best gives -inf and length 0."""
    cdef double v = ws.scores[level * ws.nr_class + a]
    cdef int sub_len = 0, g = -1
    cdef void* child
    path[0] = a
    if (d == 1 or d == 2) and ws.pruning and ws.system.n_sibling_groups:
        g = ws.system.sibling_group(ws.state_at(level), a)
        if g >= 0:
            # the bounds shared by a's siblings: its child's best score, and
            # two steps down, plus the grandchildren's
            if _bound_loses(ws, level, v + _path_bound(ws, W, level, g)
                            if d == 2 else v + _group_bound(ws, W, level, g, 1)):
                path_len[0] = 0
                return -INFINITY
    if d > 0:
        child = ws.state_at(level + 1)
        ws.system.copy_state(child, ws.state_at(level), ws.state_size)
        ws.system.apply(child, a)
        if d == 1 and ws.pruning and _bound_loses(ws, level, v + ws.children_bound[level]):
            path_len[0] = 0
            return -INFINITY
        if d == 1 and ws.pruning and ws.system.upper_is_best_score() and not ws.system.is_final(child):
            # upper(child) would score the child: score it where its search
            # reads the scores (once: a child that may win was scored twice)
            _expand(ws, W, level + 1)
            if _cannot_win_scored(ws, level, v):
                path_len[0] = 0
                return -INFINITY
            ws.prefix[level] = v
            v += _search(ws, W, level + 1, 0, &path[1], &sub_len, True)
            path_len[0] = 1 + sub_len
            return v
        if d == 1 and ws.pruning and _cannot_win(ws, W, level, v, child):
            path_len[0] = 0
            return -INFINITY
        if d == 2 and ws.pruning and ws.system.bounds_two_steps and not ws.system.is_final(child):
            _expand(ws, W, level + 1)
            ws.children_known[level + 1] = False
            _forget_groups(ws, level + 1)
            if _cannot_win_in_two(ws, W, level, v, g):
                path_len[0] = 0
                return -INFINITY
            ws.prefix[level] = v
            v += _search(ws, W, level + 1, d - 1, &path[1], &sub_len, True)
            path_len[0] = 1 + sub_len
            return v
        ws.prefix[level] = v
        v += _search(ws, W, level + 1, d - 1, &path[1], &sub_len)
    path_len[0] = 1 + sub_len
    return v


cdef bint _cannot_win_in_two(Workspace ws, Weights W, int level, double v, int g) noexcept nogil:
    """_cannot_win for an action (of sibling group g, -1: none) with two
    more steps below it: the child (at level + 1, expanded) is bounded by
    its valid action scores, each plus a bound of its own child's best
    action score: first the one the action's group of siblings shares
    (_siblings_path), then the child's own (_children_path)."""
    cdef double best = _best_valid_score(ws, level + 1), path
    if best == -INFINITY:
        return False  # stuck: let the search find its value (-inf)
    if g >= 0 and _bound_loses(ws, level, v + _siblings_path(ws, W, level, g, best)):
        return True
    # the child's children_bound is kept for its own search (_enter_node),
    # which needs the same; the bounds may stop (+inf) once they cannot
    # prune: enough is about where (any value is safe, it only saves time)
    if ws.system.n_action_families:
        path = _children_path(ws, W, level + 1, best, _headroom(ws, level, v),
                              &ws.children_bound[level + 1])
    else:  # (the taggers: every action's child has the same bound)
        ws.children_bound[level + 1] = _children_bound(ws, W, level + 1,
                                                       _headroom(ws, level, v + best))
        path = best + ws.children_bound[level + 1]
    if _bound_loses(ws, level, v + path):
        return True
    ws.children_known[level + 1] = True  # the child's search comes next
    return False


cdef double _siblings_path(Workspace ws, Weights W, int level, int g, double best) noexcept nogil:
    """A bound of the value below the child (at level + 1, expanded, best:
    its best valid action score) of an action of group g at `level`: its
    best score plus the group's two-step bound (_group_bound steps 2), or
    where the system has action families, the largest of the child's best
    score in a family plus that family's two-step bound."""
    cdef int T = ws.nr_class, NF = ws.system.n_action_families, b, F
    cdef const double* row = &ws.scores[(level + 1) * T]
    cdef const int* ok = &ws.valid[(level + 1) * T]
    cdef double far = _group_bound(ws, W, level, g, 2)
    cdef const double* two = &ws.family_bound[((level * ws.system.n_sibling_groups + g) * 2 + 1)
                                              * NF]
    cdef double top[MAX_FAMILIES]
    cdef double bound = -INFINITY
    if not NF:
        return best + far
    for F in range(NF):
        top[F] = -INFINITY
    for b in range(T):
        if ok[b]:
            F = ws.system.action_family(ws.state_at(level + 1), b)
            if row[b] > top[F]:
                top[F] = row[b]
    for F in range(NF):
        if top[F] > -INFINITY and top[F] + two[F] > bound:
            bound = top[F] + two[F]
    return bound


cdef bint _cannot_win_scored(Workspace ws, int level, double v) noexcept nogil:
    """_cannot_win for a child already expanded (at level + 1), where upper()
    is its best valid action score (upper_is_best_score): that score, from
    its row. A stuck child is left to its search (value -inf)."""
    cdef double best = _best_valid_score(ws, level + 1)
    return best > -INFINITY and _bound_loses(ws, level, v + best)


cdef inline double _best_valid_score(Workspace ws, int level) noexcept nogil:
    """The best score of a valid action of the (expanded) state at `level`,
    -inf where none is valid."""
    cdef int T = ws.nr_class, b
    cdef const double* row = &ws.scores[level * T]
    cdef const int* ok = &ws.valid[level * T]
    cdef double best = -INFINITY
    for b in range(T):
        if ok[b] and row[b] > best:
            best = row[b]
    return best


cdef bint _cannot_win(Workspace ws, Weights W, int level, double v, const void* child) noexcept nogil:
    """Whether every path through (the state at `level`, an action of score v,
    then one action from `child`) scores below the root's best (or equal, and
    later in class order): the path's root value with the child's best action
    score replaced by the system's bound, summed as _search sums it (the
    score at each level plus the value below it), is an upper bound of the
    computed value because floating-point addition is monotone."""
    cdef double bound = 0.0
    if not ws.system.is_final(child):
        bound = ws.system.upper(child, W, ws.feats, ws.cache)
    return _bound_loses(ws, level, v + bound)


cdef inline double _headroom(Workspace ws, int level, double partial) noexcept nogil:
    """About how much may still be added to `partial` (a value below the
    action at `level`) before _bound_loses fails: the root's best less the
    path's scores above (not rounded as _bound_loses rounds: an estimate)."""
    cdef double room = ws.root_best - partial
    cdef int k
    for k in range(level):
        room -= ws.prefix[k]
    return room


cdef inline bint _bound_loses(Workspace ws, int level, double bound) noexcept nogil:
    """Whether a bound of the value below the action at `level` (its score
    included), with the path's scores above added as _search adds them,
    cannot beat the root's best (or ties it later in class order)."""
    cdef int k
    for k in range(level - 1, -1, -1):
        bound = ws.prefix[k] + bound
    return bound < ws.root_best or (bound == ws.root_best and ws.cur_first > ws.root_best_a)


cdef void _continuations(Workspace ws, Weights W) noexcept nogil:
    """First-order lookahead: for each level l = D .. 1 and previous action p,
    dp_best[l, p] = SEARCH(D - l) from the state after p at level l, i.e. the
    max over valid b of score(l, p, b) + dp_best[l + 1, b] (0 past level D
    or at a final state; -inf if no action is valid), and dp_arg its first b."""
    cdef int D = ws.depth, T = ws.nr_class, l, p, b, slot, arg
    cdef double v, best
    cdef const double* row
    cdef const double* below
    for l in range(D, 0, -1):
        slot = _dp_rows(ws, W, l)
        below = &ws.dp_best[(l + 1) * T]  # level D + 1: zeros
        for p in range(T):
            if ws.dp_final[slot * T + p]:
                ws.dp_arg[l * T + p] = -1
                ws.dp_best[l * T + p] = 0.0
                continue
            # invalid actions score -inf in the kept rows: they never win
            row = &ws.dp_scores[(slot * T + p) * T]
            best = -INFINITY
            arg = -1
            for b in range(T):
                v = row[b] + below[b]
                if v > best:
                    best = v
                    arg = b
            ws.dp_arg[l * T + p] = arg
            ws.dp_best[l * T + p] = best


cdef int _dp_rows(Workspace ws, Weights W, int l) noexcept nogil:
    """The slot holding, for every previous action p at level l, the scores
    and validity of the actions of the state after p. A first-order
    system's scores depend only on the step and p, so a decision at step k
    shares the rows of steps k + 2 .. k + D with the one before it: a slot
    is kept per step (while the weights do not change) and only the rows of
    the deepest level are new. The level's states are made from the state at
    level 0 plus l - 1 zero actions (the earlier actions do not matter)."""
    cdef int D = ws.depth, T = ws.nr_class, p, k, b
    cdef double* row
    cdef const int* ok
    cdef long key = ws.step + l if ws.step >= 0 else -1
    cdef int slot = <int>((key if key >= 0 else l) % (D + 1))
    if (key >= 0 and ws.dp_key[slot] == key and ws.dp_version[slot] == W.version
            and ws.dp_weights[slot] == <void*>W):
        return slot
    ws.system.copy_state(ws.dp_base, ws.state_at(0), ws.state_size)
    for k in range(l - 1):
        ws.system.apply(ws.dp_base, 0)
    for p in range(T):
        ws.system.copy_state(ws.dp_state, ws.dp_base, ws.state_size)
        ws.system.apply(ws.dp_state, p)
        ws.dp_final[slot * T + p] = ws.system.is_final(ws.dp_state)
        if not ws.dp_final[slot * T + p]:
            row = &ws.dp_scores[(slot * T + p) * T]
            ok = ws.dp_valid
            ws.system.score(row, ws.dp_state, W, ws.feats, ws.cache)
            ws.system.set_valid(ws.dp_valid, ws.dp_state)
            for b in range(T):
                if not ok[b]:
                    row[b] = -INFINITY
    ws.dp_key[slot] = key
    ws.dp_version[slot] = W.version
    ws.dp_weights[slot] = <void*>W
    return slot


cdef double _dp_value(Workspace ws, int a) noexcept nogil:
    """The value and best path of first action a from the DP tables."""
    cdef int T = ws.nr_class, D = ws.depth, l, cur = a, n = 1
    cdef int* path = &ws.paths[a * (D + 1)]
    path[0] = a
    for l in range(1, D + 1):
        cur = ws.dp_arg[l * T + cur]
        if cur < 0:
            break
        path[n] = cur
        n += 1
    ws.path_lens[a] = n
    return ws.scores[a] + ws.dp_best[T + a]


cdef inline bint _dp_pays(Workspace ws, Weights W) noexcept nogil:
    """Where both are exact, which is faster (measured on EWT): the DP at
    depth 3 (branch-and-bound bounds two steps ahead, not three), and in
    training (a training table's bounds are read off its rows, and change
    with every update); branch-and-bound at depth 2 with frozen weights."""
    return ws.depth >= 3 or not W.frozen or not ws.system.bounds_two_steps


cdef int lookahead_first(Workspace ws, Weights W, const void* state, int favoured=-1,
                         double handicap=0.0) noexcept nogil:
    """For every first action a: the best score of the paths a, a_1 .. a_D
    (Figure 3, lines 9-11), in ws.values / ws.paths (see the module's note on
    branch-and-bound). Returns the best action, with `handicap` subtracted
    from the favoured action's value (first in class order on ties), -1 if
    the state is final or stuck."""
    cdef int D = ws.depth, T = ws.nr_class
    cdef int a, best_a = -1, top = -1
    cdef double best = -INFINITY, v
    for a in range(T):
        ws.values[a] = -INFINITY
        ws.path_lens[a] = 0
    ws.system.copy_state(ws.state_at(0), state, ws.state_size)
    if not _expand(ws, W, 0):
        return -1
    if ws.dp and (not ws.bnb or _dp_pays(ws, W)):
        _continuations(ws, W)
        for a in range(T):
            if ws.valid[a]:
                ws.values[a] = _dp_value(ws, a)
    elif not ws.bnb:
        for a in range(T):
            if ws.valid[a]:
                ws.values[a] = _action_value(ws, W, 0, a, D, &ws.paths[a * (D + 1)],
                                             &ws.path_lens[a])
    else:
        return _branch_and_bound(ws, W, favoured, handicap)
    for a in range(T):
        if not ws.valid[a]:
            continue
        v = ws.values[a] - handicap if a == favoured else ws.values[a]
        if best_a < 0 or v > best:
            best = v
            best_a = a
    return best_a


cdef int _branch_and_bound(Workspace ws, Weights W, int favoured, double handicap) noexcept nogil:
    """lookahead_first's decision by branch-and-bound: the favoured action in
    full, then the best-scoring one, then the others in class order, each
    pruned against the best root value found so far."""
    cdef int D = ws.depth, T = ws.nr_class, a, k, top = -1
    cdef double v
    ws.pruning = False
    ws.root_best = -INFINITY
    ws.root_best_a = -1
    ws.pruning = True  # so that the root's shared bounds are made (used once pruning starts)
    _enter_node(ws, W, 0, D)
    _carry_bounds(ws, W)
    ws.pruning = False
    if favoured >= 0 and ws.valid[favoured]:
        _root_action(ws, W, favoured, handicap)
    for a in range(T):
        if ws.valid[a] and (top < 0 or ws.scores[a] > ws.scores[top]):
            top = a
    # first root values: the greedy path from the best-scoring action, and
    # the rest of the previous decision's best path (decode's hint), often
    # the better of the two
    if top >= 0 and top != favoured:
        if ws.hint_len and ws.hint[0] == top:
            _seed_path(ws, W, ws.hint, ws.hint_len)
        else:
            _greedy_seed(ws, W, top)
    if ws.hint_len and ws.hint[0] != top and ws.hint[0] != favoured:
        _seed_path(ws, W, ws.hint, ws.hint_len)
    for k in range(-1, T):
        a = top if k < 0 else k
        if a < 0 or not ws.valid[a] or a == favoured or (k >= 0 and a == top):
            continue
        _root_action(ws, W, a, 0.0)
    ws.pruning = False
    return ws.root_best_a


cdef void _greedy_seed(Workspace ws, Weights W, int top) noexcept nogil:
    """A first root value before any search: the greedy path from the best-
    scoring action (_seed_path)."""
    _seed_path(ws, W, &top, 1)


cdef void _seed_path(Workspace ws, Weights W, const int* given, int n_given) noexcept nogil:
    """A root value before (or between) the searches: the path of the
    actions `given` (while valid), then greedy to depth D, summed as _search
    sums it. A path's value is at most its first action's value, so pruning
    below it is safe (the search of that action itself is then pruned
    where it cannot beat this path; ties keep their class order). Nothing
    where given[0] is not valid."""
    cdef int D = ws.depth, T = ws.nr_class, level, a, b
    cdef double tail = 0.0, v
    cdef double* taken = ws.prefix  # scratch: the path's scores (prefix is rebuilt by the search)
    a = given[0]
    if not ws.valid[a]:
        return
    ws.level1_of = -1  # (level 1 holds another state now, its bounds unknown)
    taken[0] = ws.scores[a]
    for level in range(1, D + 1):
        ws.system.copy_state(ws.state_at(level), ws.state_at(level - 1), ws.state_size)
        ws.system.apply(ws.state_at(level), a)
        if not _expand(ws, W, level):
            D = level - 1  # a final state: the path ends here (value 0 below)
            break
        b = -1
        if level < n_given and ws.valid[level * T + given[level]]:
            b = given[level]
        else:
            for a in range(T):
                if ws.valid[level * T + a] and (
                        b < 0 or ws.scores[level * T + a] > ws.scores[level * T + b]):
                    b = a
        if b < 0:
            return  # stuck: no complete path to offer
        a = b
        taken[level] = ws.scores[level * T + a]
    for level in range(D, -1, -1):
        tail = taken[level] + tail if level < D else taken[level]
    v = tail
    if ws.root_best_a < 0 or v > ws.root_best or (v == ws.root_best and given[0] < ws.root_best_a):
        ws.root_best = v
        ws.root_best_a = given[0]
    ws.pruning = True


cdef void _root_action(Workspace ws, Weights W, int a, double handicap) noexcept nogil:
    cdef int D = ws.depth
    cdef double v
    ws.cur_first = a
    ws.level1_of = -1
    ws.values[a] = _action_value(ws, W, 0, a, D, &ws.paths[a * (D + 1)], &ws.path_lens[a])
    if ws.depth >= 2:
        _keep_child_bounds(ws, a)
    if ws.path_lens[a] == 0:
        return  # pruned
    v = ws.values[a] - handicap
    if ws.root_best_a < 0 or v > ws.root_best or (v == ws.root_best and a < ws.root_best_a):
        ws.root_best = v
        ws.root_best_a = a
    ws.pruning = True


cdef int decode(Workspace ws, Weights W, void* state, int* actions, int max_actions) noexcept nogil:
    """Deterministic decoding: at each state take the first action of the best
    lookahead path. Returns the number of actions taken."""
    cdef int n = 0, a, k
    ws.start_derivation()
    while n < max_actions and not ws.system.is_final(state):
        ws.step = n
        a = lookahead_first(ws, W, state)
        if a < 0:
            break
        actions[n] = a
        n += 1
        ws.system.apply(state, a)
        # the rest of the chosen path: the next decision's first root value
        # (at depth 1 the greedy seed is as good, and the hint's extra
        # expansion where it differs cost the taggers 2-3%)
        ws.hint_len = max(0, ws.path_lens[a] - 1) if ws.bnb and ws.depth >= 2 else 0
        for k in range(ws.hint_len):
            ws.hint[k] = ws.paths[a * (ws.depth + 1) + 1 + k]
        # ... and the group bounds its child got: the next root's
        ws.carry_from = a if ws.bnb and ws.depth >= 2 and ws.system.n_sibling_groups else -1
    ws.step = -1
    ws.hint_len = 0
    ws.carry_from = -1
    return n
