"""The decoders of the FR recogniser, R(x) = argmax over coherent subsets of
the candidates F(x) of the summed phrase scores (Carreras et al. 2005,
Section 3): left to right for flat phrases (chunks), bottom-up CKY for
embedded ones (clauses); and the partial solutions phi_p reads while they
run."""
from libc.string cimport memset

from ..core.weights cimport Weights
from .phrase_doc cimport FS_CHUNK, PhraseDocC
from .phrase_features cimport PhraseFeatures

DEF NEG_INF = -1e300


# --- contexts (the partial solution phi_p looks at) -----------------------

cdef void flat_context_dp(PhraseFeatures fx, PhraseDocC* d, int s) noexcept nogil:
    """The chunks left of s in the best partial solution of x[0:s]."""
    cdef int pos = s, start
    d.left_n = 0
    while pos > 0 and d.left_n < 3:
        start = d.choice[pos]
        if start < 0:
            pos -= 1
            continue
        d.left_type[d.left_n] = d.top_type[pos]
        d.left_gap[d.left_n] = s - pos
        d.left_n += 1
        pos = start

cdef int inner_tops_dp(PhraseFeatures fx, PhraseDocC* d, int s, int e, int* starts) noexcept nogil:
    """Set d.tops for the top phrases of the best solution inside (s, e)
    that excludes the phrase (s, e) itself; returns how many (their
    starts go to `starts`, to clear them afterwards)."""
    cdef int n = d.n, pos = s, c, m = 0
    cdef bint first = True
    while pos <= e:
        if not first and d.best_is_top[pos * n + e]:
            d.tops[pos] = e
            starts[m] = pos
            m += 1
            break
        c = d.choice[pos * n + e]
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
    best[s]. O(n^2 K) scores at most."""
    cdef int n = d.n, K = d.K, e, s, k, nf
    cdef double v
    cdef bint chunk = fx.feature_set == FS_CHUNK
    if chunk:
        fx.chunk_tables(d, W)
    d.best[0] = 0.0
    d.choice[0] = -1
    d.n_candidates = 0
    for e in range(n):
        d.best[e + 1] = d.best[e]
        d.choice[e + 1] = -1
        d.top_type[e + 1] = -1
        for s in range(e, -1, -1):
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

cdef void decode_embedded(PhraseFeatures fx, PhraseDocC* d, Weights W, int* starts) noexcept nogil:
    """CKY, bottom up. For each span (s, e):
    inner[s,e] = best solution inside x[s..e] without the phrase (s, e):
                 word s uncovered (best[s+1,e]) or covered by a top
                 phrase (s, m), m < e (top[s,m] + best[m+1,e]);
    top[s,e]   = inner[s,e] + the best candidate score of (s, e)_k, whose
                 phi_p sees the top phrases of inner[s,e];
    best[s,e]  = max(inner[s,e], top[s,e])."""
    cdef int n = d.n, K = d.K, length, s, e, m, k, nf, ntops, j
    cdef double v, c, right, t
    d.n_candidates = 0
    for length in range(1, n + 1):
        for s in range(n - length + 1):
            e = s + length - 1
            v = d.best[(s + 1) * n + e] if s < e else 0.0
            d.choice[s * n + e] = -1
            for m in range(s, e):
                if d.top_type[s * n + m] < 0:
                    continue
                right = d.best[(m + 1) * n + e]
                c = d.top[s * n + m] + right
                if c > v:
                    v = c
                    d.choice[s * n + e] = m
            d.inner[s * n + e] = v
            d.top_type[s * n + e] = -1
            d.best[s * n + e] = v
            d.best_is_top[s * n + e] = 0
            if not any_candidate(fx, d, s, e):
                continue
            ntops = inner_tops_dp(fx, d, s, e, starts)
            nf = fx.phrase_features(d.pfeats, d, s, e)
            for j in range(ntops):
                d.tops[starts[j]] = -1
            memset(d.scores, 0, 3 * K * sizeof(double))
            W.dot(d.scores, d.pfeats, nf)
            t = NEG_INF
            for k in range(K):
                if d.hs[s * K + k] > 0 and d.he[e * K + k] > 0:
                    d.n_candidates += 1
                    if v + d.scores[3 * k + 2] > t:
                        t = v + d.scores[3 * k + 2]
                        d.top_type[s * n + e] = k
            d.top[s * n + e] = t
            if t > v:
                d.best[s * n + e] = t
                d.best_is_top[s * n + e] = 1

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
    """Walk the back-pointers from best[0, n-1]. The stack holds cells
    (start, end, is_inner) still to expand."""
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
            if not inner and d.best_is_top[pos * n + e]:
                out[3 * m] = pos; out[3 * m + 1] = e; out[3 * m + 2] = d.top_type[pos * n + e]
                m += 1
                stack[3 * sp] = pos; stack[3 * sp + 1] = e; stack[3 * sp + 2] = 1
                sp += 1
                break
            c = d.choice[pos * n + e]
            if c < 0:
                pos += 1
            else:
                out[3 * m] = pos; out[3 * m + 1] = c; out[3 * m + 2] = d.top_type[pos * n + c]
                m += 1
                stack[3 * sp] = pos; stack[3 * sp + 1] = c; stack[3 * sp + 2] = 1
                sp += 1
                pos = c + 1
            inner = False
    return m
