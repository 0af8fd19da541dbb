"""Beam search over a TransitionSystem (Huang et al. 2012, Algorithm 7),
keeping the whole lattice so that the violation-fixing updates can compare
any step's best prefix with the gold prefix. Knows nothing of any task."""

from .system cimport TransitionSystem
from .weights cimport Weights, feat_t
from .scratch cimport scratch_pool


cdef size_t padded_size(size_t state_size) noexcept nogil:
    """The bytes of a state in the beam's buffers: rounded up so that every
    state there stays 8-byte aligned (a start state is allocated as large,
    Instance.start, since the beam copies that many bytes from it)."""
    return (state_size + 7) // 8 * 8


cdef Beam beam_for(Beam beam, TransitionSystem system, size_t state_size, int width):
    """beam if it fits states of state_size bytes of the system at this
    width, else a new Beam: one is reused over the docs of a batch."""
    if beam is None or beam.system is not system or beam.state_size != padded_size(state_size) \
            or beam.width != width:
        beam = Beam(system, width, state_size)
    return beam


cdef class Beam:
    def __init__(self, TransitionSystem system, int width, size_t state_size=0):
        if width < 1:
            raise ValueError(f"beam width must be >= 1, got {width}")
        self.mem = scratch_pool()  # (one thread's: core/scratch.pxd)
        self.system = system
        self.width = width
        self.nr_class = system.nr_class
        self.state_size = padded_size(state_size or system.state_size)
        self.states = <char*>self.mem.alloc(width, self.state_size)
        self.next_states = <char*>self.mem.alloc(width, self.state_size)
        self.action_scores = <double*>self.mem.alloc(width * self.nr_class, sizeof(double))
        self.valid = <int*>self.mem.alloc(width * self.nr_class, sizeof(int))
        self.feats = <feat_t*>self.mem.alloc(max(1, system.max_feats), sizeof(feat_t))
        self.cache = self.mem.alloc(max(1, system.cache_size), 1)
        self.top_scores = <double*>self.mem.alloc(width, sizeof(double))
        self.top_parents = <int*>self.mem.alloc(width, sizeof(int))
        self.top_actions = <int*>self.mem.alloc(width, sizeof(int))
        self.max_steps = -1
        self.step = 0
        self.size = 0

    cdef int reset(self, const void* start, int max_steps) except -1:
        self.reserve(max_steps)
        self.restart(start)
        return 0

    cdef int reserve(self, int max_steps) except -1:
        """Lattice rows for derivations of up to max_steps actions."""
        if max_steps < 0:
            raise ValueError("max_steps must be >= 0")
        if max_steps > self.max_steps:
            if self.max_steps >= 0:
                self.mem.free(self.parents)
                self.mem.free(self.actions)
                self.mem.free(self.scores)
                self.mem.free(self.sizes)
            rows = (max_steps + 1) * self.width
            self.parents = <int*>self.mem.alloc(rows, sizeof(int))
            self.actions = <int*>self.mem.alloc(rows, sizeof(int))
            self.scores = <double*>self.mem.alloc(rows, sizeof(double))
            self.sizes = <int*>self.mem.alloc(max_steps + 1, sizeof(int))
            self.max_steps = max_steps
        return 0

    cdef void restart(self, const void* start) noexcept nogil:
        """A new search from `start` (its derivations no longer than
        reserve() made room for)."""
        self.system.copy_state(self.states, start, self.state_size)
        self.step = 0
        self.size = 1
        self.sizes[0] = 1
        self.parents[0] = -1
        self.actions[0] = -1
        self.scores[0] = 0.0

    cdef bint is_done(self) noexcept nogil:
        cdef int j
        for j in range(self.size):
            if not self.system.is_final(self.state(j)):
                return False
        return True

    cdef void _push(self, int* n, double score, int parent, int action) noexcept nogil:
        # Insertion into the sorted top-k; an equal score goes after the
        # items already there, so ties keep candidate order.
        cdef int k = n[0]
        if k == self.width:
            if score <= self.top_scores[k - 1]:
                return
            k -= 1
        else:
            n[0] += 1
        while k > 0 and self.top_scores[k - 1] < score:
            self.top_scores[k] = self.top_scores[k - 1]
            self.top_parents[k] = self.top_parents[k - 1]
            self.top_actions[k] = self.top_actions[k - 1]
            k -= 1
        self.top_scores[k] = score
        self.top_parents[k] = parent
        self.top_actions[k] = action

    cdef int advance(self, Weights W) noexcept nogil:
        if self.step >= self.max_steps or self.is_done():
            return 0
        cdef int j, a, n = 0
        cdef double base
        cdef void* st
        cdef double* s
        cdef int* v
        for j in range(self.size):
            st = self.state(j)
            base = self.scores[self.step * self.width + j]
            if self.system.is_final(st):
                self._push(&n, base, j, -1)
                continue
            s = &self.action_scores[j * self.nr_class]
            v = &self.valid[j * self.nr_class]
            self.system.score(s, st, W, self.feats, self.cache)
            self.system.set_valid(v, st)
            for a in range(self.nr_class):
                # (_push's own first test, without the call: most candidates
                # of a full beam score below its last item)
                if v[a] and (n < self.width
                             or not base + s[a] <= self.top_scores[self.width - 1]):
                    self._push(&n, base + s[a], j, a)
        cdef char* swap
        for j in range(n):
            st = self.next_states + j * self.state_size
            self.system.copy_state(st, self.state(self.top_parents[j]), self.state_size)
            if self.top_actions[j] >= 0:
                self.system.apply(st, self.top_actions[j])
        swap = self.states
        self.states = self.next_states
        self.next_states = swap
        self.step += 1
        self.size = n
        self.sizes[self.step] = n
        cdef int row = self.step * self.width
        for j in range(n):
            self.parents[row + j] = self.top_parents[j]
            self.actions[row + j] = self.top_actions[j]
            self.scores[row + j] = self.top_scores[j]
        return 1

    cdef int search(self, Weights W) noexcept nogil:
        while self.advance(W):
            pass
        return self.step

    cdef int path(self, int t, int j, int* out) noexcept nogil:
        cdef int n = 0, k, a, i
        cdef int tt = t, jj = j
        while tt > 0:
            if self.actions[tt * self.width + jj] >= 0:
                n += 1
            jj = self.parents[tt * self.width + jj]
            tt -= 1
        k = n
        while t > 0:
            a = self.actions[t * self.width + j]
            if a >= 0:
                k -= 1
                out[k] = a
            j = self.parents[t * self.width + j]
            t -= 1
        return n

    # --- Python views, for tests and helpers -------------------------------
    def items(self, int t):
        """Row t of the lattice as [(score, actions)], best first."""
        if t < 0 or t > self.step:
            raise IndexError(f"step {t} not in 0..{self.step}")
        cdef int[::1] buf
        import numpy
        out_arr = numpy.zeros((max(1, t),), dtype="int32")
        buf = out_arr
        result = []
        for j in range(self.sizes[t]):
            n = self.path(t, j, &buf[0])
            result.append((self.scores[t * self.width + j], [int(x) for x in out_arr[:n]]))
        return result

    def lattice(self, int t):
        """Row t as [(parent, action, score)]."""
        return [(self.parents[t * self.width + j], self.actions[t * self.width + j],
                 self.scores[t * self.width + j]) for j in range(self.sizes[t])]
