"""The C path between the engine and spaCy (spacy_io.pyx) against spaCy's own
Python API: what the writers put in the tokens is what Doc.from_array,
Doc.set_ents and SpanGroup of Span objects put there, and what the readers
read is what Doc.to_array reads, on random docs and outputs."""
import numpy
import pytest
import spacy
from spacy.attrs import DEP, ENT_IOB, ENT_TYPE, HEAD, SENT_START, TAG
from spacy.tokens import Doc, Span, SpanGroup

from spacy_lookahead.core.features import A_CHUNK_COLUMN, A_TAG_COLUMN
from spacy_lookahead.spacy_io import (ChunkAtoms, LabelSink, LexemeAtoms, check_tags, has_entities,
                                      write_arcs, sentence_units, write_phrases, write_spans,
                                      write_tags)
from spacy_lookahead.systems.schemes import action_arrays, ids_to_spans

LABELS = ["NP", "VP", "PP"]
WIDTH = LexemeAtoms().docs_inputs([])["atoms"].shape[1]  # atoms per token


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def random_docs(nlp, rng, n=30):
    words = ["a", "bb", "c", " ", "dd", "\n", "e"]
    docs = []
    for _ in range(n):
        length = int(rng.integers(0, 14))
        docs.append(Doc(nlp.vocab, words=[words[i] for i in rng.integers(0, len(words), length)]))
    return docs


def copies(docs):
    return [doc.copy() for doc in docs], [doc.copy() for doc in docs]


def test_write_tags_is_from_array(nlp):
    rng = numpy.random.default_rng(0)
    hashes = numpy.asarray([nlp.vocab.strings.add(t) for t in ["NN", "VB", "_SP"]], dtype="uint64")
    docs = random_docs(nlp, rng)
    outputs = [rng.integers(-1, 2, len(doc)).astype("int32") for doc in docs]
    ours, theirs = copies(docs)
    write_tags(ours, outputs, hashes)
    for doc, out in zip(theirs, outputs):
        if len(doc):
            doc.from_array([TAG], hashes[out].reshape(-1, 1))
    for a, b in zip(ours, theirs):
        assert (a.to_array([TAG]) == b.to_array([TAG])).all()
    with pytest.raises(ValueError, match="labels for a doc of"):
        write_tags([Doc(nlp.vocab, words=["a", "b"])], [numpy.zeros((3,), "int32")], hashes)
    with pytest.raises(ValueError, match="out of range"):
        write_tags([Doc(nlp.vocab, words=["a"])], [numpy.asarray([3], "int32")], hashes)


def test_write_arcs_is_from_array(nlp):
    rng = numpy.random.default_rng(1)
    names = ["nsubj", "obj||nsubj", "dep", "ROOT"]
    hashes = numpy.asarray([nlp.vocab.strings.add(s) for s in names], dtype="uint64")
    decorated = numpy.asarray([0, 1, 0, 0], dtype="uint8")
    docs = random_docs(nlp, rng)
    heads, labels = [], []
    for doc in docs:  # trees: each token's head is an earlier token or itself (a root)
        n = len(doc)
        h = numpy.asarray([int(rng.integers(0, i + 1)) for i in range(n)], dtype="int32")
        lab = rng.integers(0, 3, n).astype("int32")
        lab[h == numpy.arange(n)] = -1
        heads.append(h)
        labels.append(lab)
    ours, theirs = copies(docs)
    needs = write_arcs(ours, heads, labels, hashes, decorated)
    for doc, h, lab, need in zip(theirs, heads, labels, needs):
        n = len(doc)
        if n:
            arr = numpy.zeros((n, 2), dtype="uint64")
            arr[:, 0] = (h - numpy.arange(n)).astype("int64").view("uint64")
            arr[:, 1] = hashes[lab]
            doc.from_array([HEAD, DEP], arr)
        assert bool(need) == bool(decorated[lab].any()) if n else not need
    for a, b in zip(ours, theirs):
        assert (a.to_array([HEAD, DEP, SENT_START]) == b.to_array([HEAD, DEP, SENT_START])).all()
        assert [(t.left_edge.i, t.right_edge.i, t.n_lefts, t.n_rights) for t in a] == \
            [(t.left_edge.i, t.right_edge.i, t.n_lefts, t.n_rights) for t in b]
    # every doc's arcs in one pair of arrays (starts): the same docs
    whole, _ = copies(docs)
    starts = numpy.zeros((len(docs) + 1,), dtype="int64")
    numpy.cumsum([len(d) for d in docs], out=starts[1:])
    assert write_arcs(whole, numpy.concatenate(heads), numpy.concatenate(labels), hashes,
                      decorated, starts=starts).tolist() == needs.tolist()
    for a, b in zip(whole, theirs):
        assert (a.to_array([HEAD, DEP, SENT_START]) == b.to_array([HEAD, DEP, SENT_START])).all()
    with pytest.raises(ValueError, match="outside"):
        write_arcs([Doc(nlp.vocab, words=["a", "b"])], [numpy.asarray([0, 2], "int32")],
                   [numpy.asarray([0, -1], "int32")], hashes)
    with pytest.raises(ValueError, match="starts do not match"):
        write_arcs(whole, numpy.concatenate(heads), numpy.concatenate(labels), hashes,
                   starts=starts[:-1])
    untouched = Doc(nlp.vocab, words=["a", "b"])
    with pytest.raises(ValueError, match="label id 4 out of range for 4 labels"):
        write_arcs([untouched], [numpy.asarray([1, 1], "int32")],
                   [numpy.asarray([0, 4], "int32")], hashes)
    assert not untouched.has_annotation("DEP")  # checked before anything is written


@pytest.mark.parametrize("scheme", ["iob2", "biluo"])
def test_write_spans_is_set_ents_and_span_groups(nlp, scheme):
    rng = numpy.random.default_rng(2)
    actions = (["O"] + [f"{p}-{t}" for t in LABELS for p in ("B", "I")] if scheme == "iob2" else
               ["O"] + [f"{p}-{t}" for t in LABELS for p in ("B", "I", "L", "U")])
    kinds, types = action_arrays(actions)
    hashes = numpy.asarray([nlp.vocab.strings.add(t) for t in LABELS], dtype="uint64")
    docs = random_docs(nlp, rng)
    # random ids, invalid sequences included: both read them as conlleval does
    outputs = [rng.integers(0, len(actions), len(doc)).astype("int32") for doc in docs]
    ents, theirs = copies(docs)
    groups = [doc.copy() for doc in docs]
    write_spans(ents, outputs, kinds, types, hashes)
    write_spans(groups, outputs, kinds, types, hashes, "chunks")
    for doc, out in zip(theirs, outputs):
        spans = [Span(doc, s, e, label=LABELS[t]) for s, e, t in ids_to_spans(out, kinds, types)]
        doc.set_ents(spans, default="outside")
        doc.spans["chunks"] = SpanGroup(doc, name="chunks", spans=spans)
    for a, g, b in zip(ents, groups, theirs):
        assert (a.to_array([ENT_IOB, ENT_TYPE]) == b.to_array([ENT_IOB, ENT_TYPE])).all()
        assert [(s.start, s.end, s.label_, s.start_char, s.end_char, s.text) for s in g.spans["chunks"]] == \
            [(s.start, s.end, s.label_, s.start_char, s.end_char, s.text) for s in b.spans["chunks"]]
        assert g.spans["chunks"].name == "chunks" and g.spans["chunks"].doc is g
    assert has_entities(ents).tolist() == [int(len(d) > 0) for d in ents]
    assert has_entities(docs).tolist() == [0] * len(docs)
    # scores per span, the docs' one after another: each group's attrs["scores"]
    # is its doc's slice, made with the group
    counts = [len(ids_to_spans(out, kinds, types)) for out in outputs]
    bounds = numpy.concatenate([[0], numpy.cumsum(counts)]).astype("int64")
    scores = rng.random(int(bounds[-1])).astype("float32")
    scored = [doc.copy() for doc in docs]
    write_spans(scored, outputs, kinds, types, hashes, "chunks", None, scores, bounds)
    for k, doc in enumerate(scored):
        group = doc.spans["chunks"]
        assert len(group) == counts[k]
        assert group.attrs["scores"].tobytes() == scores[bounds[k]:bounds[k + 1]].tobytes()
    with pytest.raises(ValueError, match="scores go with a span group"):
        write_spans(scored, outputs, kinds, types, hashes, None, None, scores, bounds)
    with pytest.raises(ValueError, match="scores go with a span group"):
        write_spans(scored, outputs, kinds, types, hashes, "chunks", None, scores, bounds[:-1])


def test_a_label_sink_raises_for_a_doc_never_put(nlp):
    """A LabelSink's finish() (decode_docs' threads put each doc's output
    into it): a doc without tokens needs no put (a group sink gives it an
    empty group); one with tokens that no search put is an error, never a
    doc left as it was; the groups of the docs before it are made."""
    hashes = numpy.asarray([nlp.vocab.strings.add(t) for t in LABELS], dtype="uint64")
    kinds, types = action_arrays(["O", "B-NP", "I-NP"])
    empty = [Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=[])]
    sink = LabelSink.spans(empty, kinds, types, hashes, "chunks")
    sink.finish()
    assert [len(d.spans["chunks"]) for d in empty] == [0, 0]
    assert all(d.spans["chunks"].doc is d for d in empty)
    LabelSink.tags(empty, hashes).finish()
    docs = [Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=["a", "b"])]
    for sink in (LabelSink.tags(docs, hashes), LabelSink.spans(docs, kinds, types, hashes),
                 LabelSink.spans(docs, kinds, types, hashes, "chunks")):
        with pytest.raises(RuntimeError, match="doc 1 of the batch .2 tokens. was never written"):
            sink.finish()
    assert "chunks" in docs[0].spans and "chunks" not in docs[1].spans
    assert not docs[1].has_annotation("TAG") and not docs[1].has_annotation("ENT_IOB")
    with pytest.raises(ValueError, match="3 kinds and 2 types"):
        LabelSink.spans(docs, kinds, types[:2], hashes)
    with pytest.raises(ValueError, match="undoable=True"):  # (no tags kept to restore)
        LabelSink.tags(docs, hashes).undo()
    LabelSink.tags(docs, hashes, undoable=True).undo()  # (nothing put: nothing to restore)
    # docs left out on purpose (their searching thread could not fill their
    # rows: the caller writes them) are no error, and get no group
    for sink in (LabelSink.tags(docs, hashes), LabelSink.spans(docs, kinds, types, hashes),
                 LabelSink.spans(docs, kinds, types, hashes, "chunks")):
        sink.finish(absent=[1])
    assert "chunks" not in docs[1].spans and not docs[1].has_annotation("TAG")
    with pytest.raises(ValueError, match="doc 2 cannot be absent from a batch of 2"):
        LabelSink.tags(docs, hashes).finish(absent=[2])


def test_a_label_sink_writes_docs_of_whitespace_alone_and_checks_positions(nlp):
    """A doc of whitespace alone is never searched: a LabelSink writes it at
    finish() (over_positions' docs with no position, or `alone`): the
    space tag (the last hash) on every token, every token outside, an
    empty group; undo() restores it. Positions that are not rising places
    in the doc are refused before anything is kept."""
    hashes = numpy.asarray([nlp.vocab.strings.add(t) for t in LABELS + ["_SP"]], dtype="uint64")
    kinds, types = action_arrays(["O", "B-NP", "I-NP"])

    def batch():
        docs = [Doc(nlp.vocab, words=["\n", "  "]), Doc(nlp.vocab, words=[]),
                Doc(nlp.vocab, words=[" "])]
        for doc in docs:
            for token in doc:
                token.tag_ = "XX"
        return docs

    none = numpy.zeros((0,), dtype="int32")
    docs = batch()
    sink = LabelSink.tags(docs, hashes, undoable=True)
    sink.over_positions([none, None, none])
    sink.finish()
    assert [[t.tag_ for t in d] for d in docs] == [["_SP", "_SP"], [], ["_SP"]]
    sink.undo()
    assert [[t.tag_ for t in d] for d in docs] == [["XX", "XX"], [], ["XX"]]
    docs = batch()
    LabelSink.spans(docs, kinds, types, hashes).finish(alone=[0, 2])
    assert all(t.ent_iob_ == "O" for d in docs for t in d) and not list(docs[0].ents)
    docs = batch()
    LabelSink.spans(docs, kinds, types, hashes, "chunks").finish(alone=[0, 2])
    assert [len(d.spans["chunks"]) for d in docs] == [0, 0, 0]
    for alone in ([3], [0, 2, 0]):
        with pytest.raises(ValueError, match="cannot be written as whitespace alone"):
            LabelSink.tags(batch(), hashes).finish(alone=alone)
    for bad in ([1, 0], [0, 0], [2], [-1]):
        with pytest.raises(ValueError, match="doc 0's positions are not rising places in its 2"):
            LabelSink.tags(batch(), hashes).over_positions(
                [numpy.asarray(bad, dtype="int32"), None, None])
    with pytest.raises(ValueError, match="2 docs' positions for a sink of 3"):
        LabelSink.tags(batch(), hashes).over_positions([None, None])


def test_a_group_sinks_undo_puts_back_the_groups_finish_replaced(nlp):
    """A batch that fails after its group sink's finish() (the docs the
    threads left, written after it) leaves the docs as they were: the
    groups finish() made are taken out, those it replaced put back."""
    hashes = numpy.asarray([nlp.vocab.strings.add(t) for t in LABELS], dtype="uint64")
    kinds, types = action_arrays(["O", "B-NP", "I-NP"])
    docs = [Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=["a"])]
    old = SpanGroup(docs[0], name="chunks", spans=[], attrs={"mine": 1})
    docs[0].spans["chunks"] = old
    sink = LabelSink.spans(docs, kinds, types, hashes, "chunks")
    sink.finish(absent=[2])
    assert docs[0].spans["chunks"] is not old and "chunks" in docs[1].spans
    sink.undo()
    assert docs[0].spans["chunks"] is old and "chunks" not in docs[1].spans
    assert "chunks" not in docs[2].spans
    sink.undo()  # (twice: nothing more)
    assert docs[0].spans["chunks"] is old


def test_write_phrases_is_a_span_group(nlp):
    hashes = numpy.asarray([nlp.vocab.strings.add(t) for t in LABELS], dtype="uint64")
    doc = Doc(nlp.vocab, words=["The", "cat", " ", "sat", "down"])
    rows = numpy.asarray([[0, 1, 0], [0, 4, 2], [3, 3, 1]], dtype="int32")
    write_phrases([doc], [rows], hashes, "clauses")
    assert [(s.start, s.end, s.label_, s.text) for s in doc.spans["clauses"]] == \
        [(0, 2, "NP", "The cat"), (0, 5, "PP", "The cat   sat down"), (3, 4, "VP", "sat")]
    with pytest.raises(ValueError, match="out of range"):
        write_phrases([doc], [numpy.asarray([[2, 5, 0]], "int32")], hashes, "clauses")


def test_chunk_atoms_are_the_per_doc_chunk_column(nlp):
    rng = numpy.random.default_rng(3)
    docs = random_docs(nlp, rng)
    for doc in docs:  # overlapping chunks too: a later one overwrites
        n = len(doc)
        spans = []
        for _ in range(int(rng.integers(0, 4))) if n else []:
            s = int(rng.integers(0, n))
            spans.append(Span(doc, s, int(rng.integers(s + 1, n + 1)),
                              label=LABELS[int(rng.integers(0, 3))]))
        doc.spans["chunks"] = SpanGroup(doc, name="chunks", spans=spans)
    starts = numpy.concatenate([[0], numpy.cumsum([len(d) for d in docs])]).astype("int64")
    N = int(starts[-1])
    atoms = numpy.zeros((N, WIDTH), dtype="uint64")
    inside = numpy.zeros((N,), dtype="uint8")
    found = ChunkAtoms(nlp.vocab.strings).write(docs, "chunks", atoms, starts, A_CHUNK_COLUMN, inside)
    assert found.tolist() == [1] * len(docs)
    pipe = nlp.add_pipe("lookahead_ner", name="columns")  # (a component's per-doc column)
    for k, doc in enumerate(docs):
        expected = numpy.zeros((len(doc), WIDTH), dtype="uint64")
        chunks = pipe._chunk_column(doc, expected, None, "chunks", "fix")
        assert (atoms[starts[k]:starts[k + 1], A_CHUNK_COLUMN] == expected[:, A_CHUNK_COLUMN]).all()
        flags = numpy.zeros((len(doc),), dtype="uint8")
        for span in chunks:
            flags[span.start + 1:span.end] = 1
        assert (inside[starts[k]:starts[k + 1]] == flags).all()
    with pytest.raises(ValueError, match="do not match"):
        ChunkAtoms(nlp.vocab.strings).write(docs, "chunks", atoms[:-1], starts, A_CHUNK_COLUMN)
    bare = [Doc(nlp.vocab, words=["a"])]
    assert ChunkAtoms(nlp.vocab.strings).write(bare, "chunks", numpy.zeros((1, WIDTH), "uint64"),
                                               [0, 1], A_CHUNK_COLUMN).tolist() == [0]


def test_docs_inputs_columns_are_to_array(nlp):
    rng = numpy.random.default_rng(4)
    docs = random_docs(nlp, rng)
    for doc in docs:
        if len(doc):
            doc.from_array([TAG, SENT_START], numpy.stack([
                numpy.asarray([nlp.vocab.strings.add(t) for t in rng.choice(["NN", "VB"], len(doc))],
                              dtype="uint64"),
                rng.choice([-1, 1], len(doc)).astype("int64").view("uint64")], axis=1))
            if len(doc) > 1:
                doc.set_ents([Span(doc, 0, 1, label="X")], default="unmodified")
    batch = LexemeAtoms().docs_inputs(docs, tags=True, ent_iob=True, sent_starts=True)
    assert (batch["tags"] == numpy.concatenate([d.to_array(TAG) for d in docs])).all()
    assert (batch["ent_iob"] == numpy.concatenate([d.to_array(ENT_IOB) for d in docs])).all()
    assert (batch["sent_starts"] == numpy.concatenate([d.to_array(SENT_START) == 1 for d in docs])).all()
    one = numpy.concatenate([LexemeAtoms().docs_inputs([d])["atoms"] for d in docs])
    assert (one[:, A_TAG_COLUMN] == 0).all()
    one[:, A_TAG_COLUMN] = batch["tags"]  # (with tags, in the tag column too)
    assert (batch["atoms"] == one).all()
    assert batch["untagged"] == sum(1 for d in docs if not d.has_annotation("TAG")
                                    and any(not t.is_space for t in d))


def test_check_tags_is_the_numpy_check():
    rng = numpy.random.default_rng(5)
    for _ in range(50):
        n = int(rng.integers(0, 40))
        tags = rng.integers(0, 12, n).astype("uint64")
        words = rng.random(n) < 0.8
        known = numpy.unique(rng.integers(1, 12, int(rng.integers(0, 8)))).astype("uint64")
        first, n_empty, n_words, n_unseen, examples = check_tags(tags, words, known)
        empty = numpy.flatnonzero((tags == 0) & words)
        unseen = words & ~numpy.isin(tags, known)
        assert (first, n_empty, n_words, n_unseen) == \
            (int(empty[0]) if len(empty) else -1, len(empty), int(words.sum()), int(unseen.sum()))
        assert set(examples) <= set(tags[unseen].tolist())
        assert len(examples) == min(5, len(set(tags[unseen].tolist())))
    assert check_tags(numpy.asarray([3], "uint64"), numpy.asarray([1], "uint8"), None)[3] == 0


def test_docs_inputs_from_two_threads_at_once(nlp):
    """Two pipe() calls on one component share its word cache: a call's
    nogil reads and another thread's new words (cache writes, a resize) are
    kept apart; each gets what it gets alone."""
    from concurrent.futures import ThreadPoolExecutor

    batches = [[Doc(nlp.vocab, words=[f"w{t}_{i}_{j}" for j in range(30)]) for i in range(200)]
               for t in range(4)]
    alone = [LexemeAtoms(substrings=True).docs_inputs(b)["atoms"] for b in batches]
    shared = LexemeAtoms(substrings=True)
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda b: shared.docs_inputs(b)["atoms"], batches))
    assert all((a == b).all() for a, b in zip(alone, together))


def reference_units(doc, sent_starts):
    """What the phrase recognisers decoded as units before sentence_units
    (a doc's words, split at its sentence starts where
    Doc.has_annotation("SENT_START")), in doc positions."""
    words = numpy.flatnonzero([not t.is_space for t in doc])
    if len(doc) < 2 or not doc.has_annotation("SENT_START"):
        return [words.tolist()] if len(words) else []
    sent = numpy.cumsum(sent_starts)[words]
    return [u.tolist() for u in numpy.split(words, numpy.flatnonzero(numpy.diff(sent)) + 1)
            if len(u)]


def test_sentence_units_are_the_docs_sentences(nlp):
    rng = numpy.random.default_rng(6)
    docs = random_docs(nlp, rng, 60)
    for k, doc in enumerate(docs):
        if k % 3 == 1:
            for token in doc:
                token.is_sent_start = bool(rng.random() < 0.3)
        elif k % 3 == 2 and len(doc) > 1:
            doc[int(rng.integers(1, len(doc)))].is_sent_start = False  # marked, no boundary
        if k % 7 == 0:
            doc.user_hooks["sents"] = lambda doc: [doc[:]]
    batch = LexemeAtoms().docs_inputs(docs, sent_starts=True)
    starts = batch["starts"]
    words, unit_starts, unit_base, unit_doc, longest = sentence_units(
        docs, starts, batch["space"], batch["sent_starts"])
    got = [[] for _ in docs]
    for u in range(len(unit_doc)):
        got[unit_doc[u]].append((words[unit_starts[u]:unit_starts[u + 1]] - unit_base[u]).tolist())
        assert unit_base[u] == starts[unit_doc[u]]
    expected = [reference_units(doc, batch["sent_starts"][starts[k]:starts[k + 1]])
                for k, doc in enumerate(docs)]
    assert got == expected
    assert longest == max(sum(not t.is_space for t in doc) for doc in docs
                          if len(doc) < 2 or not doc.has_annotation("SENT_START"))
    # docs_inputs' sent_set (a start set after a doc's first token, read
    # with the other columns): the same units as the tokens read here
    assert batch["sent_set"].tolist() == [
        int(any(t.is_sent_start is not None for t in doc[1:])) for doc in docs]
    given = sentence_units(docs, starts, batch["space"], batch["sent_starts"], batch["sent_set"])
    for a, b in zip(given, (words, unit_starts, unit_base, unit_doc, longest)):
        assert numpy.array_equal(a, b)
    with pytest.raises(ValueError, match="sent_set does not match"):
        sentence_units(docs, starts, batch["space"], batch["sent_starts"], batch["sent_set"][1:])


def test_word_atoms_come_from_the_given_tables_and_each_doc_s_own_vocab():
    """LexemeAtoms.docs_inputs: the cluster atom from `own` where given (a
    component's own table), else from the vocab's; the lexeme attributes
    from each doc's vocab, even when a batch mixes vocabs."""
    from spacy.attrs import NORM
    from spacy.lookups import Table
    from spacy.vocab import Vocab
    from spacy_lookahead.core.features import A_COLUMNS
    A_CLUSTER, A_NORM = A_COLUMNS["cluster"], A_COLUMNS["NORM"]
    plain = spacy.blank("en").vocab
    shouting = Vocab(lex_attr_getters={NORM: lambda text: text.upper()})
    plain.lookups.add_table("lexeme_cluster", {"cat": 5})
    own = Table("lexeme_cluster", {"cat": 9})
    atoms = LexemeAtoms()
    docs = [Doc(plain, words=["cat"]), Doc(shouting, words=["cat"]), Doc(plain, words=["cat"])]
    got = atoms.docs_inputs(docs, own=(own, None))["atoms"]
    assert got[:, A_CLUSTER].tolist() == [9, 9, 9]
    assert got[:, A_NORM].tolist() == [plain.strings["cat"], plain.strings.add("CAT"),
                                       plain.strings["cat"]]
    assert atoms.docs_inputs(docs[:1])["atoms"][0, A_CLUSTER] == 5  # the vocab's


def test_in_vocab_is_whether_every_doc_is_of_the_vocab():
    from spacy.vocab import Vocab
    from spacy_lookahead.spacy_io import in_vocab
    vocab, other = Vocab(), Vocab()
    docs = [Doc(vocab, words=["a"]), Doc(vocab, words=[])]
    assert in_vocab(docs, vocab) and in_vocab([], vocab)
    assert not in_vocab(docs + [Doc(other, words=["a"])], vocab)
    assert not in_vocab(docs, other)


def test_sentence_ids_are_the_docs_given_sentences(nlp):
    """sentence_ids: per doc whether Doc.has_annotation("SENT_START"), and
    per token its sentence's number from the doc's sentence starts (what
    the parser's respect_sent_starts reads)."""
    from spacy_lookahead.spacy_io import sentence_ids
    words = "a b c d e f".split()
    docs = [Doc(nlp.vocab, words=words, sent_starts=[1, 0, 0, 1, 0, 1]),  # given
            Doc(nlp.vocab, words=words),  # not given
            Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=["a"]),
            Doc(nlp.vocab, words=words[:3], sent_starts=[1, -1, -1]),  # given: no other start
            Doc(nlp.vocab, words=words[:3])]
    docs[5].user_hooks["sents"] = lambda doc: iter([doc[:]])  # a hook: given
    starts = numpy.zeros((len(docs) + 1,), dtype="int64")
    numpy.cumsum([len(d) for d in docs], out=starts[1:])
    ids, given = sentence_ids(docs, starts)
    assert given.tolist() == [int(bool(len(d)) and d.has_annotation("SENT_START")) for d in docs] \
        == [1, 0, 0, 1, 1, 1]
    for doc, a, b in zip(docs, starts, starts[1:]):
        first = doc.to_array("SENT_START") == 1
        first[:1] = True
        assert ids[a:b].tolist() == numpy.cumsum(first).tolist()
    assert ids[:6].tolist() == [1, 1, 1, 2, 2, 3]
    with pytest.raises(ValueError, match="starts do not match"):
        sentence_ids(docs, starts[:-1])


def test_deferred_rows_are_the_rows_filled_at_once(nlp):
    """docs_inputs(defer=True): the rows and substrings left to the searches
    are, once each doc's are filled (in any order, as threads take the
    docs), the arrays docs_inputs fills itself, bit for bit; the other
    columns are there at once."""
    rng = numpy.random.default_rng(7)
    words = ["a", "bb", "Ccc", "d-4", "éé", "a"]
    for trial in range(20):
        docs = [Doc(nlp.vocab, words=[words[i] for i in rng.integers(0, len(words),
                                                                    int(rng.integers(0, 9)))])
                for _ in range(int(rng.integers(1, 12)))]
        for doc in docs:
            if len(doc):
                doc.from_array([TAG], numpy.asarray(
                    [nlp.vocab.strings.add(t) for t in rng.choice(["NN", "VB"], len(doc))],
                    dtype="uint64").reshape(-1, 1))
        if not sum(map(len, docs)):
            continue
        now = LexemeAtoms(substrings=True).docs_inputs(docs, tags=True, ent_iob=True)
        later = LexemeAtoms(substrings=True).docs_inputs(docs, tags=True, ent_iob=True, defer=True)
        assert "rows" not in now
        rows = later["rows"]
        assert not rows.filled and rows.n_docs == len(docs)
        for key in ("tags", "ent_iob", "starts"):
            assert (later[key] == now[key]).all()
        assert later["untagged"] == now["untagged"] and later["space"] is None
        for i in rng.permutation(len(docs)).tolist():
            rows.fill_doc(i)
        assert (later["atoms"] == now["atoms"]).all()
        assert (later["substrings"][0] == now["substrings"][0]).all()
        assert (later["substrings"][1] == now["substrings"][1]).all()
    with pytest.raises(IndexError):
        rows.fill_doc(len(docs))


def test_a_token_column_set_on_deferred_rows_is_filled_with_them(nlp):
    """WordRows.set_column (a chunk column read before the rows are
    filled): the filled rows hold it, the tags and word atoms unchanged;
    a column on filled rows, of another length or outside the token
    columns is refused."""
    docs = [Doc(nlp.vocab, words=["a", "bb", "c"]), Doc(nlp.vocab, words=["dd"])]
    now = LexemeAtoms().docs_inputs(docs, tags=True)
    later = LexemeAtoms().docs_inputs(docs, tags=True, defer=True)
    values = numpy.asarray([7, 0, 9, 11], dtype="uint64")
    later["rows"].set_column(A_CHUNK_COLUMN, values)
    with pytest.raises(ValueError, match="3 values for 4 tokens"):
        later["rows"].set_column(A_CHUNK_COLUMN, values[:3])
    with pytest.raises(ValueError, match="not a token column"):
        later["rows"].set_column(0, values)
    later["rows"].fill_doc(1)
    later["rows"].fill_doc(0)
    expected = now["atoms"].copy()
    expected[:, A_CHUNK_COLUMN] = values
    assert (later["atoms"] == expected).all()
    later["rows"].fill_all()
    with pytest.raises(ValueError, match="the rows are filled"):
        later["rows"].set_column(A_CHUNK_COLUMN, values)


def test_rows_are_deferred_only_without_whitespace(nlp):
    """A batch with a whitespace token (its rows are compacted by the
    caller), an empty batch, and docs of two vocabs: filled at once."""
    atoms = LexemeAtoms()
    assert "rows" not in atoms.docs_inputs([Doc(nlp.vocab, words=["a", "\n", "b"])], defer=True)
    assert "rows" not in atoms.docs_inputs([Doc(nlp.vocab, words=[])], defer=True)
    other = spacy.blank("en")
    two = [Doc(nlp.vocab, words=["a"]), Doc(other.vocab, words=["b"])]
    assert "rows" not in atoms.docs_inputs(two, defer=True)
    batch = atoms.docs_inputs([Doc(nlp.vocab, words=["a", "b"])], defer=True)
    batch["rows"].fill_all()
    assert batch["rows"].filled
    assert (batch["atoms"] == atoms.docs_inputs([Doc(nlp.vocab, words=["a", "b"])])["atoms"]).all()
