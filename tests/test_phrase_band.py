"""The FR decoders with max_length = L: the embedded chart keeps only the
spans of at most L words and the suffixes (s, n-1), the flat DP only the
starts s > e - L. Their output must be the one of the whole n x n chart
(the recurrences written plainly below) restricted to candidates of at
most L words, phrase for phrase, ties included."""
import tracemalloc

import numpy
import pytest

from spacy_lookahead.core.features import token_atoms
from spacy_lookahead.core.fr_perceptron import recognise
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.systems.phrases import PhraseSystem

# Words with the relevant elements of the clause features (punctuation, CC,
# relative pronouns, "that", VP and SBAR chunks), so that the internal
# pattern and the inner clauses change the phrase features.
WORDS = [("the", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("said", "VBD", "B-VP"),
         ("that", "IN", "B-SBAR"), ("it", "PRP", "B-NP"), ("left", "VBD", "B-VP"),
         (",", ",", "O"), ("and", "CC", "O"), ("which", "WDT", "B-NP"), ("ran", "VBD", "B-VP"),
         ("home", "NN", "B-NP"), (".", ".", "O")]


def random_doc(rng, n):
    rows = [WORDS[int(i)] for i in rng.integers(len(WORDS), size=n)]
    return {"atoms": numpy.asarray([token_atoms(*row) for row in rows], dtype="uint64")}


def random_contexts(rng, n, K, embedded):
    spans = [(a, b) for a in range(n) for b in range(a, n)]
    if embedded:
        return [[]] + [[[a, b, int(rng.integers(K))] for a, b in spans if rng.random() < 0.3]
                       for _ in range(4)]
    out = [[]]
    for _ in range(4):
        sol, i = [], 0
        while i < n:
            j = min(n - 1, i + int(rng.integers(3)))
            if rng.random() < 0.6:
                sol.append([i, j, int(rng.integers(K))])
            i = j + 1
        out.append(sol)
    return out


def random_model(system, item, rng):
    """Small integer weights, sparse on phi_p (sums are exact and ties are
    frequent, so the tie-breaking is compared too) on the real features: phi_w of every word
    for the filters, phi_p of every span under several partial solutions
    for the scores, so the scores depend on the solution."""
    n, K = len(item["atoms"]), system.nr_type
    W = Weights()
    words = set().union(*(system.phi_w(item, i).tolist() for i in range(n)))
    phrases = set().union(*(system.phi_p(item, a, b, ctx).tolist()
                            for ctx in random_contexts(rng, n, K, system.embedded)
                            for a in range(n) for b in range(a, n)))
    for f in sorted(words):
        for k in range(K):
            W.add(f, 3 * k, float(rng.integers(-2, 3)))
            W.add(f, 3 * k + 1, float(rng.integers(-2, 3)))
    for f in sorted(phrases):
        for k in range(K):
            W.add(f, 3 * k + 2, float(rng.choice([-1, 0, 0, 0, 1])))
    return W


def candidates(start, end, L):
    n, K = start.shape
    return {(s, e): [k for k in range(K) if start[s, k] and end[e, k]]
            for s in range(n) for e in range(s, n) if not L or e - s + 1 <= L}


def full_chart_embedded(system, item, W, cands, n):
    """decode_embedded's recurrences on every (s, e) of the n x n chart:
    inner = best[s+1,e] or top[s,m] + best[m+1,e] (m ascending, strict >);
    top = inner + the best candidate score (k ascending, strict >), phi_p
    seeing the phrases of inner; best = top if top > inner. Returns the
    solution of best[0, n-1] and the number of candidates."""
    K = system.nr_type
    best, top, top_sol, best_sol = {}, {}, {}, {}
    n_cands = 0
    for length in range(1, n + 1):
        for s in range(n - length + 1):
            e = s + length - 1
            v, inner = (best[s + 1, e], best_sol[s + 1, e]) if s < e else (0.0, [])
            for m in range(s, e):
                if (s, m) in top and top[s, m] + best[m + 1, e] > v:
                    v, inner = top[s, m] + best[m + 1, e], top_sol[s, m] + best_sol[m + 1, e]
            best[s, e], best_sol[s, e] = v, inner
            if not cands.get((s, e)):
                continue
            scores = W.scores(system.phi_p(item, s, e, inner), 3 * K)[2::3]
            t, kind = -1e300, -1
            for k in cands[s, e]:
                n_cands += 1
                if v + scores[k] > t:
                    t, kind = v + scores[k], k
            top[s, e], top_sol[s, e] = t, [[s, e, kind]] + inner
            if t > v:
                best[s, e], best_sol[s, e] = t, top_sol[s, e]
    return sorted(map(tuple, best_sol[0, n - 1]), key=lambda p: (p[0], -p[1])), n_cands


def full_flat(system, item, W, cands, n):
    """decode_flat's recurrence with every start s (e down to 0, k
    ascending, strict >), phi_p seeing the chunks of best[s]."""
    K = system.nr_type
    best, sol = [0.0] * (n + 1), [[] for _ in range(n + 1)]
    n_cands = 0
    for e in range(n):
        best[e + 1], sol[e + 1] = best[e], sol[e]
        for s in range(e, -1, -1):
            if not cands.get((s, e)):
                continue
            scores = W.scores(system.phi_p(item, s, e, sol[s]), 3 * K)[2::3]
            for k in cands[s, e]:
                n_cands += 1
                if best[s] + scores[k] > best[e + 1]:
                    best[e + 1], sol[e + 1] = best[s] + scores[k], sol[s] + [(s, e, k)]
    return [tuple(p) for p in sol[n]], n_cands


@pytest.mark.parametrize("embedded, feature_set", [(True, "clause"), (False, "chunk"), (False, "clause")])
def test_banded_decoders_equal_the_whole_chart(embedded, feature_set):
    """Real features, solution-dependent scores, frequent ties; L from 1 to
    beyond n, and 0 (no limit)."""
    rng = numpy.random.default_rng(11)
    reference = full_chart_embedded if embedded else full_flat
    compared = banded = 0
    for trial in range(20):
        n = int(rng.integers(5, 12))
        K = int(rng.integers(1, 4))
        item = random_doc(rng, n)
        W = random_model(PhraseSystem(K, embedded, feature_set), item, rng)
        for L in sorted({1, 2, 3, n // 2, n - 1, n, n + 3, 0}):
            system = PhraseSystem(K, embedded, feature_set, L)
            [(phrases, n_cands, start, end)] = recognise(system.instances([item]), W, details=True)
            expected, expected_cands = reference(system, item, W, candidates(start, end, L), n)
            found = [tuple(p) for p in phrases.tolist()]
            assert found == expected, (trial, n, K, L)
            assert n_cands == expected_cands
            assert all(e - s + 1 <= L for s, e, _ in found) or not L
            compared += 1
            # the band and the suffix cells at work: L < n, phrases found
            # beyond the first L words
            banded += 0 < L < n and any(s >= L for s, _, _ in found)
    assert compared > 120 and banded > 20


def test_embedded_chart_memory_is_linear_in_n():
    """A 2,000-token doc with L = 5: the chart is n (L + 1) cells (~300 KB),
    not n x n (~130 MB); decoding allocates no more."""
    n, L = 2000, 5
    rng = numpy.random.default_rng(0)
    item = random_doc(rng, n)
    W = random_model(PhraseSystem(1, True, "clause"), {"atoms": item["atoms"][:20]}, rng)
    bias = int(PhraseSystem(1, True, "clause").phi_w(item, 0)[0])
    W.add(bias, 0, 4.0)  # most words start and end clauses
    W.add(bias, 1, 4.0)
    system = PhraseSystem(1, True, "clause", L)
    tracemalloc.start()
    try:
        [(phrases, n_cands, start, end)] = recognise(system.instances([item]), W, details=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n_cands > n // 2  # the filters fire: there is something to decode
    assert len(phrases) and (phrases[:, 1] - phrases[:, 0] < L).all()
    assert peak < 8 * 2 ** 20, peak
