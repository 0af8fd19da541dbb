"""Violation-fixing updates (Huang et al. 2012, Sections 4-5): the triple
each method picks on hand-built beams, and on real beams that every update
but the standard one is a violation (w . dPhi <= 0)."""
import pytest
import spacy
from spacy_lookahead.core.violation import choose
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.pipes.parser import ArcStandardParser  # noqa: F401 (registers the factory)
from engine import learners, nbest, predict, views  # noqa: F401

from parse_data import parse_examples
from blocks import blocks

# A hand-built run of 6 steps (Figure 3's picture): the gold prefix is the
# best item at steps 1-2, falls off the beam at step 3, is most violated at
# step 4, last violated at step 5 (at step 6 it scores above the best item:
# the standard update would be invalid).
BEST = [1.0, 2.0, 3.0, 5.0, 5.5, 6.0]
GOLD = [1.0, 2.0, 2.5, 3.0, 5.0, 7.0]
IN_BEAM = [True, True, False, False, False, False]
BEST_IS_GOLD = [True, True, False, False, False, False]


def run(method, final_best=6.0, final_gold=7.0, final_is_gold=False, best=BEST, gold=GOLD,
        in_beam=IN_BEAM, best_is_gold=BEST_IS_GOLD):
    return choose(method, best, gold, in_beam, best_is_gold, final_best, final_gold, final_is_gold)


def test_triples_when_the_standard_update_is_invalid():
    assert run("early") == (3, False, 0.5, True)           # where y falls off the beam
    assert run("max_violation") == (4, False, 2.0, True)   # argmax of score(z) - score(y)
    assert run("latest") == (5, False, 0.5, True)          # the last violation
    assert run("hybrid") == run("early")                   # standard is invalid: early
    step, full, gap, valid = run("standard")               # full update, not a violation
    assert (step, full, valid) == (6, True, False) and gap == pytest.approx(-1.0)


def test_triples_when_the_standard_update_is_valid():
    kw = dict(final_best=8.0, final_gold=7.0)
    assert run("standard", **kw) == (6, True, 1.0, True)
    assert run("hybrid", **kw) == (6, True, 1.0, True)
    assert run("early", **kw) == (3, False, 0.5, True)


def test_gold_survives_the_beam():
    in_beam = [True] * 6
    best_is_gold = [True, True, False, True, True, False]
    best = [1.0, 2.0, 3.0, 3.2, 5.0, 7.5]
    gold = [1.0, 2.0, 2.0, 3.2, 5.0, 7.0]
    kw = dict(best=best, gold=gold, in_beam=in_beam, best_is_gold=best_is_gold,
              final_best=7.5, final_gold=7.0)
    assert run("early", **kw) == (6, True, 0.5, True)      # full update: y is not B[0]
    assert run("max_violation", **kw) == (3, False, 1.0, True)
    assert run("latest", **kw) == (6, False, 0.5, True)
    # the gold is the best final item: no method updates, even where it
    # trailed another item on the way (step 3 of the run above)
    for method in ("standard", "early", "max_violation", "hybrid", "latest"):
        assert run(method, **{**kw, "final_best": 7.0, "final_is_gold": True}) is None
    best_is_gold = [True] * 6
    for method in ("standard", "early", "max_violation", "hybrid", "latest"):
        assert run(method, best=gold, gold=gold, in_beam=in_beam, best_is_gold=best_is_gold,
                   final_best=7.0, final_gold=7.0, final_is_gold=True) is None


def test_unknown_update_method():
    with pytest.raises(ValueError, match="update must be one of"):
        run("late")


@pytest.fixture(scope="module")
def half_trained(shared_data):
    """A parser trained greedily on a little data: beams make mistakes."""
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {"search": "greedy"}))
    train = parse_examples(nlp.vocab, "ewt", "train", 300)
    parser.initialize(lambda: train)
    parser.update(train)
    return parser, parse_examples(nlp.vocab, "ewt", "dev", 60)


def phi_score(system, doc, W, path):
    return sum(W.scores(views.features(system, doc, path[:k]), system.nr_class)[a]
               for k, a in enumerate(path))


@pytest.mark.parametrize("update", ["standard", "early", "max_violation", "hybrid", "latest"])
def test_every_update_is_a_violation_except_standard(half_trained, update):
    parser, examples = half_trained
    system, W = parser.system, parser.weights.average()
    updates = invalid = 0
    for eg in examples:
        doc = parser._inputs([eg.predicted], [eg])[0]
        gold = parser.gold(eg)
        v = views.find_violation(system, doc, gold, W, 4, update)
        if v is None:
            continue
        updates += 1
        y, z = v["y"], v["z"]
        assert y != z
        assert y == views.oracle_actions(system, doc, gold).tolist()[:len(y)]
        w_dphi = phi_score(system, doc, W, y) - phi_score(system, doc, W, z)
        assert -w_dphi == pytest.approx(v["gap"], abs=1e-6)
        if update == "standard":
            invalid += w_dphi > 1e-9
            assert v["full"] and v["valid"] == (w_dphi <= 1e-9)
        else:
            assert w_dphi <= 1e-9, v
            if update == "early":
                assert v["full"] or len(y) <= v["step"]
        if update == "max_violation":
            assert v["gap"] >= views.find_violation(system, doc, gold, W, 4, "latest")["gap"] - 1e-9
    assert updates >= 20


def test_the_update_moves_the_weights_towards_the_gold_prefix(half_trained):
    parser, examples = half_trained
    system = parser.system
    W = Weights().from_bytes(parser.weights.average().to_bytes())
    for eg in examples[:20]:
        doc = parser._inputs([eg.predicted], [eg])[0]
        gold = parser.gold(eg)
        before = views.find_violation(system, doc, gold, W, 4, "max_violation")
        if before is None:
            continue
        y, z = before["y"], before["z"]
        views.find_violation(system, doc, gold, W, 4, "max_violation", fix=True)
        gap = phi_score(system, doc, W, z) - phi_score(system, doc, W, y)
        assert gap < before["gap"]  # w += dPhi: the violation shrinks


def test_beam_training_counts_invalid_standard_updates(half_trained):
    parser, examples = half_trained
    system = parser.system
    golds = [parser.gold(eg) for eg in examples]
    inputs = parser._inputs([eg.predicted for eg in examples], examples)
    W = Weights().from_bytes(parser.weights.average().to_bytes())
    stats = learners.violation_fixing_perceptron(system.instances(inputs, golds), W, 2, "standard")
    assert stats["docs"] == len(examples) and stats["updates"] > 0
    assert 0 < stats["invalid"] < stats["updates"]
    W = Weights().from_bytes(parser.weights.average().to_bytes())
    assert learners.violation_fixing_perceptron(system.instances(inputs, golds), W, 2, "max_violation")["invalid"] == 0
    assert W.time == len(examples)
