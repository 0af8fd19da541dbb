from .search cimport Workspace
from .weights cimport Weights

cdef void add_path(Workspace ws, Weights W, const void* state, const int* path,
                   int n, double delta) except *
cdef int update_weight(Workspace ws, Weights W, const void* state, int gold,
                       double margin) except -1
cdef int train_sequence(Workspace ws, Weights W, void* state, double margin,
                        int* actions, int max_actions, int* n_decisions) except -1
