"""SAPO, the search-based probabilistic online learner (Sun et al., Algorithm 1):
probabilities over the top-n outputs by a softmax of their scores (eq. 1),
w -= gamma P_k F(x, y_k) for each of them (eq. 3) and w += gamma F(x, y*)
(eq. 4). The L2 step (eq. 5) is the caller's `Weights.shrink`, lazily."""
from libc.math cimport exp, fabs, log
from libc.stdint cimport int64_t
from libcpp.algorithm cimport sort
from libcpp.utility cimport pair
from libcpp.vector cimport vector


from .learn cimport add_path
from .search cimport Workspace
from .system cimport TransitionSystem
from .topn cimport Chain, NBest
from .weights cimport Weights


cdef double path_score(Workspace ws, Weights W, const void* state, const int* path, int T) noexcept nogil:
    """w . F(x, y) of an action sequence, replayed from `state`."""
    cdef void* s = ws.replay.state
    cdef double total = 0.0
    cdef int t
    ws.system.copy_state(s, state, ws.state_size)
    for t in range(T):
        ws.system.score(ws.replay.scores, s, W, ws.feats, ws.cache)
        total += ws.replay.scores[path[t]]
        ws.system.apply(s, path[t])
    return total


cdef void softmax(double* probs, const double* scores, int k) noexcept nogil:
    cdef int i
    cdef double top = scores[0], z = 0.0
    for i in range(1, k):
        if scores[i] > top:
            top = scores[i]
    for i in range(k):
        probs[i] = exp(scores[i] - top)
        z += probs[i]
    for i in range(k):
        probs[i] /= z


cdef double sapo_update(Workspace ws, Weights W, const void* state, NBest nbest,
                        const int* gold, int n_gold, double gamma, Chain chain) except? -1:
    """Lines 5-7 of Algorithm 1 for one example, given its n-best (scored
    with the weights before the update). Returns the negative log-likelihood
    of y* with the normaliser over the n-best and y* (so it is >= 0).

    With `chain` (a first-order system) the n + 1 feature vectors are summed
    per (step, previous action, action) first: where every output agrees
    with y*, the deltas cancel (sum P_k = 1) and no weight is touched. The
    result is the same update, in far fewer weight writes. Without it, the
    outputs may differ in length (n_gold: the length of y*)."""
    cdef int T = nbest.T, k = nbest.k, i, t, p, c, C = ws.nr_class, n_feats
    cdef vector[double] probs
    cdef double gold_score, z, top, d
    cdef bint gold_in_nbest = False
    if k == 0:
        return 0.0
    probs.resize(k)
    softmax(probs.data(), nbest.scores.data(), k)
    # Loss: -log P(y*), normalised over the n-best plus y*.
    gold_score = path_score(ws, W, state, gold, n_gold)
    top = gold_score
    for i in range(k):
        if nbest.scores[i] > top:
            top = nbest.scores[i]
    z = exp(gold_score - top)
    for i in range(k):
        if _same(&nbest.paths[i * T], nbest.lengths[i], gold, n_gold):
            gold_in_nbest = True
        else:
            z += exp(nbest.scores[i] - top)
    cdef double loss = log(z) - (gold_score - top)
    if chain is None:
        for i in range(k):
            add_path(ws, W, state, &nbest.paths[i * T], nbest.lengths[i], -gamma * probs[i])
        add_path(ws, W, state, gold, n_gold, gamma)
        return loss
    cdef vector[pair[int64_t, double]] deltas
    cdef const int* path
    for i in range(k + 1):
        path = gold if i == k else &nbest.paths[i * T]
        d = gamma if i == k else -gamma * probs[i]
        for t in range(T):
            p = path[t - 1] if t > 0 else -1
            deltas.push_back(pair[int64_t, double](
                (<int64_t>t * (C + 1) + p + 1) * C + path[t], d))
    sort(deltas.begin(), deltas.end())
    cdef size_t j = 0, j2
    cdef int64_t key
    while j < deltas.size():
        key = deltas[j].first
        d = 0.0
        j2 = j
        while j2 < deltas.size() and deltas[j2].first == key:
            d += deltas[j2].second
            j2 += 1
        j = j2
        if fabs(d) <= 1e-12 * gamma:  # cancelled: sum of probabilities is 1
            continue
        c = key % C
        p = <int>((key // C) % (C + 1)) - 1
        t = <int>(key // C // (C + 1))
        n_feats = ws.system.extract(ws.feats, chain.state_after(t, p))
        W.update_all(ws.feats, n_feats, c, d)
    return loss


cdef bint _same(const int* a, int na, const int* b, int nb) noexcept nogil:
    cdef int t
    if na != nb:
        return False
    for t in range(na):
        if a[t] != b[t]:
            return False
    return True

