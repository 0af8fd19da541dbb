"""The FR phrase-recognition system (Carreras et al. 2005): the two DPs
against brute force, and the feedback rule of Figure 1 case by case."""
import itertools

import numpy
import pytest
from spacy_lookahead.core.features import token_atoms
from spacy_lookahead.core.fr_perceptron import fr_perceptron, recognise
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.core.threads import RunsStarted
from spacy_lookahead.systems.phrases import PhraseSystem, UnitsJob, recognise_units


def coherent(phrases, embedded):
    for (s1, e1, _), (s2, e2, _) in itertools.combinations(phrases, 2):
        if (s1, e1) == (s2, e2):
            return False  # flat: embedded in each other; embedded: one phrase per span
        overlap = s1 < s2 <= e1 < e2 or s2 < s1 <= e2 < e1
        nested = s2 <= s1 <= e1 <= e2 or s1 <= s2 <= e2 <= e1
        if overlap or (not embedded and nested):
            return False
    return True


def brute_force(candidates, scores, embedded):
    best = 0.0
    for r in range(1, len(candidates) + 1):
        for subset in itertools.combinations(candidates, r):
            if coherent(subset, embedded):
                best = max(best, sum(scores[s, e, k] for s, e, k in subset))
    return best


def static_model(system, item, rng, start, end, n):
    """Weights that make the filters fire exactly at start/end ((n, K)
    booleans, through a feature of each word's phi_w that no other word has)
    and give every candidate a score that does not depend on the partial
    solution: random weights only on phrase features that are present
    whatever the solution. Returns (W, scores (n, n, K), those features)."""
    K = system.nr_type
    W = Weights()
    # the word itself (offset 0 of the word window: after the bias and the
    # windows' left halves; the words are distinct): not the flags of the
    # decisions on the left, which change as the filters run
    offset = 10 if system.embedded else 5
    phis = [set(system.phi_w(item, i).tolist()) for i in range(n)]
    for i in range(n):
        own = int(system.phi_w(item, i)[offset])
        assert all(own not in phis[j] for j in range(n) if j != i)
        for k in range(K):
            W.add(own, 3 * k, 1.0 if start[i, k] else -1.0)
            W.add(own, 3 * k + 1, 1.0 if end[i, k] else -1.0)
    spans = [(a, b) for a in range(n) for b in range(a, n)]
    contexts = [[]] + [[[a, b, int(rng.integers(K))] for a, b in spans if rng.random() < 0.3]
                       for _ in range(4)]
    if not system.embedded:  # flat solutions: no overlap
        contexts = [[]] + [[[i, i, int(rng.integers(K))] for i in range(n) if rng.random() < 0.5]
                           for _ in range(4)]
    present, varying = set(), set()
    for a, b in spans:
        seen = [set(system.phi_p(item, a, b, ctx).tolist()) for ctx in contexts]
        always = set.intersection(*seen)
        present |= always
        varying |= set.union(*seen) - always
    for f in sorted(present - varying):
        for k in range(K):
            W.add(f, 3 * k + 2, float(rng.normal()))
    scores = numpy.zeros((n, n, K))
    for a, b in spans:
        scores[a, b] = W.scores(system.phi_p(item, a, b, []), 3 * K)[2::3]
    return W, scores, present - varying


@pytest.mark.parametrize("embedded", [False, True])
@pytest.mark.parametrize("max_length", [0, 1, 2, 3, 5])  # docs of 1-6 words: L < n, = n, > n
def test_production_decoders_equal_brute_force(embedded, max_length):
    """R(x) by the production DPs (phrase_decoders, through recognise())
    against the best coherent subset of the candidates, with candidate
    scores that do not depend on the partial solution."""
    rng = numpy.random.default_rng(7)
    tags = ["DT", "NN", "VBD", "IN", "JJ", ",", "CC", "WDT"]
    checked = 0
    for trial in range(120):
        n = int(rng.integers(1, 7))
        K = int(rng.integers(1, 3))
        start = rng.random((n, K)) < 0.45
        end = rng.random((n, K)) < 0.45
        cands = [(s, e, k) for s in range(n) for e in range(s, n) for k in range(K)
                 if start[s, k] and end[e, k] and (not max_length or e - s + 1 <= max_length)]
        if len(cands) > 10:
            continue
        words = [f"w{trial}x{i}" for i in range(n)]
        item = {"atoms": numpy.asarray([token_atoms(w, str(rng.choice(tags)), "B-NP")
                                        for w in words], dtype="uint64")}
        system = PhraseSystem(K, embedded, "clause" if embedded else "chunk", max_length)
        W, scores, _ = static_model(system, item, rng, start, end, n)
        [(phrases, n_candidates, fired_s, fired_e)] = recognise(system.instances([item]), W,
                                                                details=True)
        assert (fired_s == start).all() and (fired_e == end).all()
        assert n_candidates == len(cands)
        found = [tuple(p) for p in phrases.tolist()]
        assert set(found) <= set(cands)
        assert coherent(found, embedded)
        total = sum(scores[s, e, k] for s, e, k in found)
        assert total == pytest.approx(brute_force(cands, scores, embedded))
        checked += 1
    assert checked > 60


def test_embedded_prefers_nesting_and_flat_forbids_it():
    n, K = 4, 1
    start = numpy.array([[True], [True], [False], [False]])
    end = numpy.array([[False], [False], [True], [True]])
    item = {"atoms": numpy.asarray([token_atoms(w, t, "B-NP") for w, t in
                                    zip(["a", "b", "c", "d"], ["DT", "NN", "VBD", "RB"])],
                                   dtype="uint64")}
    for embedded, expected in ((True, [[0, 3, 0], [1, 2, 0]]), (False, None)):
        system = PhraseSystem(K, embedded, "clause" if embedded else "chunk")
        W, scores, static = static_model(system, item, numpy.random.default_rng(0), start, end, n)
        # the candidates (0, 3) and (1, 2) are worth 1 each, (0, 2) and (1, 3) -5
        for s, e, target in ((0, 3, 1.0), (1, 2, 1.0), (0, 2, -5.0), (1, 3, -5.0)):
            W.add(_span_feature(system, item, s, e, static), 2, target - scores[s, e, 0])
        (phrases, *_), = recognise(system.instances([item]), W, details=True)
        if expected:
            assert phrases.tolist() == expected
        else:
            assert len(phrases) == 1 and phrases[0, :2].tolist() in ([0, 3], [1, 2])


def _span_feature(system, item, s, e, static):
    """A phrase feature only the span (s, e) has, whatever the solution."""
    n = len(item["atoms"])
    own = set(system.phi_p(item, s, e, []).tolist()) & static
    for a in range(n):
        for b in range(a, n):
            if (a, b) != (s, e):
                own -= set(system.phi_p(item, a, b, []).tolist())
    return sorted(own)[0]


# --- the feedback rule (Figure 1) on hand-built weights ----------------------------

WORDS = ["the", "cat", "sat", "down"]
TAGS = ["DT", "NN", "VBD", "RP"]


def doc_input():
    return {"atoms": numpy.asarray([token_atoms(w, t) for w, t in zip(WORDS, TAGS)], dtype="uint64")}


def bias_of(system):
    """The hashed word-bias feature: the first feature of phi_w."""
    return int(system.phi_w(doc_input(), 0)[0])


def word_only(system, i):
    """A feature of phi_w that only word i has (its word at offset 0)."""
    feats = set(system.phi_w(doc_input(), i).tolist())
    others = set().union(*(system.phi_w(doc_input(), j).tolist() for j in range(len(WORDS)) if j != i))
    unique = sorted(feats - others)
    return unique[0]


def filters(system, W):
    (phrases, _, start, end), = recognise(system.instances([doc_input()]), W, details=True)
    return phrases.tolist(), start[:, 0].tolist(), end[:, 0].tolist()


def chunk_system():
    # Flat phrases with the chunk features (no left-prediction flags, so phi_w
    # is static and the hand-built filters are exact).
    return PhraseSystem(1, False, "chunk")


def test_type_a_promotes_filters_that_blocked_a_missed_phrase():
    system = chunk_system()
    W = Weights()
    # Nothing fires: gold (0, 1) is missed, both boundary words get type A.
    mistakes, _ = fr_perceptron(system.instances([doc_input()], [[[0, 1, 0]]]), W, "recognition")
    assert mistakes == 1
    _, start, end = filters(system, W)
    assert start[0] and end[1]
    # The score function was not applied (no candidate): it is untouched.
    assert all(W.get(f, 2) == 0 for f in system.phi_w(doc_input(), 0).tolist())


def test_score_promoted_only_when_the_candidate_was_generated():
    system = chunk_system()
    W = Weights()
    W.add(word_only(system, 0), 0, 1.0)   # start filter fires on word 0
    W.add(word_only(system, 1), 1, 1.0)   # end filter fires on word 1
    W.add(bias_of(system), 0, -0.5)
    W.add(bias_of(system), 1, -0.5)
    phrases, start, end = filters(system, W)
    assert start == [True, False, False, False] and end == [False, True, False, False]
    assert phrases == []  # candidate (0, 1) scores 0: not selected
    before = len(W)
    fr_perceptron(system.instances([doc_input()], [[[0, 1, 0]]]), W, "recognition")
    # Filters were right (> 0): no type-A update; the score vector moved up.
    _, start2, end2 = filters(system, W)
    assert start2 == start and end2 == end
    assert len(W) > before
    phrases, _, _ = filters(system, W)
    assert phrases == [[0, 1, 0]]


def test_type_b_demotes_wrong_boundaries_once_per_word():
    system = chunk_system()
    W = Weights()
    W.add(bias_of(system), 0, 1.0)   # every word starts and ends a phrase
    W.add(bias_of(system), 1, 1.0)
    # The score function likes every phrase, so the prediction is the four
    # one-word phrases (and others are available as candidates).
    W.add(int(_phrase_bias(system)), 2, 1.0)
    phrases, _, _ = filters(system, W)
    assert phrases == [[0, 0, 0], [1, 1, 0], [2, 2, 0], [3, 3, 0]]
    gold = [[0, 1, 0], [2, 2, 0]]
    W_before = W.copy()
    fr_perceptron(system.instances([doc_input()], [gold]), W, "recognition")
    # Over-predicted: (0,0) (1,1) (3,3). Start filters demoted at words that
    # start no gold phrase: 1 and 3 (once each); end filters at 0 and 3.
    for i, (ds, de) in enumerate([(0, -1), (-1, 0), (0, 0), (-1, -1)]):
        f = word_only(system, i)
        assert W.get(f, 0) - W_before.get(f, 0) == ds
        assert W.get(f, 1) - W_before.get(f, 1) == de
    # The shared bias moved once per demoted word: 2 starts, 2 ends.
    b = bias_of(system)
    assert W.get(b, 0) == pytest.approx(1.0 - 2)
    assert W.get(b, 1) == pytest.approx(1.0 - 2)
    # Missed (0, 1): its filters fired before the update (bias 1 > 0), so no
    # type-A update; the score function saw +phi_p(0,1) and -phi_p of the 3
    # over-predicted phrases: the phrase bias moved by 1 - 3.
    assert W.get(int(_phrase_bias(system)), 2) == pytest.approx(1.0 + 1 - 3)


def _phrase_bias(system):
    """The phrase-bias hash: the one feature every phi_p has, whatever the
    span and the partial solution."""
    common = None
    for s, e, solution in [(0, 0, []), (1, 1, [[0, 0, 0]]), (2, 3, [[0, 1, 0]]), (0, 3, []),
                           (3, 3, [[0, 0, 0], [1, 1, 0], [2, 2, 0]])]:
        feats = set(system.phi_p(doc_input(), s, e, solution).tolist())
        common = feats if common is None else common & feats
    assert len(common) == 1
    return common.pop()


def test_classification_feedback_corrects_every_local_decision():
    system = chunk_system()
    W = Weights()
    W.add(bias_of(system), 0, 1.0)
    W.add(bias_of(system), 1, 1.0)
    gold = [[0, 1, 0], [2, 2, 0]]
    W_before = W.copy()
    fr_perceptron(system.instances([doc_input()], [gold]), W, "classification")
    # Every word whose start decision is wrong is corrected, here words 1 and
    # 3 (gold starts: 0, 2); recognition feedback would leave a word alone
    # when its wrong decision produced no phrase.
    for i, ds in enumerate([0, -1, 0, -1]):
        f = word_only(system, i)
        assert W.get(f, 0) - W_before.get(f, 0) == ds
    # All 10 candidates were scored 0 (<= 0 = "not a phrase"): the two gold
    # ones are promoted, the 8 others are right already.
    assert W.get(int(_phrase_bias(system)), 2) == pytest.approx(2.0)


def test_training_learns_a_small_sample():
    system = chunk_system()
    W = Weights()
    gold = [[0, 1, 0], [2, 2, 0], [3, 3, 0]]
    for _ in range(10):
        fr_perceptron(system.instances([doc_input()], [gold]), W, "recognition")
    (phrases, *_), = recognise(system.instances([doc_input()]), W.average(), details=True)
    assert phrases.tolist() == gold


def test_bad_gold_and_feedback_raise():
    system = chunk_system()
    with pytest.raises(ValueError, match="feedback"):
        fr_perceptron(system.instances([doc_input()], [[[0, 1, 0]]]), Weights(), "global")
    with pytest.raises(ValueError, match="out of range"):
        fr_perceptron(system.instances([doc_input()], [[[0, 9, 0]]]), Weights(), "recognition")


def test_empty_and_one_token_docs():
    for embedded in (False, True):
        system = PhraseSystem(1, embedded, "clause")
        empty = {"atoms": numpy.zeros((0, len(token_atoms("a"))), dtype="uint64")}
        one = {"atoms": numpy.asarray([token_atoms("Go", "VB")], dtype="uint64")}
        W = Weights()
        for _ in range(3):
            fr_perceptron(system.instances([empty, one], [[], [[0, 0, 0]]]), W, "recognition")
        (p0, c0, *_), (p1, *_) = recognise(system.instances([empty, one]), W.average(),
                                           details=True)
        assert p0.shape == (0, 3) and c0 == 0
        assert p1.tolist() == [[0, 0, 0]]


def test_flat_decoder_scores_equal_w_dot_phi_p():
    """decode_flat scores a chunk from per-word tables (prefix sums); the sum
    must be the score of the full phi_p the updates use."""
    system = PhraseSystem(2, False, "chunk")
    W = Weights()
    rng = numpy.random.default_rng(3)
    item = doc_input()
    # Random weights on every feature phi_p can produce here.
    for s in range(4):
        for e in range(s, 4):
            for solution in ([], [[0, 0, 1]], [[0, 0, 0], [1, 1, 1]]):
                for f in system.phi_p(item, s, e, solution).tolist():
                    for k in range(2):
                        if W.get(f, 3 * k + 2) == 0:
                            W.add(f, 3 * k + 2, float(rng.normal()))
    for s in range(4):
        for e in range(s, 4):
            for solution in ([], [[0, 0, 1]], [[0, 0, 0], [1, 1, 1]]):
                if solution and solution[-1][1] >= s:
                    continue
                expected = W.scores(system.phi_p(item, s, e, solution), 6)[[2, 5]]
                assert system.flat_score(item, W, s, e, solution) == pytest.approx(expected.tolist())


@pytest.mark.parametrize("embedded", [False, True])
@pytest.mark.parametrize("max_length", [0, 3])
def test_recognise_units_is_recognise_of_each_unit(embedded, max_length):
    """The batch decoder (one workspace for every unit, a unit's words
    picked from the batch's tokens, rows in doc positions) gives each
    unit's own instance's recognise(), in order, for any range of units."""
    rng = numpy.random.default_rng(3)
    tags = ["DT", "NN", "VBD", "IN", "JJ", ",", "CC", "WDT", "VB"]
    system = PhraseSystem(2, embedded, "clause" if embedded else "chunk", max_length)
    items, golds = [], []
    width = len(token_atoms("a"))
    for d in range(40):
        n = int(rng.integers(0, 13))
        items.append({"atoms": numpy.asarray([token_atoms(f"w{rng.integers(30)}", str(rng.choice(tags)))
                                              for _ in range(n)], dtype="uint64").reshape((n, width)),
                      "inside": rng.integers(0, 2, n).astype("uint8")})
        golds.append([(s, min(n - 1, s + int(rng.integers(0, 3))), int(rng.integers(0, 2)))
                      for s in range(0, n, 3)])
    W = Weights()
    for _ in range(10):
        fr_perceptron(system.instances(items, golds), W, "recognition")
    atoms = numpy.concatenate([item["atoms"] for item in items])
    inside = numpy.concatenate([item["inside"] for item in items]) if embedded else None
    words, unit_starts, unit_base, expected, base = [], [0], [], [], 0
    for item in items:
        n = len(item["atoms"])
        kept = numpy.flatnonzero(rng.random(n) < 0.8)  # the others: whitespace
        for unit in numpy.array_split(kept, int(rng.integers(1, 4))):
            if not len(unit):
                continue
            words.extend((base + unit).tolist())
            unit_starts.append(len(words))
            unit_base.append(base)
            part = {"atoms": item["atoms"][unit]}
            if embedded:
                part["inside"] = item["inside"][unit]
            [rows] = recognise(system.instances([part]), W)
            rows = rows.copy()
            rows[:, :2] = unit[rows[:, :2]]
            expected.append(rows)
        base += n
    assert sum(len(rows) for rows in expected) > 10
    arrays = [numpy.asarray(a, dtype="int64") for a in (words, unit_starts, unit_base)]
    U = len(expected)
    for lo, hi in [(0, U), (3, U - 2), (5, 5)]:
        found, counts = recognise_units(system, W, atoms, inside, *arrays, lo, hi)
        assert counts.tolist() == [len(rows) for rows in expected[lo:hi]]
        assert found.tolist() == [r for rows in expected[lo:hi] for r in rows.tolist()]
        # the same units cut into ranges taken in turn by 1-4 C threads
        for threads in (1, 2, 3, 4):
            cuts = sorted({lo, hi, *rng.integers(lo, hi + 1, 5).tolist()})
            job = UnitsJob(system, W, atoms, inside, *arrays,
                           list(zip(cuts, cuts[1:])) or [(lo, hi)])
            RunsStarted(job.runs(threads)).results()
            got, got_counts = job.result()
            assert got_counts.tolist() == counts.tolist() and got.tolist() == found.tolist()
    with pytest.raises(ValueError, match="out of range"):
        recognise_units(system, W, atoms, inside, *arrays, 0, U + 1)
    with pytest.raises(ValueError, match="not contiguous"):
        UnitsJob(system, W, atoms, inside, *arrays, [(0, 3), (4, U)])
    with pytest.raises(ValueError, match="no range of units"):
        UnitsJob(system, W, atoms, inside, *arrays, [])
    outside = arrays[0].copy()
    outside[0] = len(atoms)  # a word past the batch's atoms
    with pytest.raises(ValueError, match="outside its doc or the batch"):
        recognise_units(system, W, atoms, inside, outside, *arrays[1:], 0, U)
    job = UnitsJob(system, W, atoms, inside, outside, *arrays[1:], [(0, 2), (2, U)])
    with pytest.raises(ValueError, match="outside its doc or the batch"):
        RunsStarted(job.runs(2)).results()
