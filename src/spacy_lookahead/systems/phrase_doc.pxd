"""The C arrays of one document for the FR recogniser (Carreras et al.
2005): inputs, filter scores, the phrase feature buffer and the DP tables.
Shared by the features (phrase_features), the decoders (phrase_decoders)
and the system (phrases), which owns them (_PhraseDoc)."""
from libc.stdint cimport uint64_t

from ..core.weights cimport feat_t

cdef enum:
    MAX_WFEATS = 64   # phi_w of one word
    N_EL = 7          # relevant elements (paper Section 4.1): bits of elem
    FS_CHUNK = 0      # feature sets
    FS_CLAUSE = 1


cdef struct PhraseDocC:
    int n
    int K
    const uint64_t* atoms          # n x N_ATOMS
    const unsigned char* inside    # n: 1 if the word continues a chunk (clauses)
    int* elem                      # n: relevant-element bits
    int* prefix                    # (n + 1) x N_EL counts of the elements
    feat_t* wfeats                 # n x MAX_WFEATS, phi_w as used by the filters
    int* n_wf
    double* hs                     # n x K start-filter scores
    double* he                     # n x K end-filter scores
    int* tops                      # n: end of an inner top phrase starting here, or -1
    int left_n                     # flat context: the chunks left of s, nearest first
    int left_type[3]
    int left_gap[3]
    feat_t* pfeats                 # phrase feature buffer
    double* scores                 # 3K
    double* at_start               # chunks: n x K scores of the s-only features
    double* at_end                 # n x K, e-only features
    double* bag                    # 3 x (n + 1) x K prefix sums of the inside features
    # DP tables. Flat: n + 1 cells. Embedded: the chart cells of cell().
    int band                       # embedded: L, the longest candidate (n when unlimited)
    int* last_chunk                # flat: n + 1, the largest p <= pos with choice[p] >= 0, or 0
    double* best
    double* top
    int* choice                    # flat: start of the last chunk; embedded: inner choice
    int* top_type                  # flat: its type; embedded: type of the phrase (s, e)
    unsigned char* best_is_top
    int n_candidates


# The embedded chart: the cells (s, e) with e - s < L (all candidates live
# there) as n rows of L cells, then the suffix cells (s, n - 1) longer than L,
# the only longer cells the solution walks through. O(n L) instead of n x n.
# (inner[s,e] is not kept: it is best[s,e] until top_dp raises it.)
cdef inline Py_ssize_t chart_cells(int n, int band) noexcept nogil:
    return <Py_ssize_t>n * band + (n - band)

cdef inline Py_ssize_t cell(const PhraseDocC* d, int s, int e) noexcept nogil:
    if e - s < d.band:
        return <Py_ssize_t>s * d.band + (e - s)
    return <Py_ssize_t>d.n * d.band + s   # e == n - 1
