"""Calibration of the lattice's distribution (marginals.pyx): temperature
scaling, the tau of

    p(y | x) = exp(w . Phi(x, y) / tau) / Z(x)

that fits held-out data. fit_temperature minimises the negative
log-likelihood of the gold derivations; minimise_over_temperature, any
cost of tau (the components' log-loss of the probabilities they write)."""
from .marginals cimport Lattice, Transitions
from .weights cimport Weights


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
    cdef Transitions transitions = None
    cdef Lattice lattice
    for inst, actions in golds:
        lattice = Lattice(inst, W, temperature, False, transitions)
        transitions = lattice.trans  # shared by the docs of one system
        total -= lattice.log_probability(actions)
    return total


def fit_temperature(golds, Weights W, double low=0.1, double high=10.0, double tolerance=0.005):
    """Temperature scaling of p(y | x) on held-out data: the tau in [low,
    high] that minimises the negative log-likelihood of the gold derivations
    `golds` ((instance, actions), see gold_derivations). The NLL is convex in
    1 / tau (log Z is convex in the scale of the scores, the gold's score is
    linear in it), so a golden-section search over log tau finds it, to a
    relative `tolerance`. Returns (tau, its NLL, the NLL at tau = 1)."""
    return minimise_over_temperature(lambda tau: negative_log_likelihood(golds, W, tau),
                                     low, high, tolerance)


def minimise_over_temperature(cost, double low=0.1, double high=10.0, double tolerance=0.005):
    """The tau in [low, high] that minimises cost(tau), by a golden-section
    search over log tau to a relative `tolerance` (exact for a cost unimodal
    in log tau, as the gold NLL is). Returns (tau, cost(tau), cost(1))."""
    if not 0.0 < low < 1.0 < high:
        raise ValueError(f"need 0 < low < 1 < high, got {low!r}, {high!r}")
    import math
    phi = (math.sqrt(5.0) - 1.0) / 2.0
    at = lambda x: cost(math.exp(x))
    a, b = math.log(low), math.log(high)
    c, d = b - phi * (b - a), a + phi * (b - a)
    fc, fd = at(c), at(d)
    while b - a > tolerance:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - phi * (b - a)
            fc = at(c)
        else:
            a, c, fc = c, d, fd
            d = a + phi * (b - a)
            fd = at(d)
    x, fx = (c, fc) if fc <= fd else (d, fd)
    return math.exp(x), fx, at(0.0)
