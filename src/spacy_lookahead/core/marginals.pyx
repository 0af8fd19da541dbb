"""Exact marginal probabilities of a first-order system's actions under the
model's distribution over complete derivations,

    p(y | x) = exp(w . Phi(x, y) / tau) / Z(x),

by forward-backward over the label lattice (Chain: the scores of every
action at step t after action p). For SAPO (Sun et al., eq. 1 restricted to
the n best) this is the same distribution over all derivations instead of
the n best: the probability of a tag or of a span is then a marginal, not
the mass of the n best that agree on it. tau (the temperature) scales the
scores; 1 is the model's own distribution (calibration.pyx fits it).

Cost per doc, for a homogeneous system (the tagging systems: emissions of
the step plus transitions of the previous action; the transition factors
made once per batch, Transitions): T C exponentials and O(T C^2)
multiply-adds. For any other first-order system, or where the scores / tau
span too wide a range for the factors: T C scorings and T C^2 exponentials
(each row and its factors kept for the backward pass while they fit in
ROW_CACHE doubles; longer docs make them again, so memory stays bounded)."""
from libc.float cimport DBL_EPSILON, DBL_MIN
from libc.math cimport INFINITY, exp, log, log1p
from libc.stdint cimport int64_t
from libc.string cimport memset

import numpy

from .atomics cimport la_min, la_take
from .batch import thread_count
from .beam cimport padded_size
from .clock cimport add_since, now_ns
from .nothrow cimport la_assign, la_resize
from .instance import as_docs
from .search cimport workspace_for
from .threads cimport CRun
from .threads import RunsStarted
from .topn cimport chain_from
# Instance, TransitionSystem, Workspace, Chain, Weights, vector: marginals.pxd


# doubles kept per doc: the rows and their factors, 2 T C C at most (16 MB)
ROW_CACHE = 1 << 21
# homogeneous systems: the lattice as emissions times a transition matrix
# (False: every row scored as any first-order system's; the tests compare)
FACTORED = True
# ... where the factors cannot underflow: the emissions of a step, and the
# transitions, span at most this many units of score / tau, so an entry's
# two factors are at least exp(-2 x 150) ~ 1e-130. A product also holds the
# previous step's forward sum, which a constrained lattice can make tiny
# (its mass in dead ends): a forward sum below exp(2 x range) x DBL_MIN /
# DBL_EPSILON (~2e-162 at 150) could lose digits in a product, so the doc
# is summed in the log domain instead (never for an unconstrained doc,
# whose sums stay above ~1e-130 / C). (It was 50, without that check: 40%
# of the EWT test docs of the shipped tagger fell back to the rows, 5x
# slower.)
FACTORED_RANGE = 150.0
# ... and a step of the scaled sums whose scores / tau span more than this is
# summed in the log domain instead (exp(-SHARP_RANGE) is near the smallest
# double: a smaller factor would be 0, and the best derivation may need it)
cdef double SHARP_RANGE = 650.0
# best() of a factored lattice: Viterbi over the entries of marginal >
# theta only, for a theta near the best path's probability (half the product
# of the steps' largest marginals), then theta = half the found path's p
# (which keeps that path). A found path of p >= 2 theta is the best: every
# entry of the best path has a marginal >= the best path's p >= the found
# path's p > theta, so the best path was among the entries kept. A step
# keeps a few of its C entries where the model is sure, and Viterbi, the
# costliest of the three passes (C^2 compares per step), costs a few C.
# Otherwise (or theta < MIN_THETA: a long doc's best path is improbable,
# and nearly every entry would be kept): Viterbi over all entries.
# False: always over all entries (the tests compare).
PRUNED_VITERBI = True
MIN_THETA = 1e-12
_NO_MEMORY = ("no memory left for a doc's lattice (its chain of states and rows): "
              "give it more memory, or fewer threads")


cdef inline double log_add(double a, double b) noexcept nogil:
    """log(exp(a) + exp(b)), exact for -inf."""
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a > b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))


cdef extern from *:
    """
    /* y += a x over n doubles; restrict lets the compiler vectorise it. On
       x86-64 Linux also an AVX2 clone, chosen at load time where the CPU has
       it (the sums of the forward and backward passes are most of a tagging
       lattice's cost; the same products and sums, so the same results). */
    #if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static void la_axpy(int n, double a, const double* __restrict x, double* __restrict y) {
        for (int i = 0; i < n; ++i) y[i] += a * x[i];
    }
    """
    void la_axpy(int n, double a, const double* x, double* y) noexcept nogil


cdef inline double _span(const double* v, int n) noexcept nogil:
    """max - min of the finite entries (0 if none)."""
    cdef double low = INFINITY, high = -INFINITY
    cdef int i
    for i in range(n):
        if v[i] != -INFINITY:
            low = min(low, v[i])
            high = max(high, v[i])
    return high - low if high >= low else 0.0


cdef class Transitions:
    """A homogeneous system's transition scores T[p, c] (p = -1: the first
    step) under weights W, and their factors exp(T / tau - TM), made once and
    shared by the lattices of a batch: for short docs making them per doc
    costs more than the doc's own steps."""

    def __init__(self, TransitionSystem system, Weights W, double temperature):
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        cdef Workspace ws = Workspace(system, 0, system.state_size)
        cdef int C = system.nr_class, p, c
        cdef double inv = 1.0 / temperature
        self.system = system
        self.W = W
        self.version = W.version
        self.temperature = temperature
        self.C = C
        self.tr.assign((C + 1) * C, 0.0)
        self.etr.assign((C + 1) * C, 0.0)
        self.etr_t.assign(C * C, 0.0)
        with nogil:
            for p in range(-1, C):
                system.transition(&self.tr[(p + 1) * C], p, W, ws.feats)
            self.tm = -INFINITY
            for p in range((C + 1) * C):
                if self.tr[p] != -INFINITY and self.tr[p] * inv > self.tm:
                    self.tm = self.tr[p] * inv
            for p in range((C + 1) * C):
                if self.tr[p] != -INFINITY:
                    self.etr[p] = exp(self.tr[p] * inv - self.tm)
            for p in range(C):  # etr_t[c, p] = etr[p + 1, c]: the backward sums as axpys
                for c in range(C):
                    self.etr_t[c * C + p] = self.etr[(p + 1) * C + c]
        self.in_range = _span(&self.tr[0], (C + 1) * C) * inv <= FACTORED_RANGE

    def fits(self, TransitionSystem system, Weights W, double temperature) -> bool:
        """Made for these weights (and their version), system and tau."""
        return (system is self.system and W is self.W and temperature == self.temperature
                and W.version == self.version)


cdef class Lattice:
    """One doc of a first-order system under p(y | x) with temperature tau:
    the forward and backward sums (alpha[t, c]: all valid prefixes ending
    with action c at step t; beta[t, c]: all valid completions after it),
    scaled per step, and log Z, from which action and segment probabilities
    are read."""
    def __init__(self, Instance inst, Weights W, double temperature=1.0, bint backward=True,
                 Transitions transitions=None, Workspace workspace=None):
        """backward = False: the forward sums and log Z only (log_probability
        works, marginals and segment probabilities do not). transitions: the
        batch's (Transitions), for a homogeneous system; made here if None.
        workspace: scratch memory shared by lattices used one at a time (one
        thread), for the system and state size of `inst`; made here if None
        (a Workspace costs more than a short sentence's sums)."""
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        self._reset(inst, W, temperature, backward, transitions, workspace)

    cdef int _reset(self, Instance inst, Weights W, double temperature, bint backward,
                    Transitions transitions, Workspace ws) except -1:
        """__init__'s work, reusing this lattice's memory (its chain's too,
        where the workspace is the same)."""
        self._prepare(inst.system, inst.state_size, W, temperature, backward, transitions, ws)
        self.inst = inst
        cdef const void* start = inst.start()
        cdef bint breaks = inst.breaks
        cdef int64_t t0 = now_ns()
        cdef int rc
        with nogil:
            rc = self._open(start, breaks)
        add_since(t0)
        if rc != 0:
            raise MemoryError(f"{_NO_MEMORY} (a doc of {inst.length} tokens)")
        return 0

    cdef int _prepare(self, TransitionSystem system, size_t state_size, Weights W,
                      double temperature, bint backward, Transitions transitions,
                      Workspace ws) except -1:
        """What the docs of a batch share (with the GIL, once): the
        workspace, the chain (kept where the workspace is the same), the
        weights and tau and, for a homogeneous system, the transitions (made
        here unless `transitions` fit); then _open makes each doc's sums."""
        ws = workspace_for(ws, system, state_size, 0)
        if self.chain is None or self.chain.ws is not ws:
            self.chain = chain_from(ws, NULL)
        self.ws = ws
        self.inst = None
        self.W = W
        self.T = 0
        self.C = ws.nr_class
        self.temperature = temperature
        self.backward = backward
        self.row.resize(self.C)
        self.factor_row.resize(self.C)
        self.factorable = FACTORED and system.homogeneous
        self.trans = None
        if self.factorable:
            if transitions is None or not transitions.fits(system, W, temperature):
                transitions = Transitions(system, W, temperature)
            self.trans = transitions
        self.row_cache = ROW_CACHE
        self.factored_range = FACTORED_RANGE
        self.floor = exp(2.0 * self.factored_range) * DBL_MIN / DBL_EPSILON
        return 0

    cdef int _open(self, const void* start, bint breaks) noexcept nogil:
        """The sums of the doc from `start` (after _prepare; its arrays kept
        alive by the caller): a thread's work per doc, without the GIL (the
        caller's nogil section is on the engine's clock). -1 where no memory
        was left for its chain or its rows (then a lattice of no steps)."""
        cdef bint sound = False
        self.no_memory = False
        if self.chain.walk_from(start) != 0:
            return self._lost()
        self.breaks = breaks
        self.keep = False
        self.log_domain = False
        self.T = self.chain.T
        self.log_z = 0.0
        # (a doc of several sentences factors too: at a sentence's first step
        # every previous action's transitions are the first step's)
        self.factored = (self.factorable and self.T > 0
                         and (not breaks or self.ws.system.factors_across_breaks))
        if self.factored:
            self.factored = self.trans.in_range and self._split_scores(self.ws, self.factored_range)
            if self.factored:
                self._factored_forward_backward()
                if self.no_memory:
                    return self._lost()
                sound = self._sound()
                if sound:
                    return 0
                self.factored = False  # (not expected: the ranges were checked) row by row
        self.keep = 2 * <long>self.T * self.C * self.C <= self.row_cache
        if self.no_memory or (self.keep and (
                la_resize(self.rows, <size_t>self.T * self.C * self.C) != 0
                or la_resize(self.factors, <size_t>self.T * self.C * self.C) != 0
                or la_assign(self.known, <size_t>self.T * self.C, <char>0) != 0)):
            return self._lost()
        if self.T:
            self._forward_backward()
            if not self.no_memory and not self._sound():
                self._log_forward_backward()
        return self._lost() if self.no_memory else 0

    cdef int _lost(self) noexcept nogil:
        """_open's end where an array could not grow: a lattice of no steps
        (never read as a doc's sums), -1."""
        self.no_memory = True
        self.T = 0
        return -1

    cdef bint _sound(self) noexcept nogil:
        """Whether the sums kept their meaning: log Z is a number and, with
        the backward sums, each step's marginals are in [0, 1] and sum to
        1 (a guard: the scaled passes check their ranges first)."""
        cdef int t, c
        cdef double total, m
        if self.log_z != self.log_z or self.log_z == INFINITY:
            return False
        if self.log_z == -INFINITY or not self.backward or self.log_domain:
            return True
        for t in range(self.T):
            total = 0.0
            for c in range(self.C):
                m = self._marginal(t, c)
                if not (0.0 <= m <= 1.0 + 1e-9):
                    return False
                total += m
            if not (1.0 - 1e-9 <= total <= 1.0 + 1e-9):
                return False
        return True

    cdef double _marginal(self, int t, int c) noexcept nogil:
        """p(action c at step t), for a finite log Z (a product rounded
        above 1 is 1)."""
        cdef size_t k = <size_t>t * self.C + c
        if self.log_domain:
            if self.la[k] == -INFINITY or self.lb[k] == -INFINITY:
                return 0.0
            return min(1.0, exp(self.la[k] + self.lb[k] - self.log_z))
        return min(1.0, self.fwd[k] * self.bwd[k])

    cdef bint _split_scores(self, Workspace ws, double limit) noexcept nogil:
        """Factored: each step's emissions (the transitions are the batch's);
        False where a step's range exceeds `limit` (the factors could
        underflow)."""
        cdef int T = self.T, C = self.C, t
        cdef const void* state
        if la_resize(self.em, <size_t>T * C) != 0 or la_assign(self.restart, <size_t>T, <char>0) != 0:
            self.no_memory = True
            return False
        for t in range(T):
            state = self.chain.state_after(t, 0 if t else -1)
            ws.system.emission(&self.em[t * C], state, self.W, ws.feats)
            self.restart[t] = t == 0 or (self.breaks and ws.system.history_restarts(state))
            if _span(&self.em[t * C], C) / self.temperature > limit:
                return False
        return True

    cdef const double* _row(self, int t, int p) noexcept nogil:
        """Chain.row(t, p): kept (when the doc's rows fit) or made now
        (into the scratch row, valid until the next call); factored: the
        step's emissions plus p's transitions (their sum, as score() adds)."""
        cdef double* out
        cdef size_t k = <size_t>t * self.C + (p if t else 0)
        cdef int c
        cdef const double* e
        cdef const double* f
        if self.factored:
            out = self.row.data()
            e = &self.em[t * self.C]
            f = &self.trans.tr[(self._before(t, p) + 1) * self.C]
            for c in range(self.C):
                out[c] = e[c] + f[c]
            return out
        if self.keep:
            out = &self.rows[k * self.C]
            if not self.known[k]:
                self.chain.row(self.W, t, p, out)
                self.known[k] = 1
            return out
        self.chain.row(self.W, t, p, self.row.data())
        return self.row.data()

    cdef inline int _before(self, int t, int p) noexcept nogil:
        """Factored: the transition row of action p before step t (-1 where
        the step starts the history: step 0, a sentence's first step)."""
        return -1 if self.restart[t] else p

    cdef const double* _factors(self, int t, int p, double shift) noexcept nogil:
        """exp(row(t, p) / tau - shift): the row's factors of p(y | x), 0 where
        invalid; kept beside the rows where they fit, else made now."""
        cdef const double* r = self._row(t, p)
        cdef double* out
        cdef double inv = 1.0 / self.temperature
        cdef size_t k = <size_t>t * self.C + (p if t else 0)
        cdef int c
        if self.keep:
            out = &self.factors[k * self.C]
            if self.known[k] == 2:
                return out
            self.known[k] = 2
        else:
            out = self.factor_row.data()
        for c in range(self.C):
            out[c] = exp(r[c] * inv - shift) if r[c] != -INFINITY else 0.0
        return out

    cdef void _forward_backward(self) noexcept nogil:
        """Scaled forward-backward in the probability domain (one exp per
        lattice entry instead of a log-addition per entry in each pass): a
        step's factors are shifted by its largest score so they cannot
        overflow, and its forward sums are normalised to 1, the log of the
        normaliser kept (log Z is their sum). The backward sums use the same
        normalisers, so fwd * bwd is the marginal. An entry below 1e-308 of
        its step's total is 0 here as it is in the log-domain sum."""
        cdef int T = self.T, C = self.C, t, p, c
        cdef double inv = 1.0 / self.temperature, top, low, total, a
        cdef const double* r
        cdef const double* f
        cdef vector[double] shift, totals
        if (not self._start_sums() or la_assign(totals, <size_t>T, 1.0) != 0
                or la_assign(shift, <size_t>T, -INFINITY) != 0):
            self.no_memory = True
            return
        for t in range(T):
            # the step's shift: its largest score over the reachable rows
            top = -INFINITY
            low = INFINITY
            for p in range(C if t else 1):
                if t and self.fwd[(t - 1) * C + p] == 0.0:
                    continue
                r = self._row(t, p if t else -1)
                for c in range(C):
                    if r[c] * inv > top:
                        top = r[c] * inv
                    if r[c] != -INFINITY and r[c] * inv < low:
                        low = r[c] * inv
            if top == -INFINITY or top - low > SHARP_RANGE:
                # none, or a live prefix lost to underflow; or sharp scores
                # (a temperature near 0, large weights)
                self._log_forward_backward()
                return
            shift[t] = top
            for p in range(C if t else 1):
                a = self.fwd[(t - 1) * C + p] if t else 1.0
                if a == 0.0:
                    continue
                f = self._factors(t, p if t else -1, top)
                for c in range(C):
                    self.fwd[t * C + c] += a * f[c]
            total = 0.0
            for c in range(C):
                total += self.fwd[t * C + c]
            if total == 0.0:
                self._log_forward_backward()
                return
            for c in range(C):
                self.fwd[t * C + c] /= total
            totals[t] = total
            self.log_norm[t] = log(total) + top
        if not self._end_forward():
            return
        if not self.backward:
            return
        for t in range(T - 2, -1, -1):
            total = totals[t + 1]
            for p in range(C):
                if self.fwd[t * C + p] == 0.0:
                    continue  # unreachable: its probability is 0 whatever bwd is
                f = self._factors(t + 1, p, shift[t + 1])
                a = 0.0
                for c in range(C):
                    a += f[c] * self.bwd[(t + 1) * C + c]
                self.bwd[t * C + p] = a / total

    cdef void _log_forward_backward(self) noexcept nogil:
        """The sums in the log domain, where a scaled pass found no
        derivation. A scaled step keeps its prefixes relative to the step's
        total, so in a constrained system the one prefix that can complete
        can fall below 1e-308 of prefixes that end in dead ends, and be lost:
        a valid doc would get log Z = -inf. Here the backward sums come
        first, so each step is normalised over its live entries only (those
        with a valid completion); fwd, bwd and log Z then mean what the
        scaled passes make them mean. T C^2 log-additions a pass."""
        cdef int T = self.T, C = self.C, t, p, c
        cdef double inv = 1.0 / self.temperature, v, norm, prev = 0.0
        cdef const double* r
        cdef vector[double]* la_p = &self.la
        cdef vector[double]* lb_p = &self.lb
        if (la_assign(la_p[0], <size_t>T * C, -INFINITY) != 0
                or la_assign(lb_p[0], <size_t>T * C, -INFINITY) != 0):
            self.no_memory = True
            return
        cdef double* la = la_p.data()
        cdef double* lb = lb_p.data()
        r = self._row(0, -1)
        for c in range(C):
            if r[c] != -INFINITY:
                la[c] = r[c] * inv
        for t in range(1, T):
            for p in range(C):
                if la[(t - 1) * C + p] == -INFINITY:
                    continue
                r = self._row(t, p)
                for c in range(C):
                    if r[c] != -INFINITY:
                        la[t * C + c] = log_add(la[t * C + c], la[(t - 1) * C + p] + r[c] * inv)
        for c in range(C):
            lb[(T - 1) * C + c] = 0.0
        for t in range(T - 2, -1, -1):
            for p in range(C):
                if la[t * C + p] == -INFINITY:
                    continue  # unreachable: its probability is 0 whatever lb is
                r = self._row(t + 1, p)
                for c in range(C):
                    if r[c] != -INFINITY and lb[(t + 1) * C + c] != -INFINITY:
                        lb[t * C + p] = log_add(lb[t * C + p], r[c] * inv + lb[(t + 1) * C + c])
        if not self._start_sums():
            return
        for t in range(T):
            norm = -INFINITY
            for c in range(C):
                if lb[t * C + c] != -INFINITY:
                    norm = log_add(norm, la[t * C + c])
            if norm == -INFINITY:
                return  # no valid derivation: log Z = -inf, every probability 0
            self.log_norm[t] = norm - prev
            prev = norm
        if not self._end_forward():
            return
        self.log_domain = True  # (_alpha, _beta, _marginal read la, lb)
        for t in range(T):
            for c in range(C):
                v = la[t * C + c]
                if v == -INFINITY or lb[t * C + c] == -INFINITY:
                    continue  # no valid derivation passes here: fwd and bwd stay 0
                self.fwd[t * C + c] = exp(v - self.fcum[t])
                if self.backward:
                    self.bwd[t * C + c] = exp(lb[t * C + c] - self.log_z + self.fcum[t])

    cdef bint _start_sums(self) noexcept nogil:
        """False (no_memory) where the sums' arrays could not grow."""
        cdef int T = self.T, C = self.C, c
        self.log_z = -INFINITY
        if (la_assign(self.fwd, <size_t>T * C, 0.0) != 0
                or la_assign(self.log_norm, <size_t>T, 0.0) != 0
                or (self.backward and la_assign(self.bwd, <size_t>T * C, 0.0) != 0)):
            self.no_memory = True
            return False
        if self.backward:
            for c in range(C):
                self.bwd[(T - 1) * C + c] = 1.0
        return True

    cdef bint _end_forward(self) noexcept nogil:
        """log Z and the cumulative logs of the normalisers (up to and
        including step t: fcum; after it: log Z - fcum). False (no_memory)
        where fcum could not grow."""
        cdef int t
        cdef double v = 0.0
        if la_assign(self.fcum, <size_t>self.T, 0.0) != 0:
            self.no_memory = True
            return False
        for t in range(self.T):
            v += self.log_norm[t]
            self.fcum[t] = v
        self.log_z = v
        return True

    cdef double _alpha(self, int t, int c) noexcept nogil:
        """log of the forward sum of (t, c) (-inf where no valid derivation
        passes)."""
        cdef size_t k = <size_t>t * self.C + c
        cdef double f = self.fwd[k]
        if self.log_domain:
            return self.la[k] if self.lb[k] != -INFINITY else -INFINITY
        return log(f) + self.fcum[t] if f > 0.0 else -INFINITY

    cdef double _beta(self, int t, int c) noexcept nogil:
        """log of the backward sum of (t, c)."""
        cdef size_t k = <size_t>t * self.C + c
        cdef double b = self.bwd[k]
        if self.log_domain:
            return self.lb[k] if self.la[k] != -INFINITY else -INFINITY
        return log(b) + self.log_z - self.fcum[t] if b > 0.0 else -INFINITY

    cdef void _factored_forward_backward(self) noexcept nogil:
        """The scaled forward-backward above for a homogeneous system: a
        step's factor exp((e_t[c] + T[p, c]) / tau) is exp(e_t[c] / tau) times
        exp(T[p, c] / tau), and the C x C transition factors are made once.
        Per step: s[c] = sum_p fwd[t-1, p] exp(T[p, c] / tau - TM) and fwd[t,
        c] is s[c] exp(e_t[c] / tau - E) with E the step's largest emission
        (of an action s reaches): C exps and C^2 multiply-adds per step.
        The ranges of the emissions and of the transitions are bounded
        (FACTORED_RANGE), so neither factor underflows where the sum matters."""
        cdef int T = self.T, C = self.C, t, p, c
        cdef double inv = 1.0 / self.temperature, top, total, v, a, tm, low
        cdef vector[double] ratio, s, w
        cdef const double* etr = &self.trans.etr[0]
        cdef const double* etr_t = &self.trans.etr_t[0]
        tm = self.trans.tm
        if (not self._start_sums() or la_assign(ratio, <size_t>T * C, 0.0) != 0
                or la_assign(s, <size_t>C, 0.0) != 0):
            self.no_memory = True
            return
        for t in range(T):
            if t == 0:
                for c in range(C):
                    s[c] = etr[c]
            elif self.restart[t]:  # every p's transitions are the first step's
                a = 0.0
                for p in range(C):
                    a += self.fwd[(t - 1) * C + p]
                for c in range(C):
                    s[c] = a * etr[c]
            else:
                for c in range(C):
                    s[c] = 0.0
                for p in range(C):
                    a = self.fwd[(t - 1) * C + p]
                    if a != 0.0:
                        la_axpy(C, a, &etr[(p + 1) * C], s.data())
            top = -INFINITY
            for c in range(C):
                v = self.em[t * C + c]
                if s[c] > 0.0 and v != -INFINITY and v * inv > top:
                    top = v * inv
            if top == -INFINITY:
                self._log_forward_backward()  # none, or a live prefix lost to underflow
                return
            total = 0.0
            for c in range(C):
                v = self.em[t * C + c]
                if s[c] > 0.0 and v != -INFINITY:
                    ratio[t * C + c] = exp(v * inv - top)
                    self.fwd[t * C + c] = ratio[t * C + c] * s[c]
                    total += self.fwd[t * C + c]
            if total == 0.0:
                self._log_forward_backward()
                return
            low = INFINITY
            for c in range(C):
                self.fwd[t * C + c] /= total
                ratio[t * C + c] /= total  # exp(e_t[c] / tau - top) / total
                if 0.0 < self.fwd[t * C + c] < low:
                    low = self.fwd[t * C + c]
            if low < self.floor:  # the next step's products could lose digits (see FACTORED_RANGE)
                self._log_forward_backward()
                return
            self.log_norm[t] = log(total) + top + tm
        if not self._end_forward():
            return
        if not self.backward:
            return
        if la_assign(w, <size_t>C, 0.0) != 0:
            self.no_memory = True
            return
        for t in range(T - 2, -1, -1):
            if self.restart[t + 1]:  # the next step's transitions are the first step's
                a = 0.0
                for c in range(C):
                    a += ratio[(t + 1) * C + c] * self.bwd[(t + 1) * C + c] * etr[c]
                for p in range(C):
                    self.bwd[t * C + p] = a
            else:
                for c in range(C):
                    w[c] = ratio[(t + 1) * C + c] * self.bwd[(t + 1) * C + c]
                    if w[c] != 0.0:
                        la_axpy(C, w[c], &etr_t[c * C], &self.bwd[t * C])
            for p in range(C):
                if self.fwd[t * C + p] == 0.0:
                    self.bwd[t * C + p] = 0.0  # unreachable: its probability is 0

    def best(self):
        """(the highest-scoring valid action sequence (T,) int32, its score
        w . Phi): Viterbi over the lattice's rows (kept from the forward
        pass where they fit), first in class order on ties. (None, -inf)
        if no derivation is valid."""
        path, known = self._new_path()
        if known is not None:
            return known
        cdef int[::1] out = path
        cdef double top
        cdef bint pruned = PRUNED_VITERBI
        cdef double min_theta = MIN_THETA
        with nogil:
            top = self._best(&out[0], pruned, min_theta)
        if self.no_memory:
            raise MemoryError(f"{_NO_MEMORY} (a doc of {self.T} steps)")
        return path, top

    def _new_path(self):
        """(a path of T actions to fill, None), or (None, the answer without
        a search): the empty path of an empty doc, (None, -inf) where no
        derivation is valid."""
        path = numpy.zeros((self.T,), dtype="int32")
        if self.T == 0:
            return None, (path, 0.0)
        if self.log_z == -INFINITY:
            return None, (None, -INFINITY)
        return path, None

    cdef double _best(self, int* out, bint pruned, double min_theta) noexcept nogil:
        """best() into out (T actions) for T > 0 and a finite log Z: the
        pruned Viterbi where it certifies its path (pruned: PRUNED_VITERBI),
        else the Viterbi over all entries; returns the path's score."""
        cdef int T = self.T, C = self.C, t, p, c, arg
        cdef double v, top, base
        cdef const double* r
        cdef const double* e
        cdef const double* f
        cdef vector[double] score
        cdef vector[int] back
        cdef double theta, found
        cdef int attempt
        self.viterbi_entries = <long>T * C
        if self.factored and self.backward and pruned and not self.log_domain:
            theta = 0.5 * self._max_marginal_product()
            for attempt in range(2):
                if not theta >= min_theta:
                    break
                top = self._pruned_best(theta, out)
                if self.no_memory:
                    return -INFINITY
                found = exp(top / self.temperature - self.log_z) if top != -INFINITY else 0.0
                if found >= 2.0 * theta:
                    return top  # certified (see PRUNED_VITERBI)
                theta = 0.5 * found  # keeps the path found: the next one is certified
            self.viterbi_entries = <long>T * C
        if (la_assign(score, <size_t>T * C, -INFINITY) != 0
                or la_assign(back, <size_t>T * C, -1) != 0):
            self.no_memory = True
            return -INFINITY
        r = self._row(0, -1)
        for c in range(C):
            score[c] = r[c]
        for t in range(1, T):
            for p in range(C):
                base = score[(t - 1) * C + p]
                if base == -INFINITY:
                    continue  # no valid prefix ends with p
                if self.factored:  # the row's sums without making the row
                    e = &self.em[t * C]
                    f = &self.trans.tr[(self._before(t, p) + 1) * C]
                    for c in range(C):
                        v = base + (e[c] + f[c])
                        if v > score[t * C + c]:
                            score[t * C + c] = v
                            back[t * C + c] = p
                    continue
                r = self._row(t, p)
                for c in range(C):
                    v = base + r[c]
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
        return top

    cdef double _max_marginal_product(self) noexcept nogil:
        """prod_t max_c p(action c at step t): near the best path's
        probability where the model is sure (an estimate, not a bound)."""
        cdef int t, c
        cdef double top, log_product = 0.0
        for t in range(self.T):
            top = 0.0
            for c in range(self.C):
                top = max(top, self.fwd[t * self.C + c] * self.bwd[t * self.C + c])
            if top <= 0.0:
                return 0.0
            log_product += log(top)
        return exp(log_product)

    def pruned_best(self, double theta):
        """(path, score) of the Viterbi over the entries of marginal >
        theta (what best() certifies and returns, see PRUNED_VITERBI);
        (None, -inf) if they hold no path."""
        if not (self.factored and self.backward) or self.log_domain:
            raise ValueError("pruned_best needs a factored lattice with its backward sums "
                             "(scaled, not in the log domain)")
        path, known = self._new_path()
        if known is not None:
            return known
        cdef int[::1] out = path
        cdef double top
        with nogil:
            top = self._pruned_best(theta, &out[0])
        if self.no_memory:
            raise MemoryError(f"{_NO_MEMORY} (a doc of {self.T} steps)")
        return (path, top) if top != -INFINITY else (None, -INFINITY)

    cdef double _pruned_best(self, double theta, int* out) noexcept nogil:
        """Viterbi of a factored lattice over its entries of marginal >
        theta only, as best() runs it over all (the same sums in the same
        order, first in class order on ties): the path into `out`, its
        score; -inf if the entries kept hold no path."""
        cdef int T = self.T, C = self.C, t, i, j, p, c, arg
        cdef double v, top, base
        cdef const double* e
        cdef const double* f
        cdef vector[int] kept, n_kept, back
        cdef vector[double] score
        if la_resize(kept, <size_t>T * C) != 0 or la_assign(n_kept, <size_t>T, 0) != 0:
            self.no_memory = True
            return -INFINITY
        self.viterbi_entries = 0
        for t in range(T):
            for c in range(C):
                if self.fwd[t * C + c] * self.bwd[t * C + c] > theta:
                    kept[t * C + n_kept[t]] = c
                    n_kept[t] += 1
            if n_kept[t] == 0:
                return -INFINITY
            self.viterbi_entries += n_kept[t]
        if (la_assign(score, <size_t>T * C, -INFINITY) != 0
                or la_assign(back, <size_t>T * C, -1) != 0):
            self.no_memory = True
            return -INFINITY
        e = &self.em[0]
        f = &self.trans.tr[0]
        for i in range(n_kept[0]):
            c = kept[i]
            score[c] = e[c] + f[c]
        for t in range(1, T):
            e = &self.em[t * C]
            for i in range(n_kept[t - 1]):
                p = kept[(t - 1) * C + i]
                base = score[(t - 1) * C + p]
                if base == -INFINITY:
                    continue
                f = &self.trans.tr[(self._before(t, p) + 1) * C]
                for j in range(n_kept[t]):
                    c = kept[t * C + j]
                    v = base + (e[c] + f[c])
                    if v > score[t * C + c]:
                        score[t * C + c] = v
                        back[t * C + c] = p
        arg = -1
        top = -INFINITY
        for j in range(n_kept[T - 1]):
            c = kept[(T - 1) * C + j]
            if score[(T - 1) * C + c] > top:
                top = score[(T - 1) * C + c]
                arg = c
        if arg < 0:
            return -INFINITY
        for t in range(T - 1, -1, -1):
            out[t] = arg
            arg = back[t * C + arg]
        return top

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

    def step_probabilities(self, actions):
        """(T,): p(step t takes actions[t]) for each step, e.g. each tag of
        an output: the marginals of one action per step, without the (T, C)."""
        self._require_backward()
        cdef int t, a
        cdef double v
        # contiguous: _step_probabilities reads it through a pointer
        cdef const int[::1] acts = numpy.ascontiguousarray(actions, dtype="int32")
        if acts.shape[0] != self.T:
            raise ValueError(f"{acts.shape[0]} actions for a derivation of {self.T} steps")
        probs = numpy.zeros((self.T,), dtype="float64")
        cdef double[::1] out = probs
        if self.log_z == -INFINITY:
            return probs
        for t in range(self.T):
            a = acts[t]
            if a < 0 or a >= self.C:
                raise ValueError(f"action {a} out of range (the system has {self.C})")
        self._step_probabilities(&acts[0], &out[0])
        return probs

    cdef void _step_probabilities(self, const int* acts, double* out) noexcept nogil:
        """step_probabilities into out, for T > 0 valid actions and a finite log Z."""
        cdef int t
        for t in range(self.T):
            out[t] = self._marginal(t, acts[t])

    def _require_backward(self):
        if not self.backward:
            raise ValueError("this lattice has the forward sums only: make it with backward=True")

    def marginals(self):
        """(T, C): p(action c at step t) (all 0 if no derivation is valid)."""
        self._require_backward()
        probs = numpy.zeros((self.T, self.C), dtype="float64")
        cdef double[:, ::1] out = probs
        cdef int t, c
        if self.log_z == -INFINITY:
            return probs
        for t in range(self.T):
            for c in range(self.C):
                out[t, c] = self._marginal(t, c)
        return probs

    def segment_probability(self, int a, labels, before=None, after=None):
        """p(steps a .. a + len(labels) - 1 take `labels`, the step before
        takes an action in `before` and the one after an action in `after`):
        before / after are 0/1 masks over the actions, None for any action;
        a segment at an end of the doc has no step there, which satisfies
        any mask. E.g. an IOB2 span is B-X I-X ... I-X with no I-X after it."""
        cdef int n = len(labels), C = self.C
        self._require_backward()
        if n < 1 or a < 0 or a + n > self.T:
            raise ValueError(f"segment of {n} steps at {a} is not inside the {self.T} steps")
        lab = numpy.asarray(labels, dtype="int32")
        if lab.min() < 0 or lab.max() >= C:
            raise ValueError("segment label out of range")
        cdef const int[::1] lv = lab
        cdef const unsigned char[::1] bv, av
        cdef const unsigned char* bp = NULL
        cdef const unsigned char* ap = NULL
        if before is not None:
            bv = numpy.asarray(before, dtype="uint8")
            bp = &bv[0]
        if after is not None:
            av = numpy.asarray(after, dtype="uint8")
            ap = &av[0]
        return self.segment(a, &lv[0], n, bp, ap)

    cdef double _score(self, int t, int p, int c) noexcept nogil:
        """The score of action c at step t after action p (p ignored at t = 0)."""
        if self.factored:
            return self.em[t * self.C + c] + self.trans.tr[(self._before(t, p) + 1) * self.C + c]
        return self._row(t, p)[c]

    cdef double segment(self, int a, const int* lab, int n, const unsigned char* before,
                        const unsigned char* after) noexcept nogil:
        """segment_probability in C: labels lab[0 .. n-1] at steps a .. a + n
        - 1 (inside the doc), before / after: masks over the actions or NULL."""
        cdef int C = self.C, b = a + n - 1, k, c
        cdef double inv = 1.0 / self.temperature, left, middle = 0.0, right, v, sc
        if self.log_z == -INFINITY:
            return 0.0
        if before == NULL or a == 0:
            left = self._alpha(a, lab[0])
        else:
            left = -INFINITY
            for c in range(C):
                if before[c] and self._alpha(a - 1, c) != -INFINITY:
                    sc = self._score(a, c, lab[0])
                    if sc != -INFINITY:
                        left = log_add(left, self._alpha(a - 1, c) + sc * inv)
        for k in range(a + 1, b + 1):
            middle += self._score(k, lab[k - a - 1], lab[k - a]) * inv
        if after == NULL or b == self.T - 1:
            right = self._beta(b, lab[n - 1])
        else:
            right = -INFINITY
            for c in range(C):
                if after[c]:
                    sc = self._score(b + 1, lab[n - 1], c)
                    if sc != -INFINITY:
                        right = log_add(right, sc * inv + self._beta(b + 1, c))
        v = left + middle + right
        if v == -INFINITY or v != v:
            return 0.0
        return min(1.0, exp(v - self.log_z))  # (rounded above 1: 1)


def best_with_probabilities(instances, Weights W, double temperature=1.0,
                            Transitions transitions=None, scorer=None):
    """Per instance, in order: (its best derivation (T,) int32, None where no
    derivation is valid; the derivation's score w . Phi; the probabilities
    of its steps (T,) float64 in the order the system takes them, or
    scorer(lattice, instance, derivation) if a scorer is given) -- what Lattice(inst,
    W, temperature).best() and .step_probabilities() give. One lattice,
    chain and Workspace serve the whole batch, and the derivations and
    probabilities are cut from two arrays: per doc, objects and allocations
    cost more than a short sentence's sums."""
    cdef Lattice lattice
    cdef Instance inst
    cdef vector[int] paths
    cdef vector[double] probs
    cdef vector[size_t] starts
    cdef size_t k
    cdef double top
    cdef bint pruned = PRUNED_VITERBI
    cdef double min_theta = MIN_THETA
    cdef int64_t t0
    found = []
    scored = []
    starts.push_back(0)
    for inst, lattice in _each_lattice(instances, W, temperature, transitions):
        k = paths.size()
        paths.resize(k + lattice.T)
        probs.resize(k + lattice.T, 0.0)
        top = 0.0
        if lattice.T and lattice.log_z == -INFINITY:
            top = -INFINITY
        elif lattice.T:
            t0 = now_ns()
            with nogil:
                top = lattice._best(&paths[k], pruned, min_theta)
                if scorer is None and not lattice.no_memory:
                    lattice._step_probabilities(&paths[k], &probs[k])
            add_since(t0)
            if lattice.no_memory:
                raise MemoryError(f"{_NO_MEMORY} (a doc of {lattice.T} steps)")
        starts.push_back(paths.size())
        found.append(top)
        if scorer is not None and top != -INFINITY:
            scored.append(scorer(lattice, inst, numpy.asarray(<int[:lattice.T]>&paths[k]).copy()
                                 if lattice.T else numpy.zeros((0,), dtype="int32")))
        else:
            scored.append(None)
    all_paths = numpy.asarray(<int[:paths.size()]>paths.data()).copy() if paths.size() \
        else numpy.zeros((0,), dtype="int32")
    all_probs = numpy.asarray(<double[:probs.size()]>probs.data()).copy() if probs.size() \
        else numpy.zeros((0,), dtype="float64")
    out = []
    for i in range(len(found)):
        a, b = starts[i], starts[i + 1]
        if found[i] == -INFINITY:
            out.append((None, -INFINITY, all_probs[a:b] if scorer is None else None))
        else:
            out.append((all_paths[a:b], found[i], all_probs[a:b] if scorer is None else scored[i]))
    return out


def _each_lattice(instances, Weights W, double temperature, Transitions transitions):
    """(instance, its lattice) for each instance in turn: one Lattice reset
    per doc, its chain, Workspace and (homogeneous systems) Transitions
    reused; a lattice is valid until the next is yielded."""
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    cdef Lattice lattice = Lattice.__new__(Lattice)
    cdef Workspace ws = None
    cdef Instance inst
    for inst in instances:
        ws = workspace_for(ws, inst.system, inst.state_size, 0)
        lattice._reset(inst, W, temperature, True, transitions, ws)
        transitions = lattice.trans if lattice.trans is not None else transitions
        yield inst, lattice


cdef class LatticeThread:
    pass


cdef class DocPass:
    """Work on the lattice of each doc of a batch (Docs, or a list of
    Instances), without a Python object per doc: any number of threads run
    it at once, each with its own lattice (LatticeThread) and one nogil
    section, taking the next doc not yet taken (run()), or right after
    decoding a doc (core.decode.decode_docs(..., then=pass)), so that the
    lattice follows the search on the same thread. Subclasses define the
    work (`doc`) and write it into arrays over the batch, one writer per
    slot; the outputs do not depend on which thread took which doc."""
    def __init__(self, docs, Weights W, double temperature=1.0, Transitions transitions=None):
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        self.docs = as_docs(docs)
        self.W = W
        self.temperature = temperature
        self.next_doc = 0
        self.failed = self.n_docs
        self.no_memory = self.n_docs
        if self.docs is not None and FACTORED and self.docs.system.homogeneous and (
                transitions is None or not transitions.fits(self.docs.system, W, temperature)):
            transitions = Transitions(self.docs.system, W, temperature)
        self.transitions = transitions

    @property
    def n_docs(self) -> int:
        return 0 if self.docs is None else self.docs.n_docs

    @property
    def first_failed(self) -> int:
        """The first doc whose work failed (subclasses say what that means), or -1."""
        return -1 if self.failed >= self.n_docs else self.failed

    cdef LatticeThread thread(self):
        cdef LatticeThread th = LatticeThread.__new__(LatticeThread)
        th.lattice = Lattice.__new__(Lattice)
        th.lattice._prepare(self.docs.system, self.docs.state_size, self.W, self.temperature,
                            True, self.transitions, None)
        th.state.resize(padded_size(self.docs.state_size))
        return th

    cdef bint open(self, LatticeThread th, int i) noexcept nogil:
        """Doc i's lattice in the thread's (False: it has no valid derivation)."""
        memset(th.state.data(), 0, th.state.size())
        self.docs.init_state(i, th.state.data())
        if th.lattice._open(th.state.data(), self.docs.breaks(i)) != 0:
            self.lost(i)
            return False
        return not (th.lattice.T and th.lattice.log_z == -INFINITY)

    cdef void fail(self, int i) noexcept nogil:
        la_min(&self.failed, i)

    cdef void lost(self, int i) noexcept nogil:
        """Doc i's work found no memory (its outputs are left unwritten):
        raised by the runs' finish, before any failure of the pass is read."""
        la_min(&self.no_memory, i)

    cdef int raise_no_memory(self) except -1:
        """MemoryError where a doc's work found no memory (lost())."""
        if self.no_memory < self.n_docs:
            raise MemoryError(f"{_NO_MEMORY} (doc {self.no_memory} of the batch, "
                              f"{self.docs.length(self.no_memory)} tokens)")
        return 0

    cdef void doc(self, LatticeThread th, int i, const int* actions, int k) noexcept nogil:
        """The work on doc i; actions: its k actions from a decoder (in the
        order the system takes them), NULL where the pass runs alone."""
        pass

    def runs(self, int n_threads=1) -> list:
        """The pass as PassRuns for n_threads threads (0: every core; never
        more than the docs), to run on C threads (threads.RunsStarted)."""
        return [PassRun(self) for _ in range(max(1, min(thread_count(n_threads), self.n_docs)))]

    def run_on(self, int n_threads=1):
        """The whole pass, on n_threads C threads (1: here; 0: every core;
        never more threads than docs)."""
        RunsStarted(self.runs(n_threads)).results()
        return self


cdef class PassRun(CRun):
    """One thread's share of a DocPass: its own lattice; the docs not yet
    taken, in turn, until none is left."""
    cdef DocPass job
    cdef LatticeThread th

    def __init__(self, DocPass job):
        self.job = job
        if job.docs is not None:
            self.th = job.thread()

    cdef void run(self) noexcept nogil:
        if self.th is None:
            return
        cdef int i, n = self.job.docs.n_docs
        cdef int64_t t0 = now_ns()
        while True:
            i = la_take(&self.job.next_doc)
            if i >= n:
                break
            if self.job.docs.load(i):  # (a pass on its own: no search loaded the doc;
                self.job.doc(self.th, i, NULL, 0)  # one not loadable is its maker's to redo)
        add_since(t0)

    cdef list finish(self):
        self.job.raise_no_memory()
        return []


cdef class StepAlternatives(DocPass):
    """Per step of each doc's derivation (the decoder's actions, or
    derivations[starts[i]:starts[i + 1]] where the pass runs alone, in
    document order: reverse, e.g. an rtl tagger's, the steps run from the
    last), written at the step's token (starts[i] + t, or from the end
    where reverse): the marginal probability of its own action (0 where
    no derivation is valid), the most probable other action, first in class
    order on ties (-1 where the system has one action) and that action's
    marginal (0 there). A derivation of another length than its doc's
    lattice fails the doc."""
    cdef const int[::1] taken
    cdef const int64_t[::1] starts
    cdef bint reverse
    cdef bint alone  # derivations given: the pass may run alone
    cdef double[::1] own_v, alt_probs_v
    cdef int[::1] alt_v, steps
    cdef readonly object own, alt, alt_probs

    def __init__(self, docs, Weights W, double temperature, Transitions transitions, starts,
                 derivations=None, bint reverse=False):
        DocPass.__init__(self, docs, W, temperature, transitions)
        self.starts = numpy.ascontiguousarray(starts, dtype="int64")
        cdef Py_ssize_t N = self.starts[self.starts.shape[0] - 1] if self.starts.shape[0] else 0
        if derivations is not None:
            self.taken = numpy.ascontiguousarray(derivations, dtype="int32")
        if self.starts.shape[0] != self.n_docs + 1 or (
                derivations is not None and self.taken.shape[0] != N):
            raise ValueError(f"starts ({self.starts.shape[0]}) must bound {self.n_docs} "
                             f"derivations over {N if derivations is None else self.taken.shape[0]} "
                             "actions")
        if derivations is not None:
            C = self.docs.system.nr_class if self.docs is not None else 0
            if N and not (0 <= numpy.min(self.taken) and numpy.max(self.taken) < C):
                bad = numpy.asarray(self.taken)
                bad = bad[(bad < 0) | (bad >= C)][0]
                raise ValueError(f"action {bad} out of range (the system has {C})")
        self.alone = derivations is not None
        self.reverse = reverse
        self.own = numpy.zeros((N,), dtype="float64")
        self.alt = numpy.full((N,), -1, dtype="int32")
        self.alt_probs = numpy.zeros((N,), dtype="float64")
        self.own_v, self.alt_v, self.alt_probs_v = self.own, self.alt, self.alt_probs
        self.steps = numpy.zeros((max(1, self.n_docs),), dtype="int32")

    def runs(self, int n_threads=1) -> list:
        if not self.alone:
            raise ValueError("StepAlternatives without derivations only follows a search "
                             "(decode_docs(..., then=pass)): give it the derivations to run alone")
        return DocPass.runs(self, n_threads)

    cdef void doc(self, LatticeThread th, int i, const int* actions, int k) noexcept nogil:
        cdef int64_t first = self.starts[i], pos
        cdef int t, c, a, arg, T, C
        cdef double m, top
        cdef bint valid = self.open(th, i)
        T, C = th.lattice.T, th.lattice.C
        self.steps[i] = T
        if self.starts[i + 1] - first != T or (actions != NULL and k != T):
            self.fail(i)
            return
        for t in range(T):
            pos = first + (T - 1 - t if self.reverse else t)
            a = actions[t] if actions != NULL else self.taken[pos]
            if valid:
                self.own_v[pos] = th.lattice._marginal(t, a)
            if C < 2:
                continue
            arg, top = -1, -1.0
            for c in range(C):
                if c == a:
                    continue
                m = th.lattice._marginal(t, c) if valid else 0.0
                if m > top:
                    arg, top = c, m
            self.alt_v[pos], self.alt_probs_v[pos] = arg, top

    def outputs(self):
        """(own, alt, alt_probs): see the class."""
        return self.own, self.alt, self.alt_probs

    def check(self):
        """Raise for the first doc whose derivation did not fit its lattice."""
        cdef int i = self.first_failed
        if i >= 0:
            raise ValueError(f"{self.starts[i + 1] - self.starts[i]} actions for a derivation of "
                             f"{self.steps[i]} steps (doc {i} of the batch)")
        return self


def step_alternatives(instances, derivations, starts, Weights W, double temperature=1.0,
                      Transitions transitions=None, bint reverse=False, int n_threads=1):
    """For a batch (Docs, or a list of instances) and a derivation of each
    doc (e.g. its best), doc k's T actions at derivations[starts[k]:starts[k +
    1]] in the order the system takes them (reverse: the other way round,
    step t at starts[k + 1] - 1 - t, e.g. an rtl tagger's tags in document
    order): three arrays over the same positions, with no numpy per doc
    (StepAlternatives): each step's marginal probability of its own action
    (float64; 0 where no derivation is valid); the most probable other
    action, first in class order on ties (int32; -1 where the system has one
    action only); and that action's marginal probability (float64; 0
    there)."""
    job = StepAlternatives(instances, W, temperature, transitions, starts, derivations, reverse)
    job.run_on(n_threads).check()
    return job.own, job.alt, job.alt_probs


def marginals(instances, Weights W, double temperature=1.0):
    """Per instance of a first-order system: (probabilities (steps, C) of
    each action at each step, in the order the system takes them; log Z)."""
    out = []
    for inst in instances:
        lattice = Lattice(inst, W, temperature)
        out.append((lattice.marginals(), lattice.log_z))
    return out
