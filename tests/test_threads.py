"""n_threads: the docs of a batch decoded on several threads give exactly
what one thread gives, for every component and learner."""
import os
import time

import numpy
import pytest
import spacy

from spacy_lookahead.core import clock
from spacy_lookahead.pipes import base
from spacy_lookahead.pipes.phrases import PhrasePipe
from spacy_lookahead.core.batch import in_threads, thread_count

from ewt import ewt_examples
from parse_data import parse_examples
from span_data import failing_batch_counts_nothing, trained
from clause_data import wsj
from span_data import conll2000, jnlpba

SETTINGS = {
    "tagger_lookahead": ("lookahead_tagger", {"depth": 1}, "ewt"),
    "tagger_sapo": ("lookahead_tagger", {"learner": "sapo"}, "ewt"),
    "chunker_beam": ("lookahead_chunker", {"search": "beam", "beam_width": 4}, "conll"),
    "ner_rtl": ("lookahead_ner", {"direction": "rtl", "depth": 1}, "jnlpba"),
    "parser_greedy": ("arc_standard_parser", {"search": "greedy", "min_label_freq": 1}, "parse"),
    "parser_beam_sapo": ("arc_standard_parser", {"learner": "sapo", "search": "beam",
                                                 "min_label_freq": 1}, "parse"),
    "fr_clause_finder": ("fr_clause_finder", {}, "clauses"),
    "fr_chunker": ("fr_chunker", {}, "conll"),
}


def examples(shared_data, data, vocab, split, n):
    if data == "ewt":
        return ewt_examples(vocab, split, n)
    if data == "parse":
        return parse_examples(vocab, "ewt", split, n)
    if data == "conll":
        return conll2000(shared_data, vocab, split, n)
    if data == "jnlpba":
        return jnlpba(shared_data, vocab, split, n)
    return wsj(shared_data, vocab, split, n)


def annotations(doc):
    return ([t.tag_ for t in doc], [(t.head.i, t.dep_) for t in doc],
            [(e.start, e.end, e.label_) for e in doc.ents],
            {k: ([(s.start, s.end, s.label_) for s in g], g.attrs.get("scores", numpy.zeros(0)).tolist())
             for k, g in doc.spans.items()},
            {k: numpy.asarray(v).tolist() for k, v in doc.user_data.items() if k.endswith("probs")})


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_threads_give_the_output_of_one_thread(shared_data, setting, monkeypatch):
    factory, config, data = SETTINGS[setting]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    test = "test" if data != "clauses" else "dev"
    docs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, test, 150)]

    def run(n_threads, batch_size=64):
        pipe.cfg["n_threads"] = n_threads
        inputs = []
        for doc in docs:  # the gold inputs (tags, chunks), without the outputs
            copy = doc.copy()
            copy.ents = []
            inputs.append(copy)
        return [annotations(d) for d in pipe.pipe(inputs, batch_size=batch_size)]

    clock.start()  # the engine's nogil sections are timed (benchmarks/gil.py reads them)
    start = time.perf_counter()
    one = run(1)
    wall, nogil = time.perf_counter() - start, clock.stop()
    assert 0 < nogil < wall
    assert any(any(part) for doc in one for part in doc[:4])  # it annotated something
    assert run(2) == one and run(0) == one
    assert clock.seconds() == nogil  # stopped: nothing more is summed
    # batches as small as asked: more of them than the pipelining holds at once
    monkeypatch.setattr(base, "MIN_DOCS_PER_THREAD", 1)
    assert run(2, batch_size=16) == one


def test_n_threads_is_set_at_load_and_checked(tmp_path, shared_data):
    nlp = trained("lookahead_tagger", {"depth": 0}, lambda v: ewt_examples(v, "train", 50), 1)
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m", config={"components": {"lookahead_tagger": {"n_threads": 2}}})
    assert loaded.get_pipe("lookahead_tagger").cfg["n_threads"] == 2
    with pytest.raises(ValueError, match="n_threads must be an integer >= 0"):
        spacy.blank("en").add_pipe("fr_chunker", config={"n_threads": -1})


def test_in_threads_keeps_the_order_of_the_instances():
    items = list(range(103))
    assert in_threads(lambda chunk, k: [x * k for x in chunk], iter(items), 3, 2) == \
        [x * 2 for x in items]
    assert in_threads(lambda chunk: list(chunk), [], 4) == []
    assert thread_count(0) >= 1 and thread_count(3) == 3


def test_in_threads_keeps_one_pool_per_process(monkeypatch):
    """The pool of a thread count is made once and kept across batches; a
    forked child (another pid) makes its own: the parent's pool has no
    threads there, and a task sent to it would never run."""
    from spacy_lookahead.core import batch

    square = lambda chunk: [x * x for x in chunk]  # noqa: E731
    assert in_threads(square, range(50), 3) == [x * x for x in range(50)]
    pool = batch.shared_pool(3)
    assert in_threads(square, range(7), 3) == [x * x for x in range(7)]
    assert batch.shared_pool(3) is pool and batch.shared_pool(2) is not pool
    monkeypatch.setattr(batch.os, "getpid", lambda: -1)
    child = batch.shared_pool(3)
    assert child is not pool and in_threads(square, range(9), 3) == [x * x for x in range(9)]
    assert all(pid == -1 for pid, _ in batch._POOLS)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_decodes_on_its_own_pool():
    """A child forked after the parent made its pool (as nlp.pipe(n_process)
    forks) runs in_threads on threads of its own: the parent's pool has
    none there, and a task sent to it would never run."""
    import os

    square = lambda chunk: [x * x for x in chunk]  # noqa: E731
    assert in_threads(square, range(20), 2) == [x * x for x in range(20)]
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 if the threads answered (killed if they hang)
        import signal
        signal.alarm(20)
        ok = in_threads(square, range(20), 2) == [x * x for x in range(20)]
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("factory", ["lookahead_chunker", "fr_chunker"])
@pytest.mark.parametrize("floor", [1, None])
def test_a_failing_batch_goes_to_the_error_handler(shared_data, n_threads, factory, floor,
                                                   monkeypatch):
    """With threads the batches are pipelined (the transition pipes' and
    the phrase recognisers'); a batch that fails (here: docs without the POS
    tags the chunkers read) still reaches spaCy's error handler, and the
    other batches come out annotated, in order, as with one thread. Where
    pipe() took more docs than batch_size (MIN_DOCS_PER_THREAD; floor None),
    the handler still gets the batches of batch_size that fail."""
    nlp = trained(factory, {"depth": 0} if factory == "lookahead_chunker" else {},
                  lambda v: conll2000(shared_data, v, "train", 100), 1)
    pipe = nlp.get_pipe(factory)
    pipe.cfg["n_threads"] = n_threads
    if floor is not None:
        monkeypatch.setattr(base, "MIN_DOCS_PER_THREAD", floor)  # (batches of batch_size)
    docs = [eg.reference for eg in conll2000(shared_data, nlp.vocab, "test", 60)]

    def inputs():
        out = []
        for i, doc in enumerate(docs):
            copy = doc.copy()
            if 10 <= i < 20 or 40 <= i < 50:  # the second and fifth batches have no tags
                copy = spacy.tokens.Doc(nlp.vocab, words=[t.text for t in doc])
            out.append(copy)
        return out

    with pytest.raises(ValueError, match="needs POS tags"):
        list(pipe.pipe(inputs(), batch_size=10))
    failed = []
    pipe.set_error_handler(lambda name, proc, batch, err: failed.append(len(batch)))
    out = list(pipe.pipe(inputs(), batch_size=10))
    # (more batches than the pipelining holds at once: PIPELINE_DEPTH)
    assert failed == [10, 10] and len(out) == 40
    assert [d.text for d in out] == [d.text for d in docs[:10] + docs[20:40] + docs[50:]]
    assert any(len(d.spans["chunks"]) for d in out)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_a_batch_holds_enough_docs_for_the_threads(shared_data, n_threads, monkeypatch):
    """With threads, pipe() takes at least MIN_DOCS_PER_THREAD docs a thread
    in a batch, whatever batch_size asks (each batch costs every thread a
    start and an end); one thread keeps batch_size. The outputs are one
    thread's either way."""
    nlp = trained("lookahead_chunker", {"depth": 0}, lambda v: conll2000(shared_data, v, "train", 100), 1)
    pipe = nlp.get_pipe("lookahead_chunker")
    docs = [eg.reference for eg in conll2000(shared_data, nlp.vocab, "test", 40)]
    monkeypatch.setattr(base, "MIN_DOCS_PER_THREAD", 8)
    sizes = []
    begin = pipe._begin
    monkeypatch.setattr(pipe, "_begin", lambda batch, *a: sizes.append(len(batch)) or begin(batch, *a))
    pipe.cfg["n_threads"] = n_threads
    out = [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=3)]
    if n_threads == 1:
        assert sizes == []  # (spaCy's pipe() over batches of batch_size)
    else:
        assert sizes[:-1] == [8 * n_threads] * (len(sizes) - 1) and sum(sizes) == 40
    pipe.cfg["n_threads"] = 1
    assert out == [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=3)]


@pytest.mark.parametrize("setting", ["chunker_beam", "parser_greedy"])
def test_docs_runs_on_c_threads_give_one_runs_outputs(shared_data, setting):
    """A batch decoded at once on the C threads (RunsStarted: n DocsRuns
    sharing one DocsOutput) gives the outputs of one run (here) for any
    number of runs; one left without results() is waited for when it goes,
    and the pool serves the next."""
    import gc

    from spacy_lookahead.core.threads import RunsStarted
    from spacy_lookahead.pipes.transition import on_c_threads

    factory, config, data = SETTINGS[setting]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    docs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 60)]

    def batch(n):
        pipe.cfg["n_threads"] = n
        layout, run, runs, _ = pipe._decoding(docs)
        assert run is on_c_threads and len(runs) == n
        return layout.output, runs

    output, runs = batch(1)
    assert RunsStarted(runs).results() == []
    one = output.planes.copy()
    assert one.any()
    for n in (2, 3, 5):
        output, runs = batch(n)
        started = RunsStarted(runs)
        assert started.results() == []
        assert (output.planes == one).all()
    output, runs = batch(2)
    started = RunsStarted(runs)
    del started
    gc.collect()
    assert (output.planes == one).all()  # (its threads were waited for)
    _, runs = batch(1)
    with pytest.raises(ValueError, match="a run given twice"):
        RunsStarted([runs[0], runs[0]])
    with pytest.raises(TypeError, match="takes CRuns"):
        RunsStarted([runs[0], None])
    # a run in flight is one thread's: not started again until waited for
    output, runs = batch(2)
    started = RunsStarted(runs)
    with pytest.raises(ValueError, match="already started"):
        RunsStarted(runs[:1])
    # the cycle collector never clears the runs of a RunsStarted (their
    # threads may still use them): it is not tracked, so a cycle holding it
    # keeps them until its own dealloc has waited
    assert not gc.is_tracked(started)
    holder = []
    holder.append((holder, started))
    del started, holder
    gc.collect()
    assert (output.planes == one).all()
    RunsStarted(runs).results()  # (waited for: free again)
    if hasattr(os, "fork"):  # runs in flight at a fork are the parent's
        output, runs = batch(2)
        started = RunsStarted(runs)
        pid = os.fork()
        if pid == 0:  # (the child: results() must refuse, not hang)
            try:
                started.results()
            except RuntimeError:
                os._exit(0)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        started.results()
        assert (output.planes == one).all()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_decodes_on_c_threads_of_its_own(shared_data):
    """pipe() on threads in a child forked after the parent's C threads ran
    (the parent's pool is not in the child): the child starts its own and
    gives the parent's outputs."""
    factory, config, data = SETTINGS["chunker_beam"]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    pipe.cfg["n_threads"] = 2
    docs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 60)]
    expected = [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=16)]
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 if it got the outputs (killed if it hangs)
        import signal
        signal.alarm(30)
        try:
            ok = [annotations(d) for d in pipe.pipe([d.copy() for d in docs],
                                                    batch_size=16)] == expected
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_ranges_by_cost_cut_equal_shares_of_the_work():
    """Contiguous, non-empty ranges covering every item once, as many as
    ranges_for cuts at most, each near an equal share of the total cost; one
    thread or one item: one range; no cost: ranges_for's cut."""
    from spacy_lookahead.core.batch import ranges_for
    from spacy_lookahead.core.threads import ranges_by_cost

    costs = [1] * 90 + [100] * 10  # ten long units at the end
    ranges = ranges_by_cost(costs, 2)
    assert ranges[0][0] == 0 and ranges[-1][1] == 100
    assert all(lo < hi for lo, hi in ranges)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert len(ranges) <= len(ranges_for(100, 2))
    shares = [sum(costs[lo:hi]) for lo, hi in ranges]
    assert max(shares) <= sum(costs) / 8 + 100  # an eighth each, give or take one item
    equal = [sum(costs[lo:hi]) for lo, hi in ranges_for(100, 2)]
    assert max(equal) > 2 * max(shares)  # what equal counts would have given
    assert ranges_by_cost(costs, 1) == [(0, 100)] and ranges_by_cost([5], 4) == [(0, 1)]
    assert ranges_by_cost([0, 0, 0], 2) == ranges_for(3, 2) and ranges_by_cost([], 3) == [(0, 0)]


def test_in_threads_inside_a_pool_thread_runs_inline():
    """A run that itself calls in_threads (on a pool of the same size) runs
    the inner call in its own thread: waiting on its own pool's threads,
    all busy with outer chunks, would never end."""
    import threading

    inner = lambda chunk: [x + 1 for x in chunk]  # noqa: E731

    def outer(chunk):
        return [sum(in_threads(inner, range(x), 2)) for x in chunk]

    done = []
    worker = threading.Thread(target=lambda: done.append(in_threads(outer, range(8), 2)),
                              daemon=True)
    worker.start()
    worker.join(20)
    assert done == [[sum(range(1, x + 1)) for x in range(8)]]


@pytest.mark.parametrize("setting", ["tagger_lookahead", "chunker_beam", "ner_rtl"])
def test_the_searching_threads_write_the_outputs(shared_data, setting, monkeypatch):
    """With threads, a batch decoded at once has its outputs written by the
    threads that search its docs (the layout's sink: token.tag, doc.ents,
    the spans of doc.spans["chunks"]), and pipe() calls no set_annotations;
    the annotations are one thread's (predict + set_annotations). Where
    set_annotations would write more than the sink does (preset entities
    the NER keeps), it writes them. Whitespace tokens (some inside a span,
    the chunker's tagged or not) are left out of the search (by the
    calling thread, or by the threads that look the words up) and written
    by the sink as set_annotations writes them (the space tag; outside
    every entity; inside a span only between two of its tokens), as is a
    doc of whitespace alone."""
    factory, config, data = SETTINGS[setting]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 120)]

    def fresh(doc):  # words (and the chunker's tags): nothing the component writes
        tags = [t.tag_ for t in doc] if factory == "lookahead_chunker" else None
        return spacy.tokens.Doc(nlp.vocab, words=[t.text for t in doc],
                                spaces=[bool(t.whitespace_) for t in doc], tags=tags)

    pipe.cfg["n_threads"] = 1
    one = [annotations(d) for d in pipe.pipe([fresh(d) for d in refs], batch_size=40)]
    assert any(any(part) for doc in one for part in doc[:4])
    calls = []  # (set_annotations' path: the predictions made on the calling thread)
    original = type(pipe)._predictions
    monkeypatch.setattr(type(pipe), "_predictions",
                        lambda self, *a: calls.append(1) or original(self, *a))
    pipe.cfg["n_threads"] = 2
    assert [annotations(d) for d in pipe.pipe([fresh(d) for d in refs], batch_size=40)] == one
    assert calls == []
    # a doc given empty, or of one token, in a batch the threads write
    small = [fresh(refs[0]), spacy.tokens.Doc(nlp.vocab, words=[]), fresh(refs[1][:1].as_doc())]
    pipe.cfg["n_threads"] = 1
    small_one = [annotations(d) for d in pipe.pipe([d.copy() for d in small])]
    assert calls  # (one thread: predict, then set_annotations)
    calls.clear()
    pipe.cfg["n_threads"] = 2
    assert [annotations(d) for d in pipe.pipe([d.copy() for d in small])] == small_one
    assert calls == []
    if factory == "lookahead_chunker":
        assert all(d.spans["chunks"].doc is d for d in pipe.pipe([d.copy() for d in small]))
    if factory == "lookahead_ner":  # preset entities (kept): set_annotations writes
        preset = [fresh(d) for d in refs[:40]]
        preset[3].set_ents([], default="outside")
        list(pipe.pipe(preset, batch_size=40))
        assert calls

    def spaced_at(k, doc):  # (anywhere: first, last, inside a span)
        return k % (len(doc) + 1)

    def spaced(k, doc):
        words, tags, at = [t.text for t in doc], [t.tag_ for t in doc], spaced_at(k, doc)
        return spacy.tokens.Doc(
            nlp.vocab, words=words[:at] + ["\n" if k % 2 else "  "] + words[at:],
            tags=(tags[:at] + ["" if k % 3 == 0 else "_SP"] + tags[at:]
                  if factory == "lookahead_chunker" else None))

    def spaced_stream():
        return [spaced(k, d) for k, d in enumerate(refs)] + [spacy.tokens.Doc(nlp.vocab,
                                                                              words=["\n"])]

    def with_iob(doc):
        return annotations(doc), [t.ent_iob_ for t in doc]

    pipe.cfg["n_threads"] = 1
    want = [with_iob(d) for d in pipe.pipe(spaced_stream(), batch_size=40)]
    inside = [k for k, ((got, _), doc) in enumerate(zip(want, refs))
              if any(s[0] < spaced_at(k, doc) < s[1]
                     for s in got[2] + got[3].get("chunks", ([], []))[0])]
    assert factory == "lookahead_tagger" or len(inside) >= 5  # (whitespace inside a span)
    pipe.cfg["n_threads"] = 2
    list(pipe.pipe(spaced_stream(), batch_size=40))  # (the new whitespace words cached)
    calls.clear()
    assert [with_iob(d) for d in pipe.pipe(spaced_stream(), batch_size=40)] == want
    assert calls == []  # (the doc of whitespace alone too: written by the sink)
    with monkeypatch.context() as patched:  # (the words read here: the sink told where)
        patched.setattr(type(pipe), "_looks_up_on_threads", lambda self, docs: False)
        calls.clear()
        assert [with_iob(d) for d in pipe.pipe(spaced_stream(), batch_size=40)] == want
        assert calls == []
    assert all(tags[spaced_at(k, doc)] == "_SP" for k, (((tags, *_), _), doc)
               in enumerate(zip(want, refs))) or factory != "lookahead_tagger"
    # a subclass that writes more in its own set_annotations gets no sink
    class Marking(type(pipe)):
        def set_annotations(self, docs, predictions):
            super().set_annotations(docs, predictions)
            for doc in docs:
                doc.user_data["marked"] = True

    pipe.__class__ = Marking
    marked = list(pipe.pipe([fresh(d) for d in refs], batch_size=40))
    assert all(d.user_data.get("marked") for d in marked)
    assert [annotations(d) for d in marked] == one


@pytest.mark.parametrize("setting", ["tagger_lookahead", "chunker_beam", "ner_rtl"])
def test_a_batch_that_fails_after_its_search_leaves_its_docs_as_they_were(
        shared_data, setting, monkeypatch):
    """The searching threads write each doc as soon as it is searched;
    where the batch fails after that (here: every run's results() raises
    once the threads are done), its docs are as they were (the sink's
    undo: tags restored, no entities, no chunk group) when they reach the
    error handler, also in the retry in batches of batch_size; docs with
    whitespace among them, and one of whitespace alone."""
    from spacy_lookahead.core import decode as decoding
    from spacy_lookahead.pipes import transition

    factory, config, data = SETTINGS[setting]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 100)]
    docs = [spacy.tokens.Doc(nlp.vocab, words=[t.text for t in doc][:1] + ["\n"] * (k % 4 == 0)
                             + [t.text for t in doc][1:],
                             tags=[t.tag_ if factory == "lookahead_chunker" else "XX"
                                   for t in doc[:1]] + ["XX"] * (k % 4 == 0)
                             + [t.tag_ if factory == "lookahead_chunker" else "XX"
                                for t in doc[1:]]) for k, doc in enumerate(refs)]
    docs[7] = spacy.tokens.Doc(nlp.vocab, words=["\n", " "], tags=["XX", "XX"])
    before = [annotations(d) for d in docs]
    real = transition.RunsStarted

    class Failing:
        def __init__(self, runs):
            self.started = real(runs)

        def results(self):
            self.started.results()  # (every doc searched and put)
            raise decoding.NoValidOutput("no valid output (a test's)")

    monkeypatch.setattr(transition, "RunsStarted", Failing)
    pipe.cfg["n_threads"] = 2
    failed = []
    pipe.set_error_handler(lambda name, proc, batch, err: failed.append(len(batch)))
    assert list(pipe.pipe(docs, batch_size=40)) == []
    assert sum(failed) == len(docs)
    assert [annotations(d) for d in docs] == before
    assert all(t.tag_ == "XX" for t in docs[0]) or factory == "lookahead_chunker"
    monkeypatch.setattr(transition, "RunsStarted", real)
    assert [annotations(d) for d in pipe.pipe(docs, batch_size=40)] != before  # (it writes)


@pytest.mark.parametrize("setting", ["fr_clause_finder", "fr_chunker"])
def test_phrase_units_read_deferred_rows_as_filled_ones(shared_data, setting, monkeypatch):
    """The phrase recognisers leave a batch's rows unfilled (docs_inputs'
    defer, the clause finder's chunk column set on them) and each unit's
    thread makes its words' rows (UnitsJob, DocRows.row): the phrases are
    those of the rows filled at once, at one thread and two."""
    factory, config, data = SETTINGS[setting]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 200), 1)
    pipe = nlp.get_pipe(factory)
    split = "test" if data != "clauses" else "dev"
    docs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, split, 100)]
    batch = pipe._batch
    deferred = []

    def spied(docs, examples=None, defer_rows=False):
        out = batch(docs, examples, defer_rows)
        deferred.append("rows" in out and not out["rows"].filled)
        return out

    monkeypatch.setattr(pipe, "_batch", spied)
    outputs = {}
    for n_threads in (1, 2):
        pipe.cfg["n_threads"] = n_threads
        outputs[n_threads] = [rows.tolist() for rows in pipe.predict(docs)]
    assert deferred == [True, True]
    monkeypatch.setattr(pipe, "_batch", lambda docs, examples=None, defer_rows=False:
                        spied(docs, examples, False))
    pipe.cfg["n_threads"] = 2
    filled = [rows.tolist() for rows in pipe.predict(docs)]
    assert deferred[-1] is False
    assert outputs[1] == outputs[2] == filled
    assert sum(map(len, filled)) > 20  # (it found phrases)
    # each doc's phrases are its own (UnitsJob.doc_result): as decoded alone
    assert [pipe.predict([docs[k]])[0].tolist() for k in range(0, 100, 7)] == filled[::7]


def test_unit_costs_are_the_candidate_phrases():
    """A unit of n words costs n x min(n, max_length) (0: no bound)."""
    from spacy_lookahead.systems.phrases import unit_costs

    starts = numpy.asarray([0, 3, 3, 10], dtype="int64")
    assert unit_costs(starts, 4).tolist() == [9.0, 0.0, 28.0]
    assert unit_costs(starts, 0).tolist() == [9.0, 0.0, 49.0]
    assert unit_costs(starts[:1], 4).tolist() == []


def test_a_pipe_stopped_early_leaves_the_docs_in_flight_as_they_were(shared_data, monkeypatch):
    """The caller stops iterating pipe() while later batches are searched
    (and written by their threads): those batches are waited for and their
    docs left as they were (_abandon: the sink's undo)."""
    factory, config, data = SETTINGS["tagger_lookahead"]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 120)]
    docs = [spacy.tokens.Doc(nlp.vocab, words=[t.text for t in doc], tags=["XX"] * len(doc))
            for doc in refs]
    monkeypatch.setattr(base, "MIN_DOCS_PER_THREAD", 5)
    pipe.cfg["n_threads"] = 2
    stream = pipe.pipe(docs, batch_size=10)
    first = next(stream)  # (the first batch written; the next two begun)
    stream.close()
    assert first is docs[0] and any(t.tag_ != "XX" for d in docs[:10] for t in d)
    assert all(t.tag_ == "XX" for d in docs[10:] for t in d)


@pytest.mark.parametrize("setting", ["tagger_lookahead", "ner_rtl", "chunker_beam"])
def test_the_searching_threads_look_the_words_up(shared_data, setting, monkeypatch):
    """A tagger, NER or chunker whose inputs are its words (the NER's with
    substrings, the chunker's with their tags) has them looked up by the
    threads that search each doc in pipe() (docs_inputs' lookup: no token
    read on the calling thread). A doc with a word not cached yet or (the
    NER) preset entities is left by its thread: one with new words is
    searched again by the same runs once they are cached, the others
    predicted again, before the batch is written; a whitespace token is
    left out of its doc's search. The outputs, and the
    warning on tags unseen in training, are one thread's: from an empty
    cache (every doc left), on a second pass (only the preset docs left),
    with empty docs, and with two pipe() calls at once on one component
    (one adding words to the cache while the other's threads read it)."""
    import warnings

    from spacy_lookahead.pipes.transition import DocsLayout

    factory, config, data = SETTINGS[setting]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 300)]
    spaced, preset = {5, 77, 150}, {9, 160}

    def fresh(k, doc):
        words, tags = [t.text for t in doc], [t.tag_ for t in doc]
        if k in spaced:
            words, tags = words[:2] + ["\n\n"] + words[2:], tags[:2] + ["_SP"] + tags[2:]
        if k == 30:
            tags[0] = "NEWTAG"
        out = spacy.tokens.Doc(nlp.vocab, words=words,
                               tags=tags if factory == "lookahead_chunker" else None)
        if k in preset and factory == "lookahead_ner":
            out.set_ents([], default="outside")  # (kept: no entity there)
        return out

    def stream():
        return [fresh(k, d) for k, d in enumerate(refs)] + [spacy.tokens.Doc(nlp.vocab, words=[])]

    def run_pipe():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = list(pipe.pipe(stream(), batch_size=40))
        return out, [str(w.message) for w in caught if "never seen" in str(w.message)]

    pipe.cfg["n_threads"] = 1
    out, warned = run_pipe()
    one = [annotations(d) for d in out]
    # (every batch looks up: when to pause is the next test's)
    monkeypatch.setattr(type(pipe), "_lookup_resumed", lambda self, docs: True)
    assert bool(warned) == (factory == "lookahead_chunker")
    left, new_words = [], []
    original, again = DocsLayout.returned, DocsLayout.search_again
    monkeypatch.setattr(DocsLayout, "returned", lambda self: left.extend(original(self)) or
                        original(self))
    monkeypatch.setattr(DocsLayout, "search_again", lambda self, *a: new_words.extend(
        self.rows.returned(new_words=True).tolist()) or again(self, *a))
    pipe._atoms.set_classes(pipe._atoms.classes)  # (the word cache emptied)
    pipe.cfg["n_threads"] = 2
    out, warned_here = run_pipe()
    assert [annotations(d) for d in out] == one and warned_here == warned
    assert len(new_words) >= len(refs) // 4  # (the first batches: every doc)
    assert len(left) <= len(preset)  # (the others searched again)
    left.clear(), new_words.clear()
    out, warned_here = run_pipe()
    assert [annotations(d) for d in out] == one and warned_here == warned
    assert len(left) == (len(preset) if factory == "lookahead_ner" else 0)
    assert new_words == []
    assert out[5][2].tag_ == "_SP" or factory != "lookahead_tagger"
    empty = [spacy.tokens.Doc(nlp.vocab, words=[]) for _ in range(90)]  # (batches without tokens)
    assert [len(d) for d in pipe.pipe(empty, batch_size=40)] == [0] * 90
    # two calls at once, from an empty cache: each call's outputs are one thread's
    import threading
    pipe._atoms.set_classes(pipe._atoms.classes)
    got = {}

    def run(name):
        got[name] = [annotations(d) for d in pipe.pipe(stream(), batch_size=40)]

    callers = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert got == {0: one, 1: one}


def test_the_look_up_on_the_threads_pauses_where_it_costs(shared_data, monkeypatch):
    """Where the threads that look the words up leave docs to predict or
    search again (here: a new word in every doc), the next LOOKUP_PAUSE
    batches look them up on the calling thread, then a batch tries again alone (a
    longer pause each time it fails again); the outputs are one thread's
    throughout, and the next pipe() call tries at once."""
    from spacy_lookahead.pipes import transition

    factory, config, data = SETTINGS["tagger_lookahead"]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 60)]
    docs = [spacy.tokens.Doc(nlp.vocab, words=[t.text for t in d][:1] + [f"novel{k}"] +
                             [t.text for t in d][1:]) for k, d in enumerate(refs * 60)]
    pipe.cfg["n_threads"] = 1
    one = [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=40)]
    pipe._atoms.set_classes(pipe._atoms.classes)  # (the word cache emptied)
    looked_up, made = [], []
    finish = transition.TransitionPipe._finish
    monkeypatch.setattr(transition.TransitionPipe, "_finish", lambda self, docs, begun: (
        looked_up.append(begun[0].rows is not None),
        made.append((begun[0].rows.n_new_words if begun[0].rows is not None else 0, len(docs))),
        finish(self, docs, begun))[2])
    monkeypatch.setattr(base, "LOOKUP_PAUSE", 4)
    pipe.cfg["n_threads"] = 2
    # a sample of each batch's docs says the threads would leave them all
    # (_left_share), so the threads make each batch's new words (at least
    # its novel ones, one a doc) where they would leave their docs: no doc
    # left, nothing cached here (_cache_words), no pause
    cached = []
    cache_words = type(pipe)._cache_words
    monkeypatch.setattr(type(pipe), "_cache_words", lambda self, some: (
        cached.append(len(some)), cache_words(self, some))[1])
    assert [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=40)] == one
    # (the first batch probes alone; then every batch looked up, making its new words)
    assert looked_up[0] and all(looked_up[3:]) and not cached
    assert all(n >= n_docs for (n, n_docs), used in zip(made, looked_up) if used)
    assert len(pipe._atoms) >= len(docs)  # (kept after each batch: every novel word)
    monkeypatch.setattr(type(pipe), "_cache_words", cache_words)
    looked_up.clear()
    # where the sample is wrong, the pause (here: the sample says none)
    sample = type(pipe)._left_share
    monkeypatch.setattr(type(pipe), "_left_share", lambda self, docs: 0.0)
    pipe._atoms.set_classes(pipe._atoms.classes)
    assert [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=40)] == one
    # the first batch probes alone; after it, and after each probe that
    # fails again, a pause (4, then 8, 16 batches)
    probes = [k for k, used in enumerate(looked_up) if used]
    assert probes[0] == 0 and len(probes) >= 3
    gaps = numpy.diff(probes).tolist()
    assert gaps[0] >= 5 and all(b - a >= 4 for a, b in zip(gaps, gaps[1:]))
    looked_up.clear()
    list(pipe.pipe([d.copy() for d in docs[:100]], batch_size=40))
    assert looked_up[0]
    monkeypatch.setattr(type(pipe), "_left_share", sample)


@pytest.mark.parametrize("setting", ["tagger_lookahead", "ner_rtl", "fr_chunker"])
def test_new_words_met_by_many_threads_at_once(shared_data, setting, monkeypatch):
    """A cold batch whose docs share their new words (docs_inputs' and
    unit_inputs' new_words): each is made by the first of 4 threads that
    meets it while the others wait for it (WordRows._made); the outputs
    are one thread's, and the words are kept in the cache after."""
    factory, config, data = SETTINGS[setting]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 200), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 40)]
    shared = [f"Shared{k}-word" for k in range(3)] + ["naïve"]  # (one not ASCII: made here)
    docs = [spacy.tokens.Doc(nlp.vocab, words=[shared[(k + j) % 4] for j in range(3)]
                             + [t.text for t in d], tags=None if data != "conll" else
                             ["NN"] * 3 + [t.tag_ for t in d]) for k, d in enumerate(refs * 8)]
    pipe.cfg["n_threads"] = 1
    one = [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=64)]
    asked, left = [], []
    resumed = type(pipe)._lookup_resumed
    monkeypatch.setattr(type(pipe), "_lookup_resumed", lambda self, some: (
        asked.append(resumed(self, some)), asked[-1])[1])
    if isinstance(pipe, PhrasePipe):  # (the docs its threads left, decoded again)
        phrases = PhrasePipe._phrases
        monkeypatch.setattr(PhrasePipe, "_phrases", lambda self, some, *rest: (
            rest[3] is not None and (rest[2].results(), left.append(len(rest[3][0].returned()))),
            phrases(self, some, *rest))[1])
    else:  # (the docs its threads left for new words, searched again)
        cache_words = type(pipe)._cache_words
        monkeypatch.setattr(type(pipe), "_cache_words", lambda self, some: (
            left.append(len(some)), cache_words(self, some))[1])
    for _ in range(3):  # (races differ from run to run)
        pipe._atoms.clear()
        pipe.cfg["n_threads"] = 4
        assert [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=64)] == one
        # (the first batch is cold: its threads make the new words, no doc is left for them)
        assert asked[0] == base.MAKES_WORDS and not any(left)
        assert len(pipe._atoms) >= len({t.orth for d in docs for t in d})
        asked.clear()


def test_fresh_text_in_mid_stream_is_sampled_again_not_paused(shared_data, monkeypatch):
    """Where an unsampled batch (LOOKS_UP_TRUSTED: the stream was warm)
    leaves many docs for new words (fresh text in mid-stream), the next
    batches are sampled again and their threads make the new words
    (MAKES_WORDS), with no pause (none looked up on the calling thread);
    the outputs are one thread's."""
    factory, config, data = SETTINGS["tagger_lookahead"]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 60)]
    warm = [spacy.tokens.Doc(nlp.vocab, words=[t.text for t in d]) for d in refs * 30]
    fresh = [spacy.tokens.Doc(nlp.vocab, words=[f"fresh{k}"] + [t.text for t in d])
             for k, d in enumerate(refs * 20)]
    pipe.cfg["n_threads"] = 1
    one = [annotations(d) for d in pipe.pipe([d.copy() for d in warm + fresh], batch_size=40)]
    asked = []
    resumed = type(pipe)._lookup_resumed
    monkeypatch.setattr(type(pipe), "_lookup_resumed", lambda self, some: (
        asked.append((resumed(self, some), len(some))), asked[-1][0])[1])
    pipe.cfg["n_threads"] = 2
    pipe._atoms.clear()  # (the fresh words new again: the warm docs' first batches make theirs)
    assert [annotations(d) for d in pipe.pipe([d.copy() for d in warm + fresh], batch_size=40)] == one
    kinds = [kind for kind, _ in asked]
    shift = next(k for k in range(len(asked)) if sum(n for _, n in asked[:k + 1]) > len(warm))
    assert base.LOOKS_UP_TRUSTED in kinds[:shift]  # (the warm stream: unsampled)
    after = kinds[shift:]
    made = after.index(base.MAKES_WORDS)  # (sampled again: the threads make the fresh words)
    assert made <= base.PIPELINE_DEPTH + 2 and 0 not in after  # (no pause)
    assert all(kind == base.MAKES_WORDS for kind in after[made:])


def test_a_probe_that_fails_does_not_stop_the_look_up(shared_data, monkeypatch):
    """The first batch of a pipe() call probes the look-up on the threads
    alone; where it fails (its error to the error handler), the probe is
    over all the same, and later batches look up again."""
    from spacy_lookahead.core import decode as decoding
    from spacy_lookahead.pipes import transition

    factory, config, data = SETTINGS["tagger_lookahead"]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 60)]
    docs = [spacy.tokens.Doc(nlp.vocab, words=[t.text for t in d]) for d in refs] * 60
    pipe.cfg["n_threads"] = 2
    list(pipe.pipe([d.copy() for d in docs[:200]]))  # (the words cached)
    real, calls = transition.RunsStarted, []

    class FailingFirst:
        def __init__(self, runs):
            self.started, self.first = real(runs), not calls
            calls.append(1)

        def results(self):
            out = self.started.results()
            if self.first:  # (the first batch's: the probe)
                raise decoding.NoValidOutput("no valid output (a test's)")
            return out

    looked_up = []
    finish = transition.TransitionPipe._finish
    monkeypatch.setattr(transition.TransitionPipe, "_finish", lambda self, docs, begun: (
        looked_up.append(begun[0].rows is not None), finish(self, docs, begun))[1])
    monkeypatch.setattr(transition, "RunsStarted", FailingFirst)
    failed = []
    pipe.set_error_handler(lambda name, proc, batch, err: failed.append(len(batch)))
    out = list(pipe.pipe([d.copy() for d in docs], batch_size=256))  # (one batch: no parts)
    assert failed == [256] and len(out) == len(docs) - 256
    assert looked_up[0] and sum(looked_up[3:]) >= len(looked_up[3:]) // 2  # (another probe, then all)


def test_a_first_batch_without_tokens_does_not_end_the_look_up(shared_data, monkeypatch):
    """A probe whose batch has no token looks nothing up (no rows for its
    _finish to end the probe with); the probe ends at once, and the
    later batches look up."""
    from spacy_lookahead.pipes import transition

    factory, config, data = SETTINGS["tagger_lookahead"]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 60)]
    docs = [spacy.tokens.Doc(nlp.vocab, words=[]) for _ in range(256)] + \
        [spacy.tokens.Doc(nlp.vocab, words=[t.text for t in d]) for d in refs] * 20
    pipe.cfg["n_threads"] = 1
    one = [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=256)]
    looked_up = []
    finish = transition.TransitionPipe._finish
    monkeypatch.setattr(transition.TransitionPipe, "_finish", lambda self, docs, begun: (
        looked_up.append(begun[0].rows is not None), finish(self, docs, begun))[1])
    pipe.cfg["n_threads"] = 2
    assert [annotations(d) for d in pipe.pipe([d.copy() for d in docs], batch_size=256)] == one
    assert not looked_up[0] and any(looked_up[1:])


def test_a_batch_that_fails_after_its_threads_counted_counts_nothing(shared_data, monkeypatch):
    """The chunker's threads count the unseen tags as they read; where the
    batch then fails (an untagged word: the doc predicted again here,
    which raises), its docs count nothing, as with one thread (a batch
    done again in parts would count them twice)."""
    factory, config, data = SETTINGS["chunker_beam"]
    nlp = trained(factory, config, lambda v: examples(shared_data, data, v, "train", 300), 1)
    pipe = nlp.get_pipe(factory)
    refs = [eg.reference for eg in examples(shared_data, data, nlp.vocab, "test", 40)]
    docs = [spacy.tokens.Doc(nlp.vocab, words=[t.text for t in d],
                             tags=["NEWTAG" if i == 0 else t.tag_ for i, t in enumerate(d)])
            for d in refs]
    pipe.cfg["n_threads"] = 2
    list(pipe.pipe([d.copy() for d in docs], batch_size=256))  # (the words cached)
    monkeypatch.setattr(type(pipe), "_lookup_resumed", lambda self, docs: True)
    failing_batch_counts_nothing(pipe, docs)
