"""Forward-backward marginals of a first-order system (core/marginals.pyx)
against brute force: every valid action sequence enumerated and weighted by
exp(score / temperature)."""
import itertools
import math
import random

import numpy
import pytest
from hypothesis import given, settings, strategies as st

from spacy_lookahead.core import calibration, marginals as marginals_module
from spacy_lookahead.core.marginals import Lattice, marginals
from spacy_lookahead.core.weights import Weights

from engine import views
from engine import WORDS, atoms_of, constrained_system
from blocks import blocks


def sequence_weights(system, atoms, W, temperature):
    """{valid sequence of len(atoms) actions: score / temperature}."""
    n, C = len(atoms), system.nr_class
    weights = {}
    for seq in itertools.product(range(C), repeat=n):
        score, ok = 0.0, True
        for k, a in enumerate(seq):
            valid, _ = views.valid_actions(system, atoms, list(seq[:k]))
            if a not in valid:
                ok = False
                break
            score += W.scores(views.features(system, atoms, list(seq[:k])), C)[a]
        if ok:
            weights[seq] = score / temperature
    return weights


def brute_force(system, atoms, W, temperature):
    """(marginals (n, C), log Z) over every valid sequence of len(atoms) actions."""
    n, C = len(atoms), system.nr_class
    weights = sequence_weights(system, atoms, W, temperature)
    if not weights:
        return numpy.zeros((n, C)), -math.inf
    top = max(weights.values())
    log_z = top + math.log(sum(math.exp(v - top) for v in weights.values()))
    probs = numpy.zeros((n, C))
    for seq, v in weights.items():
        for k, a in enumerate(seq):
            probs[k, a] += math.exp(v - log_z)
    return probs, log_z


@pytest.fixture(autouse=True)
def _row_cache_restored():
    names = ("ROW_CACHE", "FACTORED", "PRUNED_VITERBI")
    saved = [getattr(marginals_module, name) for name in names]
    yield
    for name, value in zip(names, saved):
        setattr(marginals_module, name, value)


def keep_rows(keep, factored=True):
    """Rows kept for the backward pass (a doc that fits), or made again (a
    long doc), or not made at all (factored: emissions x transitions, the
    tagging systems' way): every path gives the same figures."""
    marginals_module.ROW_CACHE = 1 << 21 if keep else 0
    marginals_module.FACTORED = factored


def random_model(nr_class, length, direction, constrained, rng):
    """A first-order tagging system, a doc and Gaussian weights on every
    feature of every history (first-order: the previous action)."""
    system = constrained_system(nr_class, direction, constrained)
    atoms = atoms_of([rng.choice(WORDS) for _ in range(length)])
    W = Weights()
    for h in range(length):
        for prev in range(nr_class):
            for f in views.features(system, atoms, [prev] * h):
                for c in range(nr_class):
                    if W.get(int(f), c) == 0.0:
                        W.add(int(f), c, rng.gauss(0, 1.5))
    return system, atoms, W


@settings(max_examples=40, deadline=None)
@given(nr_class=st.integers(2, 4), length=st.integers(1, 5),
       direction=st.sampled_from(["ltr", "rtl"]), constrained=st.booleans(),
       temperature=st.sampled_from([1.0, 0.5, 3.0]), seed=st.integers(0, 2**16))
def test_marginals_are_the_brute_force_ones(nr_class, length, direction, constrained,
                                            temperature, seed):
    rng = random.Random(seed)
    keep_rows(seed % 2 == 0, seed % 3 != 0)
    system, atoms, W = random_model(nr_class, length, direction, constrained, rng)
    # factored unless switched off, or the scores / tau span more than the factors allow
    assert Lattice(system.instances([atoms])[0], W, temperature).factored <= (seed % 3 != 0)
    (probs, log_z), = marginals(system.instances([atoms]), W, temperature)
    expected, expected_z = brute_force(system, atoms, W, temperature)
    assert probs.shape == (length, nr_class)
    lattice = Lattice(system.instances([atoms])[0], W, temperature)
    path, top = lattice.best()
    weights = sequence_weights(system, atoms, W, 1.0)
    if weights:  # the Viterbi path is a highest-scoring valid sequence
        assert math.isclose(top, max(weights.values()), rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose(weights[tuple(path)], top, rel_tol=1e-12, abs_tol=1e-12)
    else:
        assert path is None and top == -math.inf
    numpy.testing.assert_allclose(probs, expected, rtol=1e-9, atol=1e-12)
    if expected_z == -math.inf:
        assert log_z == -math.inf
    else:
        assert math.isclose(log_z, expected_z, rel_tol=1e-12, abs_tol=1e-12)
        numpy.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("keep,factored", [(True, True), (True, False), (False, False)])
def test_lattices_sharing_a_workspace_give_their_own_figures(keep, factored):
    """The pipes make the lattices of a batch with one Workspace: each gives
    bitwise the best path, log Z and marginals it gives with its own, also
    when an earlier lattice is read after later ones were made (rows made
    again use the workspace's scratch), and a workspace of another depth
    is not used."""
    from spacy_lookahead.core.search import Workspace

    rng = random.Random(7)
    keep_rows(keep, factored)
    try:
        system, _, W = random_model(4, 6, "ltr", True, rng)
        docs = [atoms_of([rng.choice(WORDS) for _ in range(n)]) for n in (6, 1, 4, 6, 3)]
        instances = system.instances(docs)

        def figures(lattice):
            path, top = lattice.best()
            return (None if path is None else path.tobytes(), top, lattice.log_z,
                    lattice.marginals().tobytes())

        own = [figures(Lattice(inst, W, 0.7)) for inst in instances]
        ws = Workspace(system, 0, instances[0].state_size)
        shared = [Lattice(inst, W, 0.7, True, None, ws) for inst in instances]
        assert [figures(lat) for lat in reversed(shared)] == own[::-1]
        deep = Workspace(system, 1, instances[0].state_size)
        assert [figures(Lattice(inst, W, 0.7, True, None, deep)) for inst in instances] == own
    finally:
        keep_rows(True, True)


def test_step_probabilities_read_a_strided_array_as_its_values():
    """A reversed or strided view of the actions gives what a contiguous copy
    gives (the C loop read the memory as contiguous: wrong steps, or a crash)."""
    rng = random.Random(5)
    system, _, W = random_model(4, 7, "ltr", True, rng)
    inst = system.instances([atoms_of([rng.choice(WORDS) for _ in range(6)])])[0]
    lattice = Lattice(inst, W, 0.8)
    path = numpy.asarray(lattice.best()[0], dtype="int32")
    wide = numpy.zeros((2 * len(path),), dtype="int32")
    wide[::2] = path[::-1]
    reversed_view = wide[::2][::-1]  # stride -8 bytes: the path's values
    assert not reversed_view.flags["C_CONTIGUOUS"]
    assert (lattice.step_probabilities(reversed_view).tobytes()
            == lattice.step_probabilities(numpy.ascontiguousarray(reversed_view)).tobytes())


@pytest.mark.parametrize("keep,factored,pruned", [(True, True, True), (True, True, False),
                                                   (True, False, False), (False, False, False)])
def test_one_lattice_through_a_batch_gives_each_doc_its_own_figures(keep, factored, pruned):
    """best_with_probabilities and step_alternatives run a batch through one
    lattice (its chain's spine grows for a longer doc and is reused for a
    shorter one): per doc, bitwise what a lattice of its own gives -- the
    best path, its score, its steps' probabilities or a scorer's figures,
    and of a given derivation each step's probability and the most probable
    other action there by its marginals, either way round."""
    rng = random.Random(11)
    keep_rows(keep, factored)
    marginals_module.PRUNED_VITERBI = pruned
    try:
        system, _, W = random_model(4, 7, "rtl", True, rng)
        docs = [atoms_of([rng.choice(WORDS) for _ in range(n)]) for n in (3, 0, 7, 1, 5, 7, 2)]
        instances = system.instances(docs)
        own = [Lattice(inst, W, 0.6) for inst in instances]
        best = [lat.best() for lat in own]
        got = marginals_module.best_with_probabilities(instances, W, 0.6)
        assert len(got) == len(own)
        for lat, (path, top), (path2, top2, probs) in zip(own, best, got):
            assert path2.tobytes() == path.tobytes() and top2 == top
            assert probs.tobytes() == lat.step_probabilities(path).tobytes()
        seen = []
        scored = marginals_module.best_with_probabilities(
            instances, W, 0.6, None, lambda lat, inst, path: seen.append(inst) or lat.log_z)
        assert seen == list(instances)
        assert [s[2] for s in scored] == [lat.log_z for lat in own]
        other = [rng.choice(range(4)) for _ in range(7)]
        given = [path if k % 2 else numpy.asarray(other[:lat.T], dtype="int32")
                 for k, (lat, (path, _)) in enumerate(zip(own, best))]
        starts = numpy.cumsum([0] + [len(g) for g in given])
        for reverse in (False, True):  # reverse: each derivation stored last step first
            stored = numpy.concatenate([g[::-1] if reverse else g for g in given])
            own_p, alt, alt_p = marginals_module.step_alternatives(instances, stored, starts, W, 0.6,
                                                                   None, reverse)
            for k, (lat, taken) in enumerate(zip(own, given)):
                a, b = starts[k], starts[k + 1]
                ids, probs, mine = alt[a:b], alt_p[a:b], own_p[a:b]
                if reverse:
                    ids, probs, mine = ids[::-1], probs[::-1], mine[::-1]
                m = lat.marginals()
                steps = numpy.arange(lat.T)
                assert mine.tobytes() == m[steps, taken].tobytes()
                m[steps, taken] = -1.0
                assert ids.tolist() == m.argmax(axis=1).tolist()
                assert probs.tobytes() == m[steps, ids].tobytes()
        with pytest.raises(ValueError, match="2 actions for a derivation of 3 steps"):
            marginals_module.step_alternatives(instances[:1], [0, 1], [0, 2], W, 0.6)
        with pytest.raises(ValueError, match="action 9 out of range"):
            marginals_module.step_alternatives(instances[:1], [0, 1, 9], [0, 3], W, 0.6)
        with pytest.raises(ValueError, match="must bound 2 derivations"):
            marginals_module.step_alternatives(instances[:2], [0, 1, 2], [0, 3], W, 0.6)
        with pytest.raises(ValueError, match="temperature must be > 0"):
            marginals_module.best_with_probabilities(instances, W, 0.0)
    finally:
        keep_rows(True, True)


@pytest.mark.parametrize("tau", [0.8, 0.01])
def test_factored_and_row_by_row_lattices_agree_on_a_real_model(tau, shared_data):
    """A NER model on real sentences: the factored lattice gives the row-by-row
    one's log Z, marginals and best output; scores / tau beyond the range
    where the factors are safe fall back to the rows (and still agree)."""
    import spacy
    from spacy.tokens import Doc
    from test_spans import jnlpba, train, words_only
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {"learner": "sapo", "direction": "rtl",
                                                "temperature": 1.0}))
    train(nlp, words_only(jnlpba(shared_data, nlp.vocab, "train", 300)), 1)
    W = ner.averaged_weights
    docs = [Doc(nlp.vocab, words=[t.text for t in eg.reference])
            for eg in jnlpba(shared_data, nlp.vocab, "test", 40)]
    for inst in ner.instances(docs):
        keep_rows(True, True)
        fast = Lattice(inst, W, tau)
        assert fast.factored == (tau == 0.8)
        keep_rows(True, False)
        slow = Lattice(inst, W, tau)
        assert not slow.factored
        assert math.isclose(fast.log_z, slow.log_z, rel_tol=1e-12)
        numpy.testing.assert_allclose(fast.marginals(), slow.marginals(), rtol=1e-9, atol=1e-12)
        assert list(fast.best()[0]) == list(slow.best()[0])


@settings(max_examples=40, deadline=None)
@given(nr_class=st.integers(2, 4), length=st.integers(2, 7),
       direction=st.sampled_from(["ltr", "rtl"]), constrained=st.booleans(),
       temperature=st.sampled_from([1.0, 0.5, 3.0]), seed=st.integers(0, 2**16),
       starts=st.lists(st.booleans(), min_size=7, max_size=7))
def test_a_doc_of_several_sentences_factors_as_its_rows_give(nr_class, length, direction,
                                                            constrained, temperature, seed,
                                                            starts):
    """A doc whose sentences each start the history again (a tagger that
    respects sentence starts): at a sentence's first step every previous
    tag's transitions are the first step's, so the lattice still factors,
    and gives the row-by-row lattice's log Z, marginals, best output and
    segment probabilities."""
    rng = random.Random(seed)
    system, atoms, W = random_model(nr_class, length, direction, constrained, rng)
    sent_starts = numpy.array([True] + starts[1:length], dtype=bool)
    inst = system.instance({"atoms": atoms, "sent_starts": sent_starts})
    assert inst.breaks == (sent_starts.sum() > 1)
    keep_rows(True, True)
    fast = Lattice(inst, W, temperature)
    assert fast.factored
    keep_rows(seed % 2 == 0, False)
    slow = Lattice(inst, W, temperature)
    assert not slow.factored
    if slow.log_z == -math.inf:
        assert fast.log_z == -math.inf
        return
    assert math.isclose(fast.log_z, slow.log_z, rel_tol=1e-12, abs_tol=1e-12)
    numpy.testing.assert_allclose(fast.marginals(), slow.marginals(), rtol=1e-9, atol=1e-12)
    assert list(fast.best()[0]) == list(slow.best()[0])
    marginals_module.PRUNED_VITERBI = False  # the full Viterbi too
    assert list(fast.best()[0]) == list(slow.best()[0])
    for _ in range(3):  # paths' probabilities (the rows, step by step)
        path = [rng.randrange(nr_class) for _ in range(length)]
        assert math.isclose(fast.log_probability(path), slow.log_probability(path),
                            rel_tol=1e-9, abs_tol=1e-9) or (
            fast.log_probability(path) == slow.log_probability(path) == -math.inf)
    labels = [rng.randrange(nr_class) for _ in range(2)]
    before = [rng.random() < 0.5 for _ in range(nr_class)]
    after = [rng.random() < 0.5 for _ in range(nr_class)]
    for a in (0, length - 2):
        for masks in ((None, None), (before, after)):
            assert math.isclose(fast.segment_probability(a, labels, *masks),
                                slow.segment_probability(a, labels, *masks), rel_tol=1e-9,
                                abs_tol=1e-12)
    keep_rows(True, True)  # the forward sums alone: log Z
    assert math.isclose(Lattice(inst, W, temperature, backward=False).log_z, slow.log_z,
                        rel_tol=1e-12, abs_tol=1e-12)


def exact_chain(allowed, at_end, E, Tr):
    """Marginals (T, C) and log Z of a chain with emissions E (T, C),
    transitions Tr (C + 1, C; row 0: the first step), `allowed` (C + 1, C)
    and the labels that may end it, summed in the log domain by numpy."""
    E, Tr = numpy.asarray(E, float), numpy.asarray(Tr, float)
    T, C = E.shape
    trans = numpy.where(numpy.asarray(allowed, bool), Tr, -numpy.inf)
    em = E.copy()
    em[T - 1, ~numpy.asarray(at_end, bool)] = -numpy.inf
    la, lb = numpy.full((T, C), -numpy.inf), numpy.zeros((T, C))
    la[0] = em[0] + trans[0]
    for t in range(1, T):
        la[t] = numpy.logaddexp.reduce(la[t - 1][:, None] + trans[1:], axis=0) + em[t]
    for t in range(T - 2, -1, -1):
        lb[t] = numpy.logaddexp.reduce(trans[1:] + (em[t + 1] + lb[t + 1])[None, :], axis=1)
    log_z = numpy.logaddexp.reduce(la[T - 1])
    return numpy.exp(la + lb - log_z), log_z


# constrained chains whose scores are within the factored range but whose
# forward sums put nearly all the mass on a label that cannot end the doc:
# (labels, allowed (C + 1, C), labels that may end it, emissions, transitions)
DEAD_ENDS = {
    "three labels": (3, [[1, 1, 1], [1, 0, 0], [1, 1, 1], [1, 1, 1]], [0, 1, 1],
                     [[130.0, 0.0, -20.0]] * 37 + [[-130.0, 0.0, -20.0]] * 3,
                     [[0.0] * 3, [0.0] * 3, [0.0, 116.875, 116.875], [0.0, 116.875, 116.875]]),
    "two labels": (2, [[1, 1], [1, 0], [1, 1]], [0, 1],
                   [[150.0, 0.0]] * 44 + [[-150.0, 0.0]] * 3,
                   [[0.0, 0.0], [0.0, 0.0], [0.0, 140.0]]),
}


@pytest.mark.parametrize("case", sorted(DEAD_ENDS))
@pytest.mark.parametrize("backward", [True, False])
def test_a_lattice_whose_mass_sits_in_dead_ends_keeps_its_digits(case, backward):
    """The factored products lose digits once the live label's forward sum
    is tiny (they gave marginals 0.25% off and log Z 3e-3 off, passing
    the soundness check): such a lattice sums in the log domain."""
    from spacy_lookahead.systems.tagging import TaggingSystem
    C, allowed, at_end, E, Tr = DEAD_ENDS[case]
    system = TaggingSystem(C, templates=["lower[0]"], allowed=allowed, at_doc_end=at_end)
    atoms = atoms_of([f"w{i}" for i in range(len(E))])
    W = Weights()
    for i in range(len(E)):
        feat = int(views.features(system, atoms, [0] * i)[0])
        for c in range(C):
            if E[i][c]:
                W.add(feat, c, E[i][c])
    prev_feats = ([int(views.features(system, atoms, [])[-1])]
                  + [int(views.features(system, atoms, [p])[-1]) for p in range(C)])
    for p in range(C + 1):
        for c in range(C):
            if Tr[p][c]:
                W.add(prev_feats[p], c, Tr[p][c])
    expected, expected_z = exact_chain(allowed, at_end, E, Tr)
    keep_rows(True, True)
    lattice = Lattice(system.instances([{"atoms": atoms}])[0], W, 1.0, backward=backward)
    assert math.isclose(lattice.log_z, expected_z, rel_tol=1e-12)
    if backward:
        probs = lattice.marginals()
        big = expected > 1e-12
        assert (numpy.abs(probs - expected)[big] / expected[big]).max() < 1e-9


def brute_force_best(system, atoms, W):
    """(the highest-scoring valid sequence, its score), first in
    lexicographic order on ties; (None, -inf) if none is valid."""
    weights = sequence_weights(system, atoms, W, 1.0)
    if not weights:
        return None, -math.inf
    top = max(weights.values())
    return min(seq for seq, v in weights.items() if v == top), top


@settings(max_examples=80, deadline=None)
@given(nr_class=st.integers(2, 5), length=st.integers(1, 6),
       direction=st.sampled_from(["ltr", "rtl"]), constrained=st.booleans(),
       sharpness=st.sampled_from([1.0, 4.0, 30.0]), theta=st.sampled_from([1e-3, 0.1, 0.4]),
       seed=st.integers(0, 2**16))
def test_pruned_viterbi_is_the_best_path_when_certified(nr_class, length, direction, constrained,
                                                        sharpness, theta, seed):
    """Sharp models (weights x 4, x 30) put most lattice entries far below
    the thresholds: the Viterbi over the entries of marginal > theta, when
    its path has p >= 2 theta, is the brute-force best path (first in order
    on ties) with its score; and so is best(), whichever Viterbi answered."""
    rng = random.Random(seed)
    system, atoms, W = random_model(nr_class, length, direction, constrained, rng)
    sharp = Weights()
    keys, lengths, classes, ws = W.to_arrays()[:4]
    for key, clas, w in zip(numpy.repeat(keys, lengths), classes, ws):
        sharp.add(int(key), int(clas), float(w) * sharpness)
    lattice = Lattice(system.instances([atoms])[0], sharp, 1.0)
    best, best_score = brute_force_best(system, atoms, sharp)
    path, top = lattice.best()
    if best is None:
        assert path is None
        return
    assert tuple(path) == best and math.isclose(top, best_score, rel_tol=1e-12, abs_tol=1e-12)
    if lattice.factored:
        pruned, score = lattice.pruned_best(theta)
        if pruned is not None and math.exp(score - lattice.log_z) >= 2 * theta:
            assert tuple(pruned) == best and score == top
        marginals_module.PRUNED_VITERBI = False
        plain = Lattice(system.instances([atoms])[0], sharp, 1.0)
        assert list(plain.best()[0]) == list(path) and plain.best()[1] == top
        assert plain.viterbi_entries == length * nr_class


def test_pruned_viterbi_answers_for_a_real_tagger(shared_data):
    """A SAPO tagger at tau 0.4 on real sentences: best() gives the plain
    Viterbi's output and score, and the pruned Viterbi answered on most of
    them, over part of the entries (else the test would not test it)."""
    import spacy
    from ewt import ewt_examples
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"learner": "sapo", "temperature": 0.4}))
    examples = ewt_examples(nlp.vocab, "train", 300)
    nlp.initialize(lambda: examples)
    for _ in range(2):
        nlp.update(examples)
    W = tagger.averaged_weights
    entries, answered = [], 0
    instances = tagger.instances([eg.predicted for eg in examples[:60]])
    for inst in instances:
        marginals_module.PRUNED_VITERBI = True
        lattice = Lattice(inst, W, 0.4)
        path, top = lattice.best()
        entries.append(lattice.viterbi_entries / (lattice.T * lattice.C))
        answered += lattice.viterbi_entries < lattice.T * lattice.C
        marginals_module.PRUNED_VITERBI = False
        plain = Lattice(inst, W, 0.4)
        assert plain.factored and list(plain.best()[0]) == list(path) and plain.best()[1] == top
    # this weak model (2 epochs on 300 sentences) keeps about half the entries;
    # the workflow's tagger, 3.4% (benchmarks/NOTES.md)
    assert answered >= 0.8 * len(instances) and numpy.mean(entries) < 0.75


def test_empty_doc_and_bad_temperature():
    system = constrained_system(3, "ltr", False)
    (probs, log_z), = marginals(system.instances([atoms_of([])]), Weights())
    assert probs.shape == (0, 3) and log_z == 0.0
    with pytest.raises(ValueError, match="temperature must be > 0"):
        marginals(system.instances([atoms_of(["a"])]), Weights(), 0.0)


def test_uniform_weights_give_uniform_marginals():
    system = constrained_system(4, "ltr", False)
    (probs, _), = marginals(system.instances([atoms_of(["The", "old", "man"])]), Weights())
    numpy.testing.assert_allclose(probs, 0.25)


@settings(max_examples=40, deadline=None)
@given(nr_class=st.integers(2, 4), length=st.integers(1, 5),
       direction=st.sampled_from(["ltr", "rtl"]), constrained=st.booleans(),
       temperature=st.sampled_from([1.0, 0.7]), seed=st.integers(0, 2**16))
def test_segment_probabilities_are_the_brute_force_ones(nr_class, length, direction, constrained,
                                                        temperature, seed):
    """p(a run of steps takes given labels, with the step before and the one
    after in given sets): a span's probability, e.g. B-X I-X with no I-X
    after it."""
    rng = random.Random(seed)
    keep_rows(seed % 2 == 0, seed % 3 != 0)
    system, atoms, W = random_model(nr_class, length, direction, constrained, rng)
    weights = sequence_weights(system, atoms, W, temperature)
    lattice = Lattice(system.instances([atoms])[0], W, temperature)
    if weights:
        top = max(weights.values())
        log_z = top + math.log(sum(math.exp(v - top) for v in weights.values()))
    for _ in range(4):
        a = rng.randrange(length)
        labels = [rng.randrange(nr_class) for _ in range(rng.randint(1, length - a))]
        b = a + len(labels) - 1
        before = None if rng.random() < 0.3 else [rng.randint(0, 1) for _ in range(nr_class)]
        after = None if rng.random() < 0.3 else [rng.randint(0, 1) for _ in range(nr_class)]
        expected = sum(
            math.exp(v - log_z) for seq, v in weights.items()
            if list(seq[a:b + 1]) == labels
            and (before is None or a == 0 or before[seq[a - 1]])
            and (after is None or b == length - 1 or after[seq[b + 1]]))
        got = lattice.segment_probability(a, labels, before, after)
        assert math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12), (got, expected)


@settings(max_examples=30, deadline=None)
@given(nr_class=st.integers(2, 4), length=st.integers(1, 4),
       direction=st.sampled_from(["ltr", "rtl"]), constrained=st.booleans(),
       temperature=st.sampled_from([1.0, 0.4, 2.5]), seed=st.integers(0, 2**16))
def test_log_probability_is_the_brute_force_one(nr_class, length, direction, constrained,
                                                temperature, seed):
    rng = random.Random(seed)
    keep_rows(seed % 2 == 0, seed % 3 != 0)
    system, atoms, W = random_model(nr_class, length, direction, constrained, rng)
    weights = sequence_weights(system, atoms, W, temperature)
    inst = system.instances([atoms])[0]
    both = Lattice(inst, W, temperature)
    forward = Lattice(inst, W, temperature, backward=False)
    assert forward.log_z == both.log_z
    if weights:
        top = max(weights.values())
        log_z = top + math.log(sum(math.exp(v - top) for v in weights.values()))
    for seq in itertools.product(range(nr_class), repeat=length):
        got = forward.log_probability(list(seq))
        if seq in weights:  # actions in the system's order, as the lattice's steps
            assert math.isclose(got, weights[seq] - log_z, rel_tol=1e-9, abs_tol=1e-9)
        else:
            assert got == -math.inf
    with pytest.raises(ValueError, match="forward sums only"):
        forward.marginals()


def nll_by_hand(golds, W, tau):
    """-sum log p(gold) by brute force over every valid sequence."""
    total = 0.0
    for system, atoms, gold in golds:
        weights = sequence_weights(system, atoms, W, tau)
        top = max(weights.values())
        total -= weights[tuple(gold)] - (top + math.log(sum(math.exp(v - top) for v in weights.values())))
    return total


def test_fitted_temperature_minimises_the_gold_nll():
    """fit_temperature finds the tau of least NLL of the gold derivations:
    no tau on a fine grid does better (by brute force); a model more
    confident than its golds justify gets tau > 1, one less confident tau < 1."""
    rng = random.Random(7)
    system, atoms, W = random_model(3, 4, "ltr", False, rng)
    inst = system.instances([atoms])[0]
    best, _ = Lattice(inst, W).best()
    # the model's own best as the gold of two docs, and a worse output of a third:
    # the fit must trade the two off, not sit at an end of the range
    others = [seq for seq in itertools.product(range(3), repeat=4) if list(seq) != list(best)]
    golds = [(inst, list(best)), (inst, list(best)), (inst, list(rng.choice(others)))]
    tau, nll, nll_1 = calibration.fit_temperature(golds, W)
    by_hand = [(system, atoms, g) for _, g in golds]
    assert math.isclose(nll, nll_by_hand(by_hand, W, tau), rel_tol=1e-9)
    assert math.isclose(nll_1, nll_by_hand(by_hand, W, 1.0), rel_tol=1e-9)
    grid = [0.1 * 1.02 ** k for k in range(233)]  # 0.1 .. 10
    assert nll <= min(nll_by_hand(by_hand, W, t) for t in grid) + 1e-6
    # only its own best as gold: sharper is always better -> the lowest tau
    tau_sharp, _, _ = calibration.fit_temperature([(inst, list(best))], W, low=0.5, high=2.0)
    assert tau_sharp == pytest.approx(0.5, rel=0.01)
    # a gold the model thinks unlikely: flatter is better -> the highest tau
    worst = min(others, key=lambda seq: sequence_weights(system, atoms, W, 1.0).get(seq, math.inf))
    tau_flat, _, _ = calibration.fit_temperature([(inst, list(worst))], W, low=0.5, high=2.0)
    assert tau_flat == pytest.approx(2.0, rel=0.01)


def test_gold_derivations_skip_docs_without_a_known_gold():
    system = constrained_system(3, "ltr", False)
    known = system.instances([atoms_of(["a", "b"])], [numpy.array([1, 2], dtype="int32")])[0]
    partial = system.instances([atoms_of(["a", "b"])], [numpy.array([1, -1], dtype="int32")])[0]
    golds = calibration.gold_derivations([known, partial])
    assert len(golds) == 1 and golds[0][0] is known and list(golds[0][1]) == [1, 2]


# --- through the components: probabilities = "marginals" ---------------------------

WORDS4 = ["The", "dog", "barks", "."]
TAGS4 = ["DT", "NN", "VBZ", "."]


def sapo_pipe(factory, config, examples_of):
    import spacy
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory, config=blocks(factory, {"learner": "sapo", "n": 3, **config}))
    examples = examples_of(nlp)
    nlp.initialize(lambda: examples)
    for _ in range(2):
        nlp.update(examples)
    return nlp, pipe


@pytest.mark.parametrize("direction,temperature", [("ltr", None), ("rtl", None), ("ltr", 2.5)])
def test_tag_probabilities_are_the_marginals_over_every_output(direction, temperature):
    """token._.tag_prob with probabilities = "marginals" is the probability
    mass of every output that gives the token its tag: the softmax over all
    outputs at the model's temperature (predict_nbest with n above their
    number), whitespace aside."""
    from spacy.tokens import Doc
    from spacy.training import Example
    nlp, tagger = sapo_pipe("lookahead_tagger", {"probabilities": "marginals", "direction": direction,
                                                 "temperature": temperature},
                            lambda nlp: [Example.from_dict(nlp.make_doc("The dog barks ."),
                                                           {"tags": TAGS4})])
    assert tagger.temperature == (temperature or 1.0)  # nothing scored: nothing fitted
    doc = Doc(nlp.vocab, words=["The", "dog", "\n", "barks", "."])
    every = tagger.predict_nbest([doc], n=4 ** 4)[0]
    assert len(every) == 4 ** 4 and math.isclose(sum(p for _, p in every), 1.0, rel_tol=1e-9)
    doc = nlp(doc)
    for i, token in enumerate(doc):
        expected = sum(p for tags, p in every if tags[i] == token.tag_)
        assert math.isclose(token._.tag_prob, expected, rel_tol=1e-6), (i, token.tag_)
    if temperature:  # the temperature is applied: flatter than at tau = 1
        tagger.cfg["temperature"] = 1.0
        assert max(p for _, p in tagger.predict_nbest([doc], n=4 ** 4)[0]) > every[0][1] + 0.01


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("scheme", ["iob2", "biluo"])
def test_span_probabilities_are_the_marginals_over_every_output(direction, scheme):
    """A chunk's score with probabilities = "marginals" is the mass of every
    output that contains exactly that chunk (read as conlleval reads it)."""
    from spacy.tokens import Doc
    from spacy.training import Example
    from spacy_lookahead.systems.schemes import span_probabilities

    def examples(nlp):
        return [Example.from_dict(Doc(nlp.vocab, words=WORDS4, tags=TAGS4),
                                  {"spans": {"chunks": [(0, 7, "NP"), (8, 13, "VP")]}})]

    nlp, chunker = sapo_pipe("lookahead_chunker", {"probabilities": "marginals",
                                                   "direction": direction, "scheme": scheme},
                             examples)
    doc = Doc(nlp.vocab, words=WORDS4, tags=TAGS4)
    every = chunker.predict_nbest([doc], n=1000)[0]
    assert math.isclose(sum(p for _, p in every), 1.0, rel_tol=1e-9)
    doc = nlp(doc)
    kinds, types = chunker._kinds_types()
    ids = {name: i for i, name in enumerate(chunker.actions)}
    nbest = numpy.asarray([[ids[x] for x in labels] for labels, _ in every], dtype="int32")
    best = [(s.start, s.end, chunker.labels.index(s.label_)) for s in doc.spans["chunks"]]
    assert best
    expected = span_probabilities(best, nbest, numpy.asarray([p for _, p in every]), kinds, types)
    numpy.testing.assert_allclose(doc.spans["chunks"].attrs["scores"], expected, rtol=1e-5)


def test_marginals_need_sapo_and_a_first_order_model():
    import spacy
    with pytest.raises(ValueError, match="probabilities = 'marginals' is read with @learners"):
        spacy.blank("en").add_pipe("lookahead_tagger", config={"probabilities": "marginals"})
    with pytest.raises(ValueError, match="first-order models only"):
        spacy.blank("en").add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", {
            "learner": "sapo", "probabilities": "marginals", "label_trigrams": True}))


@pytest.mark.parametrize("seed,scale", [(22, 20.0), (22, 30.0), (2, 30.0)])
@pytest.mark.parametrize("keep,factored", [(True, True), (True, False), (False, False)])
def test_a_sharp_constrained_model_keeps_its_one_complete_path(seed, scale, keep, factored):
    """Scaled forward sums can lose the one prefix that completes, when it
    falls below 1e-308 of prefixes that end in dead ends (a constrained
    system, weights x 20-30): the lattice then falls back to log-domain
    sums, so log Z, the marginals and the best path are brute force's, not
    'no valid derivation' (found by the hypothesis property below)."""
    keep_rows(keep, factored)
    system, atoms, W = random_model(2, 6, "ltr", True, random.Random(seed))
    sharp = Weights()
    keys, lengths, classes, ws = W.to_arrays()[:4]
    for key, clas, w in zip(numpy.repeat(keys, lengths), classes, ws):
        sharp.add(int(key), int(clas), float(w) * scale)
    probs, log_z = brute_force(system, atoms, sharp, 1.0)
    assert log_z > -math.inf
    lattice = Lattice(system.instances([atoms])[0], sharp, 1.0)
    assert math.isclose(lattice.log_z, log_z, rel_tol=1e-9)
    assert numpy.allclose(lattice.marginals(), probs, atol=1e-9)
    best, best_score = brute_force_best(system, atoms, sharp)
    path, top = lattice.best()
    assert tuple(path) == best and math.isclose(top, best_score, rel_tol=1e-12)


@pytest.mark.parametrize("temperature", [1e-3, 1e-6])
@pytest.mark.parametrize("keep,factored", [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("seed", range(8))
def test_sharp_temperatures_give_the_brute_force_probabilities(seed, keep, factored,
                                                               temperature):
    """A temperature near 0 (or weights x 1000) makes a step's scores span
    far more than a double's range: scaled sums lose the entries the best
    derivation runs through (span scores of 0 and inf, tag probabilities of
    0 came out), and fwd * bwd cannot hold such a distribution. Such steps
    are summed in the log domain, and the probabilities read from those
    sums: marginals, step and segment probabilities and log Z are brute
    force's, every one finite and in [0, 1]."""
    keep_rows(keep, factored)
    rng = random.Random(seed)
    system, atoms, W = random_model(rng.randint(2, 4), rng.randint(2, 5),
                                    rng.choice(["ltr", "rtl"]), seed % 2 == 0, rng)
    expected, expected_z = brute_force(system, atoms, W, temperature)
    lattice = Lattice(system.instances([atoms])[0], W, temperature)
    probs = lattice.marginals()
    assert numpy.isfinite(probs).all() and probs.min() >= 0.0 and probs.max() <= 1.0
    numpy.testing.assert_allclose(probs, expected, atol=1e-9)
    if expected_z > -math.inf:
        assert math.isclose(lattice.log_z, expected_z, rel_tol=1e-9)
        path, _ = lattice.best()
        steps = lattice.step_probabilities(path)
        numpy.testing.assert_allclose(steps, expected[numpy.arange(len(path)), path], atol=1e-9)
        for a in range(len(path)):
            p = lattice.segment_probability(a, [path[a]])
            assert 0.0 <= p <= 1.0 and math.isclose(p, expected[a, path[a]], abs_tol=1e-9)
