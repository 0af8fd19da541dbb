"""Rows left to the searches (spacy_io's docs_inputs with defer, filled by
core's Docs.load on the thread that searches each doc): decoding a batch,
and a lattice pass over it on its own, give what the same batch filled at
once gives, on one thread and on several, with the rows, the substrings
and the token columns the tagging templates read."""
import numpy
import pytest
import spacy
from spacy.tokens import Doc

from spacy_lookahead.core import learners
from spacy_lookahead.core.decode import DocsOutput, decode_docs
from spacy_lookahead.core.features import word_atoms, word_substrings
from spacy_lookahead.core.threads import RunsStarted
from spacy_lookahead.core.weights import Weights
from spacy_lookahead.pipes.transition import docs_runs
from spacy_lookahead.spacy_io import LexemeAtoms
from spacy_lookahead.systems.span_ids import BestParts
from spacy_lookahead.systems.tagging import TaggingSystem

WORDS = ["the", "Dog", "ran", "fast", "in-2", "éte", "DOGS", "of"]


def real_batch(seed, n_docs=150):
    """Docs of a blank pipeline (empty ones among them), tagged, with
    sentence starts; a tagging system reading words, substrings and tags."""
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(seed)
    docs = []
    for _ in range(n_docs):
        doc = Doc(nlp.vocab, words=[WORDS[i] for i in rng.integers(0, len(WORDS),
                                                                   int(rng.integers(0, 9)))])
        for token in doc:
            token.tag_ = str(rng.choice(["NN", "VB", "DT"]))
            token.is_sent_start = bool(token.i == 0 or rng.random() < 0.2)
        docs.append(doc)
    return docs, rng


def inputs(docs, defer):
    return LexemeAtoms(substrings=True).docs_inputs(docs, tags=True, sent_starts=True, defer=defer)


def trained_and_decoded(system, filled, rng, depth, width):
    """Weights trained a little on the batch filled at once (random golds),
    and its decoding by them (at least two labels)."""
    golds = [rng.integers(0, 3, int(n)).astype("int32") for n in numpy.diff(filled["starts"])]
    W = Weights()
    for _ in range(3):
        learners.margin_perceptron(system.batch_instances(filled, golds)[:60], W, 1, 1.0)
    W = W.average()
    held = system.batch_docs(filled)
    expected = DocsOutput(held)
    decode_docs(held, W, depth, expected, width)
    assert len(set(expected.labels.tolist())) >= 2
    return W, expected


@pytest.mark.parametrize("width", [0, 3])
@pytest.mark.parametrize("doc_templates", [False, True])
def test_decoding_deferred_rows_is_decoding_the_filled_batch(width, doc_templates):
    docs, rng = real_batch(11 + width + doc_templates)
    templates = ["preset:ner"] + (["lower[doc-1] lower[0]"] if doc_templates else [])
    system = TaggingSystem(3, templates=templates)
    filled = inputs(docs, False)
    depth = 0 if width else 1
    W, expected = trained_and_decoded(system, filled, rng, depth, width)
    for threads in (1, 3):
        later = inputs(docs, True)
        rows = later["rows"]
        held = system.batch_docs(later)
        # doc templates read every row of the batch before any search
        assert rows.filled == doc_templates
        out = DocsOutput(held)
        RunsStarted(docs_runs(held, out, threads, W, depth, width)).results()
        assert out.labels.tolist() == expected.labels.tolist()
        assert later["atoms"].tobytes() == filled["atoms"].tobytes()
        assert later["substrings"][1].tobytes() == filled["substrings"][1].tobytes()
    # a lattice pass on its own (no search before it) fills the rows too
    want = BestParts(system.batch_docs(filled), W, 1.0, None, False).run_on(1).found()
    got = BestParts(system.batch_docs(inputs(docs, True)), W, 1.0, None, False).run_on(3).found()
    assert got[0].tobytes() == want[0].tobytes() and got[2].tobytes() == want[2].tobytes()


def test_batch_instances_fill_deferred_rows_first():
    """Instances (one per doc: training, the n best) read their rows outside
    decode_docs: the batch is filled before they are made."""
    docs, _ = real_batch(5, n_docs=20)
    system = TaggingSystem(3, templates=["preset:ner"])
    later = inputs(docs, True)
    system.batch_instances(later)
    assert later["rows"].filled
    assert later["atoms"].tobytes() == inputs(docs, False)["atoms"].tobytes()


def test_deferred_rows_must_be_the_arrays_docs_inputs_made():
    """A copy of the atoms (another dtype or layout) would never be filled:
    refused, with what to do."""
    docs, _ = real_batch(6, n_docs=10)
    system = TaggingSystem(3, templates=["preset:pos"])
    later = inputs(docs, True)
    copied = {**later, "atoms": numpy.asfortranarray(later["atoms"])}
    with pytest.raises(ValueError, match="very arrays docs_inputs made"):
        system.batch_docs(copied)


def test_deferred_rows_hold_each_tokens_word_atoms_and_substrings():
    """Each doc's rows, filled by its own fill in a random order, hold its
    tokens' text atoms and tags, and its CSR the token's substrings
    (core.features' word_atoms / word_substrings of the token's text)."""
    docs, rng = real_batch(8, n_docs=40)
    later = inputs(docs, True)
    for i in rng.permutation(len(docs)).tolist():
        later["rows"].fill_doc(i)
    offsets, hashes = later["substrings"]
    tokens = [t for doc in docs for t in doc]
    width = len(word_atoms("x"))
    for k, token in enumerate(tokens):
        assert later["atoms"][k, :width].tolist() == word_atoms(token.text)
        assert later["tags"][k] == token.tag
        assert hashes[offsets[k]:offsets[k + 1]].tolist() == list(word_substrings(token.text))
    assert offsets[0] == 0 and offsets[len(tokens)] == sum(len(word_substrings(t.text))
                                                           for t in tokens)


def looked_up(atoms, docs):
    return atoms.docs_inputs(docs, defer=True, lookup=True)


def test_rows_that_look_their_words_up_are_the_filled_rows():
    """docs_inputs' lookup: nothing read from the tokens until each doc's
    fill() looks its words up in the cache (on the thread that searches
    it). A doc whose words are all cached gets the rows the ordinary path
    makes, bit for bit; one with a word not cached yet, or a whitespace
    token, is left unfilled and listed by returned(); fill_all() refuses
    such a batch, naming the fix. Thousands of words (the cache's table
    grown many times) are all found again."""
    nlp = spacy.blank("en")
    words = [f"w{i}" for i in range(5000)] + WORDS
    rng = numpy.random.default_rng(5)
    docs = [Doc(nlp.vocab, words=[words[i] for i in rng.integers(0, len(words), 12)])
            for _ in range(400)]
    atoms = LexemeAtoms()
    cold = looked_up(atoms, docs[:50])
    assert cold["space"] is None and "tags" not in cold
    assert [cold["rows"].fill_doc(i) for i in range(50)] == [False] * 50
    assert cold["rows"].returned().tolist() == list(range(50))
    with pytest.raises(ValueError, match="without `lookup` where anything reads them"):
        cold["rows"].fill_all()
    filled = atoms.docs_inputs(docs)  # (adds every word)
    assert len(set(words)) >= 5000
    later = looked_up(atoms, docs)
    rows = later["rows"]
    assert all(rows.fill_doc(i) for i in rng.permutation(len(docs)).tolist())
    assert rows.returned().tolist() == []
    assert later["atoms"].tobytes() == filled["atoms"].tobytes()
    mixed = [Doc(nlp.vocab, words=["w1", "brand-new", "w2"]), docs[0],
             Doc(nlp.vocab, words=["w3", " ", "w4"]), Doc(nlp.vocab, words=[])]
    later = looked_up(atoms, mixed)
    assert [later["rows"].fill_doc(i) for i in range(4)] == [False, True, False, True]
    assert later["rows"].returned().tolist() == [0, 2]
    want = atoms.docs_inputs(mixed)["starts"]
    assert later["starts"].tolist() == want.tolist()


def test_rows_that_look_up_read_and_check_the_token_columns():
    """lookup with tags: fill() writes each token's tag into A_TAG (the
    rows the ordinary path makes, bit for bit) and counts the tags not in
    `known` (tag_counts: over the docs filled); a doc with an untagged
    token is left, and so (with ent_iob) is one with preset entities.
    Sentence starts, or nothing deferred: looked up here, as without
    lookup."""
    docs, _ = real_batch(9, n_docs=30)
    strings = docs[0].vocab.strings
    atoms = LexemeAtoms(substrings=True)
    filled = atoms.docs_inputs(docs, tags=True)
    known = numpy.asarray([strings["NN"], strings["DT"]], dtype="uint64")
    later = atoms.docs_inputs(docs, tags=True, defer=True, lookup=True, known=known)
    rows = later["rows"]
    assert rows.looks_up and "tags" not in later
    assert all(rows.fill_doc(i) for i in range(len(docs)))
    assert later["atoms"].tobytes() == filled["atoms"].tobytes()
    tokens = [t for doc in docs for t in doc]
    unseen = [t for t in tokens if t.tag_ == "VB"]
    assert rows.tag_counts() == (len(tokens), len(unseen), [strings["VB"]])
    marked = [doc.copy() for doc in docs[:4]]
    marked[1][0].tag = 0
    marked[2].set_ents([], default="outside")
    for ent_iob, left in ((False, [1]), (True, [1, 2])):
        rows = atoms.docs_inputs(marked, tags=True, ent_iob=ent_iob, defer=True,
                                 lookup=True)["rows"]
        assert [rows.fill_doc(i) for i in range(4)] == [i not in left for i in range(4)]
        assert rows.returned().tolist() == left and rows.tag_counts() is None
    assert not atoms.docs_inputs(docs, sent_starts=True, defer=True, lookup=True)["rows"].looks_up
    got = atoms.docs_inputs(docs, lookup=True)  # (not deferred: filled here)
    assert "rows" not in got
    assert got["atoms"].tobytes() == atoms.docs_inputs(docs)["atoms"].tobytes()


@pytest.mark.parametrize("width", [0, 3])
def test_decoding_rows_that_look_up_is_decoding_the_filled_batch(width):
    """Substrings kept per doc where each doc's words are looked up on its
    thread (substrings_of: the view moved to them): the outputs of the
    batch filled at once, on one thread and on several."""
    docs, rng = real_batch(21 + width)
    system = TaggingSystem(3, templates=["preset:ner", "tag[0] lower[0]"])
    atoms = LexemeAtoms(substrings=True)
    filled = atoms.docs_inputs(docs, tags=True)
    depth = 0 if width else 1
    W, expected = trained_and_decoded(system, filled, rng, depth, width)
    for threads in (1, 3):
        later = atoms.docs_inputs(docs, tags=True, defer=True, lookup=True)
        assert later["rows"].looks_up
        held = system.batch_docs(later)
        out = DocsOutput(held)
        RunsStarted(docs_runs(held, out, threads, W, depth, width)).results()
        assert later["rows"].returned().tolist() == []
        assert out.labels.tolist() == expected.labels.tolist()


def test_docs_left_for_new_words_are_searched_again_once_cached():
    """decode_docs skips the docs whose rows could not be filled (a word
    not cached: left untouched); once LexemeAtoms.cache_words has their
    words, WordRows.retry and DocsOutput.retake let the same runs search
    those alone, and the batch's outputs are those of the batch filled at
    once. A doc left for another reason (whitespace) stays left."""
    docs, rng = real_batch(31)
    docs = [Doc(doc.vocab, words=[t.text for t in doc]) for doc in docs]
    docs[7] = Doc(docs[0].vocab, words=["the", " ", "Dog"])
    system = TaggingSystem(3, templates=["preset:ner"])
    atoms = LexemeAtoms(substrings=True)
    atoms.docs_inputs([docs[0], docs[7]])  # (a few words cached: most docs have new ones)
    filled = LexemeAtoms(substrings=True).docs_inputs([d for d in docs if d is not docs[7]])
    W, expected = trained_and_decoded(system, filled, rng, 1, 0)
    later = atoms.docs_inputs(docs, defer=True, lookup=True)
    rows = later["rows"]
    held = system.batch_docs(later)
    out = DocsOutput(held)
    runs = docs_runs(held, out, 3, W, 1, 0)
    RunsStarted(runs).results()
    left = rows.returned(new_words=True).tolist()
    assert 7 in rows.returned().tolist() and 7 not in left and len(left) > len(docs) // 2
    atoms.cache_words([docs[i] for i in left])
    rows.retry(left)
    out.retake(left)
    RunsStarted(runs).results()
    assert rows.returned().tolist() == [7]
    starts = later["starts"]
    got = numpy.concatenate([out.labels[starts[i]:starts[i + 1]] for i in range(len(docs))
                             if i != 7])
    assert got.tolist() == expected.labels.tolist()
    with pytest.raises(IndexError, match="doc 150 of a batch of 150"):
        out.retake([150])
    with pytest.raises(ValueError, match="no docs given"):
        out.retake([])
    with pytest.raises(IndexError, match="give places that returned.. listed"):
        rows.retry([150])
    plain = LexemeAtoms().docs_inputs(docs[:3], defer=True)["rows"]
    with pytest.raises(ValueError, match="defer=True, lookup=True"):
        plain.retry([0])


@pytest.mark.parametrize("width", [0, 3])
def test_rows_that_leave_the_whitespace_out_decode_as_the_compacted_batch(width):
    """docs_inputs' compact: a doc's whitespace tokens (tagged or not) no
    longer leave it; its fill() writes its words' rows, tags and
    substrings one after another, and its search reads those alone: the
    outputs of the batch without its whitespace (spaces.without_whitespace,
    the calling thread's path), on one thread and on several. A doc of
    whitespace alone is left; fill_all() refuses rows that left some out."""
    from spacy_lookahead.pipes.spaces import without_whitespace

    docs, rng = real_batch(41 + width)
    for k in range(0, len(docs), 3):  # (whitespace in a third of the docs, anywhere)
        words = [t.text for t in docs[k]]
        tags = [t.tag_ for t in docs[k]]
        for _ in range(1 + k % 3):
            at = int(rng.integers(0, len(words) + 1))
            words.insert(at, str(rng.choice(["\n", "  ", "\n\n"])))
            tags.insert(at, "_SP" if k % 2 else "")
        docs[k] = Doc(docs[k].vocab, words=words, tags=tags)
    docs.append(Doc(docs[0].vocab, words=["\n", " "]))  # (whitespace alone)
    alone = [k for k, doc in enumerate(docs) if len(doc) and all(t.is_space for t in doc)]
    assert len(alone) >= 2
    system = TaggingSystem(3, templates=["preset:ner", "tag[0] lower[0]"])
    atoms = LexemeAtoms(substrings=True)
    filled = atoms.docs_inputs(docs, tags=True)
    space = filled.pop("space")
    assert space is not None and space.sum() >= len(docs) // 3
    for key in ("tags", "untagged"):
        filled.pop(key)
    compacted, indexes = without_whitespace(filled, space)
    depth = 0 if width else 1
    W, expected = trained_and_decoded(system, compacted, rng, depth, width)
    want = expected.labels.tolist()
    cuts = compacted["starts"].tolist()
    for threads in (1, 3):
        later = atoms.docs_inputs(docs, tags=True, defer=True, lookup=True, compact=True)
        rows = later["rows"]
        held = system.batch_docs(later)
        out = DocsOutput(held)
        RunsStarted(docs_runs(held, out, threads, W, depth, width)).results()
        assert rows.returned().tolist() == alone == rows.returned(whitespace=True).tolist()
        starts = later["starts"].tolist()
        for i in range(len(docs)):
            n = cuts[i + 1] - cuts[i]
            assert out.labels[starts[i]:starts[i] + n].tolist() == want[cuts[i]:cuts[i + 1]]
    words = [doc for k, doc in enumerate(docs) if k not in alone]
    rows = atoms.docs_inputs(words, tags=True, defer=True, lookup=True, compact=True)["rows"]
    with pytest.raises(ValueError, match="whitespace, left out of their rows"):
        rows.fill_all()  # (every doc filled, some without their whitespace)
    assert rows.returned().tolist() == [] and not rows.filled
    plain = atoms.docs_inputs(docs, tags=True, defer=True, lookup=True)["rows"]
    assert not any(plain.fill_doc(i) for i in range(0, len(docs) - 1, 3)
                   if len(docs[i]))  # (not compact: a doc with whitespace is left)
