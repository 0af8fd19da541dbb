"""The decoders of the FR recogniser, R(x) = argmax over coherent subsets of
the candidates F(x) of the summed phrase scores (Carreras et al. 2005,
Section 3): left to right for flat phrases (chunks), bottom-up CKY for
embedded ones (clauses); and the partial solutions phi_p reads while they
run."""
from libc.string cimport memset

from ..core.weights cimport Weights
from .phrase_doc cimport FS_CHUNK, PhraseDocC, cell
from .phrase_features cimport PhraseFeatures

DEF NEG_INF = -1e300


# --- contexts (the partial solution phi_p looks at) -----------------------

cdef void flat_context_dp(PhraseFeatures fx, PhraseDocC* d, int s) noexcept nogil:
    """The chunks left of s in the best partial solution of x[0:s]."""
    # last_chunk jumps over the words outside chunks: O(1) per chunk, not
    # O(gap) (a doc with few chunks would make the flat DP quadratic).
    cdef int pos = d.last_chunk[s]
    d.left_n = 0
    while pos > 0 and d.left_n < 3:
        d.left_type[d.left_n] = d.top_type[pos]
        d.left_gap[d.left_n] = s - pos
        d.left_n += 1
        pos = d.last_chunk[d.choice[pos]]

cdef int inner_tops_dp(PhraseFeatures fx, PhraseDocC* d, int s, int e, int* starts) noexcept nogil:
    """Set d.tops for the top phrases of the best solution inside (s, e)
    that excludes the phrase (s, e) itself; returns how many (their
    starts go to `starts`, to clear them afterwards)."""
    cdef int pos = s, c, m = 0
    cdef bint first = True
    while pos <= e:
        if not first and d.best_is_top[cell(d, pos, e)]:
            d.tops[pos] = e
            starts[m] = pos
            m += 1
            break
        c = d.choice[cell(d, pos, e)]
        if c < 0:
            pos += 1
        else:
            d.tops[pos] = c
            starts[m] = pos
            m += 1
            pos = c + 1
        first = False
    return m

# --- decoding: R(x) = argmax over coherent subsets of F(x) ------------------

cdef bint any_candidate(PhraseFeatures fx, const PhraseDocC* d, int s, int e) noexcept nogil:
    cdef int k
    if fx.max_length and e - s + 1 > fx.max_length:
        return False
    for k in range(d.K):
        if d.hs[s * d.K + k] > 0 and d.he[e * d.K + k] > 0:
            return True
    return False

cdef void decode_flat(PhraseFeatures fx, PhraseDocC* d, Weights W) noexcept nogil:
    """best[e] = the best solution over x[0:e]; a chunk (s, e-1)_k extends
    best[s]. O(n L K) scores at most (L = max_length, or n)."""
    cdef int n = d.n, K = d.K, e, s, k, nf, first
    cdef double v
    cdef bint chunk = fx.feature_set == FS_CHUNK
    if chunk:
        fx.chunk_tables(d, W)
    d.best[0] = 0.0
    d.choice[0] = -1
    d.last_chunk[0] = 0
    d.n_candidates = 0
    for e in range(n):
        d.best[e + 1] = d.best[e]
        d.choice[e + 1] = -1
        d.top_type[e + 1] = -1
        first = e - fx.max_length + 1 if fx.max_length and e >= fx.max_length else 0
        for s in range(e, first - 1, -1):
            if not any_candidate(fx, d, s, e):
                continue
            flat_context_dp(fx, d, s)
            if chunk:
                nf = fx.chunk_joint_feats(d.pfeats, d, s, e)
            else:
                nf = fx.phrase_features(d.pfeats, d, s, e)
            memset(d.scores, 0, 3 * K * sizeof(double))
            W.dot(d.scores, d.pfeats, nf)
            for k in range(K):
                if d.hs[s * K + k] > 0 and d.he[e * K + k] > 0:
                    d.n_candidates += 1
                    v = d.best[s] + d.scores[3 * k + 2]
                    if chunk:
                        v += fx.chunk_static_score(d, s, e, k)
                    if v > d.best[e + 1]:
                        d.best[e + 1] = v
                        d.choice[e + 1] = s
                        d.top_type[e + 1] = k
        d.last_chunk[e + 1] = e + 1 if d.choice[e + 1] >= 0 else d.last_chunk[e]

cdef void inner_dp(PhraseDocC* d, int s, int e) noexcept nogil:
    """inner[s,e] = best solution inside x[s..e] without the phrase (s, e):
    word s uncovered (best[s+1,e]) or covered by a top phrase (s, m), m < e
    (top[s,m] + best[m+1,e]); top phrases are candidates, so m - s < L.
    Sets best[s,e] = inner[s,e] (top_dp may raise it) and choice[s,e]."""
    cdef Py_ssize_t at = cell(d, s, e), sm
    cdef int m, stop = e if e - s < d.band else s + d.band
    cdef double v = d.best[cell(d, s + 1, e)] if s < e else 0.0
    cdef double c, right
    d.choice[at] = -1
    for m in range(s, stop):
        sm = cell(d, s, m)
        if d.top_type[sm] < 0:
            continue
        right = d.best[cell(d, m + 1, e)]
        c = d.top[sm] + right
        if c > v:  # strict, m ascending: the shortest best top phrase wins ties
            v = c
            d.choice[at] = m
    d.best[at] = v
    d.top_type[at] = -1
    d.best_is_top[at] = 0

cdef void top_dp(PhraseFeatures fx, PhraseDocC* d, Weights W, int s, int e, int* starts) noexcept nogil:
    """top[s,e] = inner[s,e] + the best candidate score of (s, e)_k, whose
    phi_p sees the top phrases of inner[s,e]; best[s,e] = max(inner, top)."""
    cdef Py_ssize_t at = cell(d, s, e)
    cdef int K = d.K, k, nf, ntops, j
    cdef double v = d.best[at], t = NEG_INF
    if not any_candidate(fx, d, s, e):
        return
    ntops = inner_tops_dp(fx, d, s, e, starts)
    nf = fx.phrase_features(d.pfeats, d, s, e)
    for j in range(ntops):
        d.tops[starts[j]] = -1
    memset(d.scores, 0, 3 * K * sizeof(double))
    W.dot(d.scores, d.pfeats, nf)
    for k in range(K):
        if d.hs[s * K + k] > 0 and d.he[e * K + k] > 0:
            d.n_candidates += 1
            if v + d.scores[3 * k + 2] > t:
                t = v + d.scores[3 * k + 2]
                d.top_type[at] = k
    d.top[at] = t
    if t > v:
        d.best[at] = t
        d.best_is_top[at] = 1

cdef void decode_embedded(PhraseFeatures fx, PhraseDocC* d, Weights W, int* starts) noexcept nogil:
    """CKY, bottom up: right to left over s, each span (s, e) after all
    those inside it. Only the spans of at most L = d.band words hold
    candidates; beyond them only the suffix (s, n-1) is needed (best =
    inner). O(n L) cells, O(n L^2) steps plus the candidates' scores."""
    cdef int n = d.n, L = d.band, s, e
    d.n_candidates = 0
    # Row by row, not by span length: the cells read lie in rows s..s+L,
    # which stay in cache, instead of a sweep over the whole chart per length.
    for s in range(n - 1, -1, -1):
        for e in range(s, min(s + L, n)):
            inner_dp(d, s, e)
            top_dp(fx, d, W, s, e, starts)
        if s + L < n:
            inner_dp(d, s, n - 1)

cdef int solution_flat(PhraseFeatures fx, const PhraseDocC* d, int* out) noexcept nogil:
    cdef int pos = d.n, m = 0, start
    while pos > 0:
        start = d.choice[pos]
        if start < 0:
            pos -= 1
            continue
        out[3 * m] = start
        out[3 * m + 1] = pos - 1
        out[3 * m + 2] = d.top_type[pos]
        m += 1
        pos = start
    return m

cdef int solution_embedded(PhraseFeatures fx, const PhraseDocC* d, int* out, int* stack) noexcept nogil:
    """Walk the back-pointers from best[0, n-1] (along the suffix cells,
    then inside phrases: every cell read is in the chart). The stack holds
    cells (start, end, is_inner) still to expand."""
    cdef int n = d.n, m = 0, sp = 0, s, e, pos, c
    cdef bint inner
    if n == 0:
        return 0
    stack[0] = 0; stack[1] = n - 1; stack[2] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        s = stack[3 * sp]; e = stack[3 * sp + 1]; inner = stack[3 * sp + 2]
        pos = s
        while pos <= e:
            if not inner and d.best_is_top[cell(d, pos, e)]:
                out[3 * m] = pos; out[3 * m + 1] = e; out[3 * m + 2] = d.top_type[cell(d, pos, e)]
                m += 1
                stack[3 * sp] = pos; stack[3 * sp + 1] = e; stack[3 * sp + 2] = 1
                sp += 1
                break
            c = d.choice[cell(d, pos, e)]
            if c < 0:
                pos += 1
            else:
                out[3 * m] = pos; out[3 * m + 1] = c; out[3 * m + 2] = d.top_type[cell(d, pos, c)]
                m += 1
                stack[3 * sp] = pos; stack[3 * sp + 1] = c; stack[3 * sp + 2] = 1
                sp += 1
                pos = c + 1
            inner = False
    return m
