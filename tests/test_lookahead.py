"""Lookahead search (Tsuruoka et al. 2011, Fig. 2) and the margin-perceptron
update (Fig. 3) against brute force and hand-worked examples."""
import itertools
import random

import numpy
import pytest
from hypothesis import given, settings, strategies as st
from spacy_lookahead.core.decode import NoValidOutput
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.systems.tagging import TaggingSystem
from engine import (TAGS, WORDS, assert_fast_search_agrees, atoms_of, constrained_system,  # noqa: F401
                    learners, nbest, predict, random_weights, step_scores, views)

def brute_force(system, atoms, history, W, depth):
    """Best path value per first action, enumerating all action sequences of
    length depth + 1 (shorter at the end of the sentence)."""
    remaining = len(atoms) - len(history)
    length = min(depth + 1, remaining)
    values = [-numpy.inf] * system.nr_class
    for seq in itertools.product(range(system.nr_class), repeat=length):
        v = sum(step_scores(system, atoms, history + list(seq[:k]), W)[a]
                for k, a in enumerate(seq))
        values[seq[0]] = max(values[seq[0]], v)
    return values


def integer_weights(system, atoms, rng, W=None):
    """Small integer weights (many ties) on every feature of every history
    a first-order system can see (added to W if given)."""
    W = Weights() if W is None else W
    for h in range(len(atoms)):
        for history in itertools.product(range(system.nr_class), repeat=min(h, 1)):
            prefix = [0] * max(h - 1, 0) + list(history)
            for f in views.features(system, atoms, prefix):
                for c in range(system.nr_class):
                    if W.get(int(f), c) == 0.0:
                        W.add(int(f), c, float(rng.randint(-2, 2)))
    return W


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("trigrams", [False, True])
def test_lookahead_equals_brute_force(direction, depth, trigrams):
    rng = random.Random(depth * 7 + (direction == "rtl") + 2 * trigrams)
    system = TaggingSystem(3, direction=direction, tag_trigrams=trigrams)
    atoms = atoms_of(WORDS[:5])
    W = random_weights(system, atoms, rng)
    for prefix_len in range(len(atoms)):
        history = [rng.randrange(3) for _ in range(prefix_len)]
        best, values, paths = views.lookahead(system, atoms, history, W, depth,
                                              exhaustive=True)
        expected = brute_force(system, atoms, history, W, depth)
        numpy.testing.assert_allclose(values, expected, rtol=1e-12)
        assert best == int(numpy.argmax(expected))
        # the fast search (DP, or branch-and-bound with label trigrams) decides
        # the same, with the winner's value and path bit for bit
        fast_best, fast_values, fast_paths = views.lookahead(system, atoms, history, W, depth)
        assert fast_best == best
        if best >= 0:
            assert fast_values[best] == values[best] and fast_paths[best] == paths[best]
        for a in range(3):  # each stored path really scores its value
            v = sum(step_scores(system, atoms, history + paths[a][:k], W)[b]
                    for k, b in enumerate(paths[a]))
            assert paths[a][0] == a and v == pytest.approx(values[a])


def test_final_state_has_no_action():
    system = TaggingSystem(2)
    atoms = atoms_of(["a", "b"])
    best, values, paths = views.lookahead(system, atoms, [0, 1], Weights(), 1)
    assert best == -1 and paths == [[], []]


def set_scores(W, feats, scores):
    """Make the features of a state score `scores` in total (on feats[0])."""
    for c, s in enumerate(scores):
        W.add(int(feats[0]), c, s)


def test_update_depth0_mistake_moves_features_from_predicted_to_gold():
    system = TaggingSystem(2)
    atoms = atoms_of(["dogs", "bark"])
    W = Weights()
    phi = views.features(system, atoms, [])
    set_scores(W, phi, [1.0, 0.5])
    assert views.update_weight(system, atoms, [], 1, W, 0, 0.0) == 1
    for f in phi:  # w += phi(S*_c) - phi(S*): +1 on gold class, -1 on predicted
        expected = (1.0 if f == phi[0] else 0.0)
        assert W.get(int(f), 0) == expected - 1.0
        assert W.get(int(f), 1) == (0.5 if f == phi[0] else 0.0) + 1.0


def test_update_margin_applies_when_correct_but_too_close():
    system = TaggingSystem(2)
    atoms = atoms_of(["dogs"])
    phi = views.features(system, atoms, [])
    W = Weights()
    set_scores(W, phi, [0.5, 1.0])  # gold 1 wins by 0.5
    assert views.update_weight(system, atoms, [], 1, W, 0, 0.4) == 0  # margin met
    assert views.update_weight(system, atoms, [], 1, W, 0, 1.0) == 1  # 1.0 - C < 0.5
    assert W.get(int(phi[0]), 1) == 2.0 and W.get(int(phi[0]), 0) == -0.5


def test_update_depth1_uses_best_continuations():
    """Hand-worked: 2 labels, 2 words, depth 1. Scores (same at both steps
    except through the history feature):
    step 1 from S0: a=0 -> 1.0, a=1 -> 0.0;
    step 2 after label 0: (0, 0) / after label 1: (0, 3.0).
    Paths: 0-0 = 1, 0-1 = 1, 1-0 = 0, 1-1 = 3. The gold first action is 1
    with value 3 > 1, so no update at C = 0; with C = 2.5, 3 - 2.5 = 0.5 < 1:
    update w += phi(1,1) - phi(0,0) (first best continuation of 0 is 0)."""
    system = TaggingSystem(2)
    atoms = atoms_of(["dogs", "bark"])
    W = Weights()
    phi0 = views.features(system, atoms, [])
    W.add(int(phi0[1]), 0, 1.0)  # the word feature of "dogs": first step only
    prev1_feat = {h: [int(f) for f in views.features(system, atoms, [h])
                      if f not in set(views.features(system, atoms, [1 - h]))] for h in (0, 1)}
    (f_after1,) = prev1_feat[1]  # the history feature "previous label = 1"
    W.add(f_after1, 1, 3.0)
    best, values, paths = views.lookahead(system, atoms, [], W, 1)
    assert values == [1.0, 3.0] and paths == [[0, 0], [1, 1]] and best == 1
    assert views.update_weight(system, atoms, [], 1, W, 1, 0.0) == 0
    phi_gold = [(int(f), 1) for f in phi0] + [(int(f), 1) for f in views.features(system, atoms, [1])]
    phi_pred = [(int(f), 0) for f in phi0] + [(int(f), 0) for f in views.features(system, atoms, [0])]
    keys = set(phi_gold) | set(phi_pred)
    before = {k: W.get(*k) for k in keys}
    assert views.update_weight(system, atoms, [], 1, W, 1, 2.5) == 1
    for k in keys:  # w += phi(S*_c) - phi(S*), S*_c = (1, 1), S* = (0, 0)
        assert W.get(*k) == before[k] + phi_gold.count(k) - phi_pred.count(k)
    assert W.get(f_after1, 1) == 4.0


def test_training_learns_a_separable_toy_problem():
    system = TaggingSystem(3, tag_trigrams=True)
    words = [["the", "dog", "runs"], ["a", "cat", "sleeps"], ["the", "cat", "runs"]]
    docs = [atoms_of(w) for w in words]
    golds = [numpy.array([0, 1, 2], dtype="int32")] * 3
    W = Weights()
    for _ in range(5):
        learners.margin_perceptron(system.instances(docs, golds), W, 1, 1.0)
    for labels in predict(system, docs, W.average(), "lookahead", 1):
        assert labels.tolist() == [0, 1, 2]
    assert learners.margin_perceptron(system.instances(docs, golds), W, 1, 0.0) == (0, 9)


@settings(max_examples=25, deadline=None)
@given(nr_class=st.integers(2, 4), length=st.integers(1, 4), depth=st.integers(0, 3),
       direction=st.sampled_from(["ltr", "rtl"]), trigrams=st.booleans(),
       seed=st.integers(0, 2**16))
def test_lookahead_equals_brute_force_property(nr_class, length, depth, direction, trigrams, seed):
    rng = random.Random(seed)
    system = TaggingSystem(nr_class, direction=direction, tag_trigrams=trigrams)
    atoms = atoms_of(rng.sample(WORDS, length))
    W = random_weights(system, atoms, rng)
    history = [rng.randrange(nr_class) for _ in range(rng.randrange(length))]
    best, values, _ = views.lookahead(system, atoms, history, W, depth, exhaustive=True)
    expected = brute_force(system, atoms, history, W, depth)
    numpy.testing.assert_allclose(values, expected, rtol=1e-12)
    assert best == int(numpy.argmax(expected))
    assert_fast_search_agrees(system, atoms, history, W, depth, rng)


def is_valid_sequence(system_args, history, seq, length):
    """Label constraints checked independently of the system: in tagging
    order, label b may follow a only if allowed[a + 1][b]; the token at doc
    position 0 / length - 1 must be allowed there."""
    allowed, at_start, at_end, rtl = system_args
    labels = history + list(seq)
    prev = -1
    for step, b in enumerate(labels):
        pos = length - 1 - step if rtl else step
        if not allowed[prev + 1][b] or (pos == 0 and not at_start[b]) \
                or (pos == length - 1 and not at_end[b]):
            return False
        prev = b
    return True


@settings(max_examples=25, deadline=None)
@given(length=st.integers(1, 4), depth=st.integers(0, 3), direction=st.sampled_from(["ltr", "rtl"]),
       feature_set=st.sampled_from(["pos", "chunk", "ner"]), seed=st.integers(0, 2**16))
def test_constrained_lookahead_equals_brute_force(length, depth, direction, feature_set, seed):
    """With label constraints (an IOB2-like matrix) and the chunk/NER
    feature sets, lookahead still equals brute force over valid sequences."""
    rng = random.Random(seed)
    nr_class = 3  # 0 = O, 1 = B, 2 = I
    allowed = [[1, 1, 0], [1, 1, 0], [1, 1, 1], [1, 1, 1]]  # I only after B/I
    at_start, at_end = [1, 1, 0], [1, 1, 1]
    if direction == "rtl":  # tagging order reversed: I's left neighbour is B/I
        allowed = [[1, 1, 1], [1, 1, 0], [1, 1, 0], [0, 1, 1]]
    system = TaggingSystem(nr_class, direction=direction, feature_set=feature_set,
                           allowed=allowed, at_doc_start=at_start, at_doc_end=at_end)
    idx = rng.sample(range(len(WORDS)), length)
    atoms = atoms_of([WORDS[i] for i in idx], [TAGS[i] for i in idx])
    W = random_weights(system, atoms, rng)
    args = (allowed, at_start, at_end, direction == "rtl")
    prefixes = [h for k in range(length) for h in itertools.product(range(3), repeat=k)
                if is_valid_sequence(args, list(h), (), length)]
    history = list(rng.choice(prefixes))
    best, values, _ = views.lookahead(system, atoms, history, W, depth, exhaustive=True)
    assert_fast_search_agrees(system, atoms, history, W, depth, rng)
    steps = min(depth + 1, length - len(history))
    expected = [-numpy.inf] * nr_class
    for seq in itertools.product(range(nr_class), repeat=steps):
        if not is_valid_sequence(args, history, seq, length):
            continue
        v = sum(step_scores(system, atoms, history + list(seq[:k]), W)[a] for k, a in enumerate(seq))
        expected[seq[0]] = max(expected[seq[0]], v)
    numpy.testing.assert_allclose(values, expected, rtol=1e-12)
    assert best == (int(numpy.argmax(expected)) if max(expected) > -numpy.inf else -1)


@settings(max_examples=40, deadline=None)
@given(nr_class=st.integers(2, 5), length=st.integers(1, 6), depth=st.integers(2, 3),
       direction=st.sampled_from(["ltr", "rtl"]), constrained=st.booleans(),
       seed=st.integers(0, 2**16))
def test_first_order_dp_is_the_exhaustive_search(nr_class, length, depth, direction, constrained,
                                                 seed):
    """The Viterbi-style lookahead of a first-order system gives exactly the
    exhaustive search's values and paths, ties included (small integer
    weights make many ties), with and without label constraints."""
    rng = random.Random(seed)
    system = constrained_system(nr_class, direction, constrained)
    assert system.first_order
    atoms = atoms_of(rng.sample(WORDS, length))
    W = integer_weights(system, atoms, rng)
    for h in range(length):
        history = [rng.randrange(nr_class) for _ in range(h)]
        fast = views.lookahead(system, atoms, history, W, depth)
        slow = views.lookahead(system, atoms, history, W, depth, exhaustive=True)
        assert fast == slow


@settings(max_examples=40, deadline=None)
@given(nr_class=st.integers(2, 5), length=st.integers(1, 6), depth=st.integers(2, 3),
       direction=st.sampled_from(["ltr", "rtl"]), constrained=st.booleans(),
       seed=st.integers(0, 2**16))
def test_dp_rows_kept_along_a_derivation(nr_class, length, depth, direction, constrained, seed):
    """Decoding and training a first-order system keep the DP's rows from
    one decision to the next (a decision shares D - 1 steps with the one
    before it): several docs decoded in a row give the exhaustive search's
    decisions, and a training pass along the gold path the exhaustive
    search's updates, the weights changing on the way."""
    rng = random.Random(seed)
    system = constrained_system(nr_class, direction, constrained)
    docs = [atoms_of([rng.choice(WORDS) for _ in range(rng.randint(1, length))])
            for _ in range(3)]
    W = Weights()
    for atoms in docs:
        integer_weights(system, atoms, rng, W)
    for table in (W, W.average()):
        expected = []
        for atoms in docs:
            actions = []
            for _ in range(len(atoms)):
                best = views.lookahead(system, atoms, actions, table, depth, exhaustive=True)[0]
                if best < 0:  # lookahead can lead into a dead end of the constraints
                    break
                actions.append(best)
            expected.append(views.output(system, atoms, actions)
                            if len(actions) == len(atoms) else None)
        complete = [atoms for atoms, out in zip(docs, expected) if out is not None]
        outputs = iter(predict(system, complete, table, "lookahead", depth))
        for atoms, out in zip(docs, expected):
            if out is None:
                with pytest.raises(NoValidOutput):
                    predict(system, [atoms], table, "lookahead", depth)
            else:
                assert list(next(outputs)) == list(out)
    # gold paths the constraints allow (label 1 never follows 0, 0 never ends)
    lowest = 1 if constrained else 0
    golds = [numpy.array([rng.randrange(lowest, nr_class) for _ in atoms], dtype="int32")
             for atoms in docs]
    trained, reference = W.copy(), W.copy()
    learners.margin_perceptron(system.instances(docs, golds), trained, depth, 1.0)
    for atoms, gold in zip(docs, golds):
        order = list(gold) if direction == "ltr" else list(gold[::-1])
        for h in range(len(order)):
            views.update_weight(system, atoms, order[:h], order[h], reference, depth, 1.0,
                                exhaustive=True)
    for a, b in zip(trained.to_arrays()[:4], reference.to_arrays()[:4]):  # keys .. weights
        numpy.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("depth", [1, 2])
def test_branch_and_bound_ties_with_tight_bounds(depth):
    """Weights on the last label only make the bound exact (each row's
    largest weight is the one the best label uses), so an action can be
    bounded at exactly the best root value found. With the last label
    favoured and a handicap that makes it tie the best other action, that
    other action comes first in class order and must win, not be pruned."""
    system = TaggingSystem(3, tag_trigrams=True)
    for seed in range(20):
        rng = random.Random(seed)
        atoms = atoms_of(rng.sample(WORDS, 3))
        W = Weights()
        for length in range(3):
            for history in itertools.product(range(3), repeat=length):
                for f in views.features(system, atoms, list(history)):
                    if W.get(int(f), 2) == 0.0:
                        W.add(int(f), 2, float(rng.randint(0, 2)))
        _, values, _ = views.lookahead(system, atoms, [], W, depth, exhaustive=True)
        rival = 0 if values[0] >= values[1] else 1
        handicap = values[2] - values[rival]
        ref = views.lookahead(system, atoms, [], W, depth, exhaustive=True, favoured=2,
                              handicap=handicap)
        fast = views.lookahead(system, atoms, [], W, depth, favoured=2, handicap=handicap)
        assert ref[0] == rival and fast[0] == rival
        assert fast[1][rival] == ref[1][rival] and fast[2][rival] == ref[2][rival]


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_first_order_bounds_dominate_what_they_bound(direction):
    """The first-order tagger's bounds: upper(S) >= every label's score;
    upper_after(S) >= upper() of every child; the group bound plus a label's
    score >= its lookahead value 1 and 2 steps deep (training table and its
    frozen average)."""
    rng = random.Random(5)
    system = TaggingSystem(3, direction=direction)
    atoms = atoms_of(WORDS[:4])
    W = random_weights(system, atoms, rng)
    W.tick()
    for table in (W, W.average()):
        for length in range(4):
            for history in itertools.product(range(3), repeat=length):
                history = list(history)
                scores = step_scores(system, atoms, history, table)
                up, after = views.bounds(system, atoms, history, table)
                assert up >= max(scores)
                for a in range(3):
                    child = history + [a]
                    final = views.valid_actions(system, atoms, child)[1]
                    assert after >= (0.0 if final else views.bounds(system, atoms, child, table)[0])
                near = views.group_bounds(system, atoms, history, table, 1)
                far = views.group_bounds(system, atoms, history, table, 2)
                one = views.lookahead(system, atoms, history, table, 1, exhaustive=True)[1]
                two = views.lookahead(system, atoms, history, table, 2, exhaustive=True)[1]
                for a in range(3):
                    assert scores[a] + near[a] >= one[a]
                    assert scores[a] + (near[a] + far[a]) >= two[a]


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("depth", [0, 1, 3, "beam"])
@pytest.mark.parametrize("constrained", [False, True])
def test_decode_docs_is_decode_of_each_instance(direction, depth, constrained):
    """The batch decoder (one object for the batch, one workspace or beam
    and state per call: core.decode.decode_docs) gives decode()'s outputs
    (lookahead of depth D, or a beam of 3) of the batch's instances one
    after the other, with preset labels and sentence starts: in one call,
    and in several calls at once from threads that share the batch's
    DocsOutput (each takes the next doc in turn)."""
    from concurrent.futures import ThreadPoolExecutor

    from spacy_lookahead.core.decode import DocsOutput, decode_docs
    from spacy_lookahead.core.learners import margin_perceptron
    width = 3 if depth == "beam" else 0
    depth = 0 if width else depth
    rng = numpy.random.default_rng(depth + 10 * (direction == "rtl") + 20 * constrained + width)
    system = constrained_system(3, direction, constrained)
    lengths = rng.integers(0, 9, 300)
    starts = numpy.zeros((len(lengths) + 1,), dtype="int64")
    numpy.cumsum(lengths, out=starts[1:])
    words = [WORDS[i] for i in rng.integers(0, len(WORDS), int(starts[-1]))]
    forced = numpy.where(rng.random(len(words)) < 0.1, 2, -1).astype("int32")
    batch = {"atoms": atoms_of(words).reshape((len(words), -1)), "starts": starts,
             "forced": forced, "sent_starts": rng.random(len(words)) < 0.2}
    golds = [rng.integers(1, 3, n).astype("int32") for n in lengths]
    W = Weights()
    for _ in range(3):
        margin_perceptron(system.batch_instances(batch, golds)[:30], W, depth, 1.0)
    W = W.average()
    expected = [a for out in predict_batch(system, batch, W, depth, width) for a in out.tolist()]
    docs = system.batch_docs(batch)
    one = DocsOutput(docs)
    decode_docs(docs, W, depth, one, width)
    assert one.labels.dtype == numpy.int32 and one.labels.tolist() == expected
    assert len(set(expected)) >= 2
    decode_docs(docs, W, depth, one, width)  # every doc taken: nothing more to do
    assert one.labels.tolist() == expected
    for threads in (2, 7):
        shared = DocsOutput(docs)
        with ThreadPoolExecutor(threads) as pool:
            calls = [pool.submit(decode_docs, docs, W, depth, shared, width)
                     for _ in range(threads)]
            [call.result() for call in calls]
        assert shared.labels.tolist() == expected
    empty = system.batch_docs({key: value[:1] if key == "starts" else value[:0]
                               for key, value in batch.items()})
    none = DocsOutput(empty)
    decode_docs(empty, W, depth, none)
    assert none.labels.tolist() == []
    with pytest.raises(ValueError, match="made for another batch .0 docs; this one has 300"):
        decode_docs(docs, W, depth, none)
    with pytest.raises(ValueError, match="another batch"):  # the same count, another batch
        decode_docs(system.batch_docs(batch), W, depth, DocsOutput(docs))


def predict_batch(system, batch, W, depth, width=0):
    from spacy_lookahead.core.decode import decode
    if width:
        return decode(system.batch_instances(batch), W, "beam", 0, width)
    return decode(system.batch_instances(batch), W, "lookahead", depth)
