"""The phrase recognisers' pipe() with threads: the searching threads read
each doc's words, tags, chunks and sentences themselves
(spacy_io.LexemeAtoms.unit_inputs, UnitsJob.over_docs), and the docs they
leave are done again on the calling thread. The phrases are those of one
thread, whatever the docs hold."""
import warnings

import numpy
import pytest
from spacy.tokens import Doc, Span, SpanGroup

from spacy_lookahead.core.threads import RunsStarted, ranges_by_cost
from spacy_lookahead.pipes.base import SearchPipe
from spacy_lookahead.pipes.phrases import Phrases, PhrasePipe
from spacy_lookahead.spacy_io import LexemeAtoms, sentence_units
from spacy_lookahead.systems.phrases import UnitsJob, unit_costs

from clause_data import wsj
from span_data import conll2000, failing_batch_counts_nothing, trained

SETTINGS = {
    "fr_clause_finder": ("fr_clause_finder", {}),
    "clauses_at_chunk_boundaries": ("fr_clause_finder", {"chunk_boundaries": True}),
    "fr_chunker": ("fr_chunker", {}),
}


def examples(shared_data, factory, vocab, split, n):
    if factory == "fr_chunker":
        return conll2000(shared_data, vocab, "train" if split == "train" else "test", n)
    return wsj(shared_data, vocab, split, n)


@pytest.fixture(scope="module", params=list(SETTINGS))
def setting(request, shared_data):
    factory, config = SETTINGS[request.param]
    nlp = trained(factory, config,
                  lambda v: examples(shared_data, factory, v, "train", 200), 1)
    gold = [eg.reference for eg in examples(shared_data, factory, nlp.vocab, "dev", 60)]
    return nlp, nlp.get_pipe(factory), gold


def rebuilt(doc, k):
    """Doc k of the test docs as made again, in one of several shapes: a
    whitespace token inside (its chunks moved past it), sentences set, a
    word never seen, a trailing whitespace token, or as it is."""
    words, tags = [t.text for t in doc], [t.tag_ for t in doc]
    at = min(3, len(words))
    shape = k % 5
    sent_starts = None
    if shape == 0:
        words, tags = words[:at] + ["\n\n"] + words[at:], tags[:at] + ["_SP"] + tags[at:]
    elif shape == 1 and len(words) > 6:
        sent_starts = [True] + [False] * (len(words) - 1)
        sent_starts[5] = True
    elif shape == 2:
        words = [w + f"qzx{k}" if i == 1 else w for i, w in enumerate(words)]
    elif shape == 3:
        words, tags = words + ["  "], tags + ["_SP"]
    new = Doc(doc.vocab, words=words, tags=tags, sent_starts=sent_starts)
    if "chunks" in doc.spans:
        moved = lambda i: i + 1 if shape == 0 and i >= at else i  # noqa: E731
        new.spans["chunks"] = SpanGroup(new, name="chunks", spans=[
            Span(new, moved(s.start), moved(s.end - 1) + 1, label=s.label_)
            for s in doc.spans["chunks"]])
    return new


def phrases_of(docs, key):
    return [[(s.start, s.end, s.label_) for s in d.spans[key]] for d in docs]


class Spy:
    """How many docs the threads read, and how many they left."""

    def __init__(self, monkeypatch):
        self.read = self.left = 0
        real = PhrasePipe._phrases
        spy = self

        def phrases(pipe, docs, unit_doc, job, started, looked_up=None):
            if looked_up is not None:
                started.results()
                spy.read += len(docs)
                spy.left += len(looked_up[0].returned())
            return real(pipe, docs, unit_doc, job, started, looked_up)

        monkeypatch.setattr(PhrasePipe, "_phrases", phrases)


def test_threads_reading_the_docs_give_one_threads_phrases(setting, monkeypatch):
    nlp, pipe, gold = setting
    key = pipe.cfg["spans_key"]
    extra = [Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=["\n"], tags=["_SP"]),
             Doc(nlp.vocab, words=["The"], tags=["DT"]),
             Doc(nlp.vocab, words=["  ", "The", "dog"], tags=["_SP", "DT", "NN"])]
    for doc in extra:
        doc.spans["chunks"] = SpanGroup(doc, name="chunks", spans=[])

    def docs():
        return [rebuilt(d, k) for k, d in enumerate(gold)] + [d.copy() for d in extra]

    pipe.cfg["n_threads"] = 1
    one = phrases_of(pipe.pipe(docs(), batch_size=16), key)
    assert sum(map(len, one)) > 20  # (it found phrases)
    spy = Spy(monkeypatch)
    pipe.cfg["n_threads"] = 2
    # every word new: the sample says so (_left_share), the threads make each
    # batch's new words (unit_inputs' new_words) and read the docs, leaving none
    pipe._atoms = LexemeAtoms()
    assert phrases_of(pipe.pipe(docs(), batch_size=16), key) == one
    assert spy.read > 0 and spy.left == 0
    monkeypatch.setattr(PhrasePipe, "_left_share", lambda self, docs: 0.0)  # (a wrong sample)
    pipe._atoms = LexemeAtoms()  # every word new to the threads: each doc left at first
    assert phrases_of(pipe.pipe(docs(), batch_size=16), key) == one
    assert spy.read > 0 and spy.left > 0
    spy.read = spy.left = 0
    # the words cached: every doc read by the threads, whitespace and sentences too
    assert phrases_of(pipe.pipe(docs(), batch_size=16), key) == one
    assert spy.read == len(one) and spy.left == 0
    # predict() reads them on this thread
    assert [pipe.predict([d])[0].tolist() for d in docs()[:5]] == [
        [[s, e - 1, pipe.labels.index(k)] for s, e, k in doc] for doc in one[:5]]
    assert spy.read == len(one)


def test_docs_the_threads_cannot_read_are_done_again(setting, monkeypatch):
    """A word not cached, a chunk type first seen: left by the threads, done
    again here, the others kept."""
    nlp, pipe, gold = setting
    key = pipe.cfg["spans_key"]
    docs = [rebuilt(d, 4) for d in gold[:30]]
    pipe.cfg["n_threads"] = 2
    list(pipe.pipe([d.copy() for d in docs], batch_size=16))  # (their words and types known)
    if pipe.cfg.get("chunks_key"):  # a chunk type the component has not read yet
        for doc in docs[3::7]:
            doc.spans["chunks"] = SpanGroup(doc, name="chunks", spans=[
                Span(doc, s.start, s.end, label="NEWTYPE" if i == 0 else s.label_)
                for i, s in enumerate(doc.spans["chunks"])])
    docs[5] = rebuilt(docs[5], 2)  # a word not cached
    spy = Spy(monkeypatch)
    got = phrases_of(pipe.pipe([d.copy() for d in docs], batch_size=16), key)
    assert 1 + (4 if pipe.cfg.get("chunks_key") else 0) == spy.left < spy.read == len(docs)
    pipe.cfg["n_threads"] = 1
    assert got == phrases_of(pipe.pipe([d.copy() for d in docs], batch_size=16), key)


def test_errors_are_those_of_one_thread(setting, monkeypatch):
    nlp, pipe, gold = setting
    monkeypatch.setattr(PhrasePipe, "_left_share", lambda self, docs: 0.0)  # (threads read)
    list(pipe.pipe([rebuilt(d, 4) for d in gold[:20]]))  # (their words cached)
    spy = Spy(monkeypatch)
    untagged = rebuilt(gold[0], 4)
    untagged[1].tag_ = ""
    cases = [[untagged]]
    if pipe.cfg.get("chunks_key"):
        bare = rebuilt(gold[1], 4)
        del bare.spans["chunks"]
        cases.append([bare])
    for case in cases:
        messages = []
        for n_threads in (1, 2):
            pipe.cfg["n_threads"] = n_threads
            with pytest.raises(ValueError) as err:
                list(pipe.pipe([rebuilt(d, 4) for d in gold[2:20]] + [d.copy() for d in case]))
            messages.append(str(err.value))
        assert messages[0] == messages[1]
    assert spy.read > 0 and spy.left == len(cases)  # (the threads left those docs)


def test_unseen_tags_are_counted_by_the_threads(setting, monkeypatch):
    nlp, pipe, gold = setting
    docs = [rebuilt(d, 4) for d in gold[:40]]
    for doc in docs[::3]:
        doc[0].tag_ = "NEVERSEEN"
    monkeypatch.setattr(PhrasePipe, "_left_share", lambda self, docs: 0.0)  # (threads read)
    spy = Spy(monkeypatch)
    said = []
    for n_threads in (1, 2, 2):  # (the second pass at 2: every doc read by the threads)
        pipe.cfg["n_threads"] = n_threads
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            list(pipe.pipe([d.copy() for d in docs], batch_size=8))
        said.append([str(w.message) for w in caught if "never seen" in str(w.message)])
    assert len(said[0]) == 1 and "NEVERSEEN" in said[0][0] and said[0] == said[1] == said[2]
    assert spy.read > 0
    # a batch that fails after its threads counted (an untagged word, the
    # doc done again here) counts nothing, as with one thread
    failing_batch_counts_nothing(pipe, docs)


def test_units_of_the_docs_are_sentence_units(setting):
    """UnitsJob.over_docs (each doc's units found by its thread) gives the
    phrases of UnitsJob over sentence_units' units, and checks its arrays."""
    nlp, pipe, gold = setting
    docs = [rebuilt(d, k) for k, d in enumerate(gold)]
    atoms, own = LexemeAtoms(), pipe._own_tables()
    atoms.cache_words(docs, own)
    reads = pipe._thread_columns()
    pipe._batch(docs)  # (the chunk types known)
    later = atoms.unit_inputs(docs, own, known=None, **reads)
    starts, rows = later["starts"], later["rows"]
    job = UnitsJob.over_docs(pipe.system, pipe.averaged_weights, later["atoms"], later.get("inside"),
                             starts, rows, ranges_by_cost(unit_costs(starts, 0), 3))
    RunsStarted(job.runs(2)).results()
    assert len(rows.returned()) == 0
    found = Phrases(*job.doc_result(None, len(docs)))
    batch = pipe._batch(docs)
    words, unit_starts, unit_base, unit_doc, longest = sentence_units(
        docs, batch["starts"], batch["space"], batch["sent_starts"], batch["sent_set"])
    plain = UnitsJob(pipe.system, pipe.averaged_weights, batch["atoms"], batch.get("inside"), words,
                     unit_starts, unit_base, [(0, len(unit_starts) - 1)])
    RunsStarted(plain.runs(1)).results()
    expected = Phrases(*plain.doc_result(unit_doc, len(docs)))
    assert found.rows.tolist() == expected.rows.tolist()
    assert found.offsets.tolist() == expected.offsets.tolist()
    assert job.longest_unit() == longest
    with pytest.raises(ValueError, match="do not match the rows' "):
        UnitsJob.over_docs(pipe.system, pipe.averaged_weights, later["atoms"][:-1], None, starts,
                           rows, [(0, len(docs))])
    with pytest.raises(ValueError, match="out of range"):
        UnitsJob.over_docs(pipe.system, pipe.averaged_weights, later["atoms"], None, starts, rows,
                           [(0, len(docs) + 1)])
    with pytest.raises(ValueError, match=r"2 docs for a job over"):
        job.doc_result(None, 2)
    plain_rows = atoms.docs_inputs(docs, defer=True, lookup=True)["rows"]  # (no units known)
    with pytest.raises(ValueError, match="make them with spacy_io.LexemeAtoms.unit_inputs"):
        UnitsJob.over_docs(pipe.system, pipe.averaged_weights, later["atoms"], None, starts,
                           plain_rows, [(0, len(docs))])


def test_phrases_replaced_puts_each_docs_rows_in_its_place():
    rows = numpy.asarray([[0, 1, 0], [2, 2, 1], [0, 0, 0], [1, 3, 1]], dtype="int32")
    mine = Phrases(rows, numpy.asarray([0, 2, 2, 3, 4]))  # docs 0..3: 2, 0, 1, 1 rows
    others = Phrases.of([[[5, 6, 1], [7, 7, 0]], []])    # for docs 1 and 3
    got = mine.replaced(numpy.asarray([1, 3]), others)
    assert [got[k].tolist() for k in range(4)] == [
        [[0, 1, 0], [2, 2, 1]], [[5, 6, 1], [7, 7, 0]], [[0, 0, 0]], []]
    with pytest.raises(ValueError, match="for 1 places"):
        mine.replaced(numpy.asarray([1]), others)


def test_the_threads_reading_pauses_where_they_leave_many_docs(setting, monkeypatch):
    """Where the threads leave more than LOOKUP_AGAIN_MOST of a batch's
    docs (here: a new word in every doc, which a sample of the docs did
    not foresee), the next LOOKUP_PAUSE batches are read on the calling
    thread, then one batch tries again alone; the phrases are one thread's
    throughout."""
    from spacy_lookahead.pipes import base

    nlp, pipe, gold = setting
    key = pipe.cfg["spans_key"]
    monkeypatch.setattr(base, "MIN_DOCS_PER_THREAD", 1)
    monkeypatch.setattr(base, "LOOKUP_PAUSE", 2)
    docs = [rebuilt(d, 2 + 5 * k) for k, d in enumerate(gold)]  # (shape 2: a word of its own)
    pipe.cfg["n_threads"] = 1
    one = phrases_of(pipe.pipe([d.copy() for d in docs], batch_size=4), key)
    resumed = []
    real = SearchPipe._lookup_resumed
    monkeypatch.setattr(SearchPipe, "_lookup_resumed",
                        lambda self, docs: resumed.append(real(self, docs)) or resumed[-1])
    monkeypatch.setattr(PhrasePipe, "_left_share", lambda self, docs: 0.0)  # (a wrong sample)
    pipe.cfg["n_threads"] = 2
    pipe._atoms = LexemeAtoms()
    assert phrases_of(pipe.pipe([d.copy() for d in docs], batch_size=4), key) == one
    # batch 1 probes, 2 and 3 go beside it, 4 and 5 pause, 6 probes again
    assert resumed[:6] == [True, False, False, False, False, True]


def test_a_long_doc_without_sentences_warns_as_with_one_thread(setting):
    nlp, pipe, gold = setting
    words = [t.text for d in gold[:80] for t in d][:1200]
    tags = [t.tag_ for d in gold[:80] for t in d][:1200]
    doc = Doc(nlp.vocab, words=words, tags=tags)
    doc.spans["chunks"] = SpanGroup(doc, name="chunks", spans=[])
    said = []
    for n_threads in (1, 2, 2):  # (the second at 2: its words cached, read by the threads)
        pipe.cfg["n_threads"] = n_threads
        pipe._warned_long = False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            list(pipe.pipe([doc.copy()] + [rebuilt(d, 4) for d in gold[:20]]))
        said.append([str(w.message) for w in caught if "no sentence boundaries" in str(w.message)])
    assert len(said[0]) == 1 and "1200 words" in said[0][0] and said[0] == said[1] == said[2]


def test_a_sample_says_which_docs_the_threads_would_leave():
    import spacy

    nlp = spacy.blank("en")
    atoms = LexemeAtoms()
    docs = [nlp.make_doc(text) for text in ["the cat sat", "", "the  dog", "a cat"] * 8]
    assert atoms.left_share(docs) == 1.0  # (nothing cached)
    atoms.cache_words(docs[:1])
    # 16 docs spread over the 32 (every other one): 8 "the cat sat", 8 "the  dog"
    assert atoms.left_share(docs) == 0.5
    # all 32: 24 with tokens, of which 8 "the  dog" and 8 "a cat" left
    assert atoms.left_share(docs, sample=32) == pytest.approx(16 / 24)
    atoms.cache_words(docs[2:4])
    assert atoms.left_share(docs) == 0.0
    assert atoms.left_share(docs, sample=2) == 0.0 and atoms.left_share([]) == 0.0
    assert atoms.left_share(docs[1:2]) == 0.0  # (no doc with tokens)
    other = spacy.blank("en").make_doc("the")
    assert atoms.left_share([docs[0], other]) == 1.0  # (two vocabs)
