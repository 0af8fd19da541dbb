"""Feature hashing: templates over word atoms, hashed to 64-bit keys.

Word atoms (forms, affixes, shape flags) depend on the word type only, so
they are computed once per type (word_atoms and word_substrings here, in C
over the text's UTF-8; a vocab entry's in spacy_io, which caches them all
in C), by the thread that meets the type first, with the GIL; per token,
the systems copy them and hash conjunctions with murmurhash in `nogil`
code.
"""
from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcmp, memset
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport (Py_UNICODE_ISDIGIT, Py_UNICODE_ISLOWER, Py_UNICODE_ISUPPER,
                              PyUnicode_AsUTF8AndSize)
from cymem.cymem cimport Pool
from murmurhash.mrmr cimport hash64

import numpy


cdef uint64_t hash_text(str text):
    cdef bytes data = text.encode("utf8")
    cdef const char* p = data
    return hash64(<void*>p, len(data), 0) or 2  # 0 is reserved for "absent"


cdef TemplateC* make_templates(Pool mem, dict arrays) except NULL:
    """The TemplateC structs of templates.compile_templates' arrays, in mem
    (at least one, so that the pointer is never NULL)."""
    cdef int n = len(arrays["ids"]), k, j
    cdef TemplateC* out = <TemplateC*>mem.alloc(max(1, n), sizeof(TemplateC))
    for k in range(n):
        out[k].id = arrays["ids"][k]
        out[k].n = arrays["n"][k]
        out[k].substrings = arrays["substrings"][k]
        out[k].doc = arrays["doc"][k]
        for j in range(MAX_CONJUNCTION):
            out[k].slot[j] = arrays["slots"][k, j]
            out[k].column[j] = arrays["columns"][k, j]
            out[k].bits[j] = arrays["bits"][k, j]
            out[k].flag[j] = arrays["flags"][k, j]
    return out


MAX_SUBSTRING_LENGTH = MAX_SUBSTRING_LENGTH_C
MAX_SUBSTRINGS = MAX_SUBSTRINGS_C


def word_substrings(str text):
    """Hashes of the substrings of a word shorter than 10 characters (the
    bio-NER features of Tsuruoka et al. 2009 / Sun et al.), shortest first,
    at most MAX_SUBSTRINGS; a substring occurring twice counts once."""
    cdef uint64_t found[MAX_SUBSTRINGS_C]
    cdef int m = word_substrings_into(text, found), j
    return [found[j] for j in range(m)]


cdef int word_substrings_into(str text, uint64_t* found) except -1:
    """word_substrings into found[0 .. MAX_SUBSTRINGS - 1], in C over the
    text's UTF-8 (hash_text of each substring); their number."""
    cdef Py_ssize_t nbytes, n = len(text), k, start, at, j, m = 0, lo, size
    cdef const char* data = PyUnicode_AsUTF8AndSize(text, &nbytes)
    cdef Py_ssize_t longest = min(n, <Py_ssize_t>MAX_SUBSTRING_LENGTH_C)
    cdef Py_ssize_t* offsets = <Py_ssize_t*>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t found_at[MAX_SUBSTRINGS_C]
    cdef Py_ssize_t found_size[MAX_SUBSTRINGS_C]
    cdef uint64_t h
    cdef bint seen
    if offsets == NULL:
        raise MemoryError(f"word_substrings: no memory for a word of {n} characters: free memory")
    try:
        k = 0
        for at in range(nbytes):  # where each character begins
            if (data[at] & 0xC0) != 0x80:
                offsets[k] = at
                k += 1
        offsets[n] = nbytes
        for k in range(1, longest + 1):
            for start in range(n - k + 1):
                lo, size = offsets[start], offsets[start + k] - offsets[start]
                h = _hash_bytes(data + lo, size)
                seen = False
                for j in range(m):  # (a repeat: the same bytes)
                    if found[j] == h and found_size[j] == size \
                            and memcmp(data + found_at[j], data + lo, size) == 0:
                        seen = True
                        break
                if seen:
                    continue
                found[m], found_at[m], found_size[m] = h, lo, size
                m += 1
                if m >= MAX_SUBSTRINGS_C:
                    return <int>m
        return <int>m
    finally:
        PyMem_Free(offsets)


def word_atoms(str text):
    """The atoms of a word form that its text gives (A_ORTH .. A_INIT_CAP:
    Ratnaparkhi-style word features)."""
    cdef uint64_t out[A_NORM]
    word_atoms_into(text, out)
    return [out[i] for i in range(A_NORM)]


cdef inline uint64_t _hash_bytes(const char* p, Py_ssize_t n) noexcept:
    return hash64(<void*>p, <int>n, 0) or 2  # as hash_text: 0 is reserved for "absent"


cdef inline int _utf8(uint32_t ch, char* out) noexcept:
    """ch's UTF-8 bytes into out; their number."""
    if ch < 0x80:
        out[0] = <char>ch
        return 1
    if ch < 0x800:
        out[0] = <char>(0xC0 | (ch >> 6))
        out[1] = <char>(0x80 | (ch & 0x3F))
        return 2
    if ch < 0x10000:
        out[0] = <char>(0xE0 | (ch >> 12))
        out[1] = <char>(0x80 | ((ch >> 6) & 0x3F))
        out[2] = <char>(0x80 | (ch & 0x3F))
        return 3
    out[0] = <char>(0xF0 | (ch >> 18))
    out[1] = <char>(0x80 | ((ch >> 12) & 0x3F))
    out[2] = <char>(0x80 | ((ch >> 6) & 0x3F))
    out[3] = <char>(0x80 | (ch & 0x3F))
    return 4


cdef int word_atoms_into(str text, uint64_t* atoms) except -1:
    """word_atoms into atoms[0 .. A_NORM - 1], in C over the text's UTF-8
    (the hashes of its prefixes and suffixes of 1-4 characters, its lower
    case and its shape, as hash_text of those strings; the character
    classes as str.isupper / islower / isdigit of one character, which
    Py_UNICODE_IS* are): what a new word type costs the thread that meets
    it (spacy_io), now mostly str.lower and the hashing."""
    cdef Py_ssize_t nbytes, n = len(text), at, k, m = 0, sb = 0
    cdef const char* data = PyUnicode_AsUTF8AndSize(text, &nbytes)
    cdef Py_ssize_t starts[5]  # where the first 5 characters begin (bytes)
    cdef Py_UCS4 ch, c, last1 = 0, last2 = 0
    cdef bint upper, lower, digit, has_digit = False, has_upper = False, hyphen = False
    cdef char* shape
    cdef char buf[256]
    memset(atoms, 0, A_NORM * sizeof(uint64_t))
    atoms[A_ORTH] = _hash_bytes(data, nbytes)
    atoms[A_LOWER] = hash_text(text.lower())
    # where each character begins: the first 4 and the last 4
    k = 0
    for at in range(nbytes):
        if (data[at] & 0xC0) != 0x80:
            if k < 5:
                starts[k] = at
            k += 1
    for k in range(1, 5):
        if n >= k:
            atoms[A_PRE1 + k - 1] = _hash_bytes(data, starts[k] if n > k else nbytes)
    k = 0
    at = nbytes
    while at > 0 and k < 4:
        at -= 1
        if (data[at] & 0xC0) != 0x80:
            k += 1
            atoms[A_SUF1 + k - 1] = _hash_bytes(data + at, nbytes - at)
    # the shape (runs longer than 2 cut, as spaCy's), at most 4 bytes a character
    if 4 * n <= 256:
        shape = &buf[0]
    else:
        shape = <char*>PyMem_Malloc(4 * n)
        if shape == NULL:
            raise MemoryError(f"word_atoms: no memory for the shape of a word of {n} characters: "
                              "free memory")
    try:
        for ch in text:
            upper, lower, digit = Py_UNICODE_ISUPPER(ch), Py_UNICODE_ISLOWER(ch), Py_UNICODE_ISDIGIT(ch)
            has_digit = has_digit or digit != 0
            has_upper = has_upper or upper != 0
            hyphen = hyphen or ch == u"-"
            c = u"X" if upper else u"x" if lower else u"d" if digit else ch
            if m < 4 or last1 != c or last2 != c:
                sb += _utf8(<uint32_t>c, shape + sb)
                m += 1
                last2, last1 = last1, c
        atoms[A_SHAPE] = _hash_bytes(shape, sb)
    finally:
        if shape != &buf[0]:
            PyMem_Free(shape)
    atoms[A_HAS_DIGIT] = has_digit
    atoms[A_HAS_UPPER] = has_upper
    atoms[A_HAS_HYPHEN] = hyphen
    atoms[A_ALL_CAPS] = text.isupper()
    atoms[A_INIT_CAP] = n > 0 and Py_UNICODE_ISUPPER(text[0])
    return 0


# The atoms array's columns, for Python code that fills the per-token inputs.
ATOMS_PER_TOKEN = N_ATOMS
A_TAG_COLUMN = A_TAG
A_CHUNK_COLUMN = A_CHUNK
A_TAG_ALT_COLUMN = A_TAG_ALT
SURE = ATOM_SURE


A_COLUMNS = {
    "orth": A_ORTH, "lower": A_LOWER, "pre1": A_PRE1, "pre2": A_PRE2, "pre3": A_PRE3,
    "pre4": A_PRE4, "suf1": A_SUF1, "suf2": A_SUF2, "suf3": A_SUF3, "suf4": A_SUF4,
    "shape": A_SHAPE, "has_digit": A_HAS_DIGIT, "has_upper": A_HAS_UPPER,
    "has_hyphen": A_HAS_HYPHEN, "all_caps": A_ALL_CAPS, "init_cap": A_INIT_CAP,
    "NORM": A_NORM, "SHAPE": A_SP_SHAPE, "PREFIX": A_PREFIX, "SUFFIX": A_SUFFIX,
    "flags": A_FLAGS, "cluster": A_CLUSTER, "prob": A_PROB, "ambiguity": A_CLASS,
    "tag": A_TAG, "chunk": A_CHUNK, "tag_alt": A_TAG_ALT,
}
A_CLUSTER_COLUMN = A_CLUSTER
A_PROB_COLUMN = A_PROB
CONSTANT_COLUMN = COLUMN_ONE
MAX_ATOMS_PER_TEMPLATE = MAX_CONJUNCTION
MAX_DOC_OCCURRENCES = MAX_OCCURRENCES


def doc_occurrences(atoms, starts):
    """For the `doc` templates: per token of a batch (atoms (N, N_ATOMS),
    each doc's tokens from starts[d]), the positions in its doc of the
    other occurrences of its word (A_LOWER) there: the one before it, the
    one after it, the second before, the second after (-1: none), as an
    (N, MAX_OCCURRENCES) int32 array. numpy over the whole batch."""
    atoms = numpy.asarray(atoms)
    starts = numpy.asarray(starts, dtype="int64")
    N = atoms.shape[0]
    out = numpy.full((N, MAX_OCCURRENCES), -1, dtype="int32")
    if N < 2:
        return out
    doc = numpy.repeat(numpy.arange(len(starts) - 1), numpy.diff(starts))
    local = numpy.arange(N) - starts[doc]
    lower = atoms[:, A_LOWER]
    order = numpy.lexsort((numpy.arange(N), lower, doc))  # by doc, word, position
    doc_s, lower_s = doc[order], lower[order]
    new_group = numpy.ones((N,), dtype=bool)
    new_group[1:] = (doc_s[1:] != doc_s[:N - 1]) | (lower_s[1:] != lower_s[:N - 1])
    group = numpy.cumsum(new_group)
    for k, shift in enumerate((1, 2)):
        same = group[shift:] == group[:N - shift]
        later, earlier = order[shift:][same], order[:N - shift][same]
        out[later, 2 * k] = local[earlier]      # its k-th occurrence before
        out[earlier, 2 * k + 1] = local[later]  # ... and after
    return out


def token_atoms(str text, tag=None, chunk=None, alternative=None, lexeme=None):
    """All N_ATOMS atoms of one token: its word atoms and input columns
    (the vocab's atoms A_NORM .. A_PROB 0, or a list of them)."""
    lexeme = [0] * (N_WORD_ATOMS - A_NORM) if lexeme is None else list(lexeme)
    lexeme += [0] * (N_WORD_ATOMS - A_NORM - len(lexeme))  # A_CLASS: none
    return word_atoms(text) + lexeme + [hash_text(tag) if tag else 0,
                                        hash_text(chunk) if chunk else 0,
                                        hash_text(alternative) if alternative else 0]


def string_atoms(values):
    """Atom hashes of strings (e.g. a doc's POS tags), 0 for empty ones."""
    return numpy.asarray([hash_text(v) if v else 0 for v in values], dtype="uint64")
