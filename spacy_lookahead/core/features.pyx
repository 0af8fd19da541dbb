"""Feature hashing: templates over word atoms, hashed to 64-bit keys.

Word atoms (forms, affixes, shape flags) depend on the word type only, so
they are computed in Python once per type and cached in C; per token, the
systems copy them and hash conjunctions with murmurhash in `nogil` code.
"""
from libc.string cimport memcpy
from libc.stdint cimport uint64_t
from cymem.cymem cimport Pool
from preshed.maps cimport PreshMap
from murmurhash.mrmr cimport hash64

import numpy


cdef uint64_t hash_text(str text):
    cdef bytes data = text.encode("utf8")
    cdef const char* p = data
    return hash64(<void*>p, len(data), 0) or 2  # 0 is reserved for "absent"


def word_atoms(str text):
    """The N_ATOMS atoms of a word form (Ratnaparkhi-style word features)."""
    atoms = [0] * N_ATOMS
    atoms[A_ORTH] = hash_text(text)
    atoms[A_LOWER] = hash_text(text.lower())
    n = len(text)
    for k in range(1, 5):
        if n >= k:
            atoms[A_PRE1 + k - 1] = hash_text(text[:k])
            atoms[A_SUF1 + k - 1] = hash_text(text[n - k:])
    shape = []
    for ch in text:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        m = len(shape)
        if m < 4 or shape[m - 1] != c or shape[m - 2] != c:
            shape.append(c)  # runs longer than 2 are cut, as spaCy's shape
    atoms[A_SHAPE] = hash_text("".join(shape))
    atoms[A_HAS_DIGIT] = 1 if any(ch.isdigit() for ch in text) else 0
    atoms[A_HAS_UPPER] = 1 if any(ch.isupper() for ch in text) else 0
    atoms[A_HAS_HYPHEN] = 1 if "-" in text else 0
    atoms[A_ALL_CAPS] = 1 if text.isupper() else 0
    atoms[A_INIT_CAP] = 1 if text[:1].isupper() else 0
    return atoms


cdef class LexemeAtoms:
    """Cache: spaCy orth id -> the word's atoms. Grows with the vocabulary;
    written only with the GIL held, never read by nogil code (which sees
    per-document copies), so it is safe under threads."""

    def __init__(self):
        self.mem = Pool()
        self.cache = PreshMap()

    cdef const uint64_t* get(self, uint64_t orth, object strings) except NULL:
        cdef uint64_t* atoms = <uint64_t*>self.cache.get(orth)
        cdef int i
        if atoms == NULL:
            values = word_atoms(strings[orth])
            atoms = <uint64_t*>self.mem.alloc(N_ATOMS, sizeof(uint64_t))
            for i in range(N_ATOMS):
                atoms[i] = values[i]
            self.cache.set(orth, atoms)
        return atoms

    cdef int fill(self, uint64_t* out, const uint64_t* orths, int n, object strings) except -1:
        cdef int i
        for i in range(n):
            memcpy(&out[i * N_ATOMS], self.get(orths[i], strings), N_ATOMS * sizeof(uint64_t))
        return 0

    def doc_atoms(self, doc):
        """(len(doc), N_ATOMS) array of the doc's word atoms."""
        cdef uint64_t[::1] orths = numpy.ascontiguousarray(doc.to_array("ORTH"), dtype="uint64")
        out = numpy.zeros((len(doc), N_ATOMS), dtype="uint64")
        cdef uint64_t[:, ::1] view = out
        if len(doc):
            self.fill(&view[0, 0], &orths[0], len(doc), doc.vocab.strings)
        return out
