from libc.stdint cimport int32_t, int64_t, uint64_t
from preshed.maps cimport PreshMap

ctypedef uint64_t feat_t


cdef struct Entry:
    # One class weight of one feature. `total` is the sum of the weight's value
    # after every tick up to `time`; the ticks since then all had value `w`
    # (thinc's avgtron trick: averaging costs O(1) per update).
    int32_t clas
    int32_t _pad
    int64_t time
    double w
    double total


cdef struct Row:
    # The class weights of one hashed feature: sparse, since a feature meets
    # few classes during training.
    int32_t length
    int32_t capacity
    Entry* entries


cdef class Weights:
    cdef PreshMap table
    cdef readonly int64_t time
    cdef readonly double scale
    cdef readonly int64_t version
    cdef readonly int64_t n_entries

    cdef void dot(self, double* scores, const feat_t* feats, int n_feats) noexcept nogil
    cdef double weight(self, feat_t feat, int clas) noexcept nogil
    cdef void update(self, feat_t feat, int clas, double delta) except *
    cdef void update_all(self, const feat_t* feats, int n_feats, int clas, double delta) except *
    cdef Row* _row(self, feat_t feat) except NULL
    cdef void _free_rows(self) noexcept
