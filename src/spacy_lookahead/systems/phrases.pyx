"""Filtering-ranking phrase recognition (Carreras, Marquez & Castro 2005) as
the engine sees it: the system (phrase_features: phi_w and phi_p;
phrase_decoders: R(x)) and its documents, which the FR-Perceptron
(core.fr_perceptron) learns from and which write their phrases back.

For each phrase type k: a start filter h_S^k and an end filter h_E^k over
word features phi_w, and a score function w^k over phrase features phi_p.
The candidates F(x) are the (s, e)_k whose start and end filters both fire
(w . phi_w > 0); the recogniser R(x) (eq. 1) returns the coherent subset of
candidates with the highest sum of scores:

* flat phrases (chunks: no overlap, no embedding): left-to-right Viterbi DP,
  phi_p sees the chunks of the partial solution to the left of s;
* embedded phrases (clauses: no overlap, embedding allowed, one phrase per
  span): bottom-up CKY DP, phi_p sees the top phrases inside (s, e).

All vectors live in one `Weights` table: for type k, class 3k is w_S^k,
3k+1 is w_E^k and 3k+2 is the score vector w^k.
"""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from libcpp.algorithm cimport stable_sort
from libcpp.vector cimport vector
from cymem.cymem cimport Pool

import numpy

from ..core.instance cimport DocRows
from ..core.instance import make_instances
from ..core.features cimport N_ATOMS
from ..core.fr_perceptron cimport PhraseInstance
from ..core.atomics cimport la_load, la_store, la_take
from ..core.clock cimport add_since, now_ns
from ..core.nothrow cimport la_push
from ..core.threads cimport CRun
from ..core.threads import RunsStarted
from ..core.weights cimport Weights, feat_t
from .phrase_decoders cimport (any_candidate, decode_embedded, decode_flat, flat_context_dp,
                               inner_tops_dp, solution_embedded, solution_flat)
from .phrase_doc cimport FS_CHUNK, MAX_WFEATS, N_EL, PhraseDocC, chart_cells
from .phrase_features cimport PhraseFeatures


cdef class PhraseSystem(PhraseFeatures):
    """The FR recogniser for `nr_type` phrase types, flat or embedded."""

    def __reduce__(self):
        return (PhraseSystem, (self.nr_type, self.embedded, self.feature_set_name, self.max_length))

    def instance(self, item, gold=None):
        """A doc: dict with "atoms" (n, N_ATOMS) and optionally "inside" (n,
        uint8: the word continues an input chunk); gold: (m, 3) phrases
        (start, end inclusive, type)."""
        return _PhraseDoc(self, item, gold)

    def instances(self, list inputs, golds=None):
        """Instances of a batch of docs, for the FR-Perceptron and R(x)."""
        return make_instances(self.instance, inputs, golds)

    # --- for tests: the features seen from Python ----------------------------
    def phi_w(self, item, int i):
        """phi_w of word i (filters not yet run: no left flags)."""
        return _PhraseDoc(self, item).phi_w(i)

    def phi_p(self, item, int s, int e, solution=()):
        """phi_p((s, e)) with the partial solution taken from `solution`
        ((start, end, type) rows)."""
        return _PhraseDoc(self, item).phi_p(s, e, solution)

    def flat_score(self, item, Weights W, int s, int e, solution=()):
        """The chunk score of (s, e) per type as decode_flat computes it, from
        per-word tables (it must equal W . phi_p)."""
        if self.feature_set != FS_CHUNK:
            raise ValueError("flat_score is for the chunk feature set")
        return _PhraseDoc(self, item).flat_score(W, s, e, solution)


cdef enum:
    N_TABLES = 20


cdef void table_sizes(PhraseSystem system, int n, size_t* sizes) noexcept nogil:
    """The bytes of each of a doc's N_TABLES tables (n words), in the order
    place_tables lays them out."""
    cdef int K = system.nr_type
    cdef int band = system.max_length if 0 < system.max_length < n else n
    # The chart: the band of spans up to max_length words (all of them
    # without a limit), O(n L); the flat DP needs n + 1 cells.
    cdef size_t cells = chart_cells(n, band) if system.embedded else n + 1
    cdef size_t m = max(n, 1)
    cells = max(cells, 1)
    sizes[0] = m * sizeof(int)
    sizes[1] = (n + 1) * N_EL * sizeof(int)
    sizes[2] = m * MAX_WFEATS * sizeof(feat_t)
    sizes[3] = m * sizeof(int)
    sizes[4] = m * K * sizeof(double)
    sizes[5] = m * K * sizeof(double)
    sizes[6] = m * sizeof(int)
    sizes[7] = system.max_phrase_feats(n) * sizeof(feat_t)
    sizes[8] = 3 * K * sizeof(double)
    sizes[9] = m * K * sizeof(double)
    sizes[10] = m * K * sizeof(double)
    sizes[11] = 3 * (n + 1) * K * sizeof(double)
    sizes[12] = cells * sizeof(double)
    sizes[13] = cells * sizeof(double)
    sizes[14] = cells * sizeof(int)
    sizes[15] = cells * sizeof(int)
    sizes[16] = cells
    sizes[17] = (m + 1) * sizeof(int)
    sizes[18] = 3 * (2 * m + 1) * sizeof(int)
    sizes[19] = 3 * (2 * m + 2) * sizeof(int) if system.embedded else (n + 1) * sizeof(int)


cdef size_t table_bytes(PhraseSystem system, int n) noexcept nogil:
    """The bytes of one block for every table of a doc of n words (each
    table 8-byte aligned): one allocation, where a Pool's costs a Python
    dict entry."""
    cdef size_t sizes[N_TABLES]
    cdef size_t total = 0
    cdef int i
    table_sizes(system, n, sizes)
    for i in range(N_TABLES):
        total += (sizes[i] + 7) // 8 * 8
    return total


cdef void place_tables(PhraseSystem system, PhraseDocC* c, char* block, int** starts,
                       int** out, int** stack) noexcept nogil:
    """Point the doc's tables (c.n words) into `block` (table_bytes, zeroed)."""
    cdef size_t sizes[N_TABLES]
    cdef void* at[N_TABLES]
    cdef int i
    table_sizes(system, c.n, sizes)
    for i in range(N_TABLES):
        at[i] = block
        block += (sizes[i] + 7) // 8 * 8
    c.elem = <int*>at[0]
    c.prefix = <int*>at[1]
    c.wfeats = <feat_t*>at[2]
    c.n_wf = <int*>at[3]
    c.hs = <double*>at[4]
    c.he = <double*>at[5]
    c.tops = <int*>at[6]
    c.pfeats = <feat_t*>at[7]
    c.scores = <double*>at[8]
    c.at_start = <double*>at[9]
    c.at_end = <double*>at[10]
    c.bag = <double*>at[11]
    c.best = <double*>at[12]
    c.top = <double*>at[13]
    c.choice = <int*>at[14]
    c.top_type = <int*>at[15]
    c.best_is_top = <unsigned char*>at[16]
    starts[0] = <int*>at[17]
    out[0] = <int*>at[18]
    stack[0] = NULL
    c.last_chunk = NULL
    if system.embedded:
        stack[0] = <int*>at[19]
    else:
        c.last_chunk = <int*>at[19]


cdef class _PhraseDoc(PhraseInstance):
    """The C arrays of one document (PhraseDocC), its filters' scores and
    DP tables after recognise()."""
    cdef PhraseDocC c
    cdef PhraseSystem system
    cdef Pool mem
    cdef object atoms, inside
    cdef int* starts
    cdef int* out
    cdef int* stack
    cdef char* block    # every table of the doc, one calloc (freed with it)
    cdef bint prepared  # the per-word tables (system.prepare): made by the first
                        # recognise() without the GIL, or by the first test view

    def __init__(self, PhraseSystem system, item, gold=None):
        self.system = system
        self.mem = Pool()
        self.atoms = numpy.ascontiguousarray(item["atoms"], dtype="uint64")
        cdef int n = self.atoms.shape[0]
        if n and (self.atoms.ndim != 2 or self.atoms.shape[1] != N_ATOMS):
            raise ValueError(f"expected ({n}, {N_ATOMS}) word atoms, got {self.atoms.shape}")
        cdef int K = system.nr_type
        PhraseInstance.__init__(self, n, K, gold, system.max_length)
        cdef uint64_t[:, ::1] av
        cdef unsigned char[::1] iv
        memset(&self.c, 0, sizeof(PhraseDocC))
        self.c.n = n
        self.c.K = K
        if n:
            av = self.atoms
            self.c.atoms = &av[0, 0]
        if item.get("inside") is not None and n:
            self.inside = numpy.ascontiguousarray(item["inside"], dtype="uint8")
            if self.inside.shape != (n,):
                raise ValueError(f"'inside' has shape {self.inside.shape} for {n} tokens")
            iv = self.inside
            self.c.inside = &iv[0]
        self.c.band = system.max_length if 0 < system.max_length < n else n
        cdef size_t total = table_bytes(system, n)
        # zeroed without the GIL: fresh memory's page faults and zeroing are
        # most of a short doc's set-up, and other threads may decode meanwhile
        cdef int64_t t0 = now_ns()
        with nogil:
            self.block = <char*>calloc(total, 1)
        add_since(t0)
        if self.block == NULL:
            raise MemoryError(f"{total} bytes for a doc of {n} words")
        place_tables(system, &self.c, self.block, &self.starts, &self.out, &self.stack)
        self.prepared = False

    def __dealloc__(self):
        free(self.block)

    cdef void prepare(self) noexcept nogil:
        if not self.prepared:
            self.system.prepare(&self.c)
            self.prepared = True

    # --- the recogniser ------------------------------------------------------
    cdef int recognise(self, Weights W) except -1:
        cdef int64_t t0 = now_ns()
        with nogil:
            self.prepare()
            self.system.run_filters(&self.c, W)
            if self.system.embedded:
                decode_embedded(self.system, &self.c, W, self.starts)
            else:
                decode_flat(self.system, &self.c, W)
        add_since(t0)
        self.n_candidates = self.c.n_candidates
        return 0

    def solution(self):
        """The phrases of the last recognise(), sorted by start, then by
        decreasing end: (m, 3) int32 (start, end inclusive, type)."""
        cdef int m, i
        if self.c.n == 0:
            return numpy.zeros((0, 3), dtype="int32")
        if self.system.embedded:
            m = solution_embedded(self.system, &self.c, self.out, self.stack)
        else:
            m = solution_flat(self.system, &self.c, self.out)
        arr = numpy.zeros((m, 3), dtype="int32")
        cdef int[:, ::1] view = arr
        for i in range(m):
            view[i, 0] = self.out[3 * i]
            view[i, 1] = self.out[3 * i + 1]
            view[i, 2] = self.out[3 * i + 2]
        return arr[numpy.lexsort((-arr[:, 1], arr[:, 0]))] if m else arr

    def output(self, Weights W):
        """R(x) with W: the phrases (m, 3) int32."""
        if self.c.n:
            self.recognise(W)
        return self.solution()

    def fired(self, bint start):
        """(n, K) booleans: where the start (end) filter fired."""
        cdef int n = self.c.n, K = self.c.K
        if n == 0:
            return numpy.zeros((0, K), dtype="bool")
        return (numpy.asarray(<double[:n * K]>(self.c.hs if start else self.c.he)) > 0).reshape((n, K))

    # --- what the FR-Perceptron reads -----------------------------------------
    cdef double start_score(self, int i, int k) noexcept nogil:
        return self.c.hs[i * self.c.K + k]

    cdef double end_score(self, int i, int k) noexcept nogil:
        return self.c.he[i * self.c.K + k]

    cdef bint can_start(self, int i) noexcept nogil:
        return self.system.can_start(&self.c, i)

    cdef bint can_end(self, int i) noexcept nogil:
        return self.system.can_end(&self.c, i)

    cdef bint may_be_candidate(self, int s, int e) noexcept nogil:
        return any_candidate(self.system, &self.c, s, e)

    cdef int word_features(self, int i, const feat_t** out) noexcept nogil:
        out[0] = &self.c.wfeats[i * MAX_WFEATS]
        return self.c.n_wf[i]

    cdef int phrase_features_in(self, int s, int e, int[:, ::1] solution, int m,
                                const feat_t** out) except -1:
        self.context_from_solution(s, e, solution, m)
        cdef int nf = self.system.phrase_features(self.c.pfeats, &self.c, s, e)
        if self.system.embedded:
            self.clear_tops(s, e)
        out[0] = self.c.pfeats
        return nf

    cdef int candidate_features(self, int s, int e, const feat_t** out) except -1:
        cdef PhraseDocC* d = &self.c
        cdef int nf, ntops, j
        if self.system.embedded:
            ntops = inner_tops_dp(self.system, d, s, e, self.starts)
            nf = self.system.phrase_features(d.pfeats, d, s, e)
            for j in range(ntops):
                d.tops[self.starts[j]] = -1
        else:
            flat_context_dp(self.system, d, s)
            nf = self.system.phrase_features(d.pfeats, d, s, e)
        out[0] = d.pfeats
        return nf

    cdef void context_from_solution(self, int s, int e, int[:, ::1] sol, int m) noexcept:
        """Set the partial-solution context of (s, e) from a solution y
        (sorted by start, then by decreasing end): the chunks left of s
        (flat), or the top phrases of y strictly inside (s, e) (embedded)."""
        cdef PhraseDocC* d = &self.c
        cdef int j, cur = s - 1, ps, pe
        if not self.system.embedded:
            d.left_n = 0
            for j in range(m - 1, -1, -1):
                if sol[j, 1] < s and d.left_n < 3:
                    d.left_type[d.left_n] = sol[j, 2]
                    d.left_gap[d.left_n] = s - sol[j, 1] - 1
                    d.left_n += 1
            return
        for j in range(m):
            ps = sol[j, 0]
            pe = sol[j, 1]
            if ps < s or pe > e or (ps == s and pe == e) or ps <= cur:
                continue
            d.tops[ps] = pe
            cur = pe

    cdef void clear_tops(self, int s, int e) noexcept:
        cdef int i
        for i in range(s, e + 1):
            self.c.tops[i] = -1

    # --- for tests ---------------------------------------------------------------
    def phi_w(self, int i):
        self.prepare()
        cdef int nf = self.system.word_features(self.c.wfeats, &self.c, i)
        return numpy.asarray(<feat_t[:nf]>self.c.wfeats).copy() if nf else numpy.zeros((0,), dtype="uint64")

    def phi_p(self, int s, int e, solution):
        self.prepare()
        sol = numpy.asarray(solution, dtype="int32").reshape((-1, 3))
        sol = numpy.ascontiguousarray(sol[numpy.lexsort((-sol[:, 1], sol[:, 0]))]) if sol.shape[0] \
            else numpy.zeros((1, 3), dtype="int32")
        cdef const feat_t* f
        cdef int nf = self.phrase_features_in(s, e, sol, len(solution), &f)
        return numpy.asarray(<feat_t[:nf]>self.c.pfeats).copy()

    def flat_score(self, Weights W, int s, int e, solution):
        self.prepare()
        sol = numpy.asarray(solution, dtype="int32").reshape((-1, 3))
        sol = numpy.ascontiguousarray(sol) if sol.shape[0] else numpy.zeros((1, 3), dtype="int32")
        self.context_from_solution(s, e, sol, len(solution))
        self.system.chunk_tables(&self.c, W)
        cdef int nf = self.system.chunk_joint_feats(self.c.pfeats, &self.c, s, e)
        memset(self.c.scores, 0, 3 * self.c.K * sizeof(double))
        W.dot(self.c.scores, self.c.pfeats, nf)
        return [self.c.scores[3 * k + 2] + self.system.chunk_static_score(&self.c, s, e, k)
                for k in range(self.c.K)]


cdef struct Row:
    int start, end, type


cdef bint _row_before(const Row& a, const Row& b) noexcept nogil:
    """solution()'s order: by start, then by decreasing end."""
    return a.start < b.start or (a.start == b.start and a.end > b.end)


def recognise_units(PhraseSystem system, Weights W, atoms, inside, words, unit_starts, unit_base,
                    int lo, int hi):
    """R(x) of units lo..hi - 1 of a batch, without an instance per unit:
    one workspace (every table of a unit in one block, as a _PhraseDoc's,
    grown to the longest unit and zeroed for each) serves them all, in one
    nogil loop. atoms (N, N_ATOMS) uint64 and inside (N,) uint8 or None:
    the batch's tokens; unit u decodes the words at batch positions
    words[unit_starts[u]:unit_starts[u + 1]] (int64) of the doc whose
    tokens begin at unit_base[u]. Returns the phrases (m, 3) int32 (start,
    end inclusive in doc positions, type), unit after unit in solution()'s
    order, and each unit's count, (hi - lo,) int32. (UnitsJob: the same on
    several threads.)"""
    job = UnitsJob(system, W, atoms, inside, words, unit_starts, unit_base, [(lo, hi)])
    RunsStarted(job.runs(1)).results()
    return job.result()


def unit_costs(unit_starts, int max_length):
    """Each unit's work (float64), for cutting a batch's units among
    threads (core.threads.ranges_by_cost): its candidate phrases, n x
    min(n, max_length) for a unit of n words (max_length 0: no bound)."""
    cdef const int64_t[::1] us = numpy.ascontiguousarray(unit_starts, dtype="int64")
    cdef Py_ssize_t n_units = max(0, us.shape[0] - 1), u
    costs = numpy.empty((n_units,), dtype="float64")
    cdef double[::1] cv = costs
    cdef int64_t n
    for u in range(n_units):
        n = us[u + 1] - us[u]
        cv[u] = <double>n * <double>(min(n, max_length) if max_length > 0 else n)
    return costs


cdef struct UnitScratch:
    # one thread's tables for its units, grown as needed
    char* block
    size_t capacity
    uint64_t* unit_atoms
    unsigned char* unit_inside
    int capacity_words


cdef class UnitsJob:
    """recognise_units of a batch's units over contiguous ranges of them
    ([(lo, hi), ...], each starting where the one before ends), shared by
    the threads of its UnitsRuns: each takes the next range not yet taken;
    a range's phrases are kept apart and joined in the units' order, so
    the result does not depend on which thread took which range. rows: the
    atoms' rows left unfilled (a DocRows, docs_inputs' defer): each unit's
    are made from it (DocRows.row) by the thread that decodes the unit,
    where it copies them anyway. `over_docs`: ranges of docs instead,
    whose units each thread finds as it fills them."""
    cdef PhraseSystem system
    cdef Weights W
    cdef DocRows rows  # None: the atoms are filled
    cdef const uint64_t[:, ::1] av
    cdef const unsigned char[::1] iv
    cdef const int64_t[::1] wv
    cdef const int64_t[::1] us
    cdef const int64_t[::1] ub
    cdef const int64_t[::1] ds      # over_docs: where each doc's tokens begin
    cdef bint by_doc                # over_docs
    cdef bint has_inside
    cdef vector[int] bounds        # range r: units (docs) bounds[r] .. bounds[r + 1] - 1
    cdef vector[vector[Row]] found  # range r's phrases (one writer each)
    cdef vector[int64_t] longest    # over_docs: range r's most words in a unit without boundaries
    cdef object counts              # (units,) int32: each unit's (doc's) number of phrases
    cdef int* cv
    cdef int next_range
    cdef int bad, no_memory, failed_n

    def __init__(self, PhraseSystem system, Weights W, atoms, inside, words, unit_starts,
                 unit_base, ranges, DocRows rows=None):
        cdef Py_ssize_t lo, hi
        self.system, self.W = system, W
        self.av = atoms
        if rows is not None and not rows.filled:
            self.rows = rows
        if inside is not None:
            self.iv = inside
        self.has_inside = inside is not None
        self.wv = words
        self.us = unit_starts
        self.ub = unit_base
        ranges = [(int(a), int(b)) for a, b in ranges]
        if self.av.shape[1] != N_ATOMS or (self.has_inside and self.iv.shape[0] != self.av.shape[0]) \
                or self.ub.shape[0] < self.us.shape[0] - 1:
            raise ValueError(f"expected ({self.av.shape[0]}, {N_ATOMS}) atoms and as many inside flags")
        self._set_ranges(ranges, self.us.shape[0] - 1, "units")
        lo, hi = ranges[0][0], ranges[len(ranges) - 1][1]
        if hi > lo and (self.us[lo] < 0 or self.us[hi] > self.wv.shape[0]):
            raise ValueError("unit_starts out of range for the words")

    @staticmethod
    def over_docs(PhraseSystem system, Weights W, atoms, inside, starts, DocRows rows, ranges):
        """The job over ranges of a batch's docs (their tokens one after the
        other from `starts`, (n_docs + 1,) int64), their rows left to
        `rows`, whose fill(d), on the thread that decodes doc d, makes its
        atoms (and its inside flags) and whose units_of(d) gives its units
        (spacy_io.LexemeAtoms.unit_inputs); a doc that fill() leaves gets
        no phrase (its caller does it again: rows' returned()). Results by
        doc (doc_result(None, n_docs)); `longest()`: the most words of a
        doc decoded as one unit without boundaries."""
        if not rows.knows_units:
            raise ValueError("UnitsJob.over_docs: these rows do not find each doc's units: "
                             "make them with spacy_io.LexemeAtoms.unit_inputs")
        cdef UnitsJob job = UnitsJob.__new__(UnitsJob)
        job.system, job.W, job.rows, job.by_doc = system, W, rows, True
        job.av = atoms
        job.ds = numpy.ascontiguousarray(starts, dtype="int64")
        if inside is not None:
            job.iv = inside
        job.has_inside = inside is not None
        if job.av.shape[1] != N_ATOMS or (job.has_inside and job.iv.shape[0] != job.av.shape[0]) \
                or job.ds.shape[0] != rows.n_docs + 1 or job.ds[rows.n_docs] != job.av.shape[0]:
            raise ValueError(f"UnitsJob.over_docs: atoms {tuple(atoms.shape)} and starts "
                             f"{tuple(job.ds.shape)} do not match the rows' {rows.n_docs} docs "
                             f"(give (N, {N_ATOMS}) atoms, as many inside flags, and "
                             f"{rows.n_docs} + 1 starts ending at N)")
        job._set_ranges([(int(a), int(b)) for a, b in ranges], rows.n_docs, "docs")
        job.longest.resize(job.found.size())
        return job

    cdef _set_ranges(self, list ranges, Py_ssize_t n, str what):
        cdef int k
        cdef Py_ssize_t lo, hi
        if not ranges:
            raise ValueError(f"no range of {what}: give at least one (lo, hi), e.g. [(0, 0)] "
                             f"for a batch without {what}")
        lo, hi = ranges[0][0], ranges[len(ranges) - 1][1]
        if not 0 <= lo <= hi <= n or any(
                a[0] > a[1] or a[1] != b[0] for a, b in zip(ranges, ranges[1:])) \
                or ranges[len(ranges) - 1][0] > hi:
            raise ValueError(f"{what} {ranges} out of range for {n} {what}, or not contiguous: give "
                             f"(lo, hi) pairs each starting where the one before ends, within "
                             f"0..{n} (core.threads.ranges_by_cost makes them)")
        for k in range(len(ranges)):
            self.bounds.push_back(ranges[k][0])
        self.bounds.push_back(hi)
        self.found.resize(len(ranges))
        self.counts = numpy.zeros((hi - lo,), dtype="int32")
        cdef int[::1] cv = self.counts
        self.cv = &cv[0] if hi > lo else NULL

    def runs(self, int threads) -> list:
        """UnitsRuns for `threads` threads (never more than the ranges)."""
        return [UnitsRun(self) for _ in range(max(1, min(threads, <int>self.found.size())))]

    cdef void ranges(self) noexcept nogil:
        """One thread's share: the ranges not yet taken, in turn; the
        unit tables in one block of this thread's, grown as needed."""
        cdef UnitScratch scratch
        memset(&scratch, 0, sizeof(UnitScratch))
        cdef vector[int64_t] words, unit_starts
        cdef int u, r, m, total, R = <int>self.found.size()
        cdef size_t k
        cdef int base = self.bounds[0]
        cdef int64_t n_words
        cdef bint from_rows = self.rows is not None and not self.by_doc
        cdef int64_t t0 = now_ns()
        while True:
            r = la_take(&self.next_range)
            if r >= R or la_load(&self.bad) or la_load(&self.no_memory):
                break
            m = 0
            if not self.by_doc:
                for u in range(self.bounds[r], self.bounds[r + 1]):
                    if self.us[u + 1] - self.us[u] <= 0:
                        continue
                    m = self._decode(&scratch, &self.wv[self.us[u]], <int>(self.us[u + 1] - self.us[u]),
                                     self.ub[u], &self.found[r], from_rows)
                    if m < 0:
                        break
                    self.cv[u - base] = m
            else:
                for u in range(self.bounds[r], self.bounds[r + 1]):  # (docs)
                    if not self.rows.fill(u):
                        continue
                    words.clear()
                    unit_starts.clear()
                    n_words = -1
                    if la_push(unit_starts, <int64_t>0) == 0:
                        n_words = self.rows.units_of(u, &words, &unit_starts)
                    if n_words < 0:
                        self.failed_n = <int>(self.ds[u + 1] - self.ds[u])
                        m = -2
                        break
                    if n_words > self.longest[r]:
                        self.longest[r] = n_words
                    total = 0
                    for k in range(unit_starts.size() - 1):
                        m = self._decode(&scratch, &words[unit_starts[k]],
                                         <int>(unit_starts[k + 1] - unit_starts[k]), self.ds[u],
                                         &self.found[r], False)
                        if m < 0:
                            break
                        total += m
                    if m < 0:
                        break
                    self.cv[u - base] = total
            if m == -1:
                la_store(&self.bad, 1)
                break
            if m == -2:
                la_store(&self.no_memory, 1)
                break
        free(scratch.block)
        free(scratch.unit_atoms)
        free(scratch.unit_inside)
        add_since(t0)

    cdef int _decode(self, UnitScratch* s, const int64_t* wv, int n, int64_t ub,
                     vector[Row]* rows, bint from_rows) noexcept nogil:
        """One unit, the words at batch positions wv[0 .. n - 1] of the doc
        whose tokens begin at `ub`: its phrases appended to `rows` (doc
        positions, sorted); their number, -1 where a word lies outside the
        doc or the batch, -2 where memory ran out (failed_n set)."""
        cdef PhraseDocC c
        cdef int* starts
        cdef int* out
        cdef int* stack
        cdef size_t total
        cdef int i, j, m
        cdef int64_t w, N = self.av.shape[0]
        cdef Row row
        for i in range(n):
            if wv[i] < ub or wv[i] >= N:
                return -1
        if n > s.capacity_words:
            free(s.unit_atoms)
            free(s.unit_inside)
            s.capacity_words = n
            s.unit_atoms = <uint64_t*>malloc(n * N_ATOMS * sizeof(uint64_t))
            s.unit_inside = <unsigned char*>malloc(n)
        total = table_bytes(self.system, n)
        if total > s.capacity:
            free(s.block)
            s.capacity = total
            s.block = <char*>malloc(s.capacity)
        if s.block == NULL or s.unit_atoms == NULL or s.unit_inside == NULL:
            self.failed_n = n
            return -2
        memset(s.block, 0, total)
        memset(&c, 0, sizeof(PhraseDocC))
        c.n = n
        c.K = self.system.nr_type
        for i in range(n):
            w = wv[i]
            if from_rows:
                self.rows.row(w, &s.unit_atoms[i * N_ATOMS])
            else:
                memcpy(&s.unit_atoms[i * N_ATOMS], &self.av[w, 0], N_ATOMS * sizeof(uint64_t))
            if self.has_inside:
                s.unit_inside[i] = self.iv[w]
        c.atoms = s.unit_atoms
        c.inside = s.unit_inside if self.has_inside else NULL
        c.band = self.system.max_length if 0 < self.system.max_length < n else n
        place_tables(self.system, &c, s.block, &starts, &out, &stack)
        self.system.prepare(&c)
        self.system.run_filters(&c, self.W)
        if self.system.embedded:
            decode_embedded(self.system, &c, self.W, starts)
            m = solution_embedded(self.system, &c, out, stack)
        else:
            decode_flat(self.system, &c, self.W)
            m = solution_flat(self.system, &c, out)
        j = rows.size()
        for i in range(m):
            row.start = <int>(wv[out[3 * i]] - ub)
            row.end = <int>(wv[out[3 * i + 1]] - ub)
            row.type = out[3 * i + 2]
            if la_push(rows[0], row) != 0:
                self.failed_n = n
                return -2
        stable_sort(rows.begin() + j, rows.end(), _row_before)  # (in place where no buffer)
        return m

    def longest_unit(self) -> int:
        """over_docs, after the runs: the most words of a doc decoded as
        one unit without sentence boundaries (0: none)."""
        cdef int64_t most = 0
        cdef size_t r
        for r in range(self.longest.size()):
            most = max(most, self.longest[r])
        return most

    def check(self):
        """Raise where a thread met a unit it could not decode."""
        if self.no_memory:
            raise MemoryError(f"no memory for a unit of {self.failed_n} words")
        if self.bad:
            raise ValueError("a unit's words (the `words` positions of unit_starts) lie outside "
                             "its doc or the batch's atoms: build them with spacy_io.sentence_units")
        return self

    def doc_result(self, unit_doc, int n_docs) -> tuple:
        """(the phrases (m, 3) int32, where each doc's begin (n_docs + 1,)
        int64): result()'s rows by doc, the units' docs `unit_doc` (one per
        unit, rising: spacy_io.sentence_units'; None over_docs); in C."""
        rows, counts = self.result()
        if self.by_doc:
            if n_docs != len(counts):
                raise ValueError(f"doc_result: {n_docs} docs for a job over {len(counts)}: give "
                                 "the number of docs the job was made over")
            offsets = numpy.zeros((n_docs + 1,), dtype="int64")
            numpy.cumsum(counts, out=offsets[1:])
            return rows, offsets
        cdef const int64_t[::1] ud = numpy.ascontiguousarray(unit_doc, dtype="int64")
        cdef const int[::1] cv = counts
        if ud.shape[0] != cv.shape[0]:
            raise ValueError(f"doc_result: {ud.shape[0]} units' docs for {cv.shape[0]} units: "
                             "give sentence_units' unit_doc of this job's units")
        offsets = numpy.empty((n_docs + 1,), dtype="int64")
        cdef int64_t[::1] ov = offsets
        cdef int64_t total = 0
        cdef Py_ssize_t u = 0, k
        for k in range(n_docs + 1):
            while u < ud.shape[0] and ud[u] < k:
                total += cv[u]
                u += 1
            ov[k] = total
        return rows, offsets

    def result(self) -> tuple:
        """(the phrases (m, 3) int32, each unit's count): recognise_units'."""
        self.check()
        cdef size_t total = 0, at = 0, r
        for r in range(self.found.size()):
            total += self.found[r].size()
        found = numpy.zeros((total, 3), dtype="int32")
        cdef int[:, ::1] fv = found
        for r in range(self.found.size()):
            if self.found[r].size():
                memcpy(&fv[at, 0], self.found[r].data(), self.found[r].size() * sizeof(Row))
                at += self.found[r].size()
        return found, self.counts


cdef class UnitsRun(CRun):
    """One thread's share of a UnitsJob."""
    cdef UnitsJob job

    def __init__(self, UnitsJob job):
        self.job = job

    cdef void run(self) noexcept nogil:
        self.job.ranges()

    cdef list finish(self):
        self.job.check()
        return []
