"""What the engine reads from spaCy: the atoms of a vocab entry (its lexeme
attributes, Brown cluster and probability bin: A_NORM .. A_PROB of
core/features.pxd) and, per doc, every token's word atoms (LexemeAtoms:
computed in Python once per word type, cached in C, copied per token into
the atoms array the systems read). The engine (core/) never sees a spaCy
object, only those arrays."""
from libc.string cimport memcpy
from libcpp.vector cimport vector
from libc.stdint cimport int64_t, uint64_t
from cymem.cymem cimport Pool
from preshed.maps cimport PreshMap

import numpy
from spacy.attrs import ORTH

from .core.features cimport N_ATOMS, N_WORD_ATOMS
from .core.features import word_atoms, word_substrings


cdef struct LexemeC:
    uint64_t atoms[N_WORD_ATOMS]
    int n_subs
    uint64_t* subs
    bint is_space   # spaCy's IS_SPACE: the text is whitespace


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
    cdef PreshMap cache
    cdef Pool mem
    cdef readonly bint substrings
    cdef readonly object lexicon  # what the cache was made with: the vocab's tables
    cdef readonly dict classes    # word text -> A_CLASS (the component's tag dictionary)

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
