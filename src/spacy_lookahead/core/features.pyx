"""Feature hashing: templates over word atoms, hashed to 64-bit keys.

Word atoms (forms, affixes, shape flags) depend on the word type only, so
they are computed in Python once per type (word_atoms here, a vocab entry's
in spacy_io, which caches both in C); per token, the systems copy them and
hash conjunctions with murmurhash in `nogil` code.
"""
from libc.stdint cimport uint64_t
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


MAX_SUBSTRING_LENGTH = 9
MAX_SUBSTRINGS = 64


def word_substrings(str text):
    """Hashes of the substrings of a word shorter than 10 characters (the
    bio-NER features of Tsuruoka et al. 2009 / Sun et al.), shortest first,
    at most MAX_SUBSTRINGS; a substring occurring twice counts once."""
    seen = {}
    n = len(text)
    for k in range(1, min(n, MAX_SUBSTRING_LENGTH) + 1):
        for start in range(n - k + 1):
            sub = text[start:start + k]
            if sub not in seen:
                seen[sub] = hash_text(sub)
                if len(seen) >= MAX_SUBSTRINGS:
                    return list(seen.values())
    return list(seen.values())


def word_atoms(str text):
    """The atoms of a word form that its text gives (A_ORTH .. A_INIT_CAP:
    Ratnaparkhi-style word features)."""
    atoms = [0] * A_NORM
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
