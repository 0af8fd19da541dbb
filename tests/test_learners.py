"""The learner x system table (docs/design.md): every learner of core.learners on
every transition system. Per cell, a tiny training run that (a) moves the
weights the way its paper says, (b) learns the doc, and (c) leaves a
perfect model alone."""
import random

import numpy
import pytest
from spacy_lookahead.core import decode, learners, views
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.systems.arc_standard import ArcStandardSystem
from spacy_lookahead.systems.schemes import label_constraints, scheme_actions, spans_to_ids
from spacy_lookahead.systems.tagging import TaggingSystem

from engine import atoms_of

WORDS = ["The", "old", "man", "the", "boats", "today", "."]
TAGS = ["DT", "JJ", "NN", "DT", "NNS", "NN", "."]
UPDATES = ["standard", "early", "max_violation", "hybrid", "latest"]


def make_system(name):
    """(system, doc input, gold) of a small doc for each system."""
    rng = random.Random(7)
    if name == "tagger":
        system = TaggingSystem(4)
        return system, atoms_of(WORDS), numpy.array([rng.randrange(4) for _ in WORDS], "int32")
    if name in ("chunker", "ner_rtl"):
        direction = "rtl" if name == "ner_rtl" else "ltr"
        actions = scheme_actions(["NP", "VP"], "iob2")
        system = TaggingSystem(len(actions), direction=direction,
                               feature_set="chunk" if name == "chunker" else "ner",
                               **label_constraints(actions, "iob2", direction))
        labels = ["B-NP", "I-NP", "I-NP", "B-NP", "I-NP", "O", "B-VP"]
        return system, atoms_of(WORDS, TAGS), numpy.array([actions.index(x) for x in labels], "int32")
    system = ArcStandardSystem(2, rich=name == "parser_rich")
    doc = atoms_of(WORDS, TAGS)
    path = []
    while True:  # a random derivation gives a random projective tree
        valid, final = views.valid_actions(system, doc, path)
        if final:
            break
        path.append(rng.choice(valid))
    return system, doc, views.output(system, doc, path)


SYSTEMS = ["tagger", "chunker", "ner_rtl", "parser", "parser_rich"]
# (learner, settings): one column of the table each
CELLS = ([("margin", {"depth": 0}), ("margin", {"depth": 1})]
         + [("beam", {"update": u}) for u in UPDATES]
         + [("sapo", {"exact": True}), ("sapo", {"exact": False, "update": "standard"}),
            ("sapo", {"exact": False, "update": "max_violation"})])


def train_pass(learner, system, doc, gold, W, settings, gamma=0.5):
    instances = system.instances([doc], [gold])
    if learner == "margin":
        return learners.margin_perceptron(instances, W, settings["depth"], 1.0)[0]
    if learner == "beam":
        return learners.violation_fixing_perceptron(instances, W, 2, settings["update"])["updates"]
    return learners.sapo(instances, W, 3, gamma, 1.0, 2, settings["exact"],
                         settings.get("update", "standard"))[0]


def gold_actions(system, doc, gold):
    return views.oracle_actions(system, doc, gold).tolist()


def path_score(system, doc, W, path):
    return sum(W.scores(views.features(system, doc, path[:k]), system.nr_class)[a]
               for k, a in enumerate(path))


def phi(system, doc, path):
    out = {}
    for k, a in enumerate(path):
        for f in views.features(system, doc, path[:k]):
            out[(int(f), a)] = out.get((int(f), a), 0) + 1
    return out


def raw(W):
    keys, lengths, classes, w, _, _ = W.to_arrays()
    return numpy.repeat(keys, lengths), classes, w


def random_weights(system, doc, rng):
    W = Weights()
    for f in views.features(system, doc, []):
        for c in range(system.nr_class):
            W.add(int(f), c, rng.gauss(0, 1))
    return W


# --- (a) the direction of each paper's update ---------------------------------------

@pytest.mark.parametrize("name", SYSTEMS)
@pytest.mark.parametrize("depth", [0, 1])
def test_margin_update_raises_the_gold_actions_value(name, depth):
    """Figure 3: where another action's backed-up value beats the gold one's
    (minus C), w += phi(S*_c) - phi(S*): the gold action's value rises
    against the winner's."""
    system, doc, gold = make_system(name)
    path = gold_actions(system, doc, gold)
    rng = random.Random(3)
    for k in range(len(path)):
        W = random_weights(system, doc, rng)
        best, values, _ = views.lookahead(system, doc, path[:k], W, depth)
        if best == path[k]:
            continue
        assert views.update_weight(system, doc, path[:k], path[k], W, depth, 1.0) == 1
        _, after, _ = views.lookahead(system, doc, path[:k], W, depth)
        assert after[path[k]] - after[best] > values[path[k]] - values[best] + 0.5
        return
    pytest.fail("the random models never erred")


@pytest.mark.parametrize("name", SYSTEMS)
@pytest.mark.parametrize("update", UPDATES)
def test_violation_fixing_update_is_the_difference_of_the_prefixes(name, update):
    """Huang et al.: w += Phi(x, y[1:i]) - Phi(x, z[1:i]) for the triple the
    method picks, so the gold prefix gains ||dPhi||^2 on z's prefix."""
    system, doc, gold = make_system(name)
    rng = random.Random(11)
    for _ in range(20):
        W = random_weights(system, doc, rng)
        v = views.find_violation(system, doc, gold, W, 2, update)
        if v is None:
            continue
        y, z = v["y"], v["z"]
        gap = path_score(system, doc, W, y) - path_score(system, doc, W, z)
        dphi = phi(system, doc, y)
        for key, count in phi(system, doc, z).items():
            dphi[key] = dphi.get(key, 0) - count
        norm = sum(c * c for c in dphi.values())
        assert learners.violation_fixing_perceptron(system.instances([doc], [gold]), W, 2,
                                                    update)["updates"] == 1
        new_gap = path_score(system, doc, W, y) - path_score(system, doc, W, z)
        assert new_gap == pytest.approx(gap + norm)
        assert norm > 0
        return
    pytest.fail("no update was due")


def nll(system, doc, W, gold_path, paths):
    scores = [path_score(system, doc, W, p) for p in paths if p != gold_path]
    g = path_score(system, doc, W, gold_path)
    top = max(scores + [g])
    return numpy.log(sum(numpy.exp(s - top) for s in scores) + numpy.exp(g - top)) - (g - top)


@pytest.mark.parametrize("name", SYSTEMS)
@pytest.mark.parametrize("exact,update", [(True, "standard"), (False, "standard"),
                                          (False, "max_violation")])
def test_sapo_update_raises_the_gold_outputs_probability(name, exact, update):
    """Algorithm 1: w += gamma (F(y*) - sum_k P_k F(y_k)), the gradient of
    log P(y*) over the n best: a small step lowers the negative
    log-likelihood of y* over the same outputs."""
    system, doc, gold = make_system(name)
    gold_path = gold_actions(system, doc, gold)
    rng = random.Random(5)
    W = random_weights(system, doc, rng)
    if update == "standard":  # complete outputs: the n best of the search
        if exact and system.first_order:
            [(outputs, _)] = decode.nbest(system.instances([doc]), W, 3, 2, exact)
            paths = [list(o[::-1]) if system.direction == "rtl" else list(o) for o in outputs]
        else:
            paths = [p for _, p in views.beam(system, doc, W, 3)]
        before = nll(system, doc, W, gold_path, paths)
        loss = train_pass("sapo", system, doc, gold, W, {"exact": exact, "update": update}, 0.05)
        assert loss == pytest.approx(before)
        assert nll(system, doc, W, gold_path, paths) < before
    else:  # prefixes: y[1:i] against the n best prefixes of the step FINDVIOLATION picks
        v = views.find_violation(system, doc, gold, W, 3, update)
        paths = [p for _, p in v["row"][:3]]
        before = nll(system, doc, W, v["y"], paths)
        loss = train_pass("sapo", system, doc, gold, W, {"exact": exact, "update": update}, 0.05)
        assert loss == pytest.approx(before)
        assert nll(system, doc, W, v["y"], paths) < before


# --- (b) learning the doc, (c) no update on a perfect model -----------------------------

@pytest.mark.parametrize("name", SYSTEMS)
@pytest.mark.parametrize("learner,settings", CELLS)
def test_cell_learns_and_leaves_a_perfect_model_alone(name, learner, settings):
    system, doc, gold = make_system(name)
    W = Weights()
    losses = [train_pass(learner, system, doc, gold, W, settings) for _ in range(60)]
    assert losses[0] > 0
    # it now decodes the gold output
    search = {"margin": "lookahead", "beam": "beam"}.get(learner)
    if search is not None:
        [out] = decode.decode(system.instances([doc]), W, search, settings.get("depth", 0), 2)
    else:
        [(outputs, _)] = decode.nbest(system.instances([doc]), W, 3, 2, settings["exact"])
        out = outputs[0]
    if name.startswith("parser"):
        assert out[0].tolist() == gold[0].tolist() and out[1].tolist() == gold[1].tolist()
    else:
        assert out.tolist() == gold.tolist()
    # a perfect model: the perceptrons make no update; SAPO's step vanishes
    # (P(y*) = 1 to double precision once its weights are scaled up)
    if learner == "sapo":
        perfect = Weights()
        keys, classes, w = raw(W)
        for k, c, v in zip(keys, classes, w):
            perfect.add(int(k), int(c), 1000.0 * v * W.scale)
        W = perfect
    before = raw(W)
    loss = train_pass(learner, system, doc, gold, W, settings)
    after = raw(W)
    assert loss == pytest.approx(0.0, abs=1e-9)
    assert before[0].tolist() == after[0].tolist() and before[1].tolist() == after[1].tolist()
    assert numpy.allclose(before[2], after[2], rtol=0, atol=1e-9 * max(1.0, abs(before[2]).max()))
    if learner != "sapo":
        assert (before[2] == after[2]).all()


@pytest.mark.parametrize("search", ["greedy", "lookahead", "beam"])
def test_no_valid_derivation_is_an_error_not_a_padded_output(search):
    """Preset labels the scheme cannot continue (I-VP right after B-NP):
    decoding raises instead of writing label 0 where it got stuck."""
    actions = scheme_actions(["NP", "VP"], "iob2")
    system = TaggingSystem(len(actions), feature_set="chunk",
                           **label_constraints(actions, "iob2", "ltr"))
    forced = numpy.full((len(WORDS),), -1, dtype="int32")
    forced[2], forced[3] = actions.index("B-NP"), actions.index("I-VP")
    doc = {"atoms": atoms_of(WORDS, TAGS), "forced": forced}
    with pytest.raises(decode.NoValidOutput, match="no valid output"):
        decode.decode([system.instance(doc)], Weights(), search, 1, 4)
    with pytest.raises(decode.NoValidOutput):
        decode.nbest([system.instance(doc)], Weights(), 3)
    forced[3] = actions.index("I-NP")  # a valid preset decodes
    out = decode.decode([system.instance(doc)], Weights(), search, 1, 4)[0]
    assert out[2] == actions.index("B-NP") and out[3] == actions.index("I-NP")


@pytest.mark.parametrize("scheme", ["iob2", "biluo"])
@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("search", ["greedy", "lookahead", "beam", "nbest-beam"])
def test_a_preset_a_valid_labelling_keeps_always_decodes(scheme, direction, search):
    """Presets taken from a valid labelling (a label at random tokens) never
    leave the search in a dead end: a label is valid only where a later
    preset can still follow (issue 35: greedy and beam searches took O
    before a preset I- and raised NoValidOutput). Weights that favour O
    everywhere make every search try the dead end; each output keeps the
    presets and the scheme's constraints, in both directions."""
    rng = numpy.random.default_rng(3)
    actions = scheme_actions(["NP", "VP"], scheme)
    constraints = label_constraints(actions, scheme, direction)
    system = TaggingSystem(len(actions), feature_set="chunk", direction=direction, **constraints)
    allowed, start, end = (constraints[k] for k in ("allowed", "at_doc_start", "at_doc_end"))
    outside = actions.index("O")
    for trial in range(30):
        n = int(rng.integers(2, len(WORDS) + 1))
        spans, i = [], 0
        while i < n:  # random spans over the doc
            k = int(rng.integers(1, 4))
            if rng.random() < 0.6 and i + k <= n:
                spans.append((i, i + k, str(rng.choice(["NP", "VP"]))))
            i += k
        gold = spans_to_ids(n, spans, actions, scheme)
        forced = numpy.full((n,), -1, dtype="int32")
        for j in rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False):
            if gold[j] != outside:
                forced[j] = gold[j]
        doc = {"atoms": atoms_of(WORDS[:n], TAGS[:n]), "forced": forced}
        W = Weights()
        for f in views.features(system, doc, []):
            W.add(int(f), outside, 5.0)
        W.tick()
        if search == "nbest-beam":
            outs = [row for row in decode.nbest([system.instance(doc)], W, 3, beam_width=4,
                                                exact=False)[0][0]]
        else:
            outs = [decode.decode([system.instance(doc)], W, search, 1, 4)[0]]
        for out in outs:
            out = numpy.asarray(out)
            assert (out[forced >= 0] == forced[forced >= 0]).all()
            order = out if direction == "ltr" else out[::-1]
            assert start[out[0]] and end[out[-1]]
            prev = -1
            for label in order:
                assert allowed[prev + 1, label], (trial, order.tolist())
                prev = label
