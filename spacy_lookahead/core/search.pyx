"""Search over a TransitionSystem: depth-D lookahead (Tsuruoka et al. 2011,
Figure 2). Depth 0 is plain greedy search."""
from libc.math cimport INFINITY
from libc.string cimport memcpy
from cymem.cymem cimport Pool

from .system cimport TransitionSystem
from .weights cimport Weights, feat_t


cdef class Workspace:
    def __init__(self, TransitionSystem system, int depth, size_t state_size=0):
        if depth < 0:
            raise ValueError(f"lookahead depth must be >= 0, got {depth}")
        self.mem = Pool()
        self.system = system
        self.depth = depth
        self.nr_class = system.nr_class
        self.state_size = state_size or system.state_size
        cdef int levels = depth + 2
        self.states = <char*>self.mem.alloc(levels, self.state_size)
        self.scores = <double*>self.mem.alloc(levels * self.nr_class, sizeof(double))
        self.valid = <int*>self.mem.alloc(levels * self.nr_class, sizeof(int))
        self.scratch_paths = <int*>self.mem.alloc(levels * levels, sizeof(int))
        self.feats = <feat_t*>self.mem.alloc(max(1, system.max_feats), sizeof(feat_t))
        self.values = <double*>self.mem.alloc(self.nr_class, sizeof(double))
        self.paths = <int*>self.mem.alloc(self.nr_class * (depth + 1), sizeof(int))
        self.path_lens = <int*>self.mem.alloc(self.nr_class, sizeof(int))


cdef double _search(Workspace ws, Weights W, int level, int d, int* best_path,
                    int* best_len) noexcept nogil:
    """SEARCH(d, S) of Figure 2 for the state at `level`, where a leaf's score
    w.phi(S) is summed incrementally along the path: returns the best score of
    the paths of (at most) d + 1 actions from here and writes that path. A
    final state is a leaf."""
    cdef const void* state = ws.state_at(level)
    cdef void* child = ws.state_at(level + 1)
    cdef double* scores = &ws.scores[level * ws.nr_class]
    cdef int* valid = &ws.valid[level * ws.nr_class]
    cdef int* sub_path = &ws.scratch_paths[(level + 1) * (ws.depth + 2)]
    cdef int sub_len = 0, a, k
    cdef double v, best = -INFINITY
    best_len[0] = 0
    if ws.system.is_final(state):
        return 0.0
    ws.system.score(scores, state, W, ws.feats)
    ws.system.set_valid(valid, state)
    for a in range(ws.nr_class):
        if not valid[a]:
            continue
        v = scores[a]
        sub_len = 0
        if d > 0:
            memcpy(child, state, ws.state_size)
            ws.system.apply(child, a)
            v += _search(ws, W, level + 1, d - 1, sub_path, &sub_len)
        if v > best:
            best = v
            best_path[0] = a
            for k in range(sub_len):
                best_path[1 + k] = sub_path[k]
            best_len[0] = 1 + sub_len
    return best


cdef int lookahead_first(Workspace ws, Weights W, const void* state) noexcept nogil:
    """For every first action a: the best score of the paths a, a_1 .. a_D
    (Figure 3, lines 9-11), in ws.values / ws.paths. Returns the best action
    (first in class order on ties), -1 if the state is final or stuck."""
    cdef int D = ws.depth
    cdef int a, k, sub_len, best_a = -1
    cdef double v, best = -INFINITY
    cdef double* scores = ws.scores
    cdef int* valid = ws.valid
    cdef void* child = ws.state_at(1)
    cdef int* sub_path = &ws.scratch_paths[1 * (D + 2)]
    for a in range(ws.nr_class):
        ws.values[a] = -INFINITY
        ws.path_lens[a] = 0
    if ws.system.is_final(state):
        return -1
    memcpy(ws.state_at(0), state, ws.state_size)
    ws.system.score(scores, state, W, ws.feats)
    ws.system.set_valid(valid, state)
    for a in range(ws.nr_class):
        if not valid[a]:
            continue
        v = scores[a]
        sub_len = 0
        if D > 0:
            memcpy(child, state, ws.state_size)
            ws.system.apply(child, a)
            v += _search(ws, W, 1, D - 1, sub_path, &sub_len)
        ws.values[a] = v
        ws.paths[a * (D + 1)] = a
        for k in range(sub_len):
            ws.paths[a * (D + 1) + 1 + k] = sub_path[k]
        ws.path_lens[a] = 1 + sub_len
        if v > best:
            best = v
            best_a = a
    return best_a


cdef int decode(Workspace ws, Weights W, void* state, int* actions, int max_actions) noexcept nogil:
    """Deterministic decoding: at each state take the first action of the best
    lookahead path. Returns the number of actions taken."""
    cdef int n = 0, a
    while n < max_actions and not ws.system.is_final(state):
        a = lookahead_first(ws, W, state)
        if a < 0:
            break
        actions[n] = a
        n += 1
        ws.system.apply(state, a)
    return n


def lookahead_values(Workspace ws, Weights W, size_t state_addr):
    """Python view of lookahead_first for tests: (best action, values, paths)."""
    cdef int best = lookahead_first(ws, W, <const void*>state_addr)
    values = [ws.values[a] for a in range(ws.nr_class)]
    paths = [[ws.paths[a * (ws.depth + 1) + k] for k in range(ws.path_lens[a])]
             for a in range(ws.nr_class)]
    return best, values, paths
