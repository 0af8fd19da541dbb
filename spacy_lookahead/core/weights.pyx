# cython: profile=False
"""Hashed sparse weights shared by every component.

A feature is a 64-bit hash (see `features`); its row holds one entry per class
it was ever updated for. Two lazy tricks keep every update O(1):

* averaging (Collins 2002): each entry keeps its running total and the tick of
  its last change, so `average()` needs no per-tick work;
* L2 regularisation (SAPO, Sun et al.): the true weights are `scale * w`, so
  shrinking every weight is one multiplication of `scale`.
"""
from libc.stdlib cimport free, realloc
from libc.string cimport memset
from libc.stdint cimport int32_t, int64_t, uint64_t
from preshed.maps cimport PreshMap, map_get, map_iter, MapStruct, key_t

import numpy
import srsly

cdef int32_t INITIAL_CAPACITY = 2
SERIAL_VERSION = 1


cdef class Weights:
    """Sparse class weights over hashed features.

    `time` counts ticks (training examples seen); `average()` returns the
    mean of the weight vectors after each tick, as a new frozen table.
    `version` changes on every write, so callers can cache scores safely.
    """

    def __init__(self):
        self.table = PreshMap()
        self.time = 0
        self.scale = 1.0
        self.version = 0
        self.n_entries = 0

    def __dealloc__(self):
        self._free_rows()

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
        cdef int i, j
        cdef const Row* row
        cdef const Entry* e
        cdef double scale = self.scale
        for i in range(n_feats):
            row = <const Row*>map_get(self.table.c_map, feats[i])
            if row == NULL:
                continue
            e = row.entries
            for j in range(row.length):
                scores[e[j].clas] += scale * e[j].w
        
    cdef double weight(self, feat_t feat, int clas) noexcept nogil:
        cdef const Row* row = <const Row*>map_get(self.table.c_map, feat)
        cdef int j
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

    cdef void update(self, feat_t feat, int clas, double delta) except *:
        """w[feat, clas] += delta (in true-weight units), keeping the average lazy."""
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
            e.time = self.time
            self.n_entries += 1
        e.total += (self.time - e.time) * e.w
        e.time = self.time
        e.w += delta / self.scale
        self.version += 1

    cdef void update_all(self, const feat_t* feats, int n_feats, int clas, double delta) except *:
        cdef int i
        for i in range(n_feats):
            self.update(feats[i], clas, delta)

    def tick(self, int64_t n=1):
        """Mark the end of n training examples (the unit of averaging)."""
        self.time += n

    def shrink(self, double factor):
        """Multiply every weight by factor (0 < factor <= 1), lazily: L2 decay."""
        if not (0.0 < factor <= 1.0):
            raise ValueError(f"shrink factor must be in (0, 1], got {factor}")
        self.scale *= factor
        self.version += 1
        if self.scale < 1e-6:
            self._fold_scale()

    def _fold_scale(self):
        cdef int i = 0, j
        cdef key_t key
        cdef void* value
        cdef Row* row
        while map_iter(self.table.c_map, &i, &key, &value):
            row = <Row*>value
            for j in range(row.length):
                row.entries[j].w *= self.scale
                row.entries[j].total *= self.scale
        self.scale = 1.0
        self.version += 1

    def average(self):
        """A new table holding the averaged weights (Collins 2002): the mean of
        the weight vectors after each tick. With no ticks, a copy."""
        cdef Weights avg = Weights()
        cdef int i = 0, j
        cdef key_t key
        cdef void* value
        cdef Row* row
        cdef Entry* e
        cdef double mean
        cdef int64_t T = self.time
        while map_iter(self.table.c_map, &i, &key, &value):
            row = <Row*>value
            for j in range(row.length):
                e = &row.entries[j]
                if T > 0:
                    mean = (e.total + (T - e.time) * e.w) / T
                else:
                    mean = e.w
                if mean != 0.0:
                    avg.update(key, e.clas, mean * self.scale)
        avg.version = 0
        return avg

    def copy(self):
        cdef Weights other = Weights()
        other.from_bytes(self.to_bytes())
        return other

    # Python-level access, for tests and inspection.
    def get(self, feat_t feat, int clas):
        return self.weight(feat, clas)

    def add(self, feat_t feat, int clas, double delta):
        self.update(feat, clas, delta)

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
        while map_iter(self.table.c_map, &i, &key, &value):
            row = <Row*>value
            for j in range(row.length):
                total += abs(row.entries[j].w)
                n += 1
        return (total * self.scale / n) if n else 0.0

    def __len__(self):
        return self.n_entries

    def to_arrays(self):
        """(keys, row lengths, classes, weights, totals, times), rows sorted by
        key so the bytes do not depend on insertion order."""
        cdef int i = 0, j
        cdef int64_t r, k = 0, n_rows = self.table.c_map.filled
        cdef key_t key
        cdef void* value
        cdef Row* row
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
        times = numpy.zeros((n,), dtype="int64")
        cdef int32_t[::1] cv = classes
        cdef double[::1] wv = ws
        cdef double[::1] tv = totals
        cdef int64_t[::1] timev = times
        k = 0
        for r in range(n_rows):
            row = <Row*>pv[r]
            for j in range(row.length):
                cv[k] = row.entries[j].clas
                wv[k] = row.entries[j].w
                tv[k] = row.entries[j].total
                timev[k] = row.entries[j].time
                k += 1
        return keys_sorted, lengths, classes, ws, totals, times

    def to_bytes(self):
        keys, lengths, classes, ws, totals, times = self.to_arrays()
        return srsly.msgpack_dumps({
            "serial_version": SERIAL_VERSION,
            "time": int(self.time), "scale": float(self.scale),
            "keys": keys.tobytes(), "lengths": lengths.tobytes(),
            "classes": classes.tobytes(), "w": ws.tobytes(),
            "total": totals.tobytes(), "times": times.tobytes(),
        })

    def from_bytes(self, bytes_data):
        cdef Row* row
        cdef int j
        try:
            msg = srsly.msgpack_loads(bytes_data)
            if msg.get("serial_version") != SERIAL_VERSION:
                raise ValueError(f"unknown weights format {msg.get('serial_version')!r}")
            keys = numpy.frombuffer(msg["keys"], dtype="uint64")
            lengths = numpy.frombuffer(msg["lengths"], dtype="int32")
            classes = numpy.frombuffer(msg["classes"], dtype="int32")
            ws = numpy.frombuffer(msg["w"], dtype="float64")
            totals = numpy.frombuffer(msg["total"], dtype="float64")
            times = numpy.frombuffer(msg["times"], dtype="int64")
            if (lengths.shape[0] != keys.shape[0] or int(lengths.sum()) != classes.shape[0]
                    or not (classes.shape[0] == ws.shape[0] == totals.shape[0] == times.shape[0])
                    or (classes.shape[0] and classes.min() < 0)):
                raise ValueError("array lengths do not agree")
        except Exception as err:
            raise ValueError(
                f"Corrupt or incompatible weights data ({err}). Re-train the "
                "component or load it from an intact model directory."
            ) from err
        self._free_rows()
        self.table = PreshMap(max(8, 2 * keys.shape[0]))
        self.n_entries = 0
        self.time = msg["time"]
        self.scale = msg["scale"]
        cdef int64_t start = 0, stop
        for r in range(keys.shape[0]):
            stop = start + lengths[r]
            row = self._row(keys[r])
            row.capacity = max(1, stop - start)
            row.entries = <Entry*>realloc(NULL, row.capacity * sizeof(Entry))
            if row.entries == NULL:
                raise MemoryError()
            for j in range(stop - start):
                row.entries[j].clas = classes[start + j]
                row.entries[j]._pad = 0
                row.entries[j].w = ws[start + j]
                row.entries[j].total = totals[start + j]
                row.entries[j].time = times[start + j]
            row.length = stop - start
            self.n_entries += row.length
            start = stop
        self.version += 1
        return self

    def __reduce__(self):
        return (_weights_from_bytes, (self.to_bytes(),))


def _weights_from_bytes(data):
    return Weights().from_bytes(data)
