from .search cimport Workspace
from .topn cimport Chain, NBest
from .weights cimport Weights


cdef double path_score(Workspace ws, Weights W, const void* state, const int* path, int T) noexcept nogil
cdef double sapo_update(Workspace ws, Weights W, const void* state, NBest nbest,
                        const int* gold, int n_gold, double gamma, Chain chain) except? -1
