"""Violation-fixing perceptron updates for beam search (Huang et al. 2012,
Sections 3-5): standard, early, max-violation, hybrid and latest.

FINDVIOLATION runs the beam beside the gold sequence and returns the triple
(x, y[1:i], z[1:i]) the method picks; the update is then
w += Phi(x, y[1:i]) - Phi(x, z[1:i]), with both prefixes replayed from x by
`learn.add_path`. Only the standard update may pick a non-violation (z
scoring below y, because y fell off the beam): that is an "invalid" update,
which the caller counts (the paper's Figure 5)."""
from libc.math cimport INFINITY
from libc.string cimport memcpy

from cymem.cymem cimport Pool

from .beam cimport Beam
from .learn cimport add_path
from .search cimport Workspace
from .system cimport TransitionSystem
from .weights cimport Weights

METHODS = {"standard": STANDARD, "early": EARLY, "max_violation": MAX_VIOLATION,
           "hybrid": HYBRID, "latest": LATEST}


cdef int choose_violation(int method, const StepRecord* rec, int T, double final_best,
                          double final_gold, bint final_is_gold, Violation* out) noexcept nogil:
    """Pick the update from the step records rec[1..T] (rec[0] is the empty
    prefix). Returns 1 if there is an update, 0 if none is due."""
    cdef int t, early = -1
    out.step = -1
    out.full = False
    out.gap = -INFINITY
    out.valid = False
    if final_is_gold:
        # A correct output: no update (Algorithm 2 updates only on mistakes),
        # even if y trailed another item on the way.
        return 0
    for t in range(1, T + 1):
        if not rec[t].gold_in_beam:
            early = t
            break
    if method == STANDARD or (method == HYBRID and not final_is_gold and final_best >= final_gold):
        if final_is_gold:
            return 0
        out.full = True
        out.step = T
        out.gap = final_best - final_gold
        out.valid = out.gap >= 0
        return 1
    if method == EARLY or method == HYBRID:
        if early < 0:
            # y survived to the end: the full update if it is not the best
            if final_is_gold:
                return 0
            out.full = True
            out.step = T
            out.gap = final_best - final_gold
        else:
            out.step = early
            out.gap = rec[early].best - rec[early].gold
        out.valid = out.gap >= 0
        return 1
    # max-violation: argmin_i w.dPhi over violations; latest: the largest
    # such i. A step where B_t[0] is the gold prefix is no violation.
    for t in range(1, T + 1):
        if rec[t].best_is_gold or rec[t].best < rec[t].gold:
            continue
        if method == LATEST or rec[t].best - rec[t].gold > out.gap:
            out.step = t
            out.gap = rec[t].best - rec[t].gold
    if out.step < 0:
        return 0
    out.valid = True
    return 1


cdef int find_violation(Beam beam, Weights W, const void* start, const int* gold, int n_gold,
                        int method, StepRecord* rec, void* gold_state,
                        Violation* out) noexcept nogil:
    """Run the beam from `start` (beam.reset() must have been called with it)
    beside the gold actions gold[0:n_gold]; rec needs room for
    max(beam.max_steps, n_gold) + 1 records and gold_state for one state.
    Fills `out` and returns 1 if an update is due."""
    cdef int t = 0, j, a, g = 0, T
    cdef double gold_score = 0.0
    memcpy(gold_state, start, beam.state_size)
    rec[0].best = rec[0].gold = 0.0
    rec[0].gold_in_beam = rec[0].best_is_gold = True
    while beam.advance(W):
        t = beam.step
        a = gold[t - 1] if t - 1 < n_gold else -1
        if a >= 0:
            beam.system.score(beam.action_scores, gold_state, W, beam.feats, beam.cache)
            gold_score += beam.action_scores[a]
            beam.system.apply(gold_state, a)
        # y[1:t] is in B_t iff an item extends y[1:t-1]'s item by the gold action
        if g >= 0:
            for j in range(beam.size_at(t)):
                if beam.parent_at(t, j) == g and beam.action_at(t, j) == a:
                    break
            else:
                j = -1
            g = j
        rec[t].best = beam.score_at(t, 0)
        rec[t].gold = gold_score
        rec[t].gold_in_beam = g >= 0
        rec[t].best_is_gold = g == 0
    T = beam.step
    # The full gold score, if y is longer than the beam's derivations.
    while t < n_gold:
        beam.system.score(beam.action_scores, gold_state, W, beam.feats, beam.cache)
        gold_score += beam.action_scores[gold[t]]
        beam.system.apply(gold_state, gold[t])
        t += 1
    cdef bint final_is_gold = g == 0 and n_gold <= T
    if T == 0:
        return 0
    return choose_violation(method, rec, T, beam.score_at(T, 0), gold_score, final_is_gold, out)


cdef int fix_violation(Beam beam, Workspace ws, Weights W, const void* start, const int* gold,
                       int n_gold, const Violation* v, int* zbuf) except -1:
    """w += Phi(x, y[1:i]) - Phi(x, z[1:i]); zbuf needs room for v.step actions."""
    cdef int ny = n_gold if v.full else min(v.step, n_gold)
    cdef int nz = beam.path(v.step, 0, zbuf)
    add_path(ws, W, start, gold, ny, 1.0)
    add_path(ws, W, start, zbuf, nz, -1.0)
    return 1


def choose(str method, best, gold, gold_in_beam, best_is_gold, double final_best,
           double final_gold, bint final_is_gold):
    """Python view of choose_violation for hand-built beams: per-step lists
    for steps 1..T. Returns None or (step, full, gap, valid)."""
    if method not in METHODS:
        raise ValueError(f"update must be one of {sorted(METHODS)}, got {method!r}")
    T = len(best)
    cdef Pool mem = Pool()
    cdef StepRecord* rec = <StepRecord*>mem.alloc(T + 1, sizeof(StepRecord))
    for t in range(T):
        rec[t + 1].best = best[t]
        rec[t + 1].gold = gold[t]
        rec[t + 1].gold_in_beam = gold_in_beam[t]
        rec[t + 1].best_is_gold = best_is_gold[t]
    cdef Violation v
    if not choose_violation(METHODS[method], rec, T, final_best, final_gold, final_is_gold, &v):
        return None
    return (v.step, bool(v.full), v.gap, bool(v.valid))
