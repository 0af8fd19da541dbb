"""A doc of several sentences, with its sentence starts given to the tagging
system (respect_sent_starts): each sentence is labelled as if it were a doc
of its own (windows stop at its edges, the label history starts again, the
scheme's constraints hold at its edges), by lookahead search at any depth
and by the lattice (Viterbi, marginals); a beam runs across the doc but
keeps each sentence's constraints. The word's other occurrences (`doc`
templates) still reach across sentences."""
import math
import random

import numpy
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_lookahead.core.marginals import Lattice, marginals
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.systems.tagging import TaggingSystem, sentence_bounds

from engine import assert_fast_search_agrees, predict, views
from engine import WORDS, atoms_of
from blocks import blocks


def system_of(direction, trigrams, templates=None):
    # label 1 never follows label 0; label 0 never ends a sentence; label 2 never starts one
    allowed = [[1, 1, 1]] + [[1, 0, 1], [1, 1, 1], [1, 1, 1]]
    return TaggingSystem(3, direction=direction, tag_trigrams=trigrams, allowed=allowed,
                         at_doc_start=[1, 1, 0], at_doc_end=[0, 1, 1], templates=templates)


def random_case(direction, trigrams, rng, templates=None):
    """A system, its sentences' atoms, and Gaussian weights on every feature
    they give with every history."""
    system = system_of(direction, trigrams, templates)
    sentences = [atoms_of([rng.choice(WORDS) for _ in range(rng.randint(1, 4))])
                 for _ in range(rng.randint(2, 4))]
    W = Weights()
    for atoms in sentences:
        for h in range(len(atoms)):
            for history in {(p,) * h for p in range(3)} | {tuple(rng.randrange(3) for _ in range(h))}:
                for f in views.features(system, atoms, list(history)):
                    for c in range(3):
                        if W.get(int(f), c) == 0.0:
                            W.add(int(f), c, rng.gauss(0, 1.5))
    return system, sentences, W


def joined(sentences):
    starts = numpy.concatenate([[1] + [0] * (len(s) - 1) for s in sentences]).astype(bool)
    return {"atoms": numpy.concatenate(sentences), "sent_starts": starts}


def concatenated(outputs):
    return numpy.concatenate([numpy.asarray(o, dtype="int32") for o in outputs]).tolist()


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("trigrams", [False, True])
def test_a_doc_of_sentences_is_labelled_as_its_sentences_apart(direction, trigrams):
    rng = random.Random(11)
    for _ in range(12):
        system, sentences, W = random_case(direction, trigrams, rng)
        doc = joined(sentences)
        # the features of each sentence's tokens, with any history, are its own
        offset = 0
        for atoms in sentences:
            for i in range(len(atoms)):
                steps = len(atoms) - 1 - i if direction == "rtl" else i
                history = [rng.randrange(3) for _ in range(steps)]
                before = len(doc["atoms"]) - offset - len(atoms) if direction == "rtl" else offset
                alone = views.features(system, atoms, history)
                together = views.features(system, doc, [rng.randrange(3)] * before + history)
                assert sorted(alone) == sorted(together)
            offset += len(atoms)
        for depth in (0, 1, 2):
            alone = concatenated(predict(system, [s], W, "lookahead", depth)[0] for s in sentences)
            assert concatenated(predict(system, [doc], W, "lookahead", depth)) == alone
        # a beam runs across the doc (its items share the later sentences), but
        # keeps to each sentence's constraints
        beam = concatenated(predict(system, [doc], W, "beam", 0, 4))
        bounds = numpy.cumsum([0] + [len(s) for s in sentences])
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            labels = beam[lo:hi]
            assert labels[0] != 2 and labels[-1] != 0
            order = labels[::-1] if direction == "rtl" else labels
            assert all((a, b) != (0, 1) for a, b in zip(order, order[1:]))
        if trigrams:
            continue
        # the lattice: the best path, the marginals and log Z, sentence by sentence
        lattice = Lattice(system.instances([doc])[0], W, 1.0)
        # factored across sentence starts too: there every previous label's
        # transitions are the first step's (the figures below are checked
        # against each sentence's own lattice)
        assert lattice.factored
        path, top = lattice.best()
        parts = [Lattice(system.instances([s])[0], W, 1.0).best() for s in sentences]
        if any(p is None for p, _ in parts):
            assert path is None
            continue
        assert list(path) == [a for p, _ in (parts[::-1] if direction == "rtl" else parts)
                              for a in p]
        assert math.isclose(top, sum(t for _, t in parts), rel_tol=1e-12, abs_tol=1e-12)
        (probs, log_z), = marginals(system.instances([doc]), W, 1.0)  # in the order of the steps
        apart = marginals(system.instances(sentences), W, 1.0)
        if direction == "rtl":
            probs, apart = probs[::-1], [(p[::-1], z) for p, z in apart]
        numpy.testing.assert_allclose(probs, numpy.concatenate([p for p, _ in apart]), atol=1e-9)
        assert math.isclose(log_z, sum(z for _, z in apart), rel_tol=1e-9)


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_branch_and_bound_is_exhaustive_search_across_sentence_starts(direction):
    rng = random.Random(5)
    for _ in range(10):
        system, sentences, W = random_case(direction, False, rng)
        doc = joined(sentences)
        for step in range(len(doc["atoms"])):
            history = [rng.randrange(3) for _ in range(step)]
            for depth in (1, 2):
                assert_fast_search_agrees(system, doc, history, W, depth, rng)


def test_doc_templates_reach_across_sentences_and_their_windows_stop_at_the_edges():
    system = TaggingSystem(2, templates=["lower[doc+1]"])
    words = atoms_of(["IL-2", "binds", ".", "x", "IL-2", "."])

    def at(doc, i):
        return list(views.features(system, doc, [0] * i))[:-1]  # without the label history

    one = at(words, 4)  # at 4: the other IL-2 is at 0, before "binds"
    split = {"atoms": words, "sent_starts": numpy.array([1, 0, 0, 1, 0, 0], dtype=bool)}
    assert at(split, 4) == one and len(one) == 1
    # at 0: the other is at 4; with a sentence starting at 5, nothing after it
    # in its sentence: the sentinel, as at the end of a doc
    edge = {"atoms": words, "sent_starts": numpy.array([1, 0, 0, 1, 0, 1], dtype=bool)}
    assert at(edge, 0) == at(words[:5], 0) != at(split, 0)


def test_sentence_bounds_of_a_batch():
    starts = numpy.array([0, 3, 3, 7])
    flags = numpy.array([0, 1, 0, 0, 0, 1, 1], dtype=bool)
    lo, hi = sentence_bounds(flags, starts)
    assert lo.tolist() == [0, 1, 1, 0, 0, 2, 3] and hi.tolist() == [1, 3, 3, 2, 2, 3, 4]
    assert sentence_bounds(None, starts) is None
    with pytest.raises(ValueError, match="sent_starts"):
        sentence_bounds(flags[:3], starts)


@pytest.mark.parametrize("factory", ["lookahead_ner", "lookahead_chunker"])
def test_no_span_crosses_a_sentence_start(factory):
    """Trained where an X Y pair is always one span, the component splits
    it where a sentence starts between them (and keeps it where none does)."""
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config={"respect_sent_starts": True})
    words, tags = ["a", "b", "X", "Y", "c"], ["DT", "NN", "NNP", "NNP", "NN"]

    def spans_of(doc):
        return list(doc.ents) if factory == "lookahead_ner" else list(doc.spans["chunks"])

    def gold():
        doc = Doc(nlp.vocab, words=words, tags=tags)
        if factory == "lookahead_ner":
            doc.ents = [Span(doc, 2, 4, "T")]
        else:
            doc.spans["chunks"] = [Span(doc, 2, 4, "T")]
        return doc

    train = [Example(Doc(nlp.vocab, words=words, tags=tags), gold()) for _ in range(20)]
    nlp.initialize(lambda: train)
    for _ in range(5):
        nlp.update(train)
    whole = nlp(Doc(nlp.vocab, words=words, tags=tags))
    assert [(s.start, s.end) for s in spans_of(whole)] == [(2, 4)]
    cut = nlp(Doc(nlp.vocab, words=words, tags=tags, sent_starts=[True, False, False, True, False]))
    assert all(s.start >= 3 or s.end <= 3 for s in spans_of(cut))
    # ... and a doc given as whitespace before the sentence start
    spaced = Doc(nlp.vocab, words=["a", "b", "X", " ", "Y", "c"], tags=tags[:3] + ["_SP"] + tags[3:],
                 spaces=[True, True, False, False, True, False],
                 sent_starts=[True, False, False, True, False, False])
    assert all(s.start >= 3 or s.end <= 3 for s in spans_of(nlp(spaced)))


def test_a_gold_span_across_a_sentence_start_is_unknown_and_said_once():
    """No output can cross a sentence start: such a gold span's tokens are
    unknown (with a warning), and beam search still learns the rest of the
    doc, which it skipped while its gold was unreachable."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {"respect_sent_starts": True, "search": "beam"}))
    words, starts = ["a", "b", "X", "Y", "c", "Z"], [True, False, False, True, False, False]
    gold = Doc(nlp.vocab, words=words, sent_starts=starts)
    gold.ents = [Span(gold, 2, 4, "T"), Span(gold, 5, 6, "T")]
    train = [Example(Doc(nlp.vocab, words=words, sent_starts=starts), gold)]
    nlp.initialize(lambda: train)
    with pytest.warns(UserWarning, match="crosses a sentence start.*respect_sent_starts"):
        for _ in range(4):
            nlp.update(train)
    assert [e.text for e in nlp(Doc(nlp.vocab, words=words, sent_starts=starts)).ents][-1:] == ["Z"]
