"""The learners: one training function per learner, generic over every
TransitionSystem. Each makes one online pass over the instances of a batch
of docs (built by the system: `system.instances(inputs, golds)`), in the
given order, and returns what its paper counts.

* `margin_perceptron`    - lookahead search of depth D and UPDATEWEIGHT at
  every state on the gold path (Tsuruoka et al. 2011, Figure 3).
* `violation_fixing_perceptron` - beam search of width k beside the gold
  derivation, FINDVIOLATION by the update method (standard, early,
  max_violation, hybrid, latest) and w += dPhi (Huang et al. 2012,
  Algorithm 2, Sections 4-5).
* `sapo`                 - top-n search, probabilities over the n best, the
  real-valued update and the L2 step (Sun et al., Algorithm 1): exact A*
  where the system is first-order, beam n-best otherwise. With the beam,
  `update` picks what is compared, as for the perceptron: "standard" is
  Sun et al.'s update on complete outputs; "early", "max_violation", ...
  compare the n best prefixes of the step FINDVIOLATION picks with the gold
  prefix (Huang et al.'s argument: a complete-output update after the gold
  fell off the beam need not correct any search error; on a parser, where it
  falls off early, that update hardly learns).
* (`fr_perceptron`, the FR-Perceptron of Carreras et al. 2005, is in
  `core.fr_perceptron`: its decoder is not a transition system.)

Averaging: every learner ticks the clock (Weights.tick()) once per document
it learns from, so the averaged weights are the mean of the weight vectors
after each training document (Collins 2002; Huang et al.'s Algorithm 2 and
Carreras et al.'s Figure 1 count examples the same way). Empty documents
are skipped without a tick. SAPO predicts with its final weights, so its
ticks only keep the clock comparable.

Gold: the system's oracle walked from the start state
(`Instance.oracle_actions`). Where it does not know the gold (missing
annotation) the margin perceptron takes the model's action and learns
nothing there; the sequence learners fill the gap with the model's best
action (latent), or, where exact search is possible, with the best
sequence that agrees with every known action (constrained A*). A doc whose
gold the system cannot derive is skipped and counted.
"""
from cymem.cymem cimport Pool

import numpy

from .beam cimport Beam, beam_for
from .instance cimport Instance
from .learn cimport train_sequence
from .sapo cimport sapo_update
from .search cimport Workspace, workspace_for
from .system cimport TransitionSystem
from .topn cimport Chain, NBest, beam_nbest, beam_row_nbest, chain_from, run_astar
from .violation cimport STANDARD, StepRecord, Violation, find_violation, fix_violation
from .weights cimport Weights

from .violation import METHODS

UPDATES = tuple(METHODS)


def margin_perceptron(instances, Weights W, int depth, double margin):
    """One pass of Figure 3: at each state on the gold path, lookahead search
    of depth D and UPDATEWEIGHT with margin C, then the gold action. One
    tick per doc. Returns (mistakes, decisions)."""
    cdef Workspace ws = None
    cdef Instance inst
    cdef int[::1] act
    cdef int n_dec = 0
    mistakes = decisions = 0
    for inst in instances:
        if inst.length == 0:
            continue
        ws = workspace_for(ws, inst.system, inst.state_size, depth)
        actions = numpy.zeros((max(1, inst.max_steps),), dtype="int32")
        act = actions
        mistakes += train_sequence(ws, W, inst.start(), margin, &act[0], inst.max_steps, &n_dec)
        decisions += n_dec
        W.tick()
    return mistakes, decisions


def violation_fixing_perceptron(instances, Weights W, int beam_width, str update):
    """One pass of Algorithm 2 (Huang et al. 2012) with beam search of width
    k: FINDVIOLATION by `update` and w += Phi(x, y[1:i]) - Phi(x, z[1:i]).
    One tick per doc. Returns dict(updates, invalid, docs, skipped): invalid
    counts updates that were not violations (only `standard` makes them,
    Figure 5); skipped, docs whose gold the system cannot derive."""
    if update not in METHODS:
        raise ValueError(f"update must be one of {UPDATES}, got {update!r}")
    cdef int method = METHODS[update], n_gold, due
    cdef Instance inst
    cdef Beam beam = None
    cdef Workspace ws = None
    cdef Violation v
    cdef Pool mem
    cdef StepRecord* rec
    cdef void* gold_state
    cdef void* start
    cdef int[::1] gv, zv
    stats = {"updates": 0, "invalid": 0, "docs": 0, "skipped": 0}
    for inst in instances:
        if inst.length == 0:
            continue
        path = inst.oracle_actions(W)
        if path is None:
            stats["skipped"] += 1
            continue
        gold = path[0]
        n_gold = gold.shape[0]
        gv = gold
        zbuf = numpy.zeros((inst.max_steps + 2,), dtype="int32")
        zv = zbuf
        beam = beam_for(beam, inst.system, inst.state_size, beam_width)
        ws = workspace_for(ws, inst.system, inst.state_size, 0)
        mem = Pool()
        rec = <StepRecord*>mem.alloc(inst.max_steps + 2, sizeof(StepRecord))
        gold_state = mem.alloc(1, beam.state_size)
        start = inst.start()
        beam.reset(start, inst.max_steps)
        with nogil:
            due = find_violation(beam, W, start, &gv[0], n_gold, method, rec, gold_state, &v)
        if due:
            fix_violation(beam, ws, W, start, &gv[0], n_gold, &v, &zv[0])
            stats["updates"] += 1
            stats["invalid"] += not v.valid
        W.tick()
        stats["docs"] += 1
    return stats


def sapo(instances, Weights W, int n, double gamma, double shrink, int beam_width=16,
         bint exact=True, str update="standard"):
    """One pass of Algorithm 1 (Sun et al.): the n best outputs by A* (exact,
    for first-order systems when `exact`) or by beam search of width
    max(n, beam_width) (with `update` choosing complete outputs or prefixes,
    see above); the update with learning rate gamma; then the lazy L2 step
    w *= shrink (= 1 - gamma lambda / |S|). One tick per doc. Returns
    (summed negative log-likelihood, wrong outputs)."""
    if update not in METHODS:
        raise ValueError(f"update must be one of {UPDATES}, got {update!r}")
    cdef int method = METHODS[update], n_gold
    cdef Instance inst
    cdef TransitionSystem sys
    cdef Workspace ws = None
    cdef Beam beam = None
    cdef Chain chain
    cdef NBest out = NBest()
    cdef int[::1] gv
    cdef void* start
    cdef Pool mem
    cdef StepRecord* rec
    cdef void* gold_state
    cdef Violation v
    cdef bint due
    loss = 0.0
    wrong = 0
    for inst in instances:
        if inst.length == 0:
            continue
        sys = inst.system
        ws = workspace_for(ws, inst.system, inst.state_size, 0)
        path = inst.oracle_actions(W)
        if path is None:
            continue
        steps, known = path
        start = inst.start()
        chain = None
        n_gold = steps.shape[0]
        if exact and sys.first_order:
            # Unknown steps: the best output that agrees with the known ones.
            chain = chain_from(ws, start, numpy.where(known, steps, -1))
            if not known.all():
                run_astar(chain, W, 1, out)
                if out.k == 0:
                    continue
                steps = out.as_arrays()[0][0]
            chain.fixed = NULL
            run_astar(chain, W, n, out)
        elif method == STANDARD:
            beam = beam_for(beam, inst.system, inst.state_size, max(n, beam_width))
            beam_nbest(beam, W, start, inst.max_steps, n, out)
        else:
            beam = beam_for(beam, inst.system, inst.state_size, max(n, beam_width))
            steps = numpy.ascontiguousarray(steps, dtype="int32")
            gv = steps
            mem = Pool()
            rec = <StepRecord*>mem.alloc(inst.max_steps + 2, sizeof(StepRecord))
            gold_state = mem.alloc(1, beam.state_size)
            beam.reset(start, inst.max_steps)
            with nogil:
                due = find_violation(beam, W, start, &gv[0], n_gold, method, rec, gold_state, &v)
            beam_row_nbest(beam, beam.step, inst.max_steps, 1, out)
            wrong += not numpy.array_equal(out.sequences()[0][0], steps)
            if due and not v.full:
                n_gold = min(v.step, n_gold)  # the prefixes of v.step steps
            beam_row_nbest(beam, v.step if due and not v.full else beam.step, inst.max_steps,
                           n, out)
        if out.k == 0:
            continue
        steps = numpy.ascontiguousarray(steps, dtype="int32")
        gv = steps if steps.shape[0] else numpy.zeros((1,), dtype="int32")
        if method == STANDARD or (exact and sys.first_order):
            wrong += not numpy.array_equal(out.sequences()[0][0], steps)
        loss += sapo_update(ws, W, start, out, &gv[0], n_gold, gamma, chain)
        if shrink < 1.0:
            W.shrink(shrink)
        W.tick()
    return loss, wrong
