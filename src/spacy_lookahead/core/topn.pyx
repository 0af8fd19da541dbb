"""Top-n search for SAPO's update and its probabilities (Sun et al., Section 2):
exact A* with the backward-Viterbi heuristic over a first-order system (the n
best label sequences one by one, in order of score), and beam search for
richer histories (the paper finds both give the same results)."""
from libc.math cimport INFINITY, isfinite
from libc.stdint cimport int64_t
from libc.string cimport memcpy
from libcpp.queue cimport priority_queue
from libcpp.utility cimport pair
from cymem.cymem cimport Pool

import numpy

from .clock cimport add_since, now_ns
from .nothrow cimport la_assign, la_heap_push, la_push, la_resize
from .beam cimport Beam
from .search cimport Workspace, replay_in
from .system cimport TransitionSystem
from .weights cimport Weights
from .scratch cimport scratch_pool


cdef Chain chain_from(Workspace ws, const void* start, fixed=None):
    """The chain of the sequence from `start`, scored with the workspace's
    system; fixed: T actions or -1 (labels known in advance), None: none.
    start NULL: a chain of no steps yet, for walk_from (a lattice's)."""
    cdef TransitionSystem sys = ws.system
    cdef int[::1] fv
    if not sys.first_order:
        raise ValueError("exact top-n search (A*) needs a first-order system; "
                         "use beam search for richer history features")
    cdef Chain chain = Chain.__new__(Chain)
    chain.ws = ws
    chain.C = sys.nr_class
    chain.mem = scratch_pool()  # (one thread's: core/scratch.pxd)
    chain.replay = replay_in(chain.mem, ws.state_size, chain.C)
    chain.row_buf.resize(chain.C)
    if start == NULL:
        return chain
    chain.restart(start)
    if fixed is not None:
        chain._fixed = numpy.ascontiguousarray(fixed, dtype="int32")
        if chain._fixed.shape != (chain.T,):
            raise ValueError(f"fixed actions must have shape ({chain.T},), got {chain._fixed.shape}")
        if chain.T:
            fv = chain._fixed
            chain.fixed = &fv[0]
    return chain


cdef class Chain:
    def __init__(self):
        raise TypeError("a Chain is made in C, by topn.chain_from(ws, start)")

    cdef int restart(self, const void* start) except -1:
        """The chain of the sequence from `start` (same workspace, no fixed
        actions), reusing the spine's memory: a lattice per doc of a batch
        allocates nothing once it has seen the longest."""
        if self.walk_from(start) < 0:
            raise MemoryError("no memory left for the chain of states of a top-n (A*) search "
                              "of one sequence: give it more memory")
        self._fixed = None
        return 0

    cdef int walk_from(self, const void* start) noexcept nogil:
        """restart() without the GIL: on a chain without fixed actions (a
        lattice's), what a thread does per doc. -1 where no memory was left
        for the spine (then a chain of no steps)."""
        cdef size_t size = self.ws.state_size
        # Walk a spine with action 0: in a first-order system the state after
        # (t, p) is the spine state after t - 1 steps plus action p.
        cdef int T = 0, t
        self.T = 0
        self.fixed = NULL
        if la_resize(self.walk, size) != 0:
            return -1
        cdef char* s = self.walk.data()
        memcpy(s, start, size)
        while not self.ws.system.is_final(s):
            self.ws.system.apply(s, 0)
            T += 1
        if self.spine_buf.size() < (T + 1) * size and la_resize(self.spine_buf, (T + 1) * size) != 0:
            return -1
        self.T = T
        self.spine = self.spine_buf.data()
        memcpy(self.spine, start, size)
        for t in range(T):
            memcpy(self.spine + (t + 1) * size, self.spine + t * size, size)
            self.ws.system.apply(self.spine + (t + 1) * size, 0)
        return 0

    cdef void* state_after(self, int t, int p) noexcept nogil:
        """The state at step t whose previous action was p (t = 0: the start)."""
        cdef size_t size = self.ws.state_size
        cdef void* s = self.replay.state
        if t == 0:
            memcpy(s, self.spine, size)
        else:
            memcpy(s, self.spine + (t - 1) * size, size)
            self.ws.system.apply(s, p)
        return s

    cdef int row(self, Weights W, int t, int p, double* out) noexcept nogil:
        cdef const void* s = self.state_after(t, p)
        cdef int c
        cdef int* valid = self.replay.valid
        self.ws.system.score(out, s, W, self.ws.feats, self.ws.cache)
        self.ws.system.set_valid(valid, s)
        for c in range(self.C):
            if not valid[c] or (self.fixed != NULL and self.fixed[t] >= 0 and self.fixed[t] != c):
                out[c] = -INFINITY
        return 0

    cdef int backward(self, Weights W) noexcept nogil:
        """h[t, c]: the best score of the steps after t, given action c at t
        (the backward Viterbi pass: an exact, hence admissible, heuristic).
        -1 where no memory was left for it."""
        cdef int T = self.T, C = self.C, t, c, c2
        cdef double best, v
        cdef double* r = self.row_buf.data()
        if la_assign(self.h, <size_t>T * C, 0.0) != 0:
            return -1
        for t in range(T - 2, -1, -1):
            for c in range(C):
                self.row(W, t + 1, c, r)
                best = -INFINITY
                for c2 in range(C):
                    v = r[c2] + self.h[(t + 1) * C + c2]
                    if v > best:
                        best = v
                self.h[t * C + c] = best
        return 0


cdef class NBest:
    def __init__(self):
        self.k = 0
        self.T = 0

    cdef void clear(self, int T) noexcept nogil:
        self.k = 0
        self.T = T
        self.paths.clear()
        self.lengths.clear()
        self.scores.clear()

    def sequences(self):
        """([actions int32 per sequence], scores (k,) float64), best first."""
        paths, scores = self.as_arrays()
        return [paths[i, :self.lengths[i]] for i in range(self.k)], scores

    def as_arrays(self):
        """(paths (k, T) int32, scores (k,) float64); a shorter sequence is
        padded with -1."""
        paths = numpy.full((self.k, self.T), -1, dtype="int32")
        scores = numpy.zeros((self.k,), dtype="float64")
        cdef int[:, ::1] pv = paths
        cdef double[::1] sv = scores
        if self.k and self.T:
            memcpy(&pv[0, 0], self.paths.data(), self.k * self.T * sizeof(int))
        if self.k:
            memcpy(&sv[0], self.scores.data(), self.k * sizeof(double))
        return paths, scores


cdef int astar(Chain chain, Weights W, int n, NBest out) noexcept nogil:
    """The n best complete action sequences (fewer if fewer exist), best
    first. Nodes are prefixes (a tree, never merged), so outputs are unique;
    with the exact heuristic they leave the queue in order of their score, and
    only prefixes of the n best are expanded: at most n T pops, n T C pushes.
    0, or -1 where memory ran out (out then holds none: the caller raises
    MemoryError); no Python, so it runs on any thread."""
    cdef int T = chain.T, C = chain.C, c, i, t
    cdef vector[Node] nodes
    cdef priority_queue[pair[double, int]] agenda
    cdef Node node, child
    cdef double* r = chain.row_buf.data()
    cdef double f
    out.clear(T)
    if n <= 0:
        return 0
    if T == 0:
        if la_push(out.lengths, 0) != 0 or la_push(out.scores, 0.0) != 0:
            return _no_memory(out)
        out.k = 1
        return 0
    if chain.backward(W) != 0:
        return _no_memory(out)
    chain.row(W, 0, -1, r)
    for c in range(C):
        f = r[c] + chain.h[c]
        if isfinite(f):
            child.t = 0; child.c = c; child.parent = -1; child.g = r[c]
            # Ties leave newest first (depth first): with all scores equal,
            # as with fresh weights, oldest first would go breadth first
            # through C^t prefixes.
            if (la_heap_push(agenda, pair[double, int](f, <int>nodes.size())) != 0
                    or la_push(nodes, child) != 0):
                return _no_memory(out)
    while not agenda.empty() and out.k < n:
        i = agenda.top().second
        agenda.pop()
        node = nodes[i]
        if node.t == T - 1:
            if (la_resize(out.paths, <size_t>(out.k + 1) * T) != 0 or la_push(out.lengths, T) != 0
                    or la_push(out.scores, node.g) != 0):
                return _no_memory(out)
            t = T - 1
            while i >= 0:
                out.paths[out.k * T + t] = nodes[i].c
                i = nodes[i].parent
                t -= 1
            out.k += 1
            continue
        chain.row(W, node.t + 1, node.c, r)
        for c in range(C):
            f = node.g + r[c] + chain.h[(node.t + 1) * C + c]
            if isfinite(f):
                child.t = node.t + 1; child.c = c; child.parent = i; child.g = node.g + r[c]
                if (la_heap_push(agenda, pair[double, int](f, <int>nodes.size())) != 0
                        or la_push(nodes, child) != 0):
                    return _no_memory(out)
    return 0


cdef int run_astar(Chain chain, Weights W, int n, NBest out) except -1:
    """astar() without the GIL, for a caller that holds it: MemoryError
    where memory ran out."""
    cdef int rc
    with nogil:
        rc = astar(chain, W, n, out)
    if rc != 0:
        raise MemoryError(f"no memory left for the {n} best outputs (A*) of a sequence of "
                          f"{chain.T} steps: ask for fewer or give it more memory")
    return 0


cdef inline int _no_memory(NBest out) noexcept nogil:
    out.clear(out.T)
    return -1


cdef int beam_nbest(Beam beam, Weights W, const void* state, int T, int n, NBest out) except -1:
    """The n best final items of a beam search from `state` (beam width >= n;
    at most T steps), best first. Items are distinct action sequences, of
    different lengths where the system's derivations differ in length."""
    cdef int step
    beam.reset(state, T)
    cdef int64_t t0 = now_ns()
    with nogil:
        step = beam.search(W)
    add_since(t0)
    return beam_row_nbest(beam, step, T, n, out)


cdef int beam_row_nbest(Beam beam, int t, int T, int n, NBest out) except -1:
    """The n best items of row t of the beam's lattice (prefixes of t steps,
    or final derivations carried over), best first; T: the row stride."""
    cdef int j, k
    out.clear(T)
    k = min(n, beam.size_at(t))
    out.paths.resize(max(1, k * T))
    for j in range(k):
        out.lengths.push_back(beam.path(t, j, &out.paths[j * T]))
        out.scores.push_back(beam.score_at(t, j))
    out.k = k
    return 0
