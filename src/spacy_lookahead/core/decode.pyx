"""Prediction over any TransitionSystem: the best derivation of each
instance by greedy search, depth-D lookahead (Tsuruoka et al. 2011,
Figure 2) or beam search (Huang et al. 2012), and the n best derivations
with their scores (Sun et al.: exact A* for first-order systems, beam
n-best otherwise). Outputs are what `Instance.output` makes of the actions."""
import numpy

from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector
from cymem.cymem cimport Pool

from .atomics cimport la_load, la_store, la_take
from .beam cimport Beam, beam_for, padded_size
from .clock cimport add_since, now_ns
from .instance cimport Docs, DocSink, Instance
from .marginals cimport DocPass, LatticeThread
from .threads cimport CRun
from .search cimport Workspace, decode as lookahead_decode, workspace_for
from .topn cimport Chain, NBest, astar, beam_nbest, chain_from, run_astar
from .weights cimport Weights

SEARCHES = ("greedy", "lookahead", "beam")
# Lookahead decoding searches runs of docs in one nogil section; a run stops
# at this many tokens, so that only so many docs' arrays are alive at once.
RUN_TOKENS = 4096


class NoValidOutput(ValueError):
    """The system's constraints leave a doc no complete derivation."""


def _no_valid_output(int length, int steps):
    return NoValidOutput(
        f"no valid output for a doc of {length} words (whitespace tokens aside): after "
        f"{steps} actions no action is "
        "valid (constraints that contradict each other, e.g. preset annotation the label "
        "scheme cannot continue). Nothing was written: check the doc's preset annotation.")


cdef bint _complete(Instance inst, const int* actions, int k) except -1:
    """Whether the actions lead from the start to a final state."""
    cdef void* state = inst.start()
    cdef int i
    for i in range(k):
        inst.system.apply(state, actions[i])
    return inst.system.is_final(state)


def decode(instances, Weights W, str search="lookahead", int depth=0, int beam_width=1):
    """The best derivation of each instance, as its output. search: "greedy"
    (depth 0), "lookahead" (depth D) or "beam" (width beam_width). A doc
    whose derivation gets stuck before a final state raises NoValidOutput
    (a shorter output would be silently wrong). Greedy and lookahead search
    the instances in runs of equal state size, each run in one nogil
    section (threads decoding other parts of a batch run meanwhile)."""
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    cdef Instance inst
    cdef Beam beam = None
    cdef int[::1] act
    cdef int k
    cdef int64_t t0
    if search == "greedy":
        depth = 0
    outputs = []
    if search != "beam":
        run = []
        run_tokens = 0
        for inst in instances:  # taken as they come: a run's docs are alive at once
            if run and ((<Instance>run[0]).state_size != inst.state_size
                        or run_tokens + inst.length > RUN_TOKENS):
                outputs.extend(_lookahead_run(run, W, depth))
                run = []
                run_tokens = 0
            run.append(inst)
            run_tokens += inst.length
        if run:
            outputs.extend(_lookahead_run(run, W, depth))
        return outputs
    for inst in instances:
        actions = numpy.zeros((max(1, inst.max_steps),), dtype="int32")
        act = actions
        k = 0
        if inst.length:
            beam = beam_for(beam, inst.system, inst.state_size, beam_width)
            beam.reset(inst.start(), inst.max_steps)
            t0 = now_ns()
            with nogil:
                beam.search(W)
            add_since(t0)
            k = beam.path(beam.step, 0, &act[0])
            if not _complete(inst, &act[0], k):
                raise _no_valid_output(inst.length, k)
        outputs.append(inst.output(actions[:k]))
    return outputs


def _lookahead_run(list instances, Weights W, int depth):
    """Lookahead decoding of instances of one state size: their start states
    and action buffers made first, then every search in one nogil loop, then
    the outputs."""
    cdef int n = len(instances), i
    cdef Instance inst
    cdef Pool mem = Pool()
    cdef void** starts = <void**>mem.alloc(max(1, n), sizeof(void*))
    cdef int** acts = <int**>mem.alloc(max(1, n), sizeof(int*))
    cdef int* limits = <int*>mem.alloc(max(1, n), sizeof(int))
    cdef int* taken = <int*>mem.alloc(max(1, n), sizeof(int))
    cdef int64_t* offsets = <int64_t*>mem.alloc(n + 1, sizeof(int64_t))
    for i in range(n):  # one buffer for the run's actions
        offsets[i + 1] = offsets[i] + max(1, (<Instance>instances[i]).max_steps)
    buffer = numpy.zeros((max(1, offsets[n]),), dtype="int32")
    cdef int[::1] act = buffer
    for i in range(n):
        inst = instances[i]
        acts[i] = &act[offsets[i]]
        starts[i] = inst.start() if inst.length else NULL
        limits[i] = inst.max_steps
    cdef Workspace ws = Workspace((<Instance>instances[0]).system, depth,
                                  (<Instance>instances[0]).state_size) if n else None
    cdef int64_t t0 = now_ns()
    with nogil:
        for i in range(n):
            taken[i] = lookahead_decode(ws, W, starts[i], acts[i], limits[i]) \
                if starts[i] != NULL else 0
    add_since(t0)
    outputs = []
    for i in range(n):
        inst = instances[i]
        if starts[i] != NULL and not inst.system.is_final(starts[i]):
            raise _no_valid_output(inst.length, taken[i])
        outputs.append(inst.output(buffer[offsets[i]:offsets[i] + taken[i]]))
    return outputs


cdef class DocsOutput:
    """The outputs of a batch decoded at once (decode_docs), shared by the
    threads that decode it: Docs.width planes of one int32 array (width,
    N), doc i's (Docs.output: length(i) ints per plane) at offsets[i] of
    each; the next doc not yet taken, and whether a thread met a doc with
    no valid output (then the others stop). keep = n > 0 (beam search
    only): also the n best final items of each doc's beam, best first (the
    same beam, so the first is the best output), as nbest() gives them:
    item j's planes at kept[j, :, offsets[i]:offsets[i + 1]], its score at
    kept_scores[i, j], their number kept_n[i] (0 for a doc without words).
    retake(docs): a further pass takes those docs alone (ones its reader
    could not load the first time, now loadable)."""
    cdef object out
    cdef Docs docs  # the batch it was sized for (and kept alive by)
    cdef int64_t[::1] offsets
    cdef int64_t stride  # ints from one plane to the next
    cdef int most, n_docs, next_doc, stop
    cdef vector[int] order  # retake's docs (empty: every doc, in turn)
    cdef readonly int keep
    cdef object _kept, _kept_scores, _kept_n

    def __init__(self, Docs docs, int keep=0):
        if keep < 0:
            raise ValueError(f"keep must be >= 0, got {keep}")
        self.docs = docs
        self.n_docs = docs.n_docs
        offsets = numpy.zeros((docs.n_docs + 1,), dtype="int64")
        self.offsets = offsets
        cdef int i
        self.most = 1
        for i in range(docs.n_docs):
            self.offsets[i + 1] = self.offsets[i] + docs.length(i)
            self.most = max(self.most, docs.max_steps(i))
        self.stride = max(1, self.offsets[docs.n_docs])
        self.out = numpy.zeros((max(1, docs.width), self.stride), dtype="int32")
        self.keep = keep
        if keep:
            self._kept = numpy.zeros((keep, max(1, docs.width), self.stride), dtype="int32")
            self._kept_scores = numpy.zeros((docs.n_docs, keep), dtype="float64")
            self._kept_n = numpy.zeros((docs.n_docs,), dtype="int32")

    def retake(self, docs):
        """The next pass (decode_docs, or the same DocsRuns run again) takes
        these docs (their places in the batch) alone, in this order: those
        whose inputs were not ready the first time (Docs.load false: left
        untouched, so their outputs are still to write)."""
        cdef int i
        order = [int(i) for i in docs]
        if not order:  # (an empty order is every doc's)
            raise ValueError("DocsOutput.retake: no docs given: retake only the docs to do again")
        for i in order:
            if not 0 <= i < self.n_docs:
                raise IndexError(f"DocsOutput.retake: doc {i} of a batch of {self.n_docs}: give "
                                 "places in the batch (e.g. WordRows.returned()'s)")
        self.order = order
        self.next_doc = 0

    @property
    def labels(self):
        """Every doc's output, one after the other (the first plane)."""
        return self.out[0, :self.offsets[self.n_docs]]

    @property
    def planes(self):
        """Every plane of every doc's output, (width, N): plane p's doc i at
        offsets[i]:offsets[i + 1]."""
        return self.out[:, :self.offsets[self.n_docs]]

    @property
    def kept(self):
        """keep > 0: (n best items, (keep, width, N) int32, as `planes`;
        their scores (n_docs, keep); how many each doc has (n_docs,))."""
        if not self.keep:
            raise ValueError("this output keeps no n best (DocsOutput(docs, keep=n))")
        return (self._kept[:, :, :self.offsets[self.n_docs]], self._kept_scores, self._kept_n)


def decode_docs(Docs docs, Weights W, int depth, DocsOutput into, int beam_width=0,
                DocPass then=None, bint exact_topn=False, DocSink sink=None):
    """Greedy (depth 0), depth-D lookahead or (beam_width > 0) beam
    decoding of the docs of a batch, as decode() gives each, without a
    Python object per doc, into `into` (DocsOutput(docs)). Any number of
    threads may run it at once on the same `into`: each call takes the
    next doc not yet taken until none is left (the threads balance
    themselves, with one call, one nogil loop and one workspace or beam
    each), and the outputs do not depend on which thread took which doc.
    A DocsOutput serves one pass: once its docs are taken, a further call
    finds none left. A doc whose derivation gets stuck stops every call and
    raises NoValidOutput in the call that met it. then: a pass over the
    docs' lattices (marginals.DocPass, made for the same docs) done on each
    doc right after its search, by the same thread, with its best
    derivation. exact_topn (a first-order system, into's keep = n): the n
    best of each doc by A* (as nbest() with exact), the best written as its
    output. sink: where each doc's output is put (instance.DocSink, made
    for the same docs) right after its search and `then`, by the same
    thread (a doc without tokens to search is never put, nor one whose
    rows its reader could not fill: docs.load false, the doc left to the
    batch's maker, its output untouched). (One DocsRun,
    run here: threads.RunsStarted runs several on C threads.)"""
    cdef DocsRun run = DocsRun(docs, W, depth, into, beam_width, then, exact_topn, sink)
    with nogil:
        run.run()
    run.finish()


cdef class DocsRun(CRun):
    """One thread's share of decode_docs: made with the GIL (its scratch:
    a workspace, beam or A* chain, and a lattice for `then`), run() without
    it, from any thread (a C thread too: nothing in it touches Python),
    finish() with it (raises MemoryError where the A* search or the `then`
    pass found no memory, else NoValidOutput where a doc got stuck)."""
    cdef Docs docs
    cdef Weights W
    cdef DocsOutput into
    cdef DocPass then
    cdef DocSink sink
    cdef LatticeThread lattice
    cdef Workspace ws
    cdef Beam beam
    cdef Chain chain
    cdef NBest found
    cdef int keep, stuck, k
    cdef int no_memory  # the doc whose A* search ran out of memory, -1: none
    cdef size_t size
    cdef void* state
    cdef int* actions
    # into's arrays (C-contiguous): out (width, stride), kept (keep, width,
    # stride), kept scores (n_docs, keep), kept counts (n_docs,)
    cdef int* ov
    cdef int* kv
    cdef double* ks
    cdef int* kn
    cdef int64_t plane  # ints of one kept item (width * stride)
    cdef int64_t stride
    cdef const int64_t* offsets
    cdef int* counter  # into's next doc and stop flag
    cdef int* stop

    def __init__(self, Docs docs, Weights W, int depth, DocsOutput into, int beam_width=0,
                 DocPass then=None, bint exact_topn=False, DocSink sink=None):
        if into.docs is not docs:
            raise ValueError(f"the output was made for another batch ({into.n_docs} docs; this "
                             f"one has {docs.n_docs}): make a DocsOutput(docs) for each batch")
        if sink is not None and sink.n_docs != docs.n_docs:
            raise ValueError(f"the sink was made for another batch ({sink.n_docs} docs; this "
                             f"one has {docs.n_docs}): make one for each batch's docs")
        self.docs, self.W, self.into, self.then, self.sink = docs, W, into, then, sink
        self.keep = into.keep
        self.stuck = -1
        self.no_memory = -1
        self.k = 0
        cdef int[:, ::1] ov = into.out
        self.ov = &ov[0, 0]
        self.stride = into.stride
        self.offsets = &into.offsets[0]
        self.counter = &into.next_doc
        self.stop = &into.stop
        cdef int[:, :, ::1] kv
        cdef double[:, ::1] ks
        cdef int[::1] kn
        if then is not None:
            if then.docs is not docs:
                raise ValueError("the lattice pass was made for another batch")
            self.lattice = then.thread()
        if exact_topn:
            if not self.keep:
                raise ValueError("exact top-n search keeps the n best: DocsOutput(docs, keep=n)")
            self.chain = chain_from(Workspace(docs.system, 0, docs.state_size), NULL)
            self.found = NBest()
        elif self.keep and beam_width < self.keep:
            raise ValueError(f"the n best of a beam ({self.keep}) need a beam at least as wide "
                             f"(beam_width {beam_width})")
        if self.keep:
            kv, ks, kn = into._kept, into._kept_scores, into._kept_n
            self.kv, self.ks, self.kn = &kv[0, 0, 0], &ks[0, 0] if docs.n_docs else NULL, \
                (&kn[0] if docs.n_docs else NULL)
            self.plane = kv.shape[1] * kv.shape[2]
        if self.chain is None and beam_width > 0:
            self.beam = Beam(docs.system, beam_width, docs.state_size)
            self.beam.reserve(into.most)
        elif self.chain is None:
            self.ws = Workspace(docs.system, depth, docs.state_size)
        self.size = padded_size(docs.state_size)  # as Instance.start()'s states
        self.state = malloc(self.size)
        self.actions = <int*>malloc(into.most * sizeof(int))
        if self.state == NULL or self.actions == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.state)
        free(self.actions)

    cdef void run(self) noexcept nogil:
        """The docs not yet taken, one at a time, until none is left (or a
        thread met a doc with no valid output, or no memory for its A*
        search or its `then` pass)."""
        cdef int i, j, kj, n_kept, k = 0, n = self.docs.n_docs, keep = self.keep
        cdef const vector[int]* order = &self.into.order
        if order.size():
            n = <int>order.size()
        cdef int64_t stride = self.stride
        cdef const int64_t* offsets = self.offsets
        cdef int* counter = self.counter
        cdef int* stop = self.stop
        cdef void* state = self.state
        cdef int* actions = self.actions
        cdef size_t size = self.size
        cdef int64_t t0 = now_ns()
        while True:
            i = la_take(counter)
            if i >= n or la_load(stop):
                break
            if order.size():
                i = order[0][i]
            if not self.docs.length(i) or not self.docs.load(i):
                continue  # (nothing to search, or its inputs are its maker's to redo)
            memset(state, 0, size)
            self.docs.init_state(i, state)
            if self.chain is not None:  # A*: the best is the first of the n best
                if self.chain.walk_from(state) != 0 or astar(self.chain, self.W, keep,
                                                             self.found) != 0:
                    self.no_memory = i
                    la_store(stop, 1)
                    break
                k = self.found.lengths[0] if self.found.k else 0
                for j in range(k):
                    actions[j] = self.found.paths[j]
                    self.docs.system.apply(state, actions[j])
            elif self.beam is None:
                k = lookahead_decode(self.ws, self.W, state, actions, self.docs.max_steps(i))
            else:
                self.beam.restart(state)
                self.beam.search(self.W)
                # the best item's state is where its path leads (decode's _complete)
                if self.beam.size_at(self.beam.step) == 0:
                    k = 0
                    memset(state, 0, size)
                    self.docs.init_state(i, state)  # (not final: a doc with words)
                else:
                    k = self.beam.path(self.beam.step, 0, actions)
                    memcpy(state, self.beam.state(0), size)
            if not self.docs.system.is_final(state):
                self.stuck = i
                la_store(stop, 1)
                break
            self.docs.output(i, actions, k, &self.ov[offsets[i]], stride, state)
            if self.lattice is not None:
                self.then.doc(self.lattice, i, actions, k)
                # (a place in the batch, n_docs where none; finish raises it: the rest is lost)
                if la_load(&self.then.no_memory) < self.docs.n_docs:
                    la_store(stop, 1)
                    break
            if self.sink is not None:  # (its errors are its owner's to raise)
                self.sink.put(i, &self.ov[offsets[i]], stride, self.docs.length(i))
            if self.chain is not None:  # the n best, as nbest() gives them
                for j in range(self.found.k):
                    self.docs.output(i, &self.found.paths[j * self.found.T],
                                     self.found.lengths[j],
                                     &self.kv[j * self.plane + offsets[i]], stride, state)
                    self.ks[i * keep + j] = self.found.scores[j]
                self.kn[i] = self.found.k
            elif keep:  # the n best final items, as nbest() reads the beam's last row
                n_kept = min(keep, self.beam.size_at(self.beam.step))
                for j in range(n_kept):
                    kj = self.beam.path(self.beam.step, j, actions)
                    self.docs.output(i, actions, kj, &self.kv[j * self.plane + offsets[i]],
                                     stride, state)
                    self.ks[i * keep + j] = self.beam.score_at(self.beam.step, j)
                self.kn[i] = n_kept
        self.k = k
        add_since(t0)

    cdef list finish(self):
        if self.then is not None:
            self.then.raise_no_memory()
        if self.no_memory >= 0:
            raise MemoryError(f"no memory left for the top-n (A*) search of a doc of "
                              f"{self.docs.length(self.no_memory)} tokens: ask for fewer "
                              "outputs (n) or give it more memory")
        if self.stuck >= 0:
            raise _no_valid_output(self.docs.length(self.stuck), self.k)
        return []  # (the outputs are into's)


def nbest(instances, Weights W, int n, int beam_width=16, bint exact=True):
    """The n best derivations of each instance, best first: a list of
    (outputs, scores (k,)). Exact (A*) for first-order systems when `exact`;
    otherwise beam search of width max(n, beam_width). Where no derivation is
    valid (constraints that contradict each other), as decode():
    NoValidOutput."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    cdef Instance inst
    cdef Workspace ws = None
    cdef Beam beam = None
    cdef NBest out = NBest()
    cdef Chain chain
    cdef int64_t t0
    results = []
    for inst in instances:
        if exact and inst.system.first_order:
            ws = workspace_for(ws, inst.system, inst.state_size, 0)
            chain = chain_from(ws, inst.start())
            t0 = now_ns()
            run_astar(chain, W, n, out)
            add_since(t0)
        elif inst.length == 0:
            out.clear(0)
            out.k = 1
            out.lengths.push_back(0)
            out.scores.push_back(0.0)
        else:
            beam = beam_for(beam, inst.system, inst.state_size, max(n, beam_width))
            beam_nbest(beam, W, inst.start(), inst.max_steps, n, out)
        sequences, scores = out.sequences()
        if not sequences:
            raise _no_valid_output(inst.length, 0)
        results.append(([inst.output(seq) for seq in sequences], scores))
    return results
