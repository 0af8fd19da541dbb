"""Feature hashing: templates over word atoms, hashed to 64-bit keys.

Word atoms (forms, affixes, shape flags) depend on the word type only, so
they are computed once per type (word_atoms and word_substrings here, in C
over the text's UTF-8, Python's str.lower only where it is not ASCII; a
vocab entry's in spacy_io, which caches them all in C), by the thread that
meets the type first (an ASCII word's with the GIL released); per token,
the systems copy them and hash conjunctions with murmurhash in `nogil`
code.
"""
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memset
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from cymem.cymem cimport Pool
from murmurhash.mrmr cimport hash64

import numpy

# Python's character classes (its Unicode tables: C, no Python object)
cdef extern from "Python.h":
    bint _isupper "Py_UNICODE_ISUPPER" (Py_UCS4 ch) nogil
    bint _islower "Py_UNICODE_ISLOWER" (Py_UCS4 ch) nogil
    bint _isdigit "Py_UNICODE_ISDIGIT" (Py_UCS4 ch) nogil
    bint _isspace "Py_UNICODE_ISSPACE" (Py_UCS4 ch) nogil

cdef enum:
    _STACK_CHARS = 64  # a word's characters worked on the stack (longer: the heap)


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
    """word_substrings into found[0 .. MAX_SUBSTRINGS - 1] (utf8_substrings
    of the text's UTF-8); their number."""
    cdef Py_ssize_t nbytes
    cdef const char* data = PyUnicode_AsUTF8AndSize(text, &nbytes)
    cdef int m = utf8_substrings(data, nbytes, found)
    if m < 0:
        raise MemoryError(f"word_substrings: no memory for a word of {len(text)} characters: "
                          "free memory")
    return m


cdef int utf8_substrings(const char* data, Py_ssize_t nbytes, uint64_t* found) noexcept nogil:
    """word_substrings of a word's (valid) UTF-8 into found[0 ..
    MAX_SUBSTRINGS - 1], without the GIL (hash_text of each substring);
    their number, or -1 out of memory."""
    cdef Py_ssize_t n = 0, k, start, at, j, m = 0, lo, size, longest
    cdef Py_ssize_t stack[_STACK_CHARS + 1]
    cdef Py_ssize_t* offsets = &stack[0]
    cdef Py_ssize_t found_at[MAX_SUBSTRINGS_C]
    cdef Py_ssize_t found_size[MAX_SUBSTRINGS_C]
    cdef uint64_t h
    cdef bint seen
    cdef unsigned char slots[2 * MAX_SUBSTRINGS_C]  # found's hashes: 1 + the index (0: empty)
    memset(slots, 0, sizeof(slots))
    for at in range(nbytes):
        n += (data[at] & 0xC0) != 0x80
    longest = min(n, <Py_ssize_t>MAX_SUBSTRING_LENGTH_C)
    if n > _STACK_CHARS:
        offsets = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if offsets == NULL:
            return -1
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
            at = h % (2 * MAX_SUBSTRINGS_C)  # (a repeat: the same bytes; open addressing)
            while slots[at]:
                j = slots[at] - 1
                if found[j] == h and found_size[j] == size \
                        and memcmp(data + found_at[j], data + lo, size) == 0:
                    seen = True
                    break
                at = (at + 1) % (2 * MAX_SUBSTRINGS_C)
            if seen:
                continue
            slots[at] = <unsigned char>(m + 1)
            found[m], found_at[m], found_size[m] = h, lo, size
            m += 1
            if m >= MAX_SUBSTRINGS_C:
                break
        if m >= MAX_SUBSTRINGS_C:
            break
    if offsets != &stack[0]:
        free(offsets)
    return <int>m


def word_atoms(str text):
    """The atoms of a word form that its text gives (A_ORTH .. A_INIT_CAP:
    Ratnaparkhi-style word features)."""
    cdef uint64_t out[A_NORM]
    word_atoms_into(text, out)
    return [out[i] for i in range(A_NORM)]


cdef inline uint64_t _hash_bytes(const char* p, Py_ssize_t n) noexcept nogil:
    return hash64(<void*>p, <int>n, 0) or 2  # as hash_text: 0 is reserved for "absent"


cdef inline int _utf8(uint32_t ch, char* out) noexcept nogil:
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


cdef inline Py_UCS4 _next_char(const unsigned char* data, Py_ssize_t* at) noexcept nogil:
    """The character of (valid) UTF-8 that begins at data[at[0]]; at moved past it."""
    cdef Py_ssize_t i = at[0]
    cdef unsigned char b = data[i]
    if b < 0x80:
        at[0] = i + 1
        return b
    if b < 0xE0:
        at[0] = i + 2
        return ((b & 0x1F) << 6) | (data[i + 1] & 0x3F)
    if b < 0xF0:
        at[0] = i + 3
        return ((b & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F)
    at[0] = i + 4
    return (((b & 0x07) << 18) | ((data[i + 1] & 0x3F) << 12) | ((data[i + 2] & 0x3F) << 6)
            | (data[i + 3] & 0x3F))


cdef int word_atoms_into(str text, uint64_t* atoms) except -1:
    """word_atoms into atoms[0 .. A_NORM - 1]: utf8_word_atoms of the
    text's UTF-8, and where it is not ASCII, A_LOWER and A_ALL_CAPS from
    Python's str.lower (its full case mapping and final sigma) and
    str.isupper."""
    cdef Py_ssize_t nbytes
    cdef const char* data = PyUnicode_AsUTF8AndSize(text, &nbytes)
    cdef int made = utf8_word_atoms(data, nbytes, atoms)
    if made < 0:
        raise MemoryError(f"word_atoms: no memory for the shape or lower case of a word of "
                          f"{len(text)} characters: free memory")
    if made == 0:
        atoms[A_LOWER] = hash_text(text.lower())
        atoms[A_ALL_CAPS] = text.isupper()
    return 0


cdef int utf8_word_atoms(const char* text, Py_ssize_t nbytes, uint64_t* atoms) noexcept nogil:
    """word_atoms of a word's (valid) UTF-8 into atoms[0 .. A_NORM - 1],
    without the GIL: the hashes of its prefixes and suffixes of 1-4
    characters, its lower case and its shape, as hash_text of those
    strings; the character classes as str.isupper / islower / isdigit of
    one character, which Py_UNICODE_IS* are. 1: all made; 0: all but
    A_LOWER and A_ALL_CAPS, left for Python where the text is not ASCII
    (str.lower's full case mapping); -1: out of memory (a shape or lower
    case past the stack's buffer)."""
    cdef const unsigned char* data = <const unsigned char*>text
    cdef Py_ssize_t n = 0, at, k, m = 0, sb = 0
    cdef Py_ssize_t starts[5]  # where the first 5 characters begin (bytes)
    cdef Py_UCS4 ch, c, last1 = 0, last2 = 0
    cdef bint upper, lower, digit, has_digit = False, has_upper = False, hyphen = False
    cdef bint ascii = True, has_lower = False
    cdef char* shape
    cdef char buf[4 * _STACK_CHARS]
    memset(atoms, 0, A_NORM * sizeof(uint64_t))
    atoms[A_ORTH] = _hash_bytes(text, nbytes)
    # where each character begins: the first 4 and the last 4
    for at in range(nbytes):
        ascii = ascii and data[at] < 0x80
        if (data[at] & 0xC0) != 0x80:
            if n < 5:
                starts[n] = at
            n += 1
    for k in range(1, 5):
        if n >= k:
            atoms[A_PRE1 + k - 1] = _hash_bytes(text, starts[k] if n > k else nbytes)
    k = 0
    at = nbytes
    while at > 0 and k < 4:
        at -= 1
        if (data[at] & 0xC0) != 0x80:
            k += 1
            atoms[A_SUF1 + k - 1] = _hash_bytes(text + at, nbytes - at)
    # the shape (runs longer than 2 cut, as spaCy's), at most 4 bytes a character
    shape = &buf[0]
    if n > _STACK_CHARS:
        shape = <char*>malloc(4 * n)
        if shape == NULL:
            return -1
    at = 0
    while at < nbytes:
        ch = _next_char(data, &at)
        if ch < 0x80:  # (ASCII's classes: A-Z, a-z, 0-9, as Python's tables say)
            upper, lower, digit = 0x41 <= ch <= 0x5A, 0x61 <= ch <= 0x7A, 0x30 <= ch <= 0x39
        else:
            upper, lower, digit = _isupper(ch), _islower(ch), _isdigit(ch)
        has_digit = has_digit or digit
        has_upper = has_upper or upper
        has_lower = has_lower or lower
        hyphen = hyphen or ch == 0x2D  # "-"
        c = 0x58 if upper else 0x78 if lower else 0x64 if digit else ch  # X x d
        if m < 4 or last1 != c or last2 != c:
            sb += _utf8(<uint32_t>c, shape + sb)
            m += 1
            last2, last1 = last1, c
    atoms[A_SHAPE] = _hash_bytes(shape, sb)
    if shape != &buf[0]:
        free(shape)
    atoms[A_HAS_DIGIT] = has_digit
    atoms[A_HAS_UPPER] = has_upper
    atoms[A_HAS_HYPHEN] = hyphen
    at = 0
    ch = _next_char(data, &at) if n > 0 else 0  # (the classes may be macros: a variable)
    atoms[A_INIT_CAP] = n > 0 and _isupper(ch)
    if not ascii:
        return 0
    # ASCII: str.lower is each letter's lower case; str.isupper, an upper
    # case letter and no lower case one
    shape = &buf[0]
    if nbytes > 4 * _STACK_CHARS:
        shape = <char*>malloc(nbytes)
        if shape == NULL:
            return -1
    for at in range(nbytes):
        shape[at] = <char>(data[at] + 32 if 0x41 <= data[at] <= 0x5A else data[at])
    atoms[A_LOWER] = _hash_bytes(shape, nbytes)
    if shape != &buf[0]:
        free(shape)
    atoms[A_ALL_CAPS] = has_upper and not has_lower
    return 1


cdef int utf8_is_space(const char* text, Py_ssize_t nbytes) noexcept nogil:
    """str.isspace of a word's (valid) UTF-8: some characters, all
    whitespace (Py_UNICODE_ISSPACE, which str.isspace is)."""
    cdef const unsigned char* data = <const unsigned char*>text
    cdef Py_ssize_t at = 0
    cdef Py_UCS4 ch
    if nbytes == 0:
        return 0
    while at < nbytes:
        ch = _next_char(data, &at)  # (Py_UNICODE_ISSPACE may read its argument twice)
        if not _isspace(ch):
            return 0
    return 1


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

