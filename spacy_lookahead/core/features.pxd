from libc.stdint cimport uint64_t
from cymem.cymem cimport Pool
from preshed.maps cimport PreshMap
from murmurhash.mrmr cimport hash64

from .weights cimport feat_t

# Word-level atoms, computed once per word type (LexemeAtoms) and copied per
# token. 0 means "absent": no feature is emitted for it.
cdef enum:
    A_ORTH
    A_LOWER
    A_PRE1
    A_PRE2
    A_PRE3
    A_PRE4
    A_SUF1
    A_SUF2
    A_SUF3
    A_SUF4
    A_SHAPE
    A_HAS_DIGIT
    A_HAS_UPPER
    A_HAS_HYPHEN
    A_ALL_CAPS
    A_INIT_CAP
    N_WORD_ATOMS
    # Per-token inputs, filled by the component (0 = absent): the POS tag and
    # the chunk label (as IOB strings' hashes).
    A_TAG = N_WORD_ATOMS
    A_CHUNK
    # a tagger's alternative tag (its hash), or ATOM_SURE: the parser's
    # tag_alternatives
    A_TAG_ALT
    N_ATOMS

# Atom values no string's hash takes (features.hash_text and spaCy's string
# ids are never below 8): what a feature sees where there is no token or no
# label. Every system uses these, so that equal situations hash alike.
cdef enum:
    ATOM_BEFORE = 3      # a position before the doc, or an empty slot (no such word)
    ATOM_AFTER = 5       # a position after the doc
    ATOM_SURE = 6        # A_TAG_ALT of a token whose tag has no likely alternative
    LABEL_ATOM = 8       # label (action) l is seen as the atom LABEL_ATOM + l

# Substrings of the current word shorter than this (bio-NER features, after
# Tsuruoka et al. 2009 / Sun et al. Section 4.2), at most MAX_SUBSTRINGS.


cdef inline uint64_t atom_at(const uint64_t* atoms, int n, int i, int a) noexcept nogil:
    """Atom a of token i of an (n, N_ATOMS) atoms array; the sentinels
    outside the doc."""
    if i < 0:
        return ATOM_BEFORE
    if i >= n:
        return ATOM_AFTER
    return atoms[i * N_ATOMS + a]


cdef inline feat_t feat1(uint64_t template, uint64_t a) noexcept nogil:
    # A template id keeps equal atoms of different templates apart.
    return hash64(&a, sizeof(uint64_t), template)


cdef inline feat_t feat2(uint64_t template, uint64_t a, uint64_t b) noexcept nogil:
    cdef uint64_t buf[2]
    buf[0] = a
    buf[1] = b
    return hash64(buf, 2 * sizeof(uint64_t), template)


cdef inline feat_t feat3(uint64_t template, uint64_t a, uint64_t b, uint64_t c) noexcept nogil:
    cdef uint64_t buf[3]
    buf[0] = a
    buf[1] = b
    buf[2] = c
    return hash64(buf, 3 * sizeof(uint64_t), template)


cdef struct LexemeC:
    uint64_t atoms[N_WORD_ATOMS]
    int n_subs
    uint64_t* subs
    bint is_space   # spaCy's IS_SPACE: the text is whitespace


cdef class LexemeAtoms:
    cdef PreshMap cache
    cdef Pool mem
    cdef readonly bint substrings
    cdef const LexemeC* get(self, uint64_t orth, object strings) except NULL
