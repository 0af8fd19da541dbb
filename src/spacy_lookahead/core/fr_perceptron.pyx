"""The FR-Perceptron (Carreras, Marquez & Castro 2005, Figure 1): online
learning of a filtering-ranking phrase recogniser, generic over the
recogniser (the system gives its filters, its decoder R(x) and the feature
vectors; see PhraseInstance).

Recognition feedback (the FR-Perceptron): decode x with the current
vectors; then for each missed gold phrase (s, e)_k:
  * start filter: if h_S^k(s) <= 0, w_S^k += phi_w(s)      (type A errors)
  * end filter:   if h_E^k(e) <= 0, w_E^k += phi_w(e)
  * score:        if (s, e)_k was a candidate, w^k += phi_p((s, e), x, y_hat)
and for each over-predicted phrase (s, e)_k:
  * score:        w^k -= phi_p((s, e), x, y_hat)
  * start filter: if s starts no gold phrase of type k, w_S^k -= phi_w(s)   (type B)
  * end filter:   if e ends no gold phrase of type k, w_E^k -= phi_w(e).
Every condition reads the scores of the prediction (the vectors before any
update, note 1); a filter vector is updated at most once per word (note 2:
the first rule that applies wins).

Classification feedback (the paper's CO-VP baseline, Section 5.1.1): every
filter decision on every word, and every score decision on every generated
candidate (with the features the decoder scored it with), is corrected on
its own, as a binary perceptron per function.

One tick (averaging unit) per document, as every learner of the engine.
"""
import numpy

from .weights cimport Weights, feat_t

FEEDBACKS = ("recognition", "classification")


cdef class PhraseInstance:
    def __init__(self, int n, int K, gold=None, int max_length=0):
        self.n = n
        self.K = K
        self.n_candidates = 0
        self.max_length = max_length
        self.gold = None
        if gold is not None:
            gold = numpy.ascontiguousarray(numpy.asarray(gold, dtype="int32").reshape((-1, 3)))
            if n and gold.shape[0] and (gold[:, 0].min() < 0 or gold[:, 1].max() >= n
                                        or (gold[:, 0] > gold[:, 1]).any()
                                        or gold[:, 2].max() >= K or gold[:, 2].min() < 0):
                raise ValueError(f"gold phrases out of range for {n} tokens and {K} types: "
                                 f"{gold.tolist()}")
            self.gold = gold

    cdef int recognise(self, Weights W) except -1:
        """Run the filters and the decoder R(x) with W (filter scores and the
        solution are kept for the feedback)."""
        raise NotImplementedError

    cdef double start_score(self, int i, int k) noexcept nogil:
        return -1.0

    cdef double end_score(self, int i, int k) noexcept nogil:
        return -1.0

    cdef bint can_start(self, int i) noexcept nogil:
        return True

    cdef bint can_end(self, int i) noexcept nogil:
        return True

    cdef bint may_be_candidate(self, int s, int e) noexcept nogil:
        """(s, e) is within the length limit and some type's filters fire."""
        return False

    cdef int word_features(self, int i, const feat_t** out) noexcept nogil:
        """phi_w(i) as the filters used it in the last recognise()."""
        return 0

    cdef int phrase_features_in(self, int s, int e, int[:, ::1] solution, int m,
                                const feat_t** out) except -1:
        """phi_p((s, e), x, y) with y the m rows of `solution` (start, end,
        type), sorted by start, then by decreasing end."""
        return 0

    cdef int candidate_features(self, int s, int e, const feat_t** out) except -1:
        """phi_p((s, e)) with the partial solution the decoder gave it."""
        return 0

    def solution(self):
        """The last recognise()'s phrases: (m, 3) int32 (start, end, type)."""
        raise NotImplementedError

    def fired(self, bint start):
        """(n, K) booleans: where the start (end) filter fired in the last recognise()."""
        out = numpy.zeros((self.n, self.K), dtype="bool")
        cdef int i, k
        for i in range(self.n):
            for k in range(self.K):
                out[i, k] = (self.start_score(i, k) if start else self.end_score(i, k)) > 0
        return out


def recognise(instances, Weights W, bint details=False):
    """R(x) of each instance: its phrases (m, 3) int32 (start, end inclusive,
    type); with details, (phrases, candidates, start fired (n, K), end fired
    (n, K))."""
    cdef PhraseInstance inst
    out = []
    for inst in instances:
        if inst.n:
            inst.recognise(W)
        if details:
            out.append((inst.solution(), inst.n_candidates, inst.fired(True), inst.fired(False)))
        else:
            out.append(inst.solution())
    return out


def fr_perceptron(instances, Weights W, str feedback="recognition"):
    """One online pass of Figure 1 (feedback "recognition") or of CO-VP
    ("classification") over the instances, which carry their gold phrases.
    Returns (mistakes, candidates): missed plus over-predicted phrases, and
    the candidates the filters generated."""
    if feedback not in FEEDBACKS:
        raise ValueError(f"feedback must be one of {FEEDBACKS}, got {feedback!r}")
    cdef PhraseInstance inst
    mistakes = candidates = 0
    for inst in instances:
        if inst.gold is None:
            raise ValueError("the FR-Perceptron needs gold phrases on every instance")
        if inst.n == 0:
            continue
        m = _learn(inst, W, feedback == "recognition")
        mistakes += m
        candidates += inst.n_candidates
        W.tick()
    return mistakes, candidates


cdef int _learn(PhraseInstance inst, Weights W, bint recognition) except -1:
    cdef int K = inst.K, i, k, s, e, nf
    cdef const feat_t* f
    inst.recognise(W)
    pred = inst.solution()
    gold_set = {(int(a), int(b), int(c)) for a, b, c in inst.gold}
    pred_set = {(int(a), int(b), int(c)) for a, b, c in pred}
    missed = sorted(gold_set - pred_set)
    over = sorted(pred_set - gold_set)
    cdef int[:, ::1] ctx = numpy.ascontiguousarray(pred, dtype="int32") if pred.shape[0] \
        else numpy.zeros((1, 3), dtype="int32")
    cdef int n_ctx = pred.shape[0]
    gold_s = numpy.zeros((inst.n, K), dtype="bool")
    gold_e = numpy.zeros((inst.n, K), dtype="bool")
    for s, e, k in gold_set:
        gold_s[s, k] = True
        gold_e[e, k] = True
    if not recognition:
        _classification_feedback(inst, W, gold_s, gold_e, gold_set)
        return len(missed) + len(over)
    filters = {}  # (word, vector) -> delta: the first rule wins (note 2)
    for s, e, k in missed:
        hs = inst.start_score(s, k)
        he = inst.end_score(e, k)
        if hs <= 0 and inst.can_start(s):
            filters.setdefault((s, 3 * k), 1.0)
        if he <= 0 and inst.can_end(e):
            filters.setdefault((e, 3 * k + 1), 1.0)
        if hs > 0 and he > 0 and inst.may_be_candidate(s, e):  # it was generated
            nf = inst.phrase_features_in(s, e, ctx, n_ctx, &f)
            W.update_all(f, nf, 3 * k + 2, 1.0)
    for s, e, k in over:
        nf = inst.phrase_features_in(s, e, ctx, n_ctx, &f)
        W.update_all(f, nf, 3 * k + 2, -1.0)
        if not gold_s[s, k]:
            filters.setdefault((s, 3 * k), -1.0)
        if not gold_e[e, k]:
            filters.setdefault((e, 3 * k + 1), -1.0)
    for (i, clas), delta in filters.items():
        nf = inst.word_features(i, &f)
        W.update_all(f, nf, clas, delta)
    return len(missed) + len(over)


cdef void _classification_feedback(PhraseInstance inst, Weights W, gold_s, gold_e,
                                   gold_set) except *:
    cdef int n = inst.n, K = inst.K, L = inst.max_length, i, k, s, e, nf
    cdef const feat_t* f
    cdef double h
    cdef feat_t[::1] fv
    scores = numpy.zeros((3 * K,), dtype="float64")
    cdef double[::1] sv = scores
    updates = []
    for i in range(n):
        for k in range(K):
            if inst.can_start(i) and (inst.start_score(i, k) > 0) != gold_s[i, k]:
                updates.append((i, 3 * k, 1.0 if gold_s[i, k] else -1.0))
            if inst.can_end(i) and (inst.end_score(i, k) > 0) != gold_e[i, k]:
                updates.append((i, 3 * k + 1, 1.0 if gold_e[i, k] else -1.0))
    phrase_updates = []
    for e in range(n):
        for s in range(e - L + 1 if L and e >= L else 0, e + 1):  # O(n L) pairs, not O(n^2)
            if not inst.may_be_candidate(s, e):
                continue
            nf = inst.candidate_features(s, e, &f)
            sv[:] = 0.0
            W.dot(&sv[0], f, nf)
            feats = numpy.asarray(<const feat_t[:nf]>f).copy() if nf else \
                numpy.zeros((0,), dtype="uint64")
            for k in range(K):
                if inst.start_score(s, k) > 0 and inst.end_score(e, k) > 0:
                    positive = (s, e, k) in gold_set
                    if (sv[3 * k + 2] > 0) != positive:
                        phrase_updates.append((feats, 3 * k + 2, 1.0 if positive else -1.0))
    for i, clas, h in updates:
        nf = inst.word_features(i, &f)
        W.update_all(f, nf, clas, h)
    for feats, clas, h in phrase_updates:
        fv = feats
        if fv.shape[0]:
            W.update_all(&fv[0], fv.shape[0], clas, h)
