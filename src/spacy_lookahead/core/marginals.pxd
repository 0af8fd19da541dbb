from libc.stdint cimport int64_t
from libcpp.vector cimport vector

from .instance cimport Docs, Instance
from .system cimport TransitionSystem
from .search cimport Workspace
from .topn cimport Chain
from .weights cimport Weights


cdef class Transitions:
    cdef readonly TransitionSystem system
    cdef readonly Weights W
    cdef readonly double temperature, tm
    cdef readonly int64_t version
    cdef readonly int C
    cdef readonly bint in_range
    cdef vector[double] tr, etr, etr_t


cdef class Lattice:
    cdef Instance inst   # its states point into the instance's arrays: kept alive here
                         # (None for a batch's lattice: the Docs keeps them)
    cdef Chain chain
    cdef Workspace ws
    cdef Weights W
    cdef readonly int T, C
    cdef readonly double temperature, log_z
    cdef vector[double] fwd, bwd  # scaled sums: fwd[t, c] bwd[t, c] = p(action c at step t)
    # the log-domain sums, where the last pass was the log-domain one (sharp
    # scores: fwd * bwd cannot hold such a distribution): log forward and
    # backward sums, read by _alpha, _beta and _marginal instead
    cdef vector[double] la, lb
    cdef bint log_domain
    cdef vector[double] log_norm, fcum, row
    cdef vector[double] rows      # [(t * C + p) * C + c] when the doc's rows fit
    cdef vector[double] factors   # the same entries as exp(score / tau - the step's shift)
    cdef vector[double] factor_row
    cdef vector[char] known       # [t * C + p]: 1 that row is in rows, 2 also in factors
    cdef vector[double] em        # factored: (T, C) emissions
    cdef vector[char] restart     # factored: (T,) 1 where the step's transitions are the
                                  # first step's whatever came before (step 0, sentence starts)
    cdef Transitions trans        # ... and the (C + 1, C) transitions
    cdef bint keep, backward
    cdef bint factorable          # FACTORED and a homogeneous system: Transitions made
    cdef long row_cache           # ROW_CACHE and FACTORED_RANGE when prepared
    cdef double factored_range
    cdef bint breaks              # this doc's history starts again at some steps (Instance.breaks)
    cdef double floor             # factored: a forward sum below this falls back to the log domain
    cdef readonly bint factored   # made as emissions x transitions (homogeneous systems)
    cdef readonly long viterbi_entries  # the entries the last best() ran Viterbi over
    cdef bint no_memory           # an array of the last _open or _best could not grow
                                  # (core/nothrow.pxd): its results mean nothing

    cdef const double* _row(self, int t, int p) noexcept nogil
    cdef int _before(self, int t, int p) noexcept nogil
    cdef const double* _factors(self, int t, int p, double shift) noexcept nogil
    cdef bint _split_scores(self, Workspace ws, double limit) noexcept nogil
    cdef void _forward_backward(self) noexcept nogil
    cdef void _log_forward_backward(self) noexcept nogil
    cdef bint _sound(self) noexcept nogil
    cdef double _marginal(self, int t, int c) noexcept nogil
    cdef bint _start_sums(self) noexcept nogil
    cdef bint _end_forward(self) noexcept nogil
    cdef double _alpha(self, int t, int c) noexcept nogil
    cdef double _beta(self, int t, int c) noexcept nogil
    cdef void _factored_forward_backward(self) noexcept nogil
    cdef int _reset(self, Instance inst, Weights W, double temperature, bint backward,
                    Transitions transitions, Workspace ws) except -1
    cdef int _prepare(self, TransitionSystem system, size_t state_size, Weights W,
                      double temperature, bint backward, Transitions transitions,
                      Workspace ws) except -1
    cdef int _open(self, const void* start, bint breaks) noexcept nogil
    cdef int _lost(self) noexcept nogil
    cdef double _best(self, int* out, bint pruned, double min_theta) noexcept nogil
    cdef void _step_probabilities(self, const int* acts, double* out) noexcept nogil
    cdef double _pruned_best(self, double theta, int* out) noexcept nogil
    cdef double _max_marginal_product(self) noexcept nogil
    cdef double _score(self, int t, int p, int c) noexcept nogil
    cdef double segment(self, int a, const int* lab, int n, const unsigned char* before,
                        const unsigned char* after) noexcept nogil


cdef class LatticeThread:
    """One thread's lattice of a DocPass, the state its docs start from and
    scratch the pass's work may use (a thread's own: never shared)."""
    cdef Lattice lattice
    cdef vector[char] state
    cdef vector[int] labels, spans, lab


cdef class DocPass:
    cdef readonly Docs docs
    cdef readonly Weights W
    cdef readonly double temperature
    cdef readonly Transitions transitions
    cdef int next_doc
    cdef int failed         # the first doc whose work failed (n_docs: none)
    cdef int no_memory      # the first doc whose lattice found no memory (n_docs: none)

    cdef LatticeThread thread(self)
    cdef bint open(self, LatticeThread th, int i) noexcept nogil
    cdef void fail(self, int i) noexcept nogil
    cdef void lost(self, int i) noexcept nogil
    cdef int raise_no_memory(self) except -1
    cdef void doc(self, LatticeThread th, int i, const int* actions, int k) noexcept nogil
