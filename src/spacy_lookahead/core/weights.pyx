# cython: profile=False
"""Hashed sparse weights shared by every component.

A feature is a 64-bit hash (see `features`); its row holds one entry per class
it was ever updated for. Two lazy tricks keep every update O(1):

* averaging (Collins 2002): each entry keeps its running total and the clock
  of its last change, so `average()` needs no per-tick work;
* L2 regularisation (SAPO, Sun et al.): the true weights are `scale * w`, so
  shrinking every weight is one multiplication of `scale`. The averaging
  clock advances by `scale` per tick, so the average is that of the true
  weights even though the scale changes between an entry's updates.

Prediction reads a frozen table (`average()`): each row's weights and
classes packed side by side in one arena, found by open addressing, so a
feature costs one probe and one contiguous read instead of the map's three
scattered ones (map cell, row, 32-byte entries). A long row that covers most
of its class range is kept dense over that range (a span row), added to the
scores with one vector loop instead of a scatter. It scores bitwise as the
table it was made from, and keeps each row's largest weight, an admissible
bound for branch-and-bound search.
"""
cimport cython
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memset
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from preshed.maps cimport PreshMap, map_get, map_iter, MapStruct, key_t

import numpy
import srsly

cdef extern from *:
    """
    /* a hint to fetch the cache line at p (GCC/Clang's builtin; SSE's on
       MSVC for x86, none on its other targets) */
    #ifdef _MSC_VER
    #if defined(_M_X64) || defined(_M_IX86)
    #include <xmmintrin.h>
    #define la_prefetch(p) _mm_prefetch((const char*)(p), _MM_HINT_T0)
    #else
    #define la_prefetch(p) ((void)(p))
    #endif
    #else
    #define la_prefetch(p) __builtin_prefetch(p)
    #endif
    """
    void la_prefetch(const void* addr) nogil

cdef extern from *:
    """
    /* Zeroed memory for a frozen table's slots or arena; free() frees it.
       Prediction reads these at random, and a big table (the shipped parser's
       is 200 MB) on 4 KB pages costs a TLB miss, often a page walk out of
       cache, on nearly every probe. On Linux a table of 2 MB or more gets
       2 MB-aligned memory marked for transparent huge pages (MADV_HUGEPAGE:
       where THP is "madvise", the default of many distributions, nothing
       else asks for them). The contents, and so every score, are the same. */
    #include <stdlib.h>
    #include <string.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    static void* la_table_calloc(size_t n, size_t size) {
        if (size != 0 && n > ((size_t)-1) / size) return NULL;
        size_t bytes = n * size;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        const size_t huge = (size_t)2 << 20;
        if (bytes >= huge) {
            void* p = NULL;
            if (posix_memalign(&p, huge, bytes) != 0) return NULL;
            madvise(p, bytes, MADV_HUGEPAGE);  /* a hint: failure is harmless */
            memset(p, 0, bytes);  /* first touch, after the hint */
            return p;
        }
    #endif
        return calloc(n, size);
    }
    """
    void* la_table_calloc(size_t n, size_t size) nogil


cdef int32_t INITIAL_CAPACITY = 2
# A frozen row of >= SPAN_MIN_LENGTH entries whose classes lie in a range of
# at most SPAN_FILL times as many is stored dense over that range. The hot
# rows of a parser are long (half of its frozen-row reads are rows of 64+
# entries, out of 110 classes): adding them densely costs a vector add per
# class of the range, the scatter a load, an add and a store per entry.
DEF SPAN_MIN_LENGTH = 8
DEF SPAN_FILL = 3
DEF PROBE_BATCH = 32
# dot_bounded adds a bound to runs of classes of one group; more runs than
# this, class by class
DEF MAX_BOUND_RUNS = 16
SERIAL_VERSION = 1


cdef extern from *:
    """
    /* One clock for every Weights of the process: a version is never
       repeated, so (the table's address, its version) names one state of one
       table even when a freed table's address is reused by a new one. */
    static int64_t la_weights_clock = 0;
    #ifdef _MSC_VER
    #include <intrin.h>
    static inline int64_t la_next_version(void) {
        return _InterlockedIncrement64((volatile long long*)&la_weights_clock);
    }
    #else
    static inline int64_t la_next_version(void) {
        return __atomic_add_fetch(&la_weights_clock, 1, __ATOMIC_RELAXED);
    }
    #endif
    """
    int64_t la_next_version() noexcept nogil


cdef extern from *:
    """
    /* dst[j] += src[j]: a loop the compiler vectorises (it checks at run
       time that the arrays do not overlap). With GCC on x86-64 Linux, also
       an AVX2 clone, chosen at load time where the CPU has it (the wheel's
       baseline is SSE2: two doubles a step, AVX2 four). Either way each
       dst[j] gets the one addition, so the sums are the same. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static void la_add_dense(double* dst, const double* src, int n) {
        for (int j = 0; j < n; j++) dst[j] += src[j];
    }
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static void la_add_const(double* dst, double x, int n) {
        for (int j = 0; j < n; j++) dst[j] += x;
    }
    """
    void la_add_dense(double* dst, const double* src, int n) noexcept nogil
    void la_add_const(double* dst, double x, int n) noexcept nogil


# A frozen row in the arena at slot.offset (o), in doubles:
# * sparse (slot.length = L >= 0): arena[o] its largest weight (0 if none is
#   positive); arena[o + 1 ..] its L weights; then their L classes, int32.
# * span (slot.length = -L < 0): arena[o] the same; arena[o + 1] two int32,
#   the first class of the range (lo) and its width (span); arena[o + 2 ..]
#   span weights, w[c - lo] for class c, 0 for a class the row lacks; then
#   the row's L classes, int32, in the row's order (what to_arrays gives back).
cdef inline int row_length(const FrozenSlot* slot) noexcept nogil:
    return slot.length if slot.length >= 0 else -slot.length


cdef inline const int32_t* row_classes(const double* arena, const FrozenSlot* slot) noexcept nogil:
    """The row's classes, in its order."""
    if slot.length >= 0:
        return <const int32_t*>&arena[slot.offset + 1 + slot.length]
    return <const int32_t*>&arena[slot.offset + 2 + (<const int32_t*>&arena[slot.offset + 1])[1]]


cdef inline double row_weight(const double* arena, const FrozenSlot* slot,
                              const int32_t* classes, int j) noexcept nogil:
    """The weight of the row's j-th class (classes: row_classes())."""
    if slot.length >= 0:
        return arena[slot.offset + 1 + j]
    return arena[slot.offset + 2 + classes[j] - (<const int32_t*>&arena[slot.offset + 1])[0]]


cdef inline void add_frozen_row(double* scores, const double* arena,
                                const FrozenSlot* slot) noexcept nogil:
    """scores[clas] += w for each class of a frozen row. A span row adds 0 to
    the classes of its range that it lacks: x + 0 == x (a score is never -0:
    it starts at +0, and no stored weight is 0), so each score is the same
    sum of the same terms in the same order as the sparse row's."""
    cdef const double* w = &arena[slot.offset + 1]
    cdef const int32_t* classes
    cdef const int32_t* range_
    cdef int j
    if slot.length < 0:
        range_ = <const int32_t*>w
        la_add_dense(&scores[range_[0]], &w[1], range_[1])
        return
    classes = <const int32_t*>&w[slot.length]
    for j in range(slot.length):
        scores[classes[j]] += w[j]


cdef inline void add_row_group_max(double* out, const double* arena, const FrozenSlot* slot,
                                   const int* group_of) noexcept nogil:
    """out[g] = max(out[g], the row's weights of the classes of group g), for
    out[g] >= 0 (so the 0s of a span row's missing classes change nothing)."""
    cdef const double* w = &arena[slot.offset + 1]
    cdef const int32_t* classes
    cdef int j, g, lo
    if slot.length < 0:
        lo = (<const int32_t*>w)[0]
        w = &w[1]
        for j in range((<const int32_t*>&arena[slot.offset + 1])[1]):
            g = group_of[lo + j]
            if w[j] > out[g]:
                out[g] = w[j]
        return
    classes = <const int32_t*>&w[slot.length]
    for j in range(slot.length):
        g = group_of[classes[j]]
        if w[j] > out[g]:
            out[g] = w[j]


cdef inline void add_entries_group_max(double* out, const Row* row, double scale,
                                       const int* group_of) noexcept nogil:
    """add_row_group_max() for a training table's row (NULL: none)."""
    cdef double x
    cdef int j, g
    if row == NULL:
        return
    for j in range(row.length):
        x = scale * row.entries[j].w
        g = group_of[row.entries[j].clas]
        if x > out[g]:
            out[g] = x


cdef inline void add_row(double* scores, const Row* row, double scale) noexcept nogil:
    """scores[clas] += scale * w for each entry of a training table's row."""
    cdef const Entry* e = row.entries
    cdef int j
    for j in range(row.length):
        scores[e[j].clas] += scale * e[j].w


cdef inline int64_t next_version() noexcept nogil:
    return la_next_version()


# Outside the cycle collector: a Weights refers to nothing but its PreshMaps
# (which refer only to their cymem Pools), so it can be in no cycle; but one
# a garbage cycle refers to was handed to the collector with its maps, and a
# map's Pool could be cleared (freeing the map's cells) before __dealloc__
# walked the map to free the rows: a double free that aborted the process.
# Untracked, the table and its maps are freed in order, by reference counts.
@cython.no_gc
cdef class Weights:
    """Sparse class weights over hashed features.

    `time` counts ticks (training examples seen); `average()` returns the
    mean of the weight vectors after each tick, as a new frozen table.
    `version` changes on every write, so callers can cache scores safely.
    """

    def __init__(self):
        self.table = PreshMap()
        self.time = 0
        self.clock = 0.0
        self.scale = 1.0
        self.version = next_version()
        self.n_entries = 0

    def __dealloc__(self):
        self._free_rows()
        self._free_frozen()
        self._free_snapshots()

    cdef void _free_snapshots(self) noexcept:
        cdef int i = 0
        cdef key_t key
        cdef void* value
        if self._snapshots is not None:
            while map_iter(self._snapshots.c_map, &i, &key, &value):
                if value != NULL:
                    free((<Snapshot*>value).entries)
                    free(value)
        self._snapshots = None
        self.in_round = False

    cdef void _free_frozen(self) noexcept:
        free(self.slots)
        free(self.arena)
        self.slots = NULL
        self.arena = NULL
        self.n_span_rows = 0
        self.frozen = False

    cdef void _free_rows(self) noexcept:
        cdef int i = 0
        cdef key_t key
        cdef void* value
        if self.table is None:
            return
        while map_iter(self.table.c_map, &i, &key, &value):
            if value != NULL:
                free((<Row*>value).entries)
                free(value)

    cdef void dot(self, double* scores, const feat_t* feats, int n_feats) noexcept nogil:
        """Add the scores of n_feats features to scores[clas] for every class."""
        cdef int i
        cdef const Row* row
        cdef const FrozenSlot* found[PROBE_BATCH]
        cdef int start, stop
        if self.frozen:
            # scale is 1 here, and scale * w == w: the same sums as below.
            # The probes of a batch of features go out together (prefetch),
            # so their cache misses overlap instead of queueing.
            for start in range(0, n_feats, PROBE_BATCH):
                stop = min(n_feats, start + PROBE_BATCH)
                self.probe_batch(feats, start, stop, found)
                for i in range(stop - start):
                    if found[i] != NULL:
                        add_frozen_row(scores, self.arena, found[i])
            return
        for i in range(n_feats):
            row = <const Row*>map_get(self.table.c_map, feats[i])
            if row != NULL:
                add_row(scores, row, self.scale)

    cdef void dot_bounded(self, double* scores, int nr_class, const feat_t* feats, int n_feats,
                          const bint* bounded, const double* bounds, const int* group_of,
                          int n_groups) noexcept nogil:
        """dot(), except that a feature i with bounded[i] adds bounds[i *
        n_groups + group_of[c]] to every class c instead of its weights. Where
        each such bound is >= 0 and >= the weights of every feature it stands
        for, the sums bound dot()'s for each of those features (terms at least
        as large, added in dot()'s order: floating-point addition is
        monotone). A family of states that differ only in those features is
        bounded per class, not per feature (the row maxima of the rest would
        be added separately, and loosely)."""
        cdef int i, c, r, start, stop, n_runs = 0
        cdef const Row* row
        cdef const double* b
        cdef const FrozenSlot* found[PROBE_BATCH]
        # the classes in runs of one group (a parser's shifts, left arcs,
        # right arcs): a bound is added to a run at once (vectorised), each
        # class's sum in the same order
        cdef int run_at[MAX_BOUND_RUNS + 1]
        for c in range(nr_class):
            if c == 0 or group_of[c] != group_of[c - 1]:
                if n_runs == MAX_BOUND_RUNS:
                    n_runs = -1  # (too many: class by class)
                    break
                run_at[n_runs] = c
                n_runs += 1
        if n_runs >= 0:
            run_at[n_runs] = nr_class
        for start in range(0, n_feats, PROBE_BATCH):
            stop = min(n_feats, start + PROBE_BATCH)
            if self.frozen:  # (the bounded features' probes are wasted, and few)
                self.probe_batch(feats, start, stop, found)
            for i in range(start, stop):
                if bounded[i]:
                    b = &bounds[i * n_groups]
                    if n_runs < 0:
                        for c in range(nr_class):
                            scores[c] += b[group_of[c]]
                    else:
                        for r in range(n_runs):
                            la_add_const(&scores[run_at[r]], b[group_of[run_at[r]]],
                                         run_at[r + 1] - run_at[r])
                elif self.frozen:  # scale is 1 (see dot)
                    if found[i - start] != NULL:
                        add_frozen_row(scores, self.arena, found[i - start])
                else:
                    row = <const Row*>map_get(self.table.c_map, feats[i])
                    if row != NULL:
                        add_row(scores, row, self.scale)

    cdef const FrozenSlot* frozen_row(self, feat_t feat) noexcept nogil:
        """The frozen row of a feature, NULL if it has none."""
        if feat == 0:
            return &self.zero_slot if self.zero_slot.length else NULL
        return probe(self.slots, self.mask, feat)

    cdef double row_max(self, feat_t feat) noexcept nogil:
        """max over classes of w[feat, clas] (absent classes weigh 0): an
        upper bound of the feature's part of any score. Stored in a frozen
        table; read off the row otherwise."""
        cdef const FrozenSlot* slot
        cdef const Row* row
        cdef double top = 0.0
        cdef int j
        if self.frozen:
            slot = probe(self.slots, self.mask, feat) if feat else self.frozen_row(0)
            return self.arena[slot.offset] if slot != NULL else 0.0
        row = <const Row*>map_get(self.table.c_map, feat)
        if row != NULL:
            for j in range(row.length):
                if self.scale * row.entries[j].w > top:
                    top = self.scale * row.entries[j].w
        return top

    cdef void row_group_max(self, feat_t feat, const int* group_of, int n_groups,
                            double* out) noexcept nogil:
        """out[g] = max over the classes c of group g (group_of[c]) of
        w[feat, c], absent classes weighing 0: row_max per group of classes,
        a tighter bound where a state allows only some groups (a parser's
        shifts, left arcs, right arcs). One probe and one read of the row."""
        cdef const FrozenSlot* slot
        cdef int g
        for g in range(n_groups):
            out[g] = 0.0
        if self.frozen:
            slot = probe(self.slots, self.mask, feat) if feat else self.frozen_row(0)
            if slot != NULL:
                add_row_group_max(out, self.arena, slot, group_of)
            return
        add_entries_group_max(out, <const Row*>map_get(self.table.c_map, feat), self.scale,
                              group_of)

    cdef void rows_group_max(self, const feat_t* feats, int n_feats, const int* group_of,
                             int n_groups, double* out) noexcept nogil:
        """out[g] = max over the features of row_group_max(feat)[g]: a bound
        of a family of features (one per label) at once. In a frozen table
        the probes of a batch go out together, as in dot(), so that their
        cache misses overlap. Each row is folded into out as it is read (the
        maxima are exact in any order), so any number of groups is fine."""
        cdef const FrozenSlot* found[PROBE_BATCH]
        cdef const FrozenSlot* slot
        cdef int i, g, start, stop
        for g in range(n_groups):
            out[g] = 0.0
        if not self.frozen:
            for i in range(n_feats):
                add_entries_group_max(out, <const Row*>map_get(self.table.c_map, feats[i]),
                                      self.scale, group_of)
            return
        for start in range(0, n_feats, PROBE_BATCH):
            stop = min(n_feats, start + PROBE_BATCH)
            self.probe_batch(feats, start, stop, found)
            for i in range(stop - start):
                slot = found[i]
                if slot == NULL:
                    continue
                add_row_group_max(out, self.arena, slot, group_of)

    cdef void probe_batch(self, const feat_t* feats, int start, int stop,
                          const FrozenSlot** found) noexcept nogil:
        """found[i - start]: the frozen slot of feats[i] (NULL: none) for i in
        [start, stop). The probes go out together (prefetch), so their cache
        misses overlap instead of queueing; then each found row's weights and
        classes are prefetched for the caller."""
        cdef const FrozenSlot* slot
        cdef int i
        for i in range(start, stop):
            la_prefetch(&self.slots[feats[i] & self.mask])
        for i in range(start, stop):
            slot = probe(self.slots, self.mask, feats[i]) if feats[i] else self.frozen_row(0)
            found[i - start] = slot
            if slot != NULL:  # the row's weights, and a sparse row's classes after them
                la_prefetch(&self.arena[slot.offset + 1])
                if slot.length > 0:
                    la_prefetch(&self.arena[slot.offset + 1 + slot.length])

    cdef double weight(self, feat_t feat, int clas) noexcept nogil:
        cdef const Row* row
        cdef const FrozenSlot* slot
        cdef const int32_t* classes
        cdef int j
        if self.frozen:
            slot = self.frozen_row(feat)
            if slot != NULL:
                classes = row_classes(self.arena, slot)
                for j in range(row_length(slot)):
                    if classes[j] == clas:
                        return row_weight(self.arena, slot, classes, j)
            return 0.0
        row = <const Row*>map_get(self.table.c_map, feat)
        if row != NULL:
            for j in range(row.length):
                if row.entries[j].clas == clas:
                    return self.scale * row.entries[j].w
        return 0.0

    cdef Row* _row(self, feat_t feat) except NULL:
        cdef Row* row = <Row*>map_get(self.table.c_map, feat)
        if row == NULL:
            row = <Row*>realloc(NULL, sizeof(Row))
            if row == NULL:
                raise MemoryError()
            row.length = 0
            row.capacity = 0
            row.entries = NULL
            self.table.set(feat, row)
        return row

    def _check_writable(self):
        if self.frozen:
            raise RuntimeError("these weights are frozen (an average() for prediction): "
                               "train the table they were averaged from")

    cdef void update(self, feat_t feat, int clas, double delta) except *:
        """w[feat, clas] += delta (in true-weight units), keeping the average lazy."""
        if self.frozen:
            self._check_writable()
        if self.in_round:
            self._note(feat)
        cdef Row* row = self._row(feat)
        cdef Entry* e = NULL
        cdef Entry* grown
        cdef int j
        for j in range(row.length):
            if row.entries[j].clas == clas:
                e = &row.entries[j]
                break
        if e == NULL:
            if row.length == row.capacity:
                row.capacity = row.capacity * 2 if row.capacity else INITIAL_CAPACITY
                grown = <Entry*>realloc(row.entries, row.capacity * sizeof(Entry))
                if grown == NULL:
                    raise MemoryError()
                row.entries = grown
            e = &row.entries[row.length]
            row.length += 1
            memset(e, 0, sizeof(Entry))
            e.clas = clas
            e.clock = self.clock
            self.n_entries += 1
        e.total += (self.clock - e.clock) * e.w
        e.clock = self.clock
        e.w += delta / self.scale
        if e.w * self.scale > self.top:
            self.top = e.w * self.scale
        self.version = next_version()

    cdef void update_all(self, const feat_t* feats, int n_feats, int clas, double delta) except *:
        cdef int i
        for i in range(n_feats):
            self.update(feats[i], clas, delta)

    def tick(self, int64_t n=1):
        """Mark the end of n training examples (the unit of averaging)."""
        self._check_writable()
        self.time += n
        self.clock += n * self.scale

    def shrink(self, double factor):
        """Multiply every weight by factor (0 < factor <= 1), lazily: L2 decay."""
        if not (0.0 < factor <= 1.0):
            raise ValueError(f"shrink factor must be in (0, 1], got {factor}")
        self._check_writable()
        self.scale *= factor
        self.version = next_version()
        if self.scale < 1e-6:
            self._fold_scale()

    def _fold_scale(self):
        """w *= scale, scale = 1; each entry's pending ticks are first added
        to its total at the old units (the clock runs in units of the scale)."""
        cdef int i = 0, j
        cdef key_t key
        cdef void* value
        cdef Row* row
        cdef Entry* e
        if self.in_round:  # it rewrites every row: note them all first
            while map_iter(self.table.c_map, &i, &key, &value):
                self._note(key)
            i = 0
        while map_iter(self.table.c_map, &i, &key, &value):
            row = <Row*>value
            for j in range(row.length):
                e = &row.entries[j]
                e.total += (self.clock - e.clock) * e.w
                e.w *= self.scale
                e.clock = self.clock
        self.scale = 1.0
        self.version = next_version()

    def average(self):
        """A new frozen table holding the averaged weights (Collins 2002): the
        mean of the weight vectors after each tick. With no ticks, a copy.
        Zero means are dropped; the others keep their rows' class order, so
        scores are the same sums as an unfrozen table of them would give."""
        return self._frozen_table(True)

    def frozen_copy(self):
        """A new frozen table holding the current weights (for prediction
        with weights that are not averaged, e.g. SAPO's)."""
        return self._frozen_table(False)

    def _frozen_table(self, bint averaged):
        if self.frozen:
            return _frozen_from_arrays(*self.to_arrays()[:4])
        cdef int i = 0, j
        cdef key_t key
        cdef void* value
        cdef Row* row
        cdef Entry* e
        cdef double mean
        cdef int64_t T = self.time, k = 0, n_rows = 0
        while map_iter(self.table.c_map, &i, &key, &value):
            n_rows += 1  # `filled` leaves out preshed's special keys 0 and 1
        i = 0
        keys = numpy.zeros((n_rows,), dtype="uint64")
        lengths = numpy.zeros((n_rows,), dtype="int32")
        n_rows = 0
        classes = numpy.zeros((self.n_entries,), dtype="int32")
        means = numpy.zeros((self.n_entries,), dtype="float64")
        cdef uint64_t[::1] kv = keys
        cdef int32_t[::1] lv = lengths
        cdef int32_t[::1] cv = classes
        cdef double[::1] mv = means
        while map_iter(self.table.c_map, &i, &key, &value):
            row = <Row*>value
            for j in range(row.length):
                e = &row.entries[j]
                if T > 0 and averaged:  # the total is in true weights already
                    mean = (e.total + (self.clock - e.clock) * e.w) / T
                else:
                    mean = e.w * self.scale
                if mean != 0.0:
                    # what update() stores in a fresh table (scale 1): w / 1
                    cv[k] = e.clas
                    mv[k] = mean / 1.0
                    lv[n_rows] += 1
                    k += 1
            if lv[n_rows]:
                kv[n_rows] = key
                n_rows += 1
        return _frozen_from_arrays(keys[:n_rows], lengths[:n_rows], classes[:k], means[:k])

    def _freeze(self, keys, lengths, classes, ws):
        """Build the frozen arena from rows given as arrays (a table's
        to_arrays() layout).

        The longest rows go first, into the slots and into the arena: a
        feature that met many classes in training is a frequent one (on EWT,
        the 4% of a parser's rows with 8 classes or more answer 77% of its
        probes), so the rows read most often share cache lines and pages
        with each other instead of with rare rows, and sit in their first
        slot. The slots are filled to between 1/3 and 2/3: half the memory
        of filling at most 1/2 of them, at the same speed once the rows are
        in this order (benchmarks/NOTES.md, 2026-12-05, eighth session)."""
        cdef int64_t n_rows = keys.shape[0], n = classes.shape[0], r, j, q, start = 0
        cdef uint64_t capacity = 8, h
        while 2 * capacity < 3 * <uint64_t>n_rows:
            capacity *= 2
        cdef int64_t size = 0
        cdef const int32_t[::1] lv = numpy.ascontiguousarray(lengths, dtype="int32")
        cdef const int32_t[::1] cv = numpy.ascontiguousarray(classes, dtype="int32")
        # each row's class range, its width where it is kept dense (a span
        # row), else 0; a row naming a class twice (a crafted file) stays
        # sparse. The repeats are looked for within the range, so the scratch
        # is bounded by the longest row, not by the largest class id.
        spans = numpy.zeros((n_rows,), dtype="int32")
        los = numpy.zeros((n_rows,), dtype="int32")
        cdef int32_t[::1] spv = spans
        cdef int32_t[::1] lov = los
        stamps = numpy.zeros((SPAN_FILL * (int(numpy.max(lengths)) if n_rows else 0) + 1,),
                             dtype="int64")
        cdef int64_t[::1] stamp = stamps
        cdef int64_t lo, hi
        cdef bint twice
        for r in range(n_rows):
            if lv[r] >= SPAN_MIN_LENGTH:
                lo = hi = cv[start]
                for j in range(start, start + lv[r]):
                    lo = min(lo, cv[j])
                    hi = max(hi, cv[j])
                if lo >= 0 and hi - lo + 1 <= <int64_t>SPAN_FILL * lv[r]:
                    twice = False
                    for j in range(start, start + lv[r]):
                        twice = twice or stamp[cv[j] - lo] == r + 1
                        stamp[cv[j] - lo] = r + 1
                    if not twice:
                        spv[r] = <int32_t>(hi - lo + 1)
                        lov[r] = <int32_t>lo
            size += (2 + spv[r] if spv[r] else 1 + lv[r]) + (lv[r] + 1) // 2
            start += lv[r]
        start = 0
        if size >= <int64_t>1 << 32:
            raise MemoryError("weights too large to freeze")
        self._free_rows()
        self._free_snapshots()
        self.table = PreshMap()
        self._free_frozen()
        self.slots = <FrozenSlot*>la_table_calloc(capacity, sizeof(FrozenSlot))
        self.arena = <double*>la_table_calloc(max(size, 1), sizeof(double))
        if self.slots == NULL or self.arena == NULL:
            self._free_frozen()
            raise MemoryError()
        self.mask = capacity - 1
        self.top = 0.0
        memset(&self.zero_slot, 0, sizeof(FrozenSlot))
        cdef const uint64_t[::1] kv = numpy.ascontiguousarray(keys, dtype="uint64")
        cdef const double[::1] wv = numpy.ascontiguousarray(ws, dtype="float64")
        cdef double* w
        cdef FrozenSlot* slot
        cdef int64_t offset = 0
        cdef double top
        cdef int32_t* cls
        # the slots and the rows' places in the arena, longest rows first
        order = numpy.argsort(-numpy.asarray(lv), kind="stable").astype(numpy.int64, copy=False)
        cdef const int64_t[::1] ov = order
        offsets = numpy.zeros((n_rows,), dtype="uint32")
        cdef uint32_t[::1] offv = offsets
        for q in range(n_rows):
            r = ov[q]
            if kv[r] == 0:
                slot = &self.zero_slot
            else:
                h = kv[r] & self.mask
                while self.slots[h].key != 0:
                    h = (h + 1) & self.mask
                slot = &self.slots[h]
            slot.key = kv[r]
            slot.offset = offv[r] = <uint32_t>offset
            slot.length = -lv[r] if spv[r] else lv[r]
            offset += (2 + spv[r] if spv[r] else 1 + lv[r]) + (lv[r] + 1) // 2
        # the rows, in the arrays' order
        for r in range(n_rows):
            offset = offv[r]
            top = 0.0
            if spv[r]:  # (the arena is zeroed: the classes the row lacks weigh 0)
                self.n_span_rows += 1
                (<int32_t*>&self.arena[offset + 1])[0] = lov[r]
                (<int32_t*>&self.arena[offset + 1])[1] = spv[r]
                w = &self.arena[offset + 2]
                cls = <int32_t*>&w[spv[r]]
                for j in range(lv[r]):
                    w[cv[start + j] - lov[r]] = wv[start + j]
            else:
                w = &self.arena[offset + 1]
                cls = <int32_t*>&w[lv[r]]
                for j in range(lv[r]):
                    w[j] = wv[start + j]
            for j in range(lv[r]):
                cls[j] = cv[start + j]
                if wv[start + j] > top:
                    top = wv[start + j]
            self.arena[offset] = top
            if top > self.top:
                self.top = top
            start += lv[r]
        self.n_entries = n
        self.time = 0
        self.clock = 0.0
        self.scale = 1.0
        self.version = next_version()
        self.frozen = True

    def copy(self):
        cdef Weights other = Weights()
        other.from_bytes(self.to_bytes())
        return other

    # Python-level access, for tests and inspection.
    def get(self, feat_t feat, int clas):
        return self.weight(feat, clas)

    def add(self, feat_t feat, int clas, double delta):
        self.update(feat, clas, delta)

    def max_weight(self, feat_t feat):
        return self.row_max(feat)

    def group_max_weights(self, feat_t feat, group_of):
        """row_group_max(): [max weight of the row over each group's classes]
        (group_of[c]: class c's group), for tests."""
        cdef int[::1] gv = numpy.ascontiguousarray(group_of, dtype="int32")
        cdef int n_groups = int(max(group_of)) + 1 if len(group_of) else 0
        out = numpy.zeros((max(n_groups, 1),), dtype="float64")
        cdef double[::1] ov = out
        if n_groups:
            self.row_group_max(feat, &gv[0], n_groups, &ov[0])
        return out[:n_groups].tolist()

    def family_max_weights(self, feats, group_of):
        """rows_group_max(): [max weight over the features' rows, per group],
        for tests."""
        cdef uint64_t[::1] keys = numpy.ascontiguousarray(feats, dtype="uint64")
        cdef int[::1] gv = numpy.ascontiguousarray(group_of, dtype="int32")
        cdef int n_groups = int(max(group_of)) + 1
        out = numpy.zeros((n_groups,), dtype="float64")
        cdef double[::1] ov = out
        self.rows_group_max(&keys[0] if keys.shape[0] else NULL, keys.shape[0], &gv[0],
                            n_groups, &ov[0])
        return out.tolist()

    def bounded_scores(self, feats, int nr_class, bounded, bounds, group_of):
        """dot_bounded(): scores where each feature i with bounded[i] adds
        bounds[i][group_of[c]] to class c instead of its weights, for tests."""
        cdef uint64_t[::1] keys = numpy.ascontiguousarray(feats, dtype="uint64")
        cdef int[::1] bv = numpy.ascontiguousarray(bounded, dtype="int32")
        cdef int[::1] gv = numpy.ascontiguousarray(group_of, dtype="int32")
        cdef int n_groups = int(max(group_of)) + 1
        cdef double[:, ::1] mv = numpy.ascontiguousarray(bounds, dtype="float64").reshape(
            keys.shape[0], n_groups)
        out = numpy.zeros((nr_class,), dtype="float64")
        cdef double[::1] view = out
        if keys.shape[0]:
            self.dot_bounded(&view[0], nr_class, &keys[0], keys.shape[0], <const bint*>&bv[0],
                             &mv[0, 0], &gv[0], n_groups)
        return out

    def scores(self, feats, int nr_class):
        cdef uint64_t[::1] keys = numpy.ascontiguousarray(feats, dtype="uint64")
        out = numpy.zeros((nr_class,), dtype="float64")
        cdef double[::1] view = out
        if keys.shape[0]:
            self.dot(&view[0], &keys[0], keys.shape[0])
        return out

    def mean_abs(self):
        """Mean |w| over stored entries (SAPO's w-complexity curve)."""
        cdef int i = 0, j
        cdef key_t key
        cdef void* value
        cdef Row* row
        cdef double total = 0.0
        cdef int64_t n = 0
        if self.frozen:
            ws = self.to_arrays()[3]
            return float(numpy.abs(ws).sum() / ws.shape[0]) if ws.shape[0] else 0.0
        while map_iter(self.table.c_map, &i, &key, &value):
            row = <Row*>value
            for j in range(row.length):
                total += abs(row.entries[j].w)
                n += 1
        return (total * self.scale / n) if n else 0.0

    def __len__(self):
        return self.n_entries

    def to_arrays(self):
        """(keys, row lengths, classes, weights, totals, clocks), rows sorted by
        key so the bytes do not depend on insertion order."""
        if self.frozen:
            return self._frozen_arrays()
        cdef int i = 0, j
        cdef int64_t r, k = 0, n_rows = 0
        cdef key_t key
        cdef void* value
        cdef Row* row
        while map_iter(self.table.c_map, &i, &key, &value):
            n_rows += 1  # `filled` leaves out preshed's special keys 0 and 1
        i = 0
        cdef uint64_t[::1] keys = numpy.zeros((n_rows,), dtype="uint64")
        ptrs = numpy.zeros((n_rows,), dtype="uint64")
        cdef uint64_t[::1] pv = ptrs
        while map_iter(self.table.c_map, &i, &key, &value):
            keys[k] = key
            pv[k] = <uint64_t>value
            k += 1
        order = numpy.argsort(numpy.asarray(keys), kind="stable")
        keys_sorted = numpy.asarray(keys)[order]
        ptrs = ptrs[order]
        pv = ptrs
        lengths = numpy.zeros((n_rows,), dtype="int32")
        cdef int32_t[::1] lv = lengths
        for r in range(n_rows):
            lv[r] = (<Row*>pv[r]).length
        cdef int64_t n = int(lengths.sum())
        classes = numpy.zeros((n,), dtype="int32")
        ws = numpy.zeros((n,), dtype="float64")
        totals = numpy.zeros((n,), dtype="float64")
        clocks = numpy.zeros((n,), dtype="float64")
        cdef int32_t[::1] cv = classes
        cdef double[::1] wv = ws
        cdef double[::1] tv = totals
        cdef double[::1] clockv = clocks
        k = 0
        for r in range(n_rows):
            row = <Row*>pv[r]
            for j in range(row.length):
                cv[k] = row.entries[j].clas
                wv[k] = row.entries[j].w
                tv[k] = row.entries[j].total
                clockv[k] = row.entries[j].clock
                k += 1
        return keys_sorted, lengths, classes, ws, totals, clocks

    def _frozen_arrays(self):
        """to_arrays() of a frozen table (totals and clocks 0: a fresh table
        of these weights). The keys are gathered in C into an array (a list
        of Python ints cost the shipped parser's save 140 MB more)."""
        cdef uint64_t h
        cdef int64_t k = 0, r, j, n_rows = 1 if self.zero_slot.length else 0
        cdef const FrozenSlot* slot
        for h in range(self.mask + 1):
            if self.slots[h].key != 0:
                n_rows += 1
        keys = numpy.zeros((n_rows,), dtype="uint64")  # (key 0 first, if it has a row)
        cdef uint64_t[::1] kv = keys
        r = 1 if self.zero_slot.length else 0
        for h in range(self.mask + 1):
            if self.slots[h].key != 0:
                kv[r] = self.slots[h].key
                r += 1
        keys.sort()
        lengths = numpy.zeros((n_rows,), dtype="int32")
        classes = numpy.zeros((self.n_entries,), dtype="int32")
        ws = numpy.zeros((self.n_entries,), dtype="float64")
        cdef int32_t[::1] lv = lengths
        cdef int32_t[::1] cv = classes
        cdef double[::1] wv = ws
        cdef const int32_t* cls
        for r in range(n_rows):
            slot = self.frozen_row(kv[r])
            lv[r] = row_length(slot)
            cls = row_classes(self.arena, slot)
            for j in range(lv[r]):
                cv[k] = cls[j]
                wv[k] = row_weight(self.arena, slot, cls, j)
                k += 1
        return (keys, lengths, classes, ws, numpy.zeros((self.n_entries,), dtype="float64"),
                numpy.zeros((self.n_entries,), dtype="float64"))

    def to_bytes(self):
        """The table as msgpack bytes. The running totals and the clocks are
        left out where every one is 0 (a frozen table, a fresh one: half the
        bytes of a saved model); from_bytes reads them back as 0s."""
        keys, lengths, classes, ws, totals, clocks = self.to_arrays()
        msg = {
            "serial_version": SERIAL_VERSION,
            "time": int(self.time), "scale": float(self.scale),
            "keys": keys.tobytes(), "lengths": lengths.tobytes(),
            "classes": classes.tobytes(), "w": ws.tobytes(),
        }
        if totals.any():
            msg["total"] = totals.tobytes()
        if self.clock != <double>self.time:  # shrunk (L2): the clocks are not whole ticks
            msg["clock"] = float(self.clock)
            if clocks.any():
                msg["clocks"] = clocks.tobytes()
        elif clocks.any():
            msg["times"] = clocks.astype("int64").tobytes()
        return srsly.msgpack_dumps(msg)

    def from_bytes(self, bytes_data, int n_classes=0, bint frozen=False):
        """The table of to_bytes()' data; n_classes > 0: every class id must
        be below it (a crafted file must not make dot() write past the
        scores). Lengths, class ids and values are checked before any is
        used: a damaged file raises ValueError, never corrupts memory.
        frozen: the table frozen_copy() of it gives, made directly (a model
        loaded to predict with: no training table is built and freed)."""
        return self.from_fields(unpack_fields(bytes_data), n_classes, frozen)

    def from_fields(self, dict msg, int n_classes=0, bint frozen=False):
        """from_bytes() of the fields unpack_fields() read from the bytes: a
        caller holding the only reference to the bytes can free them before
        the table is built (a loaded model's peak memory). frozen: the fields
        a frozen table does not keep (totals, clocks) are taken out of msg,
        and freed before the table is built."""
        cdef Row* row
        cdef int j
        try:
            if msg.get("serial_version") != SERIAL_VERSION:
                raise ValueError(f"unknown weights format {msg.get('serial_version')!r}")
            keys = numpy.frombuffer(msg["keys"], dtype="uint64")
            lengths = numpy.frombuffer(msg["lengths"], dtype="int32")
            classes = numpy.frombuffer(msg["classes"], dtype="int32")
            ws = numpy.frombuffer(msg["w"], dtype="float64")
            # (left out by to_bytes where all are 0)
            totals = (numpy.frombuffer(msg["total"], dtype="float64") if "total" in msg else
                      None)
            clocks = (numpy.frombuffer(msg["clocks"], dtype="float64") if "clocks" in msg else
                      numpy.frombuffer(msg["times"], dtype="int64").astype("float64")
                      if "times" in msg else None)
            time = msg["time"]
            if not (type(time) is int and 0 <= time < 2 ** 63):
                raise ValueError(f"the tick count {time!r} is not a whole number >= 0")
            clock = float(msg.get("clock", time))
            if (lengths.shape[0] != keys.shape[0] or int(lengths.sum()) != classes.shape[0]
                    or classes.shape[0] != ws.shape[0]
                    or (totals is not None and totals.shape[0] != ws.shape[0])
                    or (clocks is not None and clocks.shape[0] != ws.shape[0])):
                raise ValueError("array lengths do not agree")
            if lengths.shape[0] and lengths.min() < 0:
                raise ValueError("a row has a negative length")
            if classes.shape[0] and (classes.min() < 0 or (n_classes > 0 and
                                                             classes.max() >= n_classes)):
                raise ValueError(f"class ids {int(classes.min())}..{int(classes.max())} outside "
                                 f"0..{n_classes - 1}" if n_classes > 0 else
                                 "a negative class id")
            if not (numpy.isfinite(ws).all()
                    and (totals is None or numpy.isfinite(totals).all())
                    and (clocks is None or numpy.isfinite(clocks).all()) and numpy.isfinite(clock)
                    and numpy.isfinite(msg["scale"]) and msg["scale"] > 0):
                raise ValueError("weights that are not finite numbers")
            # (to_bytes sorts the keys: increasing keys are distinct, a pass
            # where numpy.unique sorts; it took 1.6 s of a parser's load)
            if not (keys[1:] > keys[:-1]).all() and numpy.unique(keys).shape[0] != keys.shape[0]:
                raise ValueError("a feature's row is given twice")
        except Exception as err:
            raise _corrupt(err) from err
        if frozen:
            if msg["scale"] != 1.0:  # (a copy of the weights only where it changes them)
                ws = ws * float(msg["scale"])
            totals = clocks = None
            for field in ("total", "times", "clocks"):
                msg.pop(field, None)
            self._freeze(*_nonzero_rows(keys, lengths, classes, ws))
            return self
        if totals is None:
            totals = numpy.zeros(ws.shape[0], dtype="float64")
        if clocks is None:
            clocks = numpy.zeros(ws.shape[0], dtype="float64")
        self._free_rows()
        self._free_frozen()
        self._free_snapshots()
        self.table = PreshMap(max(8, 2 * keys.shape[0]))
        self.n_entries = 0
        self.time = time
        self.clock = clock
        self.scale = msg["scale"]
        # typed views: indexing the arrays from Python cost ~1 us an entry
        # (0.25 s for a tagger's table, each round of distributed training)
        cdef const uint64_t[::1] kv = keys
        cdef const int32_t[::1] lv = lengths
        cdef const int32_t[::1] cv = classes
        cdef const double[::1] wv = ws
        cdef const double[::1] tv = totals
        cdef const double[::1] clockv = clocks
        cdef int64_t start = 0, stop, r
        for r in range(kv.shape[0]):
            stop = start + lv[r]
            row = self._row(kv[r])
            row.capacity = max(1, stop - start)
            row.entries = <Entry*>realloc(NULL, row.capacity * sizeof(Entry))
            if row.entries == NULL:
                raise MemoryError()
            for j in range(stop - start):
                row.entries[j].clas = cv[start + j]
                row.entries[j]._pad = 0
                row.entries[j].w = wv[start + j]
                row.entries[j].total = tv[start + j]
                row.entries[j].clock = clockv[start + j]
            row.length = stop - start
            self.n_entries += row.length
            start = stop
        self.top = max(0.0, float(ws.max()) * self.scale) if ws.shape[0] else 0.0
        self.version = next_version()
        return self


    # --- rounds of distributed training (distributed/train.py) ---------------
    # A worker keeps one training table from round to round: each round's
    # task trains from it, sends what the round changed (a small part of the
    # table: the rows it updated), and puts it back as it found it; the next
    # round's start is then this table plus the mix of every shard's changes.
    # Shipping and mixing changes instead of whole tables makes a round's
    # serial work (serialising, moving and summing tables) scale with what a
    # shard updates, not with the model.

    cdef void _note(self, feat_t feat) except *:
        """Before the round's first change to row feat: keep it as it is,
        and start its entries' running totals afresh (the round's average
        is over the round's ticks only, as if every total were 0 at its
        start: begin_round() resets none, this does it lazily)."""
        if map_get(self._snapshots.c_map, feat) != NULL:
            return
        cdef Row* row = <Row*>map_get(self.table.c_map, feat)
        cdef Snapshot* snap = <Snapshot*>calloc(1, sizeof(Snapshot))
        if snap == NULL:
            raise MemoryError()
        cdef int j
        if row != NULL and row.length:
            snap.entries = <Entry*>malloc(row.length * sizeof(Entry))
            if snap.entries == NULL:
                free(snap)
                raise MemoryError()
            memcpy(snap.entries, row.entries, row.length * sizeof(Entry))
            snap.length = row.length
            for j in range(row.length):
                row.entries[j].total = 0.0
                row.entries[j].clock = 0.0
        self._snapshots.set(feat, snap)

    def begin_round(self):
        """Start a round from the table as it is (scale 1, folded first if
        not): a fresh average (time 0) and every row noted before its
        first change, for round_changes() and end_round()."""
        self._check_writable()
        if self.in_round:
            raise RuntimeError("begin_round(): a round is under way (end_round() first)")
        if self.scale != 1.0:
            self._fold_scale()
        self._snapshots = PreshMap()
        self._top_before = self.top
        self.time = 0
        self.clock = 0.0
        self.in_round = True
        self.version = next_version()

    def round_changes(self, bint averaged):
        """What the round changed, as a table of differences (mixing's
        layout: keys sorted, each row's classes in the row's order): the
        true weights (averaged: their mean over the round's ticks) minus
        the weights at begin_round(). Only the rows the round updated,
        unless the scale moved (SAPO's L2), which changes every row.
        Entries with no difference are left out."""
        if not self.in_round:
            raise RuntimeError("round_changes() outside a round (begin_round() first)")
        cdef bint every_row = self.scale != 1.0 or self.clock != <double>self.time
        cdef PreshMap rows = self.table if every_row else self._snapshots
        cdef int i = 0, j, m
        cdef key_t key
        cdef void* value
        cdef int64_t n_rows = 0, n = 0, k = 0, r, T = self.time
        cdef Row* row
        cdef Snapshot* snap
        cdef Entry* e
        cdef double now, before
        while map_iter(rows.c_map, &i, &key, &value):
            n_rows += 1
            row = <Row*>map_get(self.table.c_map, key)
            n += row.length if row != NULL else 0
        keys = numpy.zeros((n_rows,), dtype="uint64")
        cdef uint64_t[::1] kv = keys
        i = 0
        while map_iter(rows.c_map, &i, &key, &value):
            kv[k] = key
            k += 1
        keys.sort()
        lengths = numpy.zeros((n_rows,), dtype="int32")
        classes = numpy.zeros((n,), dtype="int32")
        deltas = numpy.zeros((n,), dtype="float64")
        cdef int32_t[::1] lv = lengths
        cdef int32_t[::1] cv = classes
        cdef double[::1] dv = deltas
        k = 0
        for r in range(n_rows):
            row = <Row*>map_get(self.table.c_map, kv[r])
            snap = <Snapshot*>map_get(self._snapshots.c_map, kv[r])
            if row == NULL:
                continue
            for j in range(row.length):
                e = &row.entries[j]
                if snap == NULL:  # untouched: only the scale moved it
                    before = e.w
                    if averaged and T > 0:  # the mean of scale_t * w over the ticks
                        now = e.w * self.clock / T
                    else:
                        now = e.w * self.scale
                else:
                    before = 0.0
                    for m in range(snap.length):
                        if snap.entries[m].clas == e.clas:
                            before = snap.entries[m].w
                            break
                    if averaged and T > 0:
                        now = (e.total + (self.clock - e.clock) * e.w) / T
                    else:
                        now = e.w * self.scale
                if now - before != 0.0:
                    cv[k] = e.clas
                    dv[k] = now - before
                    lv[r] += 1
                    k += 1
        keep = lengths > 0
        return keys[keep], lengths[keep], classes[:k], deltas[:k]

    def end_round(self):
        """Put the weights back as begin_round() found them (rows the round
        made stay, empty; time and clock 0, scale 1, the bound `top` as it
        was), ready for another round from the same start."""
        if not self.in_round:
            raise RuntimeError("end_round() outside a round (begin_round() first)")
        cdef int i = 0
        cdef key_t key
        cdef void* value
        cdef Row* row
        cdef Snapshot* snap
        while map_iter(self._snapshots.c_map, &i, &key, &value):
            snap = <Snapshot*>value
            row = <Row*>map_get(self.table.c_map, key)
            if row == NULL:
                continue
            self.n_entries -= row.length - snap.length
            if snap.length:  # entries only grow: the row has room
                memcpy(row.entries, snap.entries, snap.length * sizeof(Entry))
            row.length = snap.length
        self._free_snapshots()
        self.time = 0
        self.clock = 0.0
        self.scale = 1.0
        self.top = self._top_before
        self.version = next_version()

    def apply_changes(self, keys, lengths, classes, deltas):
        """w += delta for each entry of a table of differences (true-weight
        units; a row's new classes appended in the order given): the next
        round's start from this one's and the mix of the shards' changes.
        The same changes applied to the same table give the same table,
        bitwise, whichever worker applies them."""
        self._check_writable()
        if self.in_round:
            raise RuntimeError("apply_changes() during a round (end_round() first)")
        if self.scale != 1.0:
            self._fold_scale()
        cdef const uint64_t[::1] kv = numpy.ascontiguousarray(keys, dtype="uint64")
        cdef const int32_t[::1] lv = numpy.ascontiguousarray(lengths, dtype="int32")
        cdef const int32_t[::1] cv = numpy.ascontiguousarray(classes, dtype="int32")
        cdef const double[::1] dv = numpy.ascontiguousarray(deltas, dtype="float64")
        _check_table(kv, lv, cv, dv, "apply_changes()")
        cdef int64_t r, start = 0
        cdef int j
        for r in range(kv.shape[0]):
            for j in range(lv[r]):
                self.update(kv[r], cv[start + j], dv[start + j])
            start += lv[r]
        self.time = 0
        self.clock = 0.0
        return self

    def __reduce__(self):
        if self.frozen:
            return (_frozen_from_arrays, self.to_arrays()[:4])
        return (_weights_from_bytes, (self.to_bytes(),))


def unpack_fields(bytes_data):
    """The fields of to_bytes()' data, for Weights.from_fields()."""
    try:
        msg = srsly.msgpack_loads(bytes_data)
        if not isinstance(msg, dict):
            raise ValueError("not a map of fields")
    except Exception as err:
        raise _corrupt(err) from err
    return msg


def _corrupt(err):
    return ValueError(f"Corrupt or incompatible weights data ({err}). Re-train the "
                      "component or load it from an intact model directory.")


def _weights_from_bytes(data):
    return Weights().from_bytes(data)


def _nonzero_rows(keys, lengths, classes, ws):
    """The rows of a table's arrays without their zero weights, and without
    the rows left empty (what a frozen table keeps: _frozen_table)."""
    kept = ws != 0.0
    if kept.all() and (lengths > 0).all():
        return keys, lengths, classes, ws
    ends = numpy.cumsum(lengths, dtype="int64")
    counted = numpy.concatenate([[0], numpy.cumsum(kept, dtype="int64")])
    lengths = (counted[ends] - counted[ends - lengths]).astype("int32")
    rows = lengths > 0
    return keys[rows], lengths[rows], classes[kept], ws[kept]


def _frozen_from_arrays(keys, lengths, classes, ws):
    cdef Weights table = Weights()
    table._freeze(keys, lengths, classes, ws)
    return table


def _check_table(keys, lengths, classes, ws, str where, bint sorted_keys=False):
    """A table in mixing's layout that the C loops can walk: one length per
    key, none negative, summing to the entries; class ids >= 0; with
    sorted_keys, keys strictly increasing (what a merge of two needs)."""
    lv, cv = numpy.asarray(lengths), numpy.asarray(classes)
    if (len(keys) != len(lv) or len(cv) != len(ws) or (len(lv) and lv.min() < 0)
            or int(lv.sum()) != len(cv) or (len(cv) and cv.min() < 0)):
        raise ValueError(f"{where}: not a table (a length per key, none negative, summing "
                         "to the entries; class ids >= 0)")
    if sorted_keys and len(keys) > 1:
        kv = numpy.asarray(keys)
        if not (kv[1:] > kv[:-1]).all():
            raise ValueError(f"{where}: the table's keys are not sorted and unique (give "
                             "tables as Weights.to_arrays() or mixing.mix() make them)")


cdef void _sorted_row(const int32_t* classes, const double* ws, int n, double c,
                      int32_t* out_c, double* out_w) noexcept nogil:
    """A row's entries sorted by class (insertion sort: rows are short),
    each weight times c."""
    cdef int i, j
    cdef int32_t k
    cdef double x
    for i in range(n):
        k, x = classes[i], ws[i] * c
        j = i
        while j > 0 and out_c[j - 1] > k:
            out_c[j], out_w[j] = out_c[j - 1], out_w[j - 1]
            j -= 1
        out_c[j], out_w[j] = k, x
    return


def sum_pair(a, b, double ca, double cb):
    """ca * a + cb * b for two tables in mixing's layout (keys sorted,
    a row's classes in any order), as mixing.mix([a, b], [ca, cb]) gives
    it bitwise: each entry (ca * a) + (cb * b), rows' classes sorted,
    entries of 0 dropped. One merge of the sorted keys, not a sort of every
    entry: a round's mixing and model cost what the tables hold."""
    cdef const uint64_t[::1] ka = numpy.ascontiguousarray(a[0], dtype="uint64")
    cdef const int32_t[::1] la = numpy.ascontiguousarray(a[1], dtype="int32")
    cdef const int32_t[::1] ca_ = numpy.ascontiguousarray(a[2], dtype="int32")
    cdef const double[::1] wa = numpy.ascontiguousarray(a[3], dtype="float64")
    cdef const uint64_t[::1] kb = numpy.ascontiguousarray(b[0], dtype="uint64")
    cdef const int32_t[::1] lb = numpy.ascontiguousarray(b[1], dtype="int32")
    cdef const int32_t[::1] cb_ = numpy.ascontiguousarray(b[2], dtype="int32")
    cdef const double[::1] wb = numpy.ascontiguousarray(b[3], dtype="float64")
    cdef int64_t n_a = ka.shape[0], n_b = kb.shape[0]
    _check_table(ka, la, ca_, wa, "sum_pair()", True)
    _check_table(kb, lb, cb_, wb, "sum_pair()", True)
    cdef int32_t longest = 1
    cdef int64_t r
    for r in range(n_a):
        longest = max(longest, la[r])
    for r in range(n_b):
        longest = max(longest, lb[r])
    keys = numpy.empty((n_a + n_b,), dtype="uint64")
    lengths = numpy.zeros((n_a + n_b,), dtype="int32")
    classes = numpy.empty((ca_.shape[0] + cb_.shape[0],), dtype="int32")
    ws = numpy.empty((ca_.shape[0] + cb_.shape[0],), dtype="float64")
    buf_c = numpy.empty((2, longest), dtype="int32")
    buf_w = numpy.empty((2, longest), dtype="float64")
    cdef uint64_t[::1] ko = keys
    cdef int32_t[::1] lo = lengths
    cdef int32_t[::1] co = classes
    cdef double[::1] wo = ws
    cdef int32_t[:, ::1] bc = buf_c
    cdef double[:, ::1] bw = buf_w
    cdef int64_t i = 0, j = 0, oa = 0, ob = 0, rows = 0, k = 0
    cdef int na, nb, x, y, start
    cdef double v
    with nogil:
        while i < n_a or j < n_b:
            na = nb = 0
            if j >= n_b or (i < n_a and ka[i] <= kb[j]):
                ko[rows] = ka[i]
                na = la[i]
                _sorted_row(&ca_[oa] if na else NULL, &wa[oa] if na else NULL, na, ca,
                            &bc[0, 0], &bw[0, 0])
                oa += na
                if j < n_b and kb[j] == ka[i]:
                    nb = lb[j]
                    _sorted_row(&cb_[ob] if nb else NULL, &wb[ob] if nb else NULL, nb, cb,
                                &bc[1, 0], &bw[1, 0])
                    ob += nb
                    j += 1
                i += 1
            else:
                ko[rows] = kb[j]
                nb = lb[j]
                _sorted_row(&cb_[ob] if nb else NULL, &wb[ob] if nb else NULL, nb, cb,
                            &bc[1, 0], &bw[1, 0])
                ob += nb
                j += 1
            x = y = 0
            start = k
            while x < na or y < nb:
                if y >= nb or (x < na and bc[0, x] < bc[1, y]):
                    co[k], v = bc[0, x], bw[0, x]
                    x += 1
                elif x >= na or bc[1, y] < bc[0, x]:
                    co[k], v = bc[1, y], bw[1, y]
                    y += 1
                else:  # the same class: a's product, then b's (mix's order)
                    co[k], v = bc[0, x], bw[0, x] + bw[1, y]
                    x += 1
                    y += 1
                if v != 0.0:
                    wo[k] = v
                    k += 1
            if k > start:
                lo[rows] = <int32_t>(k - start)
                rows += 1
    return keys[:rows].copy(), lengths[:rows].copy(), classes[:k].copy(), ws[:k].copy()
