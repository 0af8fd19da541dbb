"""Exact marginal probabilities of a first-order system's actions under the
model's distribution over complete derivations,

    p(y | x) = exp(w . Phi(x, y) / tau) / Z(x),

by forward-backward over the label lattice (Chain: the scores of every
action at step t after action p). For SAPO (Sun et al., eq. 1 restricted to
the n best) this is the same distribution over all derivations instead of
the n best: the probability of a tag or of a span is then a marginal, not
the mass of the n best that agree on it. tau (the temperature) scales the
scores; 1 is the model's own distribution.

Cost per doc: T C scorings (each row is kept for the backward pass while
the doc's rows fit in ROW_CACHE doubles; longer docs make them again, so
memory stays bounded) and O(T C^2) log-additions."""
from libc.math cimport INFINITY, exp, log1p
from libcpp.vector cimport vector

import numpy

from .instance cimport Instance
from .search cimport Workspace
from .topn cimport Chain
from .weights cimport Weights


# rows kept per doc: T * C * C doubles at most (16 MB)
ROW_CACHE = 1 << 21


cdef inline double log_add(double a, double b) noexcept nogil:
    """log(exp(a) + exp(b)), exact for -inf."""
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a > b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))


cdef class Lattice:
    """One doc of a first-order system under p(y | x) with temperature tau:
    the forward and backward log-sums (alpha[t, c]: all valid prefixes
    ending with action c at step t; beta[t, c]: all valid completions after
    it) and log Z, from which action and segment probabilities are read."""
    cdef Instance inst   # its states point into the instance's arrays: kept alive here
    cdef Chain chain
    cdef Weights W
    cdef readonly int T, C
    cdef readonly double temperature, log_z
    cdef vector[double] alpha, beta, row
    cdef vector[double] rows      # [(t * C + p) * C + c] when the doc's rows fit
    cdef vector[char] known       # [t * C + p]: that row is in rows
    cdef bint keep, backward

    def __init__(self, Instance inst, Weights W, double temperature=1.0, bint backward=True):
        """backward = False: the forward sums and log Z only (log_probability
        works, marginals and segment probabilities do not)."""
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        cdef Workspace ws = Workspace(inst.system, 0, inst.state_size)
        self.inst = inst
        self.chain = Chain(ws, <size_t>inst.start())
        self.W = W
        self.T = self.chain.T
        self.C = ws.nr_class
        self.temperature = temperature
        self.backward = backward
        self.log_z = 0.0
        self.row.resize(self.C)
        self.keep = <long>self.T * self.C * self.C <= ROW_CACHE
        if self.keep:
            self.rows.resize(<size_t>self.T * self.C * self.C)
            self.known.assign(<size_t>self.T * self.C, 0)
        if self.T:
            with nogil:
                self._forward_backward()

    cdef const double* _row(self, int t, int p) noexcept nogil:
        """Chain.row(t, p): kept (when the doc's rows fit) or made now
        (into the scratch row, valid until the next call)."""
        cdef double* out
        cdef size_t k = <size_t>t * self.C + (p if t else 0)
        if self.keep:
            out = &self.rows[k * self.C]
            if not self.known[k]:
                self.chain.row(self.W, t, p, out)
                self.known[k] = 1
            return out
        self.chain.row(self.W, t, p, self.row.data())
        return self.row.data()

    cdef void _forward_backward(self) noexcept nogil:
        cdef int T = self.T, C = self.C, t, p, c
        cdef double inv = 1.0 / self.temperature, v
        cdef const double* r
        self.alpha.assign(T * C, -INFINITY)
        self.beta.assign(T * C, -INFINITY)
        r = self._row(0, -1)
        for c in range(C):
            self.alpha[c] = r[c] * inv
        for t in range(1, T):
            for p in range(C):
                if self.alpha[(t - 1) * C + p] == -INFINITY:
                    continue
                r = self._row(t, p)
                for c in range(C):
                    if r[c] != -INFINITY:
                        v = self.alpha[(t - 1) * C + p] + r[c] * inv
                        self.alpha[t * C + c] = log_add(self.alpha[t * C + c], v)
        self.log_z = -INFINITY
        for c in range(C):
            self.log_z = log_add(self.log_z, self.alpha[(T - 1) * C + c])
            self.beta[(T - 1) * C + c] = 0.0
        if not self.backward:
            return
        for t in range(T - 2, -1, -1):
            for p in range(C):
                if self.alpha[t * C + p] == -INFINITY:
                    continue  # unreachable: its probability is 0 whatever beta is
                r = self._row(t + 1, p)
                for c in range(C):
                    if r[c] != -INFINITY:
                        self.beta[t * C + p] = log_add(self.beta[t * C + p],
                                                       r[c] * inv + self.beta[(t + 1) * C + c])

    def best(self):
        """(the highest-scoring valid action sequence (T,) int32, its score
        w . Phi): Viterbi over the lattice's rows (kept from the forward
        pass where they fit), first in class order on ties. (None, -inf)
        if no derivation is valid."""
        cdef int T = self.T, C = self.C, t, p, c, arg
        cdef double v, top
        cdef const double* r
        cdef vector[double] score
        cdef vector[int] back
        path = numpy.zeros((T,), dtype="int32")
        if T == 0:
            return path, 0.0
        if self.log_z == -INFINITY:
            return None, -INFINITY
        cdef int[::1] out = path
        with nogil:
            score.assign(T * C, -INFINITY)
            back.assign(T * C, -1)
            r = self._row(0, -1)
            for c in range(C):
                score[c] = r[c]
            for t in range(1, T):
                for p in range(C):
                    if self.alpha[(t - 1) * C + p] == -INFINITY:
                        continue  # unreachable
                    r = self._row(t, p)
                    for c in range(C):
                        v = score[(t - 1) * C + p] + r[c]
                        if v > score[t * C + c]:
                            score[t * C + c] = v
                            back[t * C + c] = p
            arg = 0
            top = -INFINITY
            for c in range(C):
                if score[(T - 1) * C + c] > top:
                    top = score[(T - 1) * C + c]
                    arg = c
            for t in range(T - 1, -1, -1):
                out[t] = arg
                arg = back[t * C + arg]
        return path, top

    def log_probability(self, actions):
        """log p(actions | x): the derivation's score over tau minus log Z;
        -inf if an action is not valid where it is taken."""
        cdef int t, a, prev = -1
        cdef double total = 0.0
        cdef const double* r
        if len(actions) != self.T:
            raise ValueError(f"{len(actions)} actions for a derivation of {self.T} steps")
        if self.T == 0:
            return 0.0
        if self.log_z == -INFINITY:
            return -INFINITY
        for t in range(self.T):
            a = actions[t]
            if a < 0 or a >= self.C:
                raise ValueError(f"action {a} out of range (the system has {self.C})")
            r = self._row(t, prev)
            if r[a] == -INFINITY:
                return -INFINITY
            total += r[a]
            prev = a
        return total / self.temperature - self.log_z

    def _require_backward(self):
        if not self.backward:
            raise ValueError("this lattice has the forward sums only: make it with backward=True")

    def marginals(self):
        """(T, C): p(action c at step t) (all 0 if no derivation is valid)."""
        self._require_backward()
        probs = numpy.zeros((self.T, self.C), dtype="float64")
        cdef double[:, ::1] out = probs
        cdef int t, c
        cdef double v
        for t in range(self.T):
            for c in range(self.C):
                v = self.alpha[t * self.C + c] + self.beta[t * self.C + c]
                if self.log_z != -INFINITY and v != -INFINITY:
                    out[t, c] = exp(v - self.log_z)
        return probs

    def segment_probability(self, int a, labels, before=None, after=None):
        """p(steps a .. a + len(labels) - 1 take `labels`, the step before
        takes an action in `before` and the one after an action in `after`):
        before / after are 0/1 masks over the actions, None for any action;
        a segment at an end of the doc has no step there, which satisfies
        any mask. E.g. an IOB2 span is B-X I-X ... I-X with no I-X after it."""
        cdef int n = len(labels), C = self.C, k, c, b
        cdef double inv = 1.0 / self.temperature, left, middle = 0.0, right, v
        cdef const double* r
        self._require_backward()
        if n < 1 or a < 0 or a + n > self.T:
            raise ValueError(f"segment of {n} steps at {a} is not inside the {self.T} steps")
        if self.log_z == -INFINITY:
            return 0.0
        lab = [int(x) for x in labels]
        if any(x < 0 or x >= C for x in lab):
            raise ValueError("segment label out of range")
        b = a + n - 1
        if before is None or a == 0:
            left = self.alpha[a * C + lab[0]]
        else:
            left = -INFINITY
            for c in range(C):
                if before[c] and self.alpha[(a - 1) * C + c] != -INFINITY:
                    r = self._row(a, c)
                    if r[lab[0]] != -INFINITY:
                        left = log_add(left, self.alpha[(a - 1) * C + c] + r[lab[0]] * inv)
        for k in range(a + 1, b + 1):
            r = self._row(k, lab[k - a - 1])
            middle += r[lab[k - a]] * inv
        if after is None or b == self.T - 1:
            right = self.beta[b * C + lab[n - 1]]
        else:
            right = -INFINITY
            r = self._row(b + 1, lab[n - 1])
            for c in range(C):
                if after[c] and r[c] != -INFINITY:
                    right = log_add(right, r[c] * inv + self.beta[(b + 1) * C + c])
        v = left + middle + right
        if v == -INFINITY or v != v:
            return 0.0
        return exp(v - self.log_z)


def marginals(instances, Weights W, double temperature=1.0):
    """Per instance of a first-order system: (probabilities (steps, C) of
    each action at each step, in the order the system takes them; log Z)."""
    out = []
    for inst in instances:
        lattice = Lattice(inst, W, temperature)
        out.append((lattice.marginals(), lattice.log_z))
    return out


def gold_derivations(instances):
    """(instance, gold actions) of each instance whose gold derivation is
    fully known (a doc with missing annotation has none)."""
    out = []
    for inst in instances:
        gold = inst.oracle_actions()
        if gold is not None:
            out.append((inst, gold[0]))
    return out


def negative_log_likelihood(golds, Weights W, double temperature):
    """-sum log p(gold | x) at this temperature over (instance, actions)."""
    cdef double total = 0.0
    for inst, actions in golds:
        total -= Lattice(inst, W, temperature, backward=False).log_probability(actions)
    return total


def fit_temperature(golds, Weights W, double low=0.1, double high=10.0, double tolerance=0.005):
    """Temperature scaling of p(y | x) on held-out data: the tau in [low,
    high] that minimises the negative log-likelihood of the gold derivations
    `golds` ((instance, actions), see gold_derivations). The NLL is convex in
    1 / tau (log Z is convex in the scale of the scores, the gold's score is
    linear in it), so a golden-section search over log tau finds it, to a
    relative `tolerance`. Returns (tau, its NLL, the NLL at tau = 1)."""
    if not 0.0 < low < 1.0 < high:
        raise ValueError(f"need 0 < low < 1 < high, got {low!r}, {high!r}")
    import math
    phi = (math.sqrt(5.0) - 1.0) / 2.0
    cost = lambda x: negative_log_likelihood(golds, W, math.exp(x))
    a, b = math.log(low), math.log(high)
    c, d = b - phi * (b - a), a + phi * (b - a)
    fc, fd = cost(c), cost(d)
    while b - a > tolerance:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - phi * (b - a)
            fc = cost(c)
        else:
            a, c, fc = c, d, fd
            d = a + phi * (b - a)
            fd = cost(d)
    x, fx = (c, fc) if fc <= fd else (d, fd)
    return math.exp(x), fx, cost(0.0)
