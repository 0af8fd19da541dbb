from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from preshed.maps cimport PreshMap

ctypedef uint64_t feat_t


cdef struct Entry:
    # One class weight of one feature. `total` is the sum of the weight's true
    # value (scale * w) after every tick up to the table's clock `clock`; the
    # ticks since then all had stored value `w`, so they add w times the clock's
    # advance (thinc's avgtron trick: averaging costs O(1) per update). The
    # clock counts ticks weighted by the scale at each: the tick count while
    # nothing shrinks, and still exact under SAPO's lazy L2.
    int32_t clas
    int32_t _pad
    double clock
    double w
    double total


cdef struct Row:
    # The class weights of one hashed feature: sparse, since a feature meets
    # few classes during training.
    int32_t length
    int32_t capacity
    Entry* entries


cdef struct Snapshot:
    # A row as begin_round() found it: its entries before their first change
    # in the round (length 0: the row did not exist).
    int32_t length
    int32_t _pad
    Entry* entries


cdef struct FrozenSlot:
    # A row of a frozen table: `length` weights at arena[offset + 1 ..], their
    # classes (int32) packed after them, and the row's largest weight at
    # arena[offset] (0 if none is positive: an absent class scores 0).
    uint64_t key
    uint32_t offset
    int32_t length


# Outside the cycle collector (cython.no_gc in weights.pyx): keep every
# Python attribute a PreshMap (nothing that could refer back), and do not
# subclass it (a subclass would be collected again).
cdef class Weights:
    cdef PreshMap table
    # A frozen table (average()): read-only, rows packed into one arena and
    # found by open addressing, instead of the PreshMap's rows of entries.
    cdef readonly bint frozen
    cdef FrozenSlot* slots
    cdef uint64_t mask
    cdef FrozenSlot zero_slot   # the row of feature 0 (0 marks an empty slot)
    cdef double* arena
    cdef readonly int64_t n_span_rows  # rows kept dense over their class range
    cdef readonly int64_t time
    cdef readonly double clock  # the sum of `scale` at each tick (= time while it is 1)
    cdef readonly double scale
    cdef readonly int64_t version
    cdef readonly int64_t n_entries
    # >= every weight and >= 0: a bound for any feature (the largest weight
    # ever written; weights only shrink under L2, so it stays a bound)
    cdef readonly double top
    # Rounds of distributed training (begin_round): the rows changed since
    # the round began, each as it was then (key -> Snapshot*).
    cdef readonly bint in_round
    cdef PreshMap _snapshots
    cdef double _top_before

    cdef void dot(self, double* scores, const feat_t* feats, int n_feats) noexcept nogil
    cdef void dot_bounded(self, double* scores, int nr_class, const feat_t* feats, int n_feats,
                          const bint* bounded, const double* bounds, const int* group_of,
                          int n_groups) noexcept nogil
    cdef double weight(self, feat_t feat, int clas) noexcept nogil
    cdef const FrozenSlot* frozen_row(self, feat_t feat) noexcept nogil
    cdef void probe_batch(self, const feat_t* feats, int start, int stop,
                          const FrozenSlot** found) noexcept nogil
    cdef double row_max(self, feat_t feat) noexcept nogil
    cdef void row_group_max(self, feat_t feat, const int* group_of, int n_groups,
                            double* out) noexcept nogil
    cdef void rows_group_max(self, const feat_t* feats, int n_feats, const int* group_of,
                             int n_groups, double* out) noexcept nogil
    cdef void update(self, feat_t feat, int clas, double delta) except *
    cdef void update_all(self, const feat_t* feats, int n_feats, int clas, double delta) except *
    cdef Row* _row(self, feat_t feat) except NULL
    cdef void _note(self, feat_t feat) except *
    cdef void _free_snapshots(self) noexcept
    cdef void _free_rows(self) noexcept
    cdef void _free_frozen(self) noexcept


cdef inline const FrozenSlot* probe(const FrozenSlot* slots, uint64_t mask, feat_t feat) noexcept nogil:
    """The slot of feature feat != 0 in a frozen table, NULL if none."""
    cdef uint64_t h = feat & mask
    while slots[h].key != feat:
        if slots[h].key == 0:
            return NULL
        h = (h + 1) & mask
    return &slots[h]
