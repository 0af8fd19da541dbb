"""Exact marginal probabilities of a first-order system's actions under the
model's distribution over complete derivations,

    p(y | x) = exp(w . Phi(x, y) / tau) / Z(x),

by forward-backward over the label lattice (Chain: the scores of every
action at step t after action p). For SAPO (Sun et al., eq. 1 restricted to
the n best) this is the same distribution over all derivations instead of
the n best: the probability of a tag or of a span is then a marginal, not
the mass of the n best that agree on it. tau (the temperature) scales the
scores; 1 is the model's own distribution.

Cost per doc: 2 T C scorings (the rows are made again for the backward
pass, so memory stays O(T C)) and O(T C^2) log-additions."""
from libc.math cimport INFINITY, exp, log, log1p
from libcpp.vector cimport vector

import numpy

from .instance cimport Instance
from .learners cimport workspace_for
from .search cimport Workspace
from .topn cimport Chain
from .weights cimport Weights


cdef inline double log_add(double a, double b) noexcept nogil:
    """log(exp(a) + exp(b)), exact for -inf."""
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a > b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))


cdef double forward_backward(Chain chain, Weights W, double temperature,
                             double* out) except? -1 nogil:
    """out[t * C + c] = p(action c at step t); returns log Z (-inf: no
    complete derivation is valid; out is then all 0)."""
    cdef int T = chain.T, C = chain.ws.nr_class, t, p, c
    cdef double inv = 1.0 / temperature, log_z = -INFINITY, v
    cdef vector[double] alpha, beta, row
    if T == 0:
        return 0.0
    alpha.assign(T * C, -INFINITY)
    beta.assign(T * C, -INFINITY)
    row.resize(C)
    chain.row(W, 0, -1, row.data())
    for c in range(C):
        alpha[c] = row[c] * inv
    for t in range(1, T):
        for p in range(C):
            if alpha[(t - 1) * C + p] == -INFINITY:
                continue
            chain.row(W, t, p, row.data())
            for c in range(C):
                if row[c] != -INFINITY:
                    v = alpha[(t - 1) * C + p] + row[c] * inv
                    alpha[t * C + c] = log_add(alpha[t * C + c], v)
    for c in range(C):
        log_z = log_add(log_z, alpha[(T - 1) * C + c])
        beta[(T - 1) * C + c] = 0.0
    for t in range(T - 2, -1, -1):
        for p in range(C):
            if alpha[t * C + p] == -INFINITY:
                continue  # unreachable: its marginal is 0 whatever beta is
            chain.row(W, t + 1, p, row.data())
            for c in range(C):
                if row[c] != -INFINITY:
                    beta[t * C + p] = log_add(beta[t * C + p],
                                              row[c] * inv + beta[(t + 1) * C + c])
    for t in range(T):
        for c in range(C):
            v = alpha[t * C + c] + beta[t * C + c]
            out[t * C + c] = 0.0 if log_z == -INFINITY or v == -INFINITY else exp(v - log_z)
    return log_z


def marginals(instances, Weights W, double temperature=1.0):
    """Per instance of a first-order system: (probabilities (steps, C) of
    each action at each step, in the order the system takes them; log Z)."""
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    cdef Instance inst
    cdef Workspace ws = None
    cdef Chain chain
    cdef double[:, ::1] view
    cdef double log_z
    results = []
    for inst in instances:
        ws = workspace_for(ws, inst, 0)
        chain = Chain(ws, <size_t>inst.start())
        probs = numpy.zeros((chain.T, ws.nr_class), dtype="float64")
        log_z = 0.0
        if chain.T:
            view = probs
            with nogil:
                log_z = forward_backward(chain, W, temperature, &view[0, 0])
        results.append((probs, log_z))
    return results
