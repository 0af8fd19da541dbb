from libcpp.vector cimport vector
from cymem.cymem cimport Pool

from .beam cimport Beam
from .search cimport Replay, Workspace
from .weights cimport Weights


cdef class Chain:
    """A first-order system seen as a lattice over the steps of one sequence:
    row(t, p) gives the scores of every action at step t after action p
    (p = -1: the first step), -inf where invalid. Rows are computed on demand
    from states on a spine (state after t steps), so memory stays O(T).
    Made by chain_from (a start state is a C pointer, never a Python int)."""
    cdef Workspace ws           # the system, the state size, scoring scratch (feats, cache)
    cdef Pool mem
    cdef Replay replay          # its own: state_after's state is the caller's to read
    cdef readonly int T
    cdef int C
    cdef char* spine            # (T + 1) states, in spine_buf
    cdef vector[char] spine_buf
    cdef vector[double] row_buf
    cdef vector[double] h       # T x C backward-Viterbi heuristic
    cdef const int* fixed       # T actions or -1 (labels known in advance); NULL: none
    cdef object _fixed          # the Python buffer behind fixed
    cdef vector[char] walk      # one state: restart() walks it to the end

    cdef int restart(self, const void* start) except -1
    cdef int walk_from(self, const void* start) noexcept nogil

    cdef int row(self, Weights W, int t, int p, double* out) noexcept nogil
    cdef void* state_after(self, int t, int p) noexcept nogil
    cdef int backward(self, Weights W) noexcept nogil


cdef struct Node:
    int t
    int c
    int parent
    double g


cdef class NBest:
    """The n best action sequences found by a top-n search, best first.
    Derivations may differ in length (a parser's number of roots): sequence
    i is paths[i * T : i * T + lengths[i]]."""
    cdef readonly int k           # how many were found (<= n)
    cdef readonly int T           # the row stride: no sequence is longer
    cdef vector[int] paths        # k x T
    cdef vector[int] lengths      # k
    cdef vector[double] scores    # k

    cdef void clear(self, int T) noexcept nogil


cdef Chain chain_from(Workspace ws, const void* start, fixed=*)
cdef int astar(Chain chain, Weights W, int n, NBest out) noexcept nogil
cdef int run_astar(Chain chain, Weights W, int n, NBest out) except -1
cdef int beam_nbest(Beam beam, Weights W, const void* state, int T, int n, NBest out) except -1
cdef int beam_row_nbest(Beam beam, int t, int T, int n, NBest out) except -1
