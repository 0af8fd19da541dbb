"""IOB2/BILUO: span <-> label-id round trips and the label constraints."""
import numpy
import pytest
from hypothesis import given, settings, strategies as st

from spacy_lookahead.systems.schemes import (action_arrays, ids_to_spans, label_constraints,
                                             scheme_actions, spans_to_ids)

TYPES = ["NP", "VP", "PP"]


@st.composite
def span_sets(draw):
    n = draw(st.integers(0, 12))
    spans, i = [], 0
    while i < n:
        length = draw(st.integers(0, 3))  # 0 = an O token
        if length == 0 or i + length > n:
            i += 1
            continue
        spans.append((i, i + length, draw(st.sampled_from(TYPES))))
        i += length
    return n, spans


def satisfies(ids, c, rtl):
    order = list(range(len(ids)))[::-1] if rtl else list(range(len(ids)))
    prev = -1
    for pos in order:
        a = ids[pos]
        if not c["allowed"][prev + 1][a]:
            return False
        if pos == 0 and not c["at_doc_start"][a]:
            return False
        if pos == len(ids) - 1 and not c["at_doc_end"][a]:
            return False
        prev = a
    return True


@settings(max_examples=200, deadline=None)
@given(data=span_sets(), scheme=st.sampled_from(["iob2", "biluo"]))
def test_round_trip_and_gold_is_always_allowed(data, scheme):
    n, spans = data
    actions = scheme_actions(TYPES, scheme)
    kinds, types = action_arrays(actions)
    ids = spans_to_ids(n, spans, actions, scheme)
    assert [(s, e, TYPES[t]) for s, e, t in ids_to_spans(ids, kinds, types)] == spans
    for direction in ("ltr", "rtl"):
        assert satisfies(ids.tolist(), label_constraints(actions, scheme, direction), direction == "rtl")


def test_iob2_constraints_by_hand():
    actions = scheme_actions(["NP"], "iob2")  # O, B-NP, I-NP
    c = label_constraints(actions, "iob2", "ltr")
    assert c["allowed"].tolist() == [[1, 1, 0], [1, 1, 0], [1, 1, 1], [1, 1, 1]]
    assert c["at_doc_start"].tolist() == [1, 1, 0] and c["at_doc_end"].tolist() == [1, 1, 1]
    rtl = label_constraints(actions, "iob2", "rtl")  # previous = right neighbour
    assert rtl["allowed"].tolist() == [[1, 1, 1], [1, 1, 1], [1, 1, 1], [0, 1, 1]]


def test_biluo_constraints_by_hand():
    actions = scheme_actions(["NP"], "biluo")  # O, B, I, L, U
    c = label_constraints(actions, "biluo", "ltr")
    assert c["allowed"][2].tolist() == [0, 0, 1, 1, 0]  # after B: I or L
    assert c["allowed"][4].tolist() == [1, 1, 0, 0, 1]  # after L: O, B, U
    assert c["at_doc_end"].tolist() == [1, 0, 0, 1, 1]


def test_conlleval_reading_of_an_i_without_b():
    actions = scheme_actions(["NP", "VP"], "iob2")  # O B-NP I-NP B-VP I-VP
    kinds, types = action_arrays(actions)
    ids = numpy.asarray([2, 2, 0, 4, 2, 1, 2], dtype="int32")  # I-NP I-NP O I-VP I-NP B-NP I-NP
    assert ids_to_spans(ids, kinds, types) == [(0, 2, 0), (3, 4, 1), (4, 5, 0), (5, 7, 0)]


def test_unknown_span_type_is_unknown_gold():
    actions = scheme_actions(["NP"], "iob2")
    assert spans_to_ids(4, [(1, 3, "XP")], actions, "iob2").tolist() == [0, -1, -1, 0]


def test_unknown_scheme():
    with pytest.raises(ValueError, match="scheme must be one of"):
        scheme_actions(TYPES, "bio")



@pytest.mark.parametrize("scheme", ["iob2", "biluo"])
def test_span_probabilities_equal_counting_spans(scheme):
    """Vectorised span probabilities = summing P_k, in the outputs' order,
    over the sequences whose spans (read as conlleval does) include the
    span, bit for bit; also for label sequences the scheme would not allow.
    The same cases as one batch of kept outputs (span_ids.kept_spans, rows
    past a doc's count filled with noise) give the same bits."""
    from spacy_lookahead.systems.schemes import span_probabilities, sum_in_order
    from spacy_lookahead.systems.span_ids import kept_spans
    rng = numpy.random.default_rng(3)
    actions = scheme_actions(["NP", "VP"], scheme)
    kinds, types = action_arrays(actions)
    K = 5
    cases, want = [], []
    for _ in range(200):
        n, k = int(rng.integers(0 if cases else 1, 9)), int(rng.integers(1, K + 1))
        nbest = rng.integers(0, len(actions), size=(k, n)).astype("int32")
        for row in range(1, k):  # n-best lists mostly agree with the best output
            keep = rng.random(n) < 0.7
            nbest[row, keep] = nbest[0, keep]
        probs = rng.dirichlet(numpy.ones(k))
        ids = nbest[0]
        best = ids_to_spans(ids, kinds, types)
        expected = [sum(p for path, p in zip(nbest, probs) if span in ids_to_spans(path, kinds, types))
                    for span in best]
        got = span_probabilities(best, nbest, probs, kinds, types)
        assert got.tobytes() == numpy.minimum(numpy.asarray(expected, dtype="float64"), 1.0
                                              ).astype("float32").tobytes()
        cases.append((nbest, probs))
        want.append(got)
    starts = numpy.cumsum([0] + [c[0].shape[1] for c in cases])
    kept = rng.integers(0, len(actions), size=(K, starts[-1])).astype("int32")  # noise
    padded = numpy.zeros((len(cases), K))
    for i, (nbest, probs) in enumerate(cases):
        kept[:len(nbest), starts[i]:starts[i + 1]] = nbest
        padded[i, :len(probs)] = probs
    counts = [len(c[0]) for c in cases]
    spans, span_starts, holds = kept_spans(kept[0], starts, kept, counts, kinds, types)
    assert [tuple(s) for s in spans] == [s for c in cases for s in ids_to_spans(c[0][0], kinds,
                                                                                 types)]
    doc_of = numpy.repeat(numpy.arange(len(cases)), numpy.diff(span_starts))
    mass = numpy.minimum(sum_in_order(padded[doc_of].T, holds), 1.0).astype("float32")
    assert mass.tobytes() == numpy.concatenate(want).tobytes()


def test_sums_in_order_add_the_rows_one_after_another():
    """sum_in_order adds the agreeing rows in order, one float addition
    after another; zero rows after them change no bit. (The expected sums
    are written as a loop: Python 3.12's sum() compensates its rounding.)"""
    from spacy_lookahead.systems.schemes import sum_in_order
    rng = numpy.random.default_rng(5)
    probs = rng.random((9, 40)) * 10.0 ** rng.integers(-8, 1, (9, 40))
    agree = rng.random((9, 40)) < 0.6
    expected = []
    for m in range(40):
        total = 0.0
        for j in range(9):
            if agree[j, m]:
                total += float(probs[j, m])
        expected.append(total)
    assert sum_in_order(probs, agree).tolist() == expected
    padded = numpy.vstack([probs * agree, numpy.zeros((3, 40))])
    assert sum_in_order(padded, True).tobytes() == sum_in_order(probs, agree).tobytes()


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_a_preset_label_is_the_only_valid_action_without_a_scheme(direction):
    """set_valid keeps a preset (forced) label alone at its token, in either
    direction, also where no scheme constrains the labels (the engine API)."""
    from spacy_lookahead.core import views
    from spacy_lookahead.core.features import ATOMS_PER_TOKEN
    from spacy_lookahead.systems.tagging import TaggingSystem
    system = TaggingSystem(4, direction=direction)
    doc = {"atoms": numpy.zeros((3, ATOMS_PER_TOKEN), dtype="uint64"),
           "forced": numpy.array([-1, 2, -1], dtype="int32")}
    every = [0, 1, 2, 3]
    assert views.valid_actions(system, doc, []) == (every, False)
    assert views.valid_actions(system, doc, [1]) == ([2], False)  # the middle token, either way
    assert views.valid_actions(system, doc, [1, 2]) == (every, False)
    assert views.valid_actions(system, doc, [1, 2, 0]) == ([], True)
