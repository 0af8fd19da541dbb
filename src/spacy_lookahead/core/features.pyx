"""Feature hashing: templates over word atoms, hashed to 64-bit keys.

Word atoms (forms, affixes, shape flags) depend on the word type only, so
they are computed in Python once per type and cached in C; per token, the
systems copy them and hash conjunctions with murmurhash in `nogil` code.
"""
from libc.string cimport memcpy
from libcpp.vector cimport vector
from libc.stdint cimport int64_t, uint64_t
from cymem.cymem cimport Pool
from preshed.maps cimport PreshMap
from murmurhash.mrmr cimport hash64

import numpy
from spacy.attrs import ORTH


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


# The vocab's lookups tables the lexeme atoms A_CLUSTER and A_PROB read
# (spacy-lookups-data's, loaded by [initialize.lookups]).
CLUSTER_TABLE = "lexeme_cluster"
PROB_TABLE = "lexeme_prob"
# A_PROB of a word in the table: PROB_BIN_BASE + floor(-log p), at most
# PROB_BIN_BASE + MAX_PROB_BIN (above the sentinels; 0 is "absent").
PROB_BIN_BASE = 16
MAX_PROB_BIN = 30


def vocab_tables(vocab):
    """(the vocab's cluster table or None, its probability table or None)."""
    lookups = vocab.lookups
    return (lookups.get_table(CLUSTER_TABLE) if lookups.has_table(CLUSTER_TABLE) else None,
            lookups.get_table(PROB_TABLE) if lookups.has_table(PROB_TABLE) else None)


def prob_bin(prob):
    """A_PROB of a word of log probability `prob` (None: not in the table)."""
    if prob is None:
        return 0
    return PROB_BIN_BASE + min(MAX_PROB_BIN, max(0, int(-float(prob) // 1)))


def lexeme_atoms(lexeme, tables):
    """The atoms A_NORM .. A_PROB of a vocab entry (spacy.lexeme.Lexeme),
    with `tables` = vocab_tables(its vocab)."""
    clusters, probs = tables
    orth = lexeme.orth
    return [lexeme.norm, lexeme.shape, lexeme.prefix, lexeme.suffix, lexeme.flags,
            int(clusters.get(orth, 0)) if clusters is not None else 0,
            prob_bin(probs.get(orth)) if probs is not None else 0]


cdef class LexemeAtoms:
    """Cache: spaCy orth id -> the word's atoms (and substrings, if asked).
    Grows with the vocabulary; written only with the GIL held, never read by
    nogil code (which sees per-document copies), so it is safe under threads.
    Made again when the vocab's cluster or probability table changes (e.g.
    after [initialize.lookups] or loading a pipeline)."""

    def __init__(self, bint substrings=False):
        self.mem = Pool()
        self.cache = PreshMap()
        self.substrings = substrings
        self.lexicon = None
        self.classes = {}

    def set_classes(self, dict classes):
        """The component's word classes (text -> A_CLASS atom); the cache is
        made again."""
        self.classes = dict(classes)
        self.mem = Pool()
        self.cache = PreshMap()

    cdef const LexemeC* get(self, uint64_t orth, object vocab, object tables) except NULL:
        cdef LexemeC* lex = <LexemeC*>self.cache.get(orth)
        cdef int i
        if lex == NULL:
            text = vocab.strings[orth]
            values = (word_atoms(text) + lexeme_atoms(vocab[orth], tables)
                      + [self.classes.get(text, 0)])
            lex = <LexemeC*>self.mem.alloc(1, sizeof(LexemeC))
            for i in range(N_WORD_ATOMS):
                lex.atoms[i] = values[i]
            lex.is_space = text.isspace()
            if self.substrings:
                subs = word_substrings(text)
                lex.n_subs = len(subs)
                lex.subs = <uint64_t*>self.mem.alloc(max(1, len(subs)), sizeof(uint64_t))
                for i in range(lex.n_subs):
                    lex.subs[i] = subs[i]
            self.cache.set(orth, lex)
        return lex

    def doc_atoms(self, doc):
        """(len(doc), N_ATOMS) array of the doc's word atoms; the per-token
        input columns (A_TAG, A_CHUNK) are left 0 for the caller to fill."""
        return self.doc_atoms_and_content(doc)[0]

    def doc_atoms_and_content(self, doc):
        """(doc_atoms(doc), the positions of the tokens that are not
        whitespace as int32, or None if no token is whitespace): one pass
        for both."""
        batch = self.docs_inputs([doc])
        space = batch["space"]
        return batch["atoms"], None if space is None else numpy.flatnonzero(space == 0).astype("int32")

    def doc_substrings(self, doc):
        """The substrings of each token as CSR arrays (offsets, hashes)."""
        if not self.substrings:
            raise ValueError("this LexemeAtoms does not compute substrings")
        return self.docs_inputs([doc])["substrings"]

    def docs_inputs(self, docs):
        """The word inputs of a batch of docs as one set of arrays over their
        tokens one after the other: "atoms" (N, N_ATOMS) (the input columns
        A_TAG, A_CHUNK left 0 for the caller), "starts" (n_docs + 1,) int64
        where each doc's tokens begin, "space" (N,) uint8, 1 on whitespace
        tokens (None if there is none), and with substrings "substrings":
        CSR (offsets (N + 1,) int32, hashes). One to_array per doc; the
        rest is C."""
        cdef int n_docs = len(docs), d, i, j
        cdef int64_t k = 0, N = 0, n_space = 0, n_subs = 0
        orth_arrays = []
        starts = numpy.zeros((n_docs + 1,), dtype="int64")
        cdef int64_t[::1] st = starts
        for d in range(n_docs):
            orth_arrays.append(numpy.ascontiguousarray(docs[d].to_array(ORTH), dtype="uint64"))
            st[d + 1] = st[d] + orth_arrays[d].shape[0]
        N = st[n_docs]
        atoms = numpy.zeros((N, N_ATOMS), dtype="uint64")
        space = numpy.zeros((N,), dtype="uint8")
        cdef uint64_t[:, ::1] view = atoms
        cdef unsigned char[::1] sp = space
        cdef uint64_t[::1] orths
        cdef const LexemeC* lex
        cdef vector[const LexemeC*] lexes  # the tokens' lexemes, for both passes
        lexes.resize(N)
        for d in range(n_docs):
            if st[d + 1] == st[d]:
                continue
            orths = orth_arrays[d]
            vocab = docs[d].vocab
            tables = self._tables(vocab)
            for i in range(st[d + 1] - st[d]):
                lexes[k] = self.get(orths[i], vocab, tables)
                k += 1
        for k in range(N):
            lex = lexes[k]
            memcpy(&view[k, 0], lex.atoms, N_WORD_ATOMS * sizeof(uint64_t))
            sp[k] = lex.is_space
            n_space += lex.is_space
            n_subs += lex.n_subs
        out = {"atoms": atoms, "starts": starts, "space": space if n_space else None}
        if not self.substrings:
            return out
        offsets = numpy.zeros((N + 1,), dtype="int32")
        hashes = numpy.zeros((max(1, n_subs),), dtype="uint64")
        cdef int[::1] ov = offsets
        cdef uint64_t[::1] hv = hashes
        n_subs = 0
        for k in range(N):
            lex = lexes[k]
            for j in range(lex.n_subs):
                hv[n_subs] = lex.subs[j]
                n_subs += 1
            ov[k + 1] = <int>n_subs
        out["substrings"] = (offsets, hashes)
        return out

    def _tables(self, vocab):
        """The vocab's tables; the cache is emptied where they are not the
        ones it was made with (once per doc: a look-up, no copy)."""
        tables = vocab_tables(vocab)
        if self.lexicon is None or self.lexicon[0] is not tables[0] \
                or self.lexicon[1] is not tables[1]:
            self.mem = Pool()
            self.cache = PreshMap()
            self.lexicon = tables
        return tables

    def __reduce__(self):
        return (_lexeme_atoms, (self.substrings, self.classes))


def _lexeme_atoms(substrings, classes):
    atoms = LexemeAtoms(substrings)
    atoms.set_classes(classes)
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
