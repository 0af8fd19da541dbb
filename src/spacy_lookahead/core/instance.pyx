"""What a transition system gives the engine per document (see instance.pxd)."""
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

import numpy

from .beam cimport padded_size
from .clock cimport add_since, now_ns
from .system cimport TransitionSystem
from .weights cimport Weights, feat_t


def make_instances(make, list inputs, golds=None):
    """[make(input, gold)] for a batch of docs (golds: one per doc, or None)."""
    if golds is None:
        return [make(x) for x in inputs]
    if len(golds) != len(inputs):
        raise ValueError(f"{len(inputs)} docs but {len(golds)} golds")
    return [make(x, g) for x, g in zip(inputs, golds)]


cdef class Instance:
    def __init__(self, TransitionSystem system):
        self.mem = Pool()
        self.system = system
        self.length = 0
        self.max_steps = 0
        self.state_size = system.state_size
        self.has_gold = False

    cdef int init_state(self, void* state) except -1:
        """Write the start state into `state` (state_size zeroed bytes)."""
        raise NotImplementedError(f"{type(self).__name__} does not define its start state")

    cdef void* start(self) except NULL:
        """A new start state, owned by the instance (freed with it): callers
        may apply actions to it."""
        # as large as the beam's copies of it (it reads whole words)
        cdef void* state = self.mem.alloc(1, padded_size(self.state_size))
        self.init_state(state)
        return state

    def output(self, actions):
        """The prediction an action sequence stands for, as the component
        writes it back (labels in document order, a tree, ...)."""
        raise NotImplementedError(f"{type(self).__name__} does not define its output")

    cdef void* after(self, history) except NULL:
        """For views: a new state after the actions in `history` (owned by
        the instance, as start())."""
        cdef void* state = self.start()
        for a in history:
            self.system.apply(state, a)
        return state

    def state_after(self, history):
        """For tests of a system's Python views: the address of after(history)
        (valid while the instance lives)."""
        return <size_t>self.after(history)

    def oracle_actions(self, Weights W=None):
        """The gold action sequence from the start state, by the system's
        oracle: (actions int32, known bool per action), or None if the oracle
        picks an action that is not valid (a gold tree this system cannot
        derive). Where the gold is unknown (missing annotation) the oracle
        says -1: with W, the model's best valid action fills the gap (greedy;
        the learners treat it as latent) and known[k] is False; without W
        the gold path is incomplete: None."""
        cdef TransitionSystem sys = self.system
        cdef int C = sys.nr_class, k = 0, a, c
        cdef void* state = self.start()
        out = numpy.zeros((max(1, self.max_steps),), dtype="int32")
        known = numpy.zeros((max(1, self.max_steps),), dtype="bool")
        valid = numpy.zeros((C,), dtype="int32")
        scores = numpy.zeros((C,), dtype="float64")
        feats = numpy.zeros((max(1, sys.max_feats),), dtype="uint64")
        cache = numpy.zeros((max(1, sys.cache_size),), dtype="uint8")
        cdef unsigned char[::1] cv = cache
        cdef int[::1] ov = out, vv = valid
        cdef double[::1] sv = scores
        cdef feat_t[::1] fv = feats
        cdef double best
        while k < self.max_steps and not sys.is_final(state):
            a = sys.oracle(state)
            sys.set_valid(&vv[0], state)
            if a >= 0:
                if not vv[a]:
                    return None
                known[k] = True
            elif W is None:
                return None
            else:
                sys.score(&sv[0], state, W, &fv[0], &cv[0])
                for c in range(C):
                    if vv[c] and (a < 0 or sv[c] > best):
                        a = c
                        best = sv[c]
                if a < 0:
                    return None
            ov[k] = a
            k += 1
            sys.apply(state, a)
        return out[:k], known[:k]


cdef class DocRows:
    cdef bint fill(self, int i) noexcept nogil:
        return True

    cdef void row(self, int64_t k, uint64_t* out) noexcept nogil:
        pass

    cdef bint substrings_of(self, int i, const int** offsets,
                            const uint64_t** hashes) noexcept nogil:
        return False

    cdef int64_t units_of(self, int i, vector[int64_t]* words,
                          vector[int64_t]* unit_starts) noexcept nogil:
        return -1

    cdef int content_of(self, int i, const int** positions) noexcept nogil:
        return -1

    def fill_doc(self, int i):
        """Doc i's rows, now (as a search fills them before reading them):
        whether they are there (else the doc is its reader's to do)."""
        if not 0 <= i < self.n_docs:
            raise IndexError(f"doc {i} of a batch of {self.n_docs}")
        cdef bint ready
        cdef int64_t t0 = now_ns()
        with nogil:
            ready = self.fill(i)
        add_since(t0)
        return ready

    def fill_all(self):
        """Every doc's rows, now (for a reader other than decode_docs)."""
        cdef int i, n = self.n_docs
        cdef int64_t t0
        if not self.filled:
            t0 = now_ns()
            with nogil:
                for i in range(n):
                    self.fill(i)
            add_since(t0)  # (the engine's clock of nogil time, as every nogil section)
            self.filled = True


cdef class DocSink:
    cdef void put(self, int i, const int* out, int64_t stride, int n) noexcept nogil:
        pass


cdef class Docs:
    def __init__(self, TransitionSystem system, int n_docs, int width=1):
        self.system = system
        self.n_docs = n_docs
        self.state_size = system.state_size
        self.width = width

    def __len__(self):
        return self.n_docs

    cdef bint load(self, int i) noexcept nogil:
        if self.rows is not None and not self.rows.filled:
            return self.rows.fill(i)
        return True

    cdef int length(self, int i) noexcept nogil:
        return 0

    cdef int max_steps(self, int i) noexcept nogil:
        return 0

    cdef void init_state(self, int i, void* state) noexcept nogil:
        pass

    cdef bint breaks(self, int i) noexcept nogil:
        return False

    cdef void output(self, int i, const int* actions, int k, int* out, int64_t stride,
                     void* scratch) noexcept nogil:
        """Doc i's output from the k actions of a complete derivation: `width`
        planes of length(i) ints, plane p at out + p * stride (e.g. a label
        per token in document order; a parser's heads, then its labels).
        scratch: state_size bytes the writer may use (a state to replay
        the actions on)."""
        pass


cdef class InstanceDocs(Docs):
    def __init__(self, instances):
        instances = list(instances)
        if not instances:
            raise ValueError("InstanceDocs needs at least one instance (its system)")
        cdef Instance inst = instances[0]
        Docs.__init__(self, inst.system, len(instances))
        self.state_size = inst.state_size
        self.instances = instances
        for inst in instances:
            if inst.system is not self.system or inst.state_size != self.state_size:
                raise ValueError("the instances of a batch must share one system and state size")
            self.starts.push_back(inst.start())
            self.lengths.push_back(inst.length)
            self.steps.push_back(inst.max_steps)
            self.broken.push_back(inst.breaks)

    cdef int length(self, int i) noexcept nogil:
        return self.lengths[i]

    cdef int max_steps(self, int i) noexcept nogil:
        return self.steps[i]

    cdef void init_state(self, int i, void* state) noexcept nogil:
        memcpy(state, self.starts[i], self.state_size)

    cdef bint breaks(self, int i) noexcept nogil:
        return self.broken[i]


def as_docs(batch):
    """A batch as Docs: a Docs itself, or a list of Instances wrapped
    (InstanceDocs); None for an empty list."""
    if isinstance(batch, Docs):
        return batch
    batch = list(batch)
    return InstanceDocs(batch) if batch else None
