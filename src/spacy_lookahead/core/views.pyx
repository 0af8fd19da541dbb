"""The engine seen from Python, for tests and inspection: one state of a
doc (after a history of actions) and what each part of the engine does
there. Generic over every TransitionSystem (`system.instance(doc_input)`)."""
import numpy

from cymem.cymem cimport Pool

from .beam cimport Beam
from .instance cimport Instance
from .learn cimport update_weight as _update_weight
from .search cimport Workspace, decode as _decode, lookahead_first
from .system cimport TransitionSystem
from .violation cimport StepRecord, Violation, find_violation as _find_violation, fix_violation
from .weights cimport Weights, feat_t

from .violation import METHODS


def features(TransitionSystem system, doc_input, history):
    """phi(S) of the state after `history`."""
    cdef Instance inst = system.instance(doc_input)
    cdef const void* state = inst.after(history)
    feats = numpy.zeros((max(1, system.max_feats),), dtype="uint64")
    cdef feat_t[::1] fv = feats
    n = system.extract(&fv[0], state)
    return feats[:n].copy()


def valid_actions(TransitionSystem system, doc_input, history):
    """([valid actions], is_final) in the state after `history`."""
    cdef Instance inst = system.instance(doc_input)
    cdef const void* state = inst.after(history)
    valid = numpy.zeros((system.nr_class,), dtype="int32")
    cdef int[::1] vv = valid
    if system.is_final(state):  # as the engine: no action, and set_valid is never asked
        return [], True
    system.set_valid(&vv[0], state)
    return [a for a in range(system.nr_class) if valid[a]], False


def lookahead(TransitionSystem system, doc_input, history, Weights W, int depth,
              bint exhaustive=False, int favoured=-1, double handicap=0.0, hint=()):
    """(best action, value per first action, path per first action) of the
    lookahead search (Figure 2) from the state after `history`, with the
    handicap taken off the favoured action's value for the decision.
    exhaustive: enumerate every path, without the DP or branch-and-bound
    (the reference both are tested against). hint: up to depth + 1 actions,
    as decode gives branch-and-bound the rest of the previous decision's
    best path (a first root value: any path, valid or not, is safe)."""
    cdef Instance inst = system.instance(doc_input)
    cdef const void* state = inst.after(history)
    cdef Workspace ws = Workspace(system, depth, inst.state_size)
    hint = list(hint)[:depth + 1]
    for k, a in enumerate(hint):
        if not 0 <= a < ws.nr_class:
            raise ValueError(f"hint action {a} out of range for {ws.nr_class} classes")
        ws.hint[k] = a
    ws.hint_len = len(hint)
    if exhaustive:
        ws.dp = False
        ws.bnb = False
    cdef int best = lookahead_first(ws, W, state, favoured, handicap)
    values = [ws.values[a] for a in range(ws.nr_class)]
    paths = [[ws.paths[a * (ws.depth + 1) + k] for k in range(ws.path_lens[a])]
             for a in range(ws.nr_class)]
    return best, values, paths


def bounds(TransitionSystem system, doc_input, history, Weights W):
    """(upper, upper_after) of the state after `history`: the system's bounds
    for branch-and-bound (upper_after is +inf where the system has none)."""
    cdef Instance inst = system.instance(doc_input)
    cdef const void* state = inst.after(history)
    cdef Pool mem = Pool()
    cdef feat_t* feats = <feat_t*>mem.alloc(max(1, system.max_feats), sizeof(feat_t))
    cdef void* cache = mem.alloc(max(1, system.cache_size), 1)
    up = system.upper(state, W, feats, cache)
    after = system.upper_after(state, W, feats, cache) if system.bounds_two_steps \
        else float("inf")
    return up, after


def group_bounds(TransitionSystem system, doc_input, history, Weights W, int steps):
    """{action: upper_group of its sibling group} for the valid actions in a
    group, at the state after `history`, `steps` (1 or 2) actions below."""
    cdef Instance inst = system.instance(doc_input)
    cdef const void* state = inst.after(history)
    cdef Pool mem = Pool()
    cdef feat_t* feats = <feat_t*>mem.alloc(max(1, system.max_feats), sizeof(feat_t))
    cdef void* cache = mem.alloc(max(1, system.cache_size), 1)
    out = {}
    cdef int a, g
    valid = numpy.zeros((system.nr_class,), dtype="int32")
    cdef int[::1] vv = valid
    if system.is_final(state):
        return out
    system.set_valid(&vv[0], state)
    for a in range(system.nr_class):
        if not vv[a]:
            continue
        g = system.sibling_group(state, a)
        if g >= 0:
            out[a] = system.upper_group(state, g, steps, W, feats, cache)
    return out


def group_family_bounds(TransitionSystem system, doc_input, history, Weights W, int steps):
    """{action: [its sibling group's upper_group_families bound of each
    action family]} for the valid actions in a group at the state after
    `history`, `steps` (1 or 2) actions below; {} where the system has no
    action families."""
    cdef Instance inst = system.instance(doc_input)
    cdef const void* state = inst.after(history)
    cdef Pool mem = Pool()
    cdef feat_t* feats = <feat_t*>mem.alloc(max(1, system.max_feats), sizeof(feat_t))
    cdef void* cache = mem.alloc(max(1, system.cache_size), 1)
    cdef double* by_family = <double*>mem.alloc(max(1, system.n_action_families), sizeof(double))
    out = {}
    cdef int a, g
    valid = numpy.zeros((system.nr_class,), dtype="int32")
    cdef int[::1] vv = valid
    if system.is_final(state) or not system.n_action_families:
        return out
    system.set_valid(&vv[0], state)
    for a in range(system.nr_class):
        if vv[a]:
            g = system.sibling_group(state, a)
            if g >= 0:
                system.upper_group_families(state, g, steps, W, feats, cache, by_family)
                out[a] = [by_family[k] for k in range(system.n_action_families)]
    return out


def action_families(TransitionSystem system, doc_input, history):
    """[action_family of each action] at the state after `history`."""
    cdef Instance inst = system.instance(doc_input)
    cdef const void* state = inst.after(history)
    return [system.action_family(state, a) for a in range(system.nr_class)]


def update_weight(TransitionSystem system, doc_input, history, int gold, Weights W, int depth,
                  double margin, bint exhaustive=False):
    """UPDATEWEIGHT (Figure 3) at the state after `history`; 1 if it updated.
    exhaustive: with the reference search (see lookahead)."""
    cdef Instance inst = system.instance(doc_input)
    cdef const void* state = inst.after(history)
    cdef Workspace ws = Workspace(system, depth, inst.state_size)
    if exhaustive:
        ws.dp = False
        ws.bnb = False
    return _update_weight(ws, W, state, gold, margin)


def decode_actions(TransitionSystem system, doc_input, Weights W, int depth):
    """The actions of search.decode (depth-D lookahead, a decision at each
    state; branch-and-bound seeded with the previous decision's path)."""
    cdef Instance inst = system.instance(doc_input)
    cdef Workspace ws = Workspace(system, depth, inst.state_size)
    cdef void* state = inst.start()
    out = numpy.zeros((max(1, inst.max_steps),), dtype="int32")
    cdef int[::1] ov = out
    cdef int n = _decode(ws, W, state, &ov[0], inst.max_steps)
    return out[:n].tolist()


def output(TransitionSystem system, doc_input, actions):
    """What the actions stand for (labels, a tree, ...)."""
    return system.instance(doc_input).output(numpy.asarray(actions, dtype="int32"))


def oracle_actions(TransitionSystem system, doc_input, gold):
    """The oracle's action path, or None if it gets stuck or the gold is
    incomplete."""
    path = system.instance(doc_input, gold).oracle_actions()
    return None if path is None else path[0]


def beam(TransitionSystem system, doc_input, Weights W, int width):
    """The final beam items [(score, actions)], best first."""
    cdef Instance inst = system.instance(doc_input)
    cdef Beam b = Beam(system, width, inst.state_size)
    b.reset(inst.start(), inst.max_steps)
    with nogil:
        b.search(W)
    return b.items(b.step)


def find_violation(TransitionSystem system, doc_input, gold, Weights W, int width, str update,
                   bint fix=False):
    """The triple the update method picks: None, or dict(step, full, gap,
    valid, y=gold prefix, z=predicted prefix, row=the beam's items
    [(score, actions)] at that step). With fix, also update W."""
    cdef Instance inst = system.instance(doc_input, gold)
    gold_actions = oracle_actions(system, doc_input, gold)
    cdef int[::1] gv = gold_actions
    cdef Beam b = Beam(system, width, inst.state_size)
    cdef Pool mem = Pool()
    cdef StepRecord* rec = <StepRecord*>mem.alloc(inst.max_steps + 2, sizeof(StepRecord))
    cdef void* gold_state = mem.alloc(1, b.state_size)
    cdef void* start = inst.start()
    cdef Violation v
    b.reset(start, inst.max_steps)
    if not _find_violation(b, W, start, &gv[0], len(gold_actions), METHODS[update], rec,
                           gold_state, &v):
        return None
    zbuf = numpy.zeros((inst.max_steps + 2,), dtype="int32")
    cdef int[::1] zv = zbuf
    nz = b.path(v.step, 0, &zv[0])
    ny = len(gold_actions) if v.full else min(v.step, len(gold_actions))
    out = {"step": v.step, "full": bool(v.full), "gap": v.gap, "valid": bool(v.valid),
           "y": [int(a) for a in gold_actions[:ny]], "z": [int(a) for a in zbuf[:nz]],
           "row": b.items(v.step)}
    if fix:
        fix_violation(b, Workspace(system, 0, inst.state_size), W, start, &gv[0],
                      len(gold_actions), &v, &zv[0])
    return out
