"""What the engine reads from spaCy and writes back, in C on spaCy's own
structs (`Doc.c`, an array of `TokenC`): the atoms of a vocab entry (its
lexeme attributes, Brown cluster and probability bin: A_NORM .. A_PROB of
core/features.pxd) and, per batch, every token's word atoms (LexemeAtoms:
computed once per word type, in C from the StringStore's UTF-8 and the
LexemeC where the text is ASCII, cached in C, copied per token into
the atoms array the systems read, with the GIL released, or left to the
thread that searches each doc: WordRows); and the outputs
(tags, arcs, entities, span groups) written per batch into the tokens, with
no Python per token or per span (tags, entities and a group's spans
through a LabelSink, which decode_docs' threads fill doc by doc in
pipe()). The engine (core/) never sees a spaCy object, only those arrays.

The C structs are spaCy's ABI: this module is compiled against one spaCy
minor version (setup.cfg pins spacy to it), as spaCy's own extensions are."""
from libc.math cimport floor, isfinite
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector
from libc.stdint cimport int64_t, uint64_t
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject
from cpython.weakref cimport PyWeakref_NewRef
from preshed.maps cimport MapStruct, PreshMap, map_get
from spacy.strings cimport StringStore, Utf8Str
from spacy.structs cimport LexemeC, SpanC, TokenC
from spacy.tokens.doc cimport Doc, set_children_from_heads
from spacy.tokens.span_group cimport SpanGroup
from spacy.vocab cimport Vocab

import threading
from types import MappingProxyType

import numpy
cimport numpy as cnp

cnp.import_array()

from .core.atomics cimport la_claim, la_load_acquire, la_store_release, la_wait_turn
from .core.clock cimport add_since, now_ns
from .core.instance cimport DocRows, DocSink
from .core.nothrow cimport la_push, la_reserve, la_resize
from .core.readmap cimport la_readmap, la_rm_add, la_rm_free, la_rm_get
from .systems.span_ids cimport id_spans

from .core.features cimport (A_CHUNK, A_CLASS, A_CLUSTER, A_FLAGS, A_NORM, A_PREFIX, A_PROB,
                             A_SP_SHAPE, A_SUFFIX, A_TAG, N_ATOMS, N_WORD_ATOMS,
                             MAX_SUBSTRINGS_C, utf8_is_space, utf8_substrings,
                             utf8_word_atoms, word_atoms_into, word_substrings_into)
from spacy.lookups import Table
from spacy.strings import get_string_id
from spacy.symbols import NAMES as _SYMBOL_NAMES


cdef struct ChunkTable:  # ChunkAtoms' chunk types, as read without the GIL
    const uint64_t* labels  # the chunk types' label hashes
    const uint64_t* pairs   # ... and each one's B-X, I-X hashes
    size_t n
    uint64_t outside        # O


cdef struct WordC:
    uint64_t atoms[N_WORD_ATOMS]
    int n_subs
    uint64_t* subs
    bint is_space   # spaCy's IS_SPACE: the text is whitespace


cdef struct NewWord:
    # A word type of a batch that the cache lacked (WordRows' new words):
    # all but its text atoms found by the calling thread (LexemeAtoms.
    # _pend_new_words), the rest made by the first searching thread that
    # meets it (WordRows._made), then kept in the cache (keep_new_words).
    WordC word
    uint64_t orth
    size_t at         # its UTF-8 (ASCII) in the batch's new_text, from `at`
    Py_ssize_t nbytes # ... of nbytes
    int state         # _UNMADE, _MAKING, _MADE or _FAILED (core.atomics)


# NewWord.state
cdef enum:
    _UNMADE = 0
    _MAKING = 1
    _MADE = 2
    _FAILED = 3  # (no memory: the doc is left, and the caller's path raises)


# The lookups tables the lexeme atoms A_CLUSTER and A_PROB read
# (spacy-lookups-data's, loaded into the vocab by [initialize.lookups]; a
# trained component reads its own copy: docs_inputs' `own`).
CLUSTER_TABLE = "lexeme_cluster"
PROB_TABLE = "lexeme_prob"
# A_PROB of a word in the table: PROB_BIN_BASE + floor(-log p), at most
# PROB_BIN_BASE + MAX_PROB_BIN (above the sentinels; 0 is "absent").
cdef enum:
    _PROB_BIN_BASE = 16
    _MAX_PROB_BIN = 30
PROB_BIN_BASE = _PROB_BIN_BASE
MAX_PROB_BIN = _MAX_PROB_BIN


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


cdef uint64_t _N_SYMBOLS = len(_SYMBOL_NAMES)  # (spaCy's symbols: ids below it)


cdef const char* _utf8_of(StringStore strings, uint64_t orth, Py_ssize_t* nbytes) noexcept:
    """The UTF-8 of the string `orth` in `strings` (its length into
    nbytes), NULL where its map lacks it: what spaCy's decode_Utf8Str
    reads, without making a str (the layout of spaCy's Utf8Str)."""
    return _utf8_in(<const Utf8Str*>strings._map.get(orth), nbytes)


cdef inline bint _is_inline(const Utf8Str* string) noexcept:
    """Whether the string's bytes are in the Utf8Str itself (short)."""
    return string.s[0] < sizeof(string.s) and string.s[0] != 0


cdef const char* _utf8_in(const Utf8Str* string, Py_ssize_t* nbytes) noexcept:
    """_utf8_of's bytes of a StringStore entry (NULL: none)."""
    cdef Py_ssize_t i = 0, length = 0
    if string == NULL:
        return NULL
    if _is_inline(string):
        nbytes[0] = string.s[0]
        return <const char*>&string.s[1]
    if string.p[0] < 255:
        nbytes[0] = string.p[0]
        return <const char*>&string.p[1]
    while string.p[i] == 255:
        i += 1
        length += 255
    length += string.p[i]
    nbytes[0] = length
    return <const char*>&string.p[i + 1]


cdef inline const Utf8Str* _entry_of(StringStore strings, uint64_t orth) noexcept:
    """The StringStore's entry of the string `orth` (NULL: none, or a
    symbol's, whose text is not in its map)."""
    return <const Utf8Str*>strings._map.get(orth) if orth >= _N_SYMBOLS else NULL


cdef inline bint _is_ascii(const char* data, Py_ssize_t nbytes) noexcept:
    cdef Py_ssize_t i
    for i in range(nbytes):
        if <unsigned char>data[i] >= 0x80:
            return False
    return True


cdef int _text_atoms(const char* data, Py_ssize_t nbytes, WordC* word) noexcept nogil:
    """A new ASCII word's text atoms (A_ORTH .. A_INIT_CAP), whitespace
    flag and, where word.subs is set, substrings (what get() and the
    threads' WordRows._made make): 1, or -1 out of memory."""
    cdef int made = utf8_word_atoms(data, nbytes, word.atoms)
    word.is_space = utf8_is_space(data, nbytes)
    word.n_subs = utf8_substrings(data, nbytes, word.subs) if word.subs != NULL else 0
    return 1 if made == 1 and word.n_subs >= 0 else -1


cdef int _made_without_gil(const char* data, Py_ssize_t nbytes, WordC* word) noexcept:
    """_text_atoms with the GIL released (the nogil clock counts it): from
    a copy of the UTF-8, as the StringStore's may change once the GIL is
    let go."""
    cdef char stack[256]
    cdef char* copy = stack
    cdef int made
    cdef int64_t t0
    if nbytes > <Py_ssize_t>sizeof(stack):
        copy = <char*>malloc(nbytes)
        if copy == NULL:
            return -1
    memcpy(copy, data, nbytes)
    t0 = now_ns()
    with nogil:
        made = _text_atoms(copy, nbytes, word)
    add_since(t0)
    if copy != stack:
        free(copy)
    return made


cdef inline void _struct_atoms(uint64_t* atoms, const LexemeC* lexeme,
                               const MapStruct* classes) noexcept nogil:
    """A word's atoms from its LexemeC (lexeme_atoms' A_NORM .. A_FLAGS) and
    its class (by orth id); A_CLUSTER and A_PROB are the tables'."""
    atoms[A_NORM] = lexeme.norm
    atoms[A_SP_SHAPE] = lexeme.shape
    atoms[A_PREFIX] = lexeme.prefix
    atoms[A_SUFFIX] = lexeme.suffix
    atoms[A_FLAGS] = lexeme.flags
    atoms[A_CLASS] = <uint64_t>map_get(classes, lexeme.orth)


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define la_prefetch(p) __builtin_prefetch(p)
    #else
    #define la_prefetch(p) ((void)(p))
    #endif
    """
    void la_prefetch(const void* p) nogil


cdef enum:
    _AHEAD = 8  # the tokens a scan asks the memory for its lexemes ahead (la_prefetch)
    # LexemeAtoms._pend_new_words: how far ahead each read of a word's text
    # is asked for (the StringStore's map cell, its entry, a long string's
    # bytes), and the ring of entries found ahead (> _ENTRY_AHEAD)
    _CELL_AHEAD = 8
    _ENTRY_AHEAD = 4
    _BYTES_AHEAD = 2
    _RING = 8


cdef object _table_get(object table, uint64_t orth, object default):
    """table.get(orth, default) of a lookups Table (a dict by orth ids: its
    get reads an int key as the dict does) or any mapping."""
    cdef PyObject* value
    if type(table) is not Table and type(table) is not dict:
        return table.get(orth, default)
    value = PyDict_GetItem(table, orth)
    return default if value == NULL else <object>value


cdef uint64_t _cluster_of(object clusters, uint64_t orth) except? 0:
    """lexeme_atoms' A_CLUSTER of the word `orth` (clusters: its table or None)."""
    return int(_table_get(clusters, orth, 0)) if clusters is not None else 0


cdef uint64_t _prob_of(object probs, uint64_t orth) except? 0:
    """lexeme_atoms' A_PROB of the word `orth` (probs: its table or None):
    prob_bin's, in C for a finite float (what the tables hold)."""
    cdef double p, b
    if probs is None:
        return 0
    value = _table_get(probs, orth, None)
    if type(value) is not float or not isfinite(<double>value):
        return prob_bin(value)  # (None, another type, or its error)
    p = value
    b = floor(-p)  # (-p // 1, for a finite float)
    return _PROB_BIN_BASE + <uint64_t>(_MAX_PROB_BIN if b > _MAX_PROB_BIN else 0 if b < 0 else b)


cdef enum:
    _WORD_BLOCK = 1 << 16  # the bytes of a block of the word cache's memory


cdef class WordCache:
    """spaCy orth id -> the word's atoms (a WordC, owned here): added by
    one thread at a time (LexemeAtoms, with the GIL and its lock), read by
    any thread at any time without a lock (core.readmap): the threads that
    search one batch look up their docs' words while the thread that makes
    the next batch adds new ones. Whoever reads its words keeps it alive.
    The words' memory is taken from blocks that live as long as the cache
    (a pointer bump a word: no allocator, no Python)."""
    cdef la_readmap map
    cdef vector[void*] blocks  # the memory of the words (freed with the cache)
    cdef char* free_at         # ... where the last block's free part begins
    cdef size_t free_bytes     # ... and its size

    def __cinit__(self):
        memset(&self.map, 0, sizeof(la_readmap))
        self.free_at = NULL
        self.free_bytes = 0

    def __dealloc__(self):
        cdef size_t i
        la_rm_free(&self.map)
        for i in range(self.blocks.size()):
            free(self.blocks[i])

    cdef void* take(self, size_t size) except NULL:
        """size zeroed bytes (16-byte aligned) that live as long as the cache."""
        cdef size_t block = _WORD_BLOCK
        cdef void* out
        size = (size + 15) & ~(<size_t>15)
        if size > self.free_bytes:
            block = max(block, size)
            out = calloc(1, block)
            if out == NULL or la_push(self.blocks, out) != 0:
                free(out)
                raise MemoryError("no memory left for the word cache: free memory")
            self.free_at, self.free_bytes = <char*>out, block
        out = self.free_at
        self.free_at += size
        self.free_bytes -= size
        return out

    def __len__(self):
        return self.map.size

    cdef inline const WordC* find(self, uint64_t orth) noexcept nogil:
        return <const WordC*>la_rm_get(&self.map, orth)

    cdef int add(self, uint64_t orth, const WordC* lex) except -1:
        if la_rm_add(&self.map, orth, <void*>lex) != 0:
            raise MemoryError("no memory left for the word cache: free memory")
        return 0


cdef class LexemeAtoms:
    """Cache: spaCy orth id -> the word's atoms (and substrings, if asked).
    Grows with the vocabulary; written with the GIL held and `lock` (two
    pipe() calls on one component at once), read without either by the
    nogil passes of docs_inputs and by the searching threads that look
    their docs' words up (docs_inputs' `lookup`; a WordCache).
    Made again when the cluster or probability table it reads changes (e.g.
    after [initialize.lookups] or loading a pipeline)."""
    cdef WordCache cache
    cdef object lock
    cdef readonly bint substrings
    cdef readonly object lexicon  # the tables and the vocab the cache was made with
    cdef dict _classes            # word text -> A_CLASS (the component's tag dictionary)
    cdef PreshMap class_ids       # ... by the text's orth id (get's C path)
    cdef list unkept              # the batches whose threads make new words, since the last scan

    def __init__(self, bint substrings=False):
        self.lock = threading.Lock()
        self.cache = WordCache()
        self.substrings = substrings
        self.lexicon = None
        self._classes = {}
        self.class_ids = PreshMap()
        self.unkept = []

    @property
    def classes(self):
        """The component's word classes (text -> A_CLASS atom), read-only:
        set_classes changes them (and the map by orth id beside them)."""
        return MappingProxyType(self._classes)

    def set_classes(self, classes):
        """The component's word classes (a mapping: text -> A_CLASS atom);
        the cache is made again."""
        with self.lock:
            self._set_classes(dict(classes))

    def clear(self) -> None:
        """The cache emptied: every word new again (e.g. to time fresh
        text: benchmarks.gil --cold)."""
        with self.lock:
            self.cache = WordCache()
            self.unkept = []

    def __len__(self):
        """The word types cached."""
        return len(self.cache)

    def _set_classes(self, dict classes):
        cdef PreshMap ids = PreshMap()
        cdef uint64_t key
        for text, value in classes.items():  # (by their orth ids: get's C path)
            key = get_string_id(text)
            if key < _N_SYMBOLS:  # ("" or a symbol: read by text, on get's Python path)
                continue
            ids.set(key, <void*><uint64_t>value)
        self._classes = classes
        self.class_ids = ids
        self.cache = WordCache()

    cdef const WordC* get(self, const LexemeC* lexeme, object vocab, object tables) except NULL:
        """The cached word of a vocab entry, made and cached where it is
        new: in C where its text is ASCII (its UTF-8 read from the
        StringStore, the lexeme attributes from the LexemeC), else by
        Python's string methods (str.lower's full case mapping)."""
        cdef uint64_t orth = lexeme.orth
        cdef const WordC* lex = self.cache.find(orth)
        cdef uint64_t subs[MAX_SUBSTRINGS_C]
        cdef WordC word
        cdef int i
        cdef Py_ssize_t nbytes = 0
        cdef const char* data = NULL
        if lex != NULL:
            return lex
        memset(&word, 0, sizeof(WordC))
        if self.substrings:
            word.subs = subs
        if orth >= _N_SYMBOLS:  # (a symbol's text is not in the StringStore's map)
            data = _utf8_of((<Vocab?>vocab).strings, orth, &nbytes)
        if data != NULL and _is_ascii(data, nbytes):  # (without the GIL)
            if _made_without_gil(data, nbytes, &word) < 0:
                raise MemoryError(f"word atoms: no memory for a word of {nbytes} characters: "
                                  "free memory")
            _struct_atoms(word.atoms, lexeme, self.class_ids.c_map)
            word.atoms[A_CLUSTER] = _cluster_of(tables[0], orth)
            word.atoms[A_PROB] = _prob_of(tables[1], orth)
        else:
            text = vocab.strings[orth]
            word_atoms_into(text, word.atoms)  # (A_ORTH .. A_INIT_CAP, in C but str.lower)
            values = lexeme_atoms(vocab[orth], tables)
            for i in range(N_WORD_ATOMS - A_NORM - 1):
                word.atoms[A_NORM + i] = values[i]
            word.atoms[A_CLASS] = self._classes.get(text, 0)
            word.n_subs = word_substrings_into(text, subs) if self.substrings else 0
            word.is_space = text.isspace()
        # (made whole, then kept: an error above leaves nothing behind)
        return self._cached(orth, &word)

    cdef const WordC* _cached(self, uint64_t orth, const WordC* word) except NULL:
        """A copy of `word` (its substrings where the cache keeps them) in
        the cache's memory, cached as the word `orth`."""
        cdef WordC* lex = <WordC*>self.cache.take(sizeof(WordC))
        memcpy(lex.atoms, word.atoms, N_WORD_ATOMS * sizeof(uint64_t))
        lex.is_space = word.is_space
        if self.substrings:
            lex.n_subs = word.n_subs
            lex.subs = <uint64_t*>self.cache.take(max(1, word.n_subs) * sizeof(uint64_t))
            memcpy(lex.subs, word.subs, word.n_subs * sizeof(uint64_t))
        self.cache.add(orth, lex)
        return lex

    cdef int _pend_new_words(self, WordRows rows, object vocab, object tables) except -1:
        """The batch's word types that the cache lacks, handed to its
        searching threads (docs_inputs' `new_words`): each ASCII one's text
        copied and its other atoms found here (the lexeme's, the tables',
        the class: what get() reads), its text atoms made by the thread
        that first meets it (WordRows._made); the others made here (get).
        The cache is not changed for the ASCII ones: keep_new_words adds
        them after the search (and the words that the batches still being
        searched made already are kept first). With the lock held."""
        cdef StringStore strings = (<Vocab?>vocab).strings
        cdef vector[const LexemeC*] missing  # the word types that the cache lacks, once each
        cdef vector[const LexemeC*] others   # ... those made here (not ASCII, symbols)
        cdef la_readmap seen
        cdef int64_t k = 0, j, N = rows.st[rows.n_docs]
        cdef int d, i, failed = 0
        cdef const LexemeC* lexeme
        cdef uint64_t orth
        cdef const char* data
        cdef Py_ssize_t nbytes = 0
        cdef NewWord w
        cdef size_t at
        cdef int64_t n, t0
        for earlier in self.unkept:  # (their threads may still search: made words alone)
            self._keep_made(earlier)
        self.unkept = []
        memset(&seen, 0, sizeof(la_readmap))
        memset(&w, 0, sizeof(NewWord))  # (the text atoms, n_subs, state: 0 until a thread makes it)
        t0 = now_ns()
        with nogil:
            for d in range(rows.n_docs):
                n = rows.st[d + 1] - rows.st[d]
                for i in range(n):
                    if i + _AHEAD < n:  # (the lexemes are spread over the vocab's memory)
                        la_prefetch(rows.doc_tokens[d][i + _AHEAD].lex)
                    lexeme = rows.doc_tokens[d][i].lex
                    if self.cache.find(lexeme.orth) == NULL \
                            and la_rm_get(&seen, lexeme.orth) == NULL:
                        if la_rm_add(&seen, lexeme.orth, <void*>lexeme) != 0 \
                                or la_push(missing, lexeme) != 0:
                            break
                    k += 1
            la_rm_free(&seen)
        add_since(t0)
        if k < N:
            raise MemoryError("docs_inputs: no memory for the batch's new words: free memory")
        # Each word's text is two or three reads from memory that no cache
        # holds (the StringStore's map, its entry, the bytes of a long one):
        # each asked for ahead (a ring of the entries found ahead). No Python
        # runs in this loop (it could let another thread change the
        # StringStore: the tables and the words made here come after)
        cdef const MapStruct* store = strings._map.c_map
        cdef const Utf8Str* ahead[_RING]
        cdef const Utf8Str* entry
        cdef int64_t n_missing = missing.size()
        for j in range(min(_ENTRY_AHEAD, n_missing)):
            ahead[j] = _entry_of(strings, missing[j].orth)
        for j in range(n_missing):
            if j + _CELL_AHEAD < n_missing:
                la_prefetch(&store.cells[missing[j + _CELL_AHEAD].orth & (store.length - 1)])
            if j + _ENTRY_AHEAD < n_missing:
                entry = ahead[(j + _ENTRY_AHEAD) % _RING] = _entry_of(strings,
                                                                     missing[j + _ENTRY_AHEAD].orth)
                if entry != NULL:
                    la_prefetch(entry)
            if j + _BYTES_AHEAD < n_missing:
                entry = ahead[(j + _BYTES_AHEAD) % _RING]
                if entry != NULL and not _is_inline(entry):
                    la_prefetch(entry.p)
            lexeme = missing[j]
            data = _utf8_in(ahead[j % _RING], &nbytes)
            if data == NULL or not _is_ascii(data, nbytes):
                failed = failed or la_push(others, lexeme) != 0
                continue
            _struct_atoms(w.word.atoms, lexeme, self.class_ids.c_map)  # (get's)
            w.orth, w.at, w.nbytes = lexeme.orth, rows.new_text.size(), nbytes
            if la_resize(rows.new_text, w.at + nbytes) != 0 or la_push(rows.new_words, w) != 0 \
                    or la_rm_add(&rows.new_map, w.orth, <void*>rows.new_words.size()) != 0:
                failed = 1
                break
            memcpy(&rows.new_text[w.at], data, nbytes)
        if failed:
            raise MemoryError("docs_inputs: no memory for the batch's new words: free memory")
        for at in range(rows.new_words.size() if tables[0] is not None or tables[1] is not None
                        else 0):  # (Python: a table's value)
            orth = rows.new_words[at].orth
            rows.new_words[at].word.atoms[A_CLUSTER] = _cluster_of(tables[0], orth)
            rows.new_words[at].word.atoms[A_PROB] = _prob_of(tables[1], orth)
        for j in range(<int64_t>others.size()):
            self.get(others[j], vocab, tables)  # (str.lower's case mapping: Python's)
        if self.substrings and rows.new_words.size():
            if la_resize(rows.new_subs, rows.new_words.size() * MAX_SUBSTRINGS_C) != 0:
                raise MemoryError("docs_inputs: no memory for the batch's new words: free memory")
            for at in range(rows.new_words.size()):
                rows.new_words[at].word.subs = &rows.new_subs[at * MAX_SUBSTRINGS_C]
        if rows.new_words.size():
            rows.maker = self
            self.unkept.append(rows)
        return 0

    def _keep_new_words(self, WordRows rows):
        """The new words that the batch's threads made (WordRows._made) put in
        the cache (_keep_made), after its search. Returns how many."""
        with self.lock:
            self.unkept = [other for other in self.unkept if other is not rows]
            return self._keep_made(rows)

    cdef int _keep_made(self, WordRows rows) except -1:
        """The batch's new words made so far put in the cache, each a copy
        in the cache's memory (the rows' die with the batch); none where
        the cache was made again since (other tables). With the lock held
        (the batch's threads may still be searching: a word made is read
        only). Returns how many were kept."""
        cdef size_t at
        cdef NewWord* w
        cdef int kept = 0
        if not rows.caches or rows.caches[0] is not self.cache:
            return 0
        for at in range(rows.new_words.size()):
            w = &rows.new_words[at]
            if la_load_acquire(&w.state) != _MADE or self.cache.find(w.orth) != NULL:
                continue  # (not made (yet), or kept: by an earlier call, another batch's)
            self._cached(w.orth, &w.word)
            kept += 1
        return kept

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

    def docs_inputs(self, docs, bint tags=False, bint ent_iob=False, bint sent_starts=False,
                    own=(None, None), bint defer=False, bint lookup=False, known=None,
                    bint compact=False, bint new_words=False):
        """The word inputs of a batch of docs as one set of arrays over their
        tokens one after the other: "atoms" (N, N_ATOMS) (the input columns
        A_TAG (but see `tags`), A_CHUNK left 0 for the caller), "starts" (n_docs + 1,) int64
        where each doc's tokens begin, "space" (N,) uint8, 1 on whitespace
        tokens (None if there is none), with substrings "substrings": CSR
        (offsets (N + 1,) int32, hashes); with `tags`, "tags" (N,) uint64
        (token.tag), also in the atoms' A_TAG column, and "untagged": the
        number of docs with a word (not whitespace) but no token tagged;
        with `ent_iob`, "ent_iob" (N,) uint8 (token.ent_iob),
        with `sent_starts`, "sent_starts" (N,) bool (token.is_sent_start)
        and "sent_set" (n_docs,) uint8: whether a token after the doc's
        first has token.sent_start set (1 or -1: Doc.has_annotation's
        sentence boundaries, without a hook). `own`: the component's
        (cluster, probability) tables, each read instead of the vocab's
        where given (None: the vocab's).
        Read from the docs' TokenC arrays: the GIL is held only to look up
        word types first seen in this batch.
        `defer`: where the batch has no whitespace token (one vocab), the
        atoms' rows and the substrings are not copied here but by whoever
        reads each doc ("rows": WordRows, a core.instance.DocRows;
        decode_docs fills each doc's on the thread that searches it): the
        atoms and substring arrays are then unfilled until rows.fill_all()
        or the docs' fill()s. The other columns are filled.
        `lookup` (with defer, where no sentence starts are asked; one
        vocab): not even the word types are looked up here, so no token is
        read on this thread: each doc's fill() looks its words up in the
        cache (on the thread that searches it; its substrings go to
        buffers of its own: DocRows.substrings_of). A doc with a word not
        cached yet, or a whitespace token (but see `compact`), or (with
        ent_iob) a token whose ent_iob is set, or (with tags) a word
        without a tag, is left
        unfilled (fill() is false; after the searches, rows.returned()
        lists those docs) for the caller to do again without `lookup`;
        fill_all() refuses such a doc. "space" is then None whatever the
        docs hold, and no token column is given: with tags, fill() writes
        each token's into A_TAG and counts those not in `known` (uint64
        tag hashes; None: no count) for rows.tag_counts().
        `compact` (with lookup): a doc's whitespace tokens do not leave it
        but are left out of its rows: its words' rows one after another
        from its first row (and its substrings), the rows' content_of(i)
        giving their number and positions, for a reader of the words alone
        (a tagging system's docs; a doc of whitespace alone is left:
        rows.returned(whitespace=True)); a whitespace token needs no tag.
        `new_words` (with lookup): the batch's word types that the cache
        lacks are found here (a scan of its tokens) and made by the
        searching threads, each by the first that meets it, instead of
        leaving their docs (ASCII words; the others are made here): for a
        batch of fresh text. After the searches, rows.keep_new_words()
        puts them in the cache."""
        with self.lock:
            return self._docs_inputs(docs, tags, ent_iob, sent_starts, own, defer, lookup, known,
                                     compact, new_words)

    def _docs_inputs(self, docs, bint tags, bint ent_iob, bint sent_starts, own, bint defer,
                     bint lookup, known, bint compact=False, bint new_words=False):
        cdef int n_docs = len(docs), d, i
        cdef int64_t k = 0, N = 0, n_space = 0, n_subs = 0, missing = 0, untagged = 0
        cdef bint has_word, has_tag
        cdef Doc doc
        cdef vector[const TokenC*] tokens
        tokens.resize(n_docs)
        starts = numpy.zeros((n_docs + 1,), dtype="int64")
        cdef int64_t[::1] st = starts
        cdef bint one_vocab = True
        for d in range(n_docs):
            doc = docs[d]
            tokens[d] = doc.c
            st[d + 1] = st[d] + doc.length
            one_vocab = one_vocab and doc.vocab is (<Doc>docs[0]).vocab
        N = st[n_docs]
        if lookup and defer and one_vocab and N and not sent_starts:
            return self._looked_up_later(docs, tokens, starts, own, ent_iob, tags, known,
                                         compact, new_words)
        # (every entry written in the nogil loops below or by the rows' fill: a
        # calloc of the heap's would zero them with the GIL held)
        atoms = numpy.empty((N, N_ATOMS), dtype="uint64")
        space = numpy.empty((N,), dtype="uint8")
        tag_column = numpy.empty((N if tags else 0,), dtype="uint64")
        iob_column = numpy.empty((N if ent_iob else 0,), dtype="uint8")
        start_column = numpy.empty((N if sent_starts else 0,), dtype="uint8")
        set_column = numpy.zeros((n_docs if sent_starts else 0,), dtype="uint8")
        cdef unsigned char[::1] sp = space
        cdef unsigned char[::1] set_view = set_column
        cdef uint64_t[::1] tag_view = tag_column
        cdef unsigned char[::1] iob_view = iob_column
        cdef unsigned char[::1] start_view = start_column
        cdef const WordC* lex
        cdef WordRows rows = WordRows.__new__(WordRows)
        rows.n_docs = n_docs
        rows.lexes.resize(N)
        vocab = None
        caches = []  # the word types' memory, where another vocab's tables empty the cache
        cdef int64_t t0 = now_ns()
        if one_vocab and n_docs:  # the cached word types without the GIL, then the others
            vocab = (<Doc>docs[0]).vocab
            tables = self._tables(vocab, own)
            t0 = now_ns()
            with nogil:
                for d in range(n_docs):
                    for i in range(st[d + 1] - st[d]):
                        rows.lexes[k] = self.cache.find(tokens[d][i].lex.orth)
                        missing += rows.lexes[k] == NULL
                        k += 1
            add_since(t0)
            k = 0
            for d in range(n_docs):
                for i in range(st[d + 1] - st[d] if missing else 0):
                    if rows.lexes[k] == NULL:
                        rows.lexes[k] = self.get(tokens[d][i].lex, vocab, tables)
                    k += 1
        else:
            for d in range(n_docs):  # C (a word type not cached yet: LexemeAtoms.get)
                if st[d + 1] == st[d]:
                    continue
                doc = docs[d]
                if doc.vocab is not vocab:
                    caches.append(self.cache)
                    vocab = doc.vocab
                    tables = self._tables(vocab, own)
                for i in range(st[d + 1] - st[d]):
                    lex = self.cache.find(tokens[d][i].lex.orth)
                    rows.lexes[k] = (lex if lex != NULL
                                     else self.get(tokens[d][i].lex, vocab, tables))
                    k += 1
        caches.append(self.cache)
        rows.caches = caches  # (the word types' memory, while the rows are filled)
        offsets = numpy.empty((N + 1 if self.substrings else 0,), dtype="int32")
        cdef int[::1] ov = offsets
        t0 = now_ns()
        with nogil:  # the token columns, and where each doc's substrings begin
            k = 0
            for d in range(n_docs):
                if self.substrings:
                    ov[st[d]] = <int>n_subs
                has_word = has_tag = False
                for i in range(st[d + 1] - st[d]):
                    lex = rows.lexes[k]
                    sp[k] = lex.is_space
                    n_space += lex.is_space
                    n_subs += lex.n_subs
                    has_word = has_word or not lex.is_space
                    if tags:
                        tag_view[k] = tokens[d][i].tag
                        has_tag = has_tag or tokens[d][i].tag != 0
                    if ent_iob:
                        iob_view[k] = tokens[d][i].ent_iob
                    if sent_starts:
                        start_view[k] = tokens[d][i].sent_start == 1
                        if i and tokens[d][i].sent_start != 0:
                            set_view[d] = 1
                    k += 1
                untagged += has_word and not has_tag
            if self.substrings:
                ov[N] = <int>n_subs
        add_since(t0)
        hashes = (numpy.empty((n_subs,), dtype="uint64") if n_subs
                  else numpy.zeros((1 if self.substrings else 0,), dtype="uint64"))
        rows.set_arrays(atoms, starts, tag_column if tags else None,
                        offsets if self.substrings else None, hashes)
        out = {"atoms": atoms, "starts": starts, "space": space if n_space else None}
        if defer and one_vocab and not n_space and N:
            out["rows"] = rows
        else:
            rows.fill_all()
        if tags:
            out["tags"] = tag_column
            out["untagged"] = untagged
        if ent_iob:
            out["ent_iob"] = iob_column
        if sent_starts:
            out["sent_starts"] = start_column.view(bool)
            out["sent_set"] = set_column
        if self.substrings:
            out["substrings"] = (offsets, hashes)
        return out

    cdef dict _looked_up_later(self, docs, const vector[const TokenC*]& tokens, starts, own,
                               bint ent_iob, bint tags, known, bint compact=False,
                               bint new_words=False):
        """docs_inputs' `lookup`: the arrays made, nothing read from the
        tokens (the rows' fill() looks each doc's words up; with ent_iob,
        leaves a doc with a token's ent_iob set; with substrings, keeps
        each doc's in buffers of its own, and "substrings" is a placeholder
        the readers' views are moved off: DocRows.substrings_of; with
        new_words, the words the cache lacks handed to them:
        _pend_new_words)."""
        vocab = (<Doc>docs[0]).vocab
        tables = self._tables(vocab, own)  # (the cache made again where they changed)
        cdef int n_docs = len(docs)
        cdef int64_t N = starts[n_docs]
        atoms = numpy.empty((N, N_ATOMS), dtype="uint64")
        cdef WordRows rows = WordRows.__new__(WordRows)
        rows.n_docs = n_docs
        rows.lexes.resize(N)
        rows.doc_tokens = tokens
        rows.returned_docs.resize(n_docs)
        rows.words = &self.cache.map
        rows.caches = [self.cache]
        rows.checks_iob = ent_iob
        rows.reads_tags = tags
        if compact:
            rows.compacts = True
            rows.doc_content.resize(n_docs)
        if tags:
            rows.unseen.resize(n_docs)
            rows.unseen_tag.resize(n_docs * _TAG_EXAMPLES)
            rows.doc_words.resize(n_docs)
            if known is not None:
                rows.known = _hash_set(numpy.ascontiguousarray(known, dtype="uint64"))
        rows.set_arrays(atoms, starts, None, None, numpy.zeros((0,), dtype="uint64"))
        if new_words:
            self._pend_new_words(rows, vocab, tables)
        out = {"atoms": atoms, "starts": starts, "space": None, "rows": rows}
        if self.substrings:
            rows.doc_offsets.resize(n_docs)
            rows.doc_subs.resize(n_docs)
            out["substrings"] = (numpy.zeros((N + 1,), dtype="int32"),
                                 numpy.zeros((1,), dtype="uint64"))
        return out

    def unit_inputs(self, docs, own=(None, None), known=None, ChunkAtoms chunks=None,
                    str key="chunks", bint inside=False, bint new_words=False):
        """docs_inputs(docs, tags=True, defer=True, lookup=True) for the
        phrase recognisers, whose units each searching thread finds itself
        (WordRows.units_of: the sentence boundaries read from the tokens;
        whitespace tokens kept in the rows and left out of the units); with
        `chunks`, each doc's fill() also writes the chunk column A_CHUNK
        from doc.spans[key] (ChunkAtoms.write's, with the chunk types known
        now) and, with `inside`, the "inside" flags (uint8 per token). A doc
        without the span group, or with a chunk type not known yet, is
        left (returned()) as are docs_inputs' lookup's. None where the
        batch cannot be looked up so (no token, or several vocabs).
        new_words: as docs_inputs'."""
        cdef int n_docs = len(docs), d = 0
        cdef Doc doc
        cdef SpanGroup group
        cdef vector[const TokenC*] tokens
        tokens.resize(n_docs)
        starts = numpy.zeros((n_docs + 1,), dtype="int64")
        cdef int64_t[::1] st = starts
        for doc in docs:
            if doc.vocab is not (<Doc>docs[0]).vocab:
                return None
            tokens[d] = doc.c
            st[d + 1] = st[d] + doc.length
            d += 1
        if not n_docs or not st[n_docs]:
            return None
        with self.lock:
            out = self._looked_up_later(docs, tokens, starts, own, False, True, known,
                                        False, new_words)
        cdef WordRows rows = out["rows"]
        rows.allows_space = rows.knows_units = True
        rows.hooked.resize(n_docs)
        held = [list(docs)]  # (their tokens and chunks read by the threads)
        if chunks is not None:
            rows.chunk_groups.resize(n_docs)
            rows.chunk_labels = chunks.labels  # (a copy: the threads read it while types are added)
            rows.chunk_pairs = chunks.pairs
            rows.chunk_table.labels = rows.chunk_labels.data()
            rows.chunk_table.pairs = rows.chunk_pairs.data()
            rows.chunk_table.n = rows.chunk_labels.size()
            rows.chunk_table.outside = chunks.outside
        d = 0
        for doc in docs:
            rows.hooked[d] = "sents" in doc.user_hooks if doc.user_hooks else 0
            if chunks is not None:
                groups = doc.spans.data
                if key in groups:
                    group = groups[key]
                    held.append(group)
                    rows.chunk_groups[d] = &group.c
            d += 1
        cdef unsigned char[::1] flags
        if inside:
            out["inside"] = flags = numpy.zeros((st[n_docs],), dtype="uint8")
            rows.inside = &flags[0]
            held.append(out["inside"])
        rows.held = held
        return out

    def left_share(self, docs, int sample=16, own=(None, None)):
        """Of `sample` docs spread over the batch (every doc where there are
        fewer), the share that threads looking their words up would leave
        for a word not cached yet, among those with tokens (0.0: none): a
        few docs' tokens read here, to say whether the threads are to make
        this batch's new words (docs_inputs' new_words:
        SearchPipe._lookup_resumed). `own` as docs_inputs'."""
        cdef int n_docs = len(docs), k, picks = min(sample, n_docs), d, i
        cdef int counted = 0, left = 0
        cdef Doc doc
        cdef const WordC* lex
        if not n_docs:
            return 0.0
        vocab = (<Doc>docs[0]).vocab
        with self.lock:
            self._tables(vocab, own)  # (the cache made again where they changed)
            for k in range(picks):
                doc = docs[(k * n_docs) // picks]
                if not doc.length:
                    continue
                if doc.vocab is not vocab:
                    return 1.0  # (several vocabs: no look-up on the threads)
                counted += 1
                for i in range(doc.length):
                    lex = self.cache.find(doc.c[i].lex.orth)
                    if lex == NULL:
                        left += 1
                        break
        return <double>left / counted if counted else 0.0

    def cache_words(self, docs, own=(None, None)):
        """The word types of `docs` not cached yet, cached (with the GIL, once
        each: get); `own` as docs_inputs'. For the docs that the threads
        looking the words up left for new words (WordRows.returned(
        new_words=True)): fill() finds them after."""
        cdef Doc doc
        cdef int i
        cdef uint64_t orth
        vocab = None
        with self.lock:
            for doc in docs:
                if doc.vocab is not vocab:
                    vocab = doc.vocab
                    tables = self._tables(vocab, own)
                for i in range(doc.length):
                    orth = doc.c[i].lex.orth
                    if self.cache.find(orth) == NULL:
                        self.get(doc.c[i].lex, doc.vocab, tables)

    def _tables(self, vocab, own):
        """The tables read: each of `own` given, else the vocab's; the cache
        is emptied where they, or the vocab (its lexeme attributes), are not
        the ones it was made with (once per batch and vocab: a look-up, no
        copy)."""
        in_vocab = vocab_tables(vocab)
        tables = (own[0] if own[0] is not None else in_vocab[0],
                  own[1] if own[1] is not None else in_vocab[1])
        if self.lexicon is None or self.lexicon[0] is not tables[0] \
                or self.lexicon[1] is not tables[1] or self.lexicon[2] is not vocab:
            self.cache = WordCache()
            self.lexicon = (tables[0], tables[1], vocab)
        return tables

    def __reduce__(self):
        return (_lexeme_atoms, (self.substrings, self._classes))


# WordRows.tag_counts: the unseen tags named, as check_tags names a batch's
cdef enum:
    _TAG_EXAMPLES = 5

# WordRows.returned_docs: why fill(i) left doc i (0: it did not)
cdef enum:
    _NEW_WORD = 1         # a word not in the cache yet
    _NOT_WORDS_ALONE = 2  # whitespace (not compact), preset entities, an untagged word, no memory
    _SPACE_ALONE = 3      # compact: whitespace only (no search: its sink writes it, finish(alone))


cdef class WordRows(DocRows):
    """A batch's atoms rows and substrings (LexemeAtoms.docs_inputs), copied
    per doc from its tokens' word types: fill(i) writes doc i's rows (its
    word atoms, the other columns 0 but the token columns: A_TAG, the
    token's tag where the tags were read, and any set_column gave) and its
    substrings between its first offset and the next doc's (both written
    by docs_inputs, so that threads filling neighbouring docs never write
    the same entry); row(k, out) writes token k's row alone.
    Looked up per doc (docs_inputs' `lookup`: `words` set): fill(i) first
    finds doc i's word types in the cache; a doc with a word not there, or
    a whitespace token (or, checks_iob, a token with ent_iob set: preset
    entities), is not filled, and returned() lists it; where the rows
    compact, a doc's whitespace is left out of its rows instead (its
    words' rows first: content_of). Its substrings then go to buffers of
    the doc's own (doc_offsets, doc_subs: substrings_of), as no thread
    knows where the doc's would begin in the batch's."""
    cdef vector[const WordC*] lexes  # per token: its word type
    cdef object caches               # ... the WordCaches that own them
    cdef la_readmap* words           # lookup: the cache fill() reads (NULL: lexes are set)
    cdef vector[const TokenC*] doc_tokens       # lookup: each doc's tokens
    cdef vector[unsigned char] returned_docs    # lookup: why fill(i) left doc i (0: not)
    cdef bint checks_iob                        # lookup: leave a doc with ent_iob set
    cdef vector[vector[int]] doc_offsets        # lookup with substrings: each doc's CSR
    cdef vector[vector[uint64_t]] doc_subs
    cdef bint reads_tags                        # lookup: A_TAG from each token's tag
    cdef PreshMap known                         # ... and the tags counted as seen (or None)
    cdef vector[int] unseen                     # ... per doc: its tags not known
    cdef vector[uint64_t] unseen_tag            # ... and the first _TAG_EXAMPLES of them (0: none)
    cdef vector[int] doc_words                  # ... and its words (not whitespace)
    cdef bint allows_space                      # lookup: whitespace kept (the phrase units skip it)
    cdef bint compacts                          # lookup: whitespace left out of the rows (content_of)
    cdef vector[vector[int]] doc_content        # ... per doc with some: its other tokens' positions
    cdef vector[unsigned char] hooked           # ... per doc: a "sents" hook (units_of)
    cdef vector[const vector[SpanC]*] chunk_groups  # lookup: each doc's chunks (NULL: the doc left)
    cdef vector[uint64_t] chunk_labels, chunk_pairs  # ... the chunk types known at the batch's start
    cdef ChunkTable chunk_table
    cdef unsigned char* inside                  # ... 1 on a chunk's tokens after its first (or NULL)
    cdef object held                            # ... the chunk groups and inside's array
    cdef object atoms, starts, offsets, hashes
    cdef list columns                # the token columns' arrays (kept alive)
    cdef vector[int] column_at       # ... their columns in a row
    cdef vector[const uint64_t*] column_values  # ... their values per token
    cdef uint64_t* av
    cdef const int64_t* st
    cdef int* ov
    cdef uint64_t* hv
    # lookup with new words (docs_inputs' new_words): the batch's words that
    # the cache lacked, made by the threads (_made), kept after (keep_new_words)
    cdef vector[NewWord] new_words
    cdef vector[char] new_text       # ... their UTF-8, one after another
    cdef vector[uint64_t] new_subs   # ... their substrings (MAX_SUBSTRINGS_C a word)
    cdef la_readmap new_map          # ... orth -> 1 + the word's place in new_words
    cdef object maker                # ... the LexemeAtoms whose cache keeps them

    def __dealloc__(self):
        la_rm_free(&self.new_map)

    def keep_new_words(self):
        """After the searches: the new words they made (docs_inputs'
        new_words) kept in the word cache, for the next batches' threads;
        how many (0: none handed to them)."""
        if self.maker is None or not self.new_words.size():
            return 0
        return (<LexemeAtoms>self.maker)._keep_new_words(self)

    @property
    def n_new_words(self):
        """The words handed to the searching threads to make (new_words)."""
        return self.new_words.size()

    cdef const WordC* _made(self, uint64_t orth) noexcept nogil:
        """lookup with new words: the word `orth` if it is one of the
        batch's new words, made by the first thread that meets it (its
        text atoms: what get() makes without the GIL; the others wait for
        it); NULL where it is not one, or there was no memory."""
        cdef size_t at = <size_t>la_rm_get(&self.new_map, orth)
        cdef NewWord* w
        cdef int state, turn = 0
        if at == 0:
            return NULL
        w = &self.new_words[at - 1]
        state = la_load_acquire(&w.state)
        if state == _UNMADE and la_claim(&w.state, _UNMADE, _MAKING):
            state = _MADE if _text_atoms(&self.new_text[w.at], w.nbytes, &w.word) == 1 else _FAILED
            la_store_release(&w.state, state)
        while state == _UNMADE or state == _MAKING:  # (another thread makes it)
            la_wait_turn(turn)
            turn += turn < 64
            state = la_load_acquire(&w.state)
        return &w.word if state == _MADE else NULL

    cdef set_arrays(self, atoms, starts, tags, offsets, hashes):
        cdef uint64_t[:, ::1] a = atoms
        cdef const int64_t[::1] s = starts
        cdef int[::1] o
        cdef uint64_t[::1] h
        self.atoms, self.starts, self.offsets, self.hashes = atoms, starts, offsets, hashes
        self.columns = []
        self.av = &a[0, 0] if a.shape[0] else NULL
        self.st = &s[0]
        if tags is not None:
            self.set_column(A_TAG, tags)
        if offsets is not None and len(hashes):
            o, h = offsets, hashes
            self.ov, self.hv = &o[0], &h[0]

    def set_column(self, int column, values):
        """The rows' `column` from values (uint64, one per token of the
        batch), copied with the word atoms (rows not filled yet: a column
        written into the atoms at once would be overwritten)."""
        if self.filled:
            raise ValueError("WordRows.set_column: the rows are filled: write the column "
                             "into the atoms")
        if not N_WORD_ATOMS <= column < N_ATOMS:
            raise ValueError(f"WordRows.set_column: {column} is not a token column: give one "
                             f"of {N_WORD_ATOMS}..{N_ATOMS - 1} (e.g. core.features' A_CHUNK)")
        cdef const uint64_t[::1] v = numpy.ascontiguousarray(values, dtype="uint64")
        if v.shape[0] != self.lexes.size():
            raise ValueError(f"WordRows.set_column: {v.shape[0]} values for "
                             f"{self.lexes.size()} tokens: give one per token of the batch")
        self.columns.append(v)
        self.column_at.push_back(column)
        self.column_values.push_back(&v[0] if v.shape[0] else NULL)

    cdef inline void _row(self, int64_t k, uint64_t* row) noexcept nogil:
        cdef size_t c
        memcpy(row, self.lexes[k].atoms, N_WORD_ATOMS * sizeof(uint64_t))
        memset(row + N_WORD_ATOMS, 0, (N_ATOMS - N_WORD_ATOMS) * sizeof(uint64_t))
        for c in range(self.column_at.size()):
            row[self.column_at[c]] = self.column_values[c][k]

    cdef void row(self, int64_t k, uint64_t* out) noexcept nogil:
        if self.lexes[k] == NULL:  # (lookup: not found by its doc's fill; not read here)
            memset(out, 0, N_ATOMS * sizeof(uint64_t))
            return
        self._row(k, out)

    def returned(self, bint new_words=False, bint whitespace=False):
        """The docs (their places in the batch, int32) that fill() left to
        the caller (lookup: a word not cached yet, preset entities, ...);
        new_words: those with a word not cached alone (LexemeAtoms.
        cache_words, then retry: fill() can do them); whitespace: those of
        whitespace alone (compact: nothing to search; LabelSink.finish's
        `alone`); read after the searches."""
        cdef size_t i, n = 0
        cdef unsigned char only = _NEW_WORD if new_words else _SPACE_ALONE if whitespace else 0
        for i in range(self.returned_docs.size()):  # (in C: once per batch, most often none)
            n += self.returned_docs[i] == only if only else self.returned_docs[i] != 0
        out = numpy.empty((n,), dtype="int32")
        cdef int[::1] view = out
        n = 0
        for i in range(self.returned_docs.size() if view.shape[0] else 0):
            if (self.returned_docs[i] == only if only else self.returned_docs[i] != 0):
                view[n] = <int>i
                n += 1
        return out

    def retry(self, docs):
        """These docs (places in the batch) are to be filled again (their
        words since cached: LexemeAtoms.cache_words)."""
        cdef int i
        for i in docs:
            if not self.returned_docs.size():
                raise ValueError("WordRows.retry: these rows do not look their words up: make "
                                 "them with docs_inputs(..., defer=True, lookup=True)")
            if not 0 <= i < self.n_docs:
                raise IndexError(f"WordRows.retry: doc {i} of a batch of {self.n_docs}: give "
                                 "places that returned() listed")
            self.returned_docs[i] = 0

    cdef bint _look_up(self, int i) noexcept nogil:
        """lookup: doc i's word types into lexes (and its tag counts and
        substrings); False where it leaves doc i, marked with why
        (_NEW_WORD, _NOT_WORDS_ALONE)."""
        cdef int64_t k, lo = self.st[i]
        cdef const TokenC* tokens = self.doc_tokens[i]
        cdef const WordC* lex
        cdef int unseen = 0, words = 0, e, j = 0
        cdef uint64_t tag
        cdef uint64_t examples[_TAG_EXAMPLES]
        memset(examples, 0, sizeof(examples))
        for k in range(lo, self.st[i + 1]):
            lex = <const WordC*>la_rm_get(self.words, tokens[k - lo].lex.orth)
            if lex == NULL and self.new_map.size:
                lex = self._made(tokens[k - lo].lex.orth)
            if lex == NULL:
                self.returned_docs[i] = _NEW_WORD
                return False
            if lex.is_space and self.allows_space:
                self.lexes[k] = lex  # (no tag read: the units leave it out)
                continue
            if (lex.is_space and not self.compacts) \
                    or (self.checks_iob and tokens[k - lo].ent_iob != 0) \
                    or (self.reads_tags and tokens[k - lo].tag == 0 and not lex.is_space):
                self.returned_docs[i] = _NOT_WORDS_ALONE
                return False
            self.lexes[k] = lex
            if lex.is_space:  # (compacts: left out of the rows; no tag read, as check_tags)
                continue
            words += 1
            if self.reads_tags and self.known is not None:
                tag = tokens[k - lo].tag
                if map_get(self.known.c_map, tag) == NULL:
                    unseen += 1
                    e = 0  # (the doc's distinct ones, as check_tags lists a batch's)
                    while e < _TAG_EXAMPLES and examples[e] != 0 and examples[e] != tag:
                        e += 1
                    if e < _TAG_EXAMPLES and examples[e] == 0:
                        examples[e] = tag
        if self.compacts:
            self.doc_content[i].clear()
            if words == 0 and self.st[i + 1] > lo:  # (whitespace alone: nothing to search)
                self.returned_docs[i] = _SPACE_ALONE
                return False
            if words < self.st[i + 1] - lo:
                if la_resize(self.doc_content[i], words) != 0:
                    self.returned_docs[i] = _NOT_WORDS_ALONE  # (no memory: the caller's path)
                    return False
                for k in range(lo, self.st[i + 1]):
                    if not self.lexes[k].is_space:
                        self.doc_content[i][j] = <int>(k - lo)
                        j += 1
        if self.reads_tags:
            self.unseen[i], self.doc_words[i] = unseen, words
            if self.known is not None:
                for e in range(_TAG_EXAMPLES):
                    self.unseen_tag[i * _TAG_EXAMPLES + e] = examples[e]
        if self.doc_subs.size() and not self._doc_substrings(i):
            self.returned_docs[i] = _NOT_WORDS_ALONE  # (no memory: the caller's path raises it)
            return False
        return True

    cdef bint _doc_substrings(self, int i) noexcept nogil:
        """lookup: doc i's substrings into its own buffers."""
        cdef int64_t k, lo = self.st[i], hi = self.st[i + 1], c = 0
        cdef int n = 0, j
        cdef const WordC* lex
        for k in range(lo, hi):
            n += self.lexes[k].n_subs
        if (la_resize(self.doc_offsets[i], hi - lo + 1) != 0
                or la_resize(self.doc_subs[i], max(1, n)) != 0):
            return False
        n = 0
        for k in range(lo, hi):  # (compacts: the words' alone, one after another)
            lex = self.lexes[k]
            if self.compacts and lex.is_space:
                continue
            self.doc_offsets[i][c] = n
            c += 1
            for j in range(lex.n_subs):
                self.doc_subs[i][n] = lex.subs[j]
                n += 1
        self.doc_offsets[i][c] = n
        return True

    cdef bint substrings_of(self, int i, const int** offsets,
                            const uint64_t** hashes) noexcept nogil:
        if not self.doc_subs.size():
            return False
        offsets[0] = self.doc_offsets[i].data()
        hashes[0] = self.doc_subs[i].data()
        return True

    cdef int content_of(self, int i, const int** positions) noexcept nogil:
        if not self.compacts:
            return -1
        if self.doc_content[i].size():
            positions[0] = self.doc_content[i].data()
            return <int>self.doc_content[i].size()
        positions[0] = NULL
        return <int>(self.st[i + 1] - self.st[i])

    cdef int64_t units_of(self, int i, vector[int64_t]* words,
                          vector[int64_t]* unit_starts) noexcept nogil:
        if not self.allows_space:  # (only the phrase recognisers' rows know units)
            return -1
        return _doc_units(self.doc_tokens[i], self.st[i + 1] - self.st[i], self.st[i],
                          self.hooked[i], -1, NULL, NULL, self.lexes.data() + self.st[i], words,
                          unit_starts)

    def tag_counts(self):
        """lookup with tags, after the searches: (the words of the docs
        filled, those whose tag is not known, up to 5 such tags), over the
        docs not returned; None where no tags were read or counted."""
        if not self.reads_tags or self.known is None:
            return None
        cdef int i, e
        cdef uint64_t tag
        n_words, n_unseen, examples = 0, 0, []
        for i in range(self.n_docs):
            if self.returned_docs[i]:
                continue
            n_words += self.doc_words[i]
            n_unseen += self.unseen[i]
            for e in range(_TAG_EXAMPLES if self.unseen[i] else 0):
                tag = self.unseen_tag[i * _TAG_EXAMPLES + e]
                if tag and len(examples) < _TAG_EXAMPLES and tag not in examples:
                    examples.append(tag)
        return n_words, n_unseen, examples

    @property
    def looks_up(self):
        """Whether each doc's fill() looks its words up (docs_inputs' lookup)."""
        return self.words != NULL

    def fill_all(self):
        """Every doc's rows, now (for a reader other than decode_docs); a
        doc left unfilled (lookup: a word not cached) is an error."""
        DocRows.fill_all(self)
        left = self.returned()
        cdef size_t i
        cdef int compacted = 0
        for i in range(self.doc_content.size()):
            compacted += self.doc_content[i].size() != 0
        if len(left) or compacted:
            self.filled = False  # (those docs' rows are not there: never read as if they were)
            raise ValueError(f"WordRows.fill_all: {len(left) or compacted} docs have words the "
                             "cache did not have (or whitespace, left out of their rows): make "
                             "the batch's inputs without `lookup` where anything reads them "
                             "before the searches")

    cdef bint fill(self, int i) noexcept nogil:
        cdef int64_t k, n, lo = self.st[i], hi = self.st[i + 1]
        cdef const WordC* lex
        cdef int j
        cdef const int* content
        if self.words != NULL and not self._look_up(i):
            return False
        if self.compacts and self.doc_content[i].size():  # (its words' rows, one after another)
            content = self.doc_content[i].data()
            for j in range(<int>self.doc_content[i].size()):
                self._row(lo + content[j], self.av + (lo + j) * N_ATOMS)
                if self.reads_tags:
                    self.av[(lo + j) * N_ATOMS + A_TAG] = self.doc_tokens[i][content[j]].tag
            return True
        for k in range(lo, hi):
            self._row(k, self.av + k * N_ATOMS)
            if self.reads_tags:  # (lookup: no column made on the calling thread)
                self.av[k * N_ATOMS + A_TAG] = self.doc_tokens[i][k - lo].tag
        if self.chunk_groups.size() and (
                self.chunk_groups[i] == NULL or _write_chunks(
                    &self.chunk_table, self.chunk_groups[i], self.av + lo * N_ATOMS, hi - lo,
                    N_ATOMS, A_CHUNK, self.inside + lo if self.inside != NULL else NULL)):
            self.returned_docs[i] = _NOT_WORDS_ALONE  # (no chunks, or a type first seen)
            return False
        if self.ov == NULL or hi == lo:
            return True
        n = self.ov[lo]
        for k in range(lo, hi):
            lex = self.lexes[k]
            for j in range(lex.n_subs):
                self.hv[n] = lex.subs[j]
                n += 1
            if k + 1 < hi:
                self.ov[k + 1] = <int>n
        return True


cdef bint _write_chunks(const ChunkTable* table, const vector[SpanC]* spans, uint64_t* atoms,
                        int64_t n, int width, int column, unsigned char* inside) noexcept nogil:
    """One doc's chunk column (ChunkAtoms.write: its n tokens' rows from
    `atoms`, `width` apart); True, leaving it unfinished, where a chunk type
    is not in the table. A linear search: a handful of chunk types."""
    cdef size_t k, at
    cdef int64_t i
    cdef uint64_t label
    cdef uint64_t* v
    for i in range(n):
        atoms[i * width + column] = 0
    for k in range(spans.size()):
        label = spans[0][k].label
        at = 0
        while at < table.n and table.labels[at] != label:
            at += 1
        if at == table.n:
            return True
        for i in range(spans[0][k].start, spans[0][k].end):
            atoms[i * width + column] = table.pairs[2 * at + (i > spans[0][k].start)]
            if inside != NULL and i > spans[0][k].start:
                inside[i] = 1
    for i in range(n):
        v = &atoms[i * width + column]
        if v[0] == 0:
            v[0] = table.outside
    return False


cdef class ChunkAtoms:
    """The chunk input column (B-X / I-X / O, as string hashes) of a batch,
    read in C from each doc's span group of chunks (SpanGroup.c, spaCy's
    SpanC structs): a chunk type's two hashes are made in Python once, when
    the type is first seen, then looked up in C."""
    cdef vector[uint64_t] labels   # the chunk types seen (label hashes)
    cdef vector[uint64_t] pairs    # B-X, I-X hashes per type
    cdef readonly uint64_t outside
    cdef readonly object strings

    def __init__(self, strings):
        self.strings = strings
        self.outside = strings.add("O")

    cdef ChunkTable table(self) noexcept nogil:
        """The types as they are now (read while no type is added)."""
        cdef ChunkTable t
        t.labels, t.pairs, t.n, t.outside = self.labels.data(), self.pairs.data(), \
            self.labels.size(), self.outside
        return t

    cdef void add(self, uint64_t label) except *:
        """The label's (B, I) hashes, made if new."""
        cdef size_t at
        for at in range(self.labels.size()):
            if self.labels[at] == label:
                return
        name = self.strings[label]
        begin, inside = self.strings.add(f"B-{name}"), self.strings.add(f"I-{name}")
        self.pairs.push_back(begin)  # (both made first: the pairs stay aligned)
        self.pairs.push_back(inside)
        self.labels.push_back(label)

    def write(self, docs, str key, atoms, starts, int column, inside=None):
        """atoms[:, column] of the batch's tokens (starts: where each doc
        begins) from doc.spans[key]: B-X on a chunk's first token, I-X on
        the rest (in the group's order: a later chunk overwrites), O on the
        others; `inside` (uint8 per token, optional): 1 on a chunk's tokens
        after its first. Returns per doc (uint8) whether it has the group;
        the columns of the docs without one are left 0 for the caller."""
        cdef uint64_t[:, ::1] view = atoms
        cdef const int64_t[::1] st = numpy.ascontiguousarray(starts, dtype="int64")
        cdef unsigned char[::1] ins = inside if inside is not None else None
        if st.shape[0] != len(docs) + 1 or st[len(docs)] != view.shape[0] \
                or not 0 <= column < view.shape[1] \
                or (ins is not None and ins.shape[0] != view.shape[0]):
            raise ValueError(f"ChunkAtoms.write: atoms {tuple(atoms.shape)}, starts and inside "
                             f"do not match the {len(docs)} docs' tokens and column {column}")
        out = numpy.zeros((len(docs),), dtype="uint8")
        cdef unsigned char[::1] found = out
        cdef vector[const vector[SpanC]*] chunks
        chunks.resize(len(docs))
        held = []  # the groups whose chunks are read without the GIL
        cdef Doc doc
        cdef SpanGroup group
        cdef size_t k
        cdef int d = 0
        for doc in docs:
            if doc.length != st[d + 1] - st[d]:
                raise ValueError(f"ChunkAtoms.write: doc {d} has {doc.length} tokens, starts "
                                 f"give it {st[d + 1] - st[d]}: they do not match")
            groups = doc.spans.data
            if key in groups:
                group = groups[key]
                held.append(group)
                chunks[d] = &group.c
                found[d] = 1
            d += 1
        cdef uint64_t* at = &view[0, 0] if view.shape[0] else NULL
        cdef unsigned char* flags = &ins[0] if ins is not None and ins.shape[0] else NULL
        cdef bint missing
        cdef int64_t t0 = now_ns()
        with nogil:
            missing = self.fill(chunks, &st[0], at, view.shape[1], column, flags)
        add_since(t0)
        if missing:  # chunk types first seen: their hashes made, then filled again
            for group in held:
                for k in range(group.c.size()):
                    self.add(group.c[k].label)
            with nogil:
                self.fill(chunks, &st[0], at, view.shape[1], column, flags)
        return out

    cdef bint fill(self, const vector[const vector[SpanC]*]& chunks, const int64_t* st,
                   uint64_t* atoms, int width, int column, unsigned char* inside) noexcept nogil:
        """The column of each doc with chunks (write); True, leaving it
        unfinished, where a chunk type has no row yet."""
        cdef ChunkTable table = self.table()
        cdef size_t d
        for d in range(chunks.size()):
            if chunks[d] != NULL and _write_chunks(&table, chunks[d], atoms + st[d] * width,
                                                   st[d + 1] - st[d], width, column,
                                                   inside + st[d] if inside != NULL else NULL):
                return True
        return False


cdef PreshMap _hash_set(const uint64_t[::1] keys):
    """The keys as a hash set (a PreshMap to 1), read without the GIL."""
    cdef PreshMap out = PreshMap(max(8, 2 * keys.shape[0]))
    cdef Py_ssize_t i
    for i in range(keys.shape[0]):
        out.set(keys[i], <void*>1)
    return out


def check_tags(tags, words, known):
    """The input-tag check of a batch, without the GIL: (the position of the
    first word with no tag (0) or -1, the number of such words, the number
    of words, the number of words whose tag is not in `known` (uint64;
    None: no count), up to 5 of those tags). words: uint8/bool
    per token, 1 on words (not whitespace)."""
    cdef const uint64_t[::1] t = numpy.ascontiguousarray(tags, dtype="uint64")
    cdef const unsigned char[::1] w = numpy.ascontiguousarray(words, dtype="uint8")
    cdef const uint64_t[::1] k = numpy.ascontiguousarray(
        known if known is not None else numpy.zeros((0,), "uint64"), dtype="uint64")
    if t.shape[0] != w.shape[0]:
        raise ValueError(f"check_tags: {t.shape[0]} tags for {w.shape[0]} tokens")
    cdef bint counting = known is not None
    cdef int64_t i, first = -1, n_empty = 0, n_words = 0, n_unseen = 0
    cdef int n_examples = 0
    cdef uint64_t examples[5]
    cdef int e
    cdef bint seen
    # the known tags as a hash set: a binary search per word cost ~20 ns (its
    # branches unpredictable)
    cdef PreshMap known_set = _hash_set(k)
    cdef int64_t t0 = now_ns()
    with nogil:
        for i in range(t.shape[0]):
            if not w[i]:
                continue
            n_words += 1
            if t[i] == 0:
                n_empty += 1
                if first < 0:
                    first = i
            if not counting or map_get(known_set.c_map, t[i]) != NULL:
                continue
            n_unseen += 1
            seen = False
            for e in range(n_examples):
                seen = seen or examples[e] == t[i]
            if not seen and n_examples < 5:
                examples[n_examples] = t[i]
                n_examples += 1
    add_since(t0)
    return first, n_empty, n_words, n_unseen, [examples[e] for e in range(n_examples)]


# --- writing outputs into the docs ------------------------------------------
def in_vocab(docs, vocab):
    """Whether every doc is of `vocab` (the writers put the component's
    string hashes in the tokens): a C loop, not a generator per doc."""
    cdef Doc doc
    for doc in docs:
        if doc.vocab is not vocab:
            return False
    return True


cdef const int* _ids(output, Doc doc, str what, list keep) except NULL:
    """An output's label ids as int32, one per token of the doc: a pointer
    into the array itself where it is C-contiguous int32 (the decoders'
    outputs are), else into a copy kept alive in `keep`. (A typed
    memoryview per doc would cost more than writing a short doc.)"""
    cdef cnp.ndarray arr = output if isinstance(output, cnp.ndarray) else None
    if arr is None or cnp.PyArray_TYPE(arr) != cnp.NPY_INT32 \
            or not cnp.PyArray_IS_C_CONTIGUOUS(arr) or cnp.PyArray_NDIM(arr) != 1:
        arr = numpy.ascontiguousarray(output, dtype="int32").reshape(-1)
        keep.append(arr)
    if cnp.PyArray_DIM(arr, 0) != doc.length:
        raise ValueError(f"{what}: {cnp.PyArray_DIM(arr, 0)} labels for a doc of {doc.length} tokens")
    return <const int*>cnp.PyArray_DATA(arr) if doc.length else &_EMPTY


cdef int _EMPTY = 0


def has_entities(docs):
    """Per doc (uint8): whether some token has token.ent_iob set (entities,
    or tokens marked outside)."""
    out = numpy.zeros((len(docs),), dtype="uint8")
    cdef unsigned char[::1] view = out
    cdef Doc doc
    cdef int d = 0, i
    for doc in docs:
        for i in range(doc.length):
            if doc.c[i].ent_iob != 0:
                view[d] = 1
                break
        d += 1
    return out


cdef class _Outputs:
    """The writers' outputs of a batch: per doc (a list of arrays), or every
    doc's in one int32 array from `starts` (n_docs + 1,) on."""
    cdef list per_doc, keep
    cdef const int[::1] labels
    cdef const int64_t[::1] starts

    def __init__(self, docs, outputs, starts, str what):
        self.keep = []
        if starts is None:
            self.per_doc = list(outputs)
            if len(self.per_doc) != len(docs):
                raise ValueError(f"{what}: {len(self.per_doc)} outputs for {len(docs)} docs")
            return
        self.labels = numpy.ascontiguousarray(outputs, dtype="int32").reshape(-1)
        self.starts = numpy.ascontiguousarray(starts, dtype="int64")
        if self.starts.shape[0] != len(docs) + 1 or self.starts[0] != 0 \
                or self.starts[len(docs)] != self.labels.shape[0]:
            raise ValueError(f"{what}: starts do not match {len(docs)} docs and "
                             f"{self.labels.shape[0]} labels")

    cdef const int* of(self, int d, Doc doc, str what) except NULL:
        """Doc d's label ids, one per token."""
        if self.per_doc is not None:
            return _ids(self.per_doc[d], doc, what, self.keep)
        if self.starts[d + 1] - self.starts[d] != doc.length or self.starts[d + 1] < self.starts[d]:
            raise ValueError(f"{what}: {self.starts[d + 1] - self.starts[d]} labels for a doc of "
                             f"{doc.length} tokens")
        return &self.labels[self.starts[d]] if doc.length else &_EMPTY


def write_tags(docs, outputs, hashes, starts=None):
    """token.tag of each doc's tokens from its output (label ids, one per
    token): hashes[id], where id -1 (a whitespace token) takes the last hash
    (the space tag). As Doc.from_array([TAG]) sets it, without the array.
    outputs: per doc, or with `starts` (n_docs + 1,) every doc's in one
    array (doc k's at starts[k]:starts[k + 1])."""
    cdef LabelSink sink = LabelSink.tags(docs, hashes)
    _put_each(sink, docs, _Outputs(docs, outputs, starts, "write_tags"))
    sink.finish()


def write_arcs(docs, heads, labels, hashes, decorated=None, starts=None):
    """token.head and token.dep of each doc's tokens (heads: absolute
    positions; labels: ids into hashes, -1 the last), then the children,
    edges and sentence starts by spaCy's set_children_from_heads: what
    Doc.from_array([HEAD, DEP]) does, without the array. heads, labels:
    per doc, or with `starts` (n_docs + 1,) every doc's in one array (doc
    k's at starts[k]:starts[k + 1], as write_tags). decorated: per label
    id, 1 where the label is a projectivised one ("x||y"); returns per doc
    (uint8) whether it has such a label (and needs deprojectivizing)."""
    cdef const uint64_t[::1] h = numpy.ascontiguousarray(hashes, dtype="uint64")
    cdef const unsigned char[::1] deco = numpy.ascontiguousarray(
        numpy.zeros((len(h),), dtype="uint8") if decorated is None else decorated, dtype="uint8")
    if deco.shape[0] != h.shape[0]:
        raise ValueError(f"write_arcs: {deco.shape[0]} decorated flags for {h.shape[0]} labels")
    cdef _Outputs head_out = _Outputs(docs, heads, starts, "write_arcs")
    cdef _Outputs label_out = _Outputs(docs, labels, starts, "write_arcs")
    out = numpy.zeros((len(docs),), dtype="uint8")
    cdef unsigned char[::1] flags = out
    cdef const int* head_ids
    cdef const int* label_ids
    cdef Doc doc
    cdef int i, d = -1, n = h.shape[0]
    for doc in docs:
        d += 1
        if not doc.length:
            continue
        head_ids = head_out.of(d, doc, "write_arcs")
        label_ids = label_out.of(d, doc, "write_arcs")
        for i in range(doc.length):
            if head_ids[i] < 0 or head_ids[i] >= doc.length:
                raise ValueError(f"write_arcs: head {head_ids[i]} of token {i} is outside "
                                 f"its doc of {doc.length} tokens")
            if label_ids[i] >= n or label_ids[i] < -n:
                raise ValueError(f"write_arcs: label id {label_ids[i]} out of range for {n} "
                                 "labels")
        for i in range(doc.length):
            doc.c[i].head = head_ids[i] - i
            doc.c[i].dep = h[label_ids[i] if label_ids[i] >= 0 else n + label_ids[i]]
            if deco[label_ids[i] if label_ids[i] >= 0 else n + label_ids[i]]:
                flags[d] = 1
        set_children_from_heads(doc.c, 0, doc.length)
    return out


def write_spans(docs, outputs, kinds, types, hashes, str key=None, starts=None, scores=None,
                score_starts=None):
    """The spans each doc's output encodes (label ids, one per token, read
    as systems/span_ids.ids_to_spans reads them; types index `hashes`):
    with key None as doc.ents (token.ent_iob, ent_type; every other token
    outside, as Doc.set_ents(spans, default="outside") writes them), else as
    a new span group doc.spans[key]. outputs: per doc, or with `starts`
    every doc's in one array (as write_tags). No Python per span: the spans
    are read and the tokens written without the GIL (LabelSink). scores (a
    group's only): each doc's group gets
    attrs["scores"] = scores[score_starts[d]:score_starts[d + 1]] (a view)."""
    cdef LabelSink sink = LabelSink.spans(docs, kinds, types, hashes, key)
    cdef _Outputs out = _Outputs(docs, outputs, starts, "write_spans")
    if scores is not None and (key is None or score_starts is None
                               or len(score_starts) != len(docs) + 1):
        raise ValueError("write_spans: scores go with a span group's key and their starts "
                         "(one more than the docs)")
    _put_each(sink, docs, out)
    sink.finish(scores, score_starts)


cdef int _put_each(LabelSink sink, docs, _Outputs out) except -1:
    """Each doc's output into `sink`, in order, until a doc fails (the
    writers' path where no search thread put them)."""
    cdef vector[const int*] ids
    cdef Doc doc
    cdef int d = 0, n = len(docs)
    ids.resize(n)
    for doc in docs:
        ids[d] = out.of(d, doc, sink.what)
        d += 1
    cdef int64_t t0 = now_ns()
    with nogil:
        for d in range(n):
            sink.put(d, ids[d], 0, sink.lengths[d])
            if sink.status[d] != _PUT:
                break
    add_since(t0)
    return 0


# LabelSink's status of a doc: not put yet, put, or why it failed
cdef enum:
    _NOT_PUT = 0
    _PUT = 1
    _BAD_ID = 2
    _BAD_TYPE = 3
    _NO_MEMORY = 4
    _BAD_LENGTH = 5
    _ABSENT = 6  # not put on purpose: finish's `absent`


cdef class LabelSink(DocSink):
    """A batch's outputs (label ids per token) written into its docs,
    doc by doc, on whichever thread puts them (decode_docs' sink: the one
    that searched the doc, right after its search; or write_tags /
    write_spans here): token.tag (`tags`), doc.ents (`spans` without a key)
    in the tokens at once; a span group's spans (`spans` with a key) made
    there, and the groups (Python objects) by finish(), with the GIL. A doc
    whose output fails (a label id out of range, no memory) keeps its error
    for finish() to raise; finish() also raises where a doc with tokens was
    never put. The docs are one vocab's (the hashes are its strings').
    undo() (a batch that failed after some docs were put) leaves the docs
    as they were: tags saved as they are overwritten (`tags(...,
    undoable=True)`), entities cleared (the pipes make an entity sink only
    for docs without any: SpanLabeller.writes_in_c), no group made, or
    after finish() the groups it replaced put back. over_content(rows)
    or over_positions(indexes): put(i)'s ids may be over doc i's words
    alone (its whitespace left out: by rows, WordRows.content_of, or by
    the caller, spaces.without_whitespace), written as set_annotations
    writes a doc with whitespace (spaces.py): the space tag on it, outside
    every entity, inside a span only between two of its tokens."""
    cdef list docs
    cdef WordRows content  # over_content's rows, or None
    cdef vector[const int*] positions  # over_positions': per doc, its words' places (NULL:
    cdef vector[int] words             # every token), and their number
    cdef list _positions               # (the arrays they point into)
    cdef vector[int] alone             # ... the docs of whitespace alone (finish puts them)
    cdef readonly str what
    cdef str key
    cdef int mode  # 0: tags, 1: entities, 2: a span group
    cdef vector[TokenC*] tokens
    cdef vector[int] lengths
    cdef vector[signed char] status
    cdef vector[int] bad  # the failing id or type of a doc
    cdef vector[vector[SpanC]] found  # a span group's spans, per doc
    cdef list replaced                # ... the groups finish() replaced: (doc, group or None)
    cdef vector[uint64_t] saved       # undoable tags: each token's tag before (doc d's at
    cdef vector[int64_t] saved_at     # saved_at[d])
    cdef object _h, _kind, _typ  # (the arrays the pointers below read)
    cdef const uint64_t* h
    cdef int n_h
    cdef const signed char* kind
    cdef const int* typ
    cdef int n_actions

    @staticmethod
    def tags(docs, hashes, bint undoable=False):
        """token.tag = hashes[id] (id < 0 counts from the end: -1, the space
        tag); undoable: each token's tag kept before it is written (undo)."""
        cdef LabelSink sink = LabelSink(docs, hashes, 0, "write_tags")
        cdef int d
        if undoable:
            sink.saved_at.resize(sink.n_docs + 1)
            for d in range(sink.n_docs):
                sink.saved_at[d + 1] = sink.saved_at[d] + sink.lengths[d]
            sink.saved.resize(sink.saved_at[sink.n_docs])
        return sink

    @staticmethod
    def spans(docs, kinds, types, hashes, str key=None):
        """The spans of the ids (kinds, types per action: action_arrays;
        types index hashes): doc.ents where key is None, else doc.spans[key]."""
        cdef LabelSink sink = LabelSink(docs, hashes, 1 if key is None else 2, "write_spans")
        sink.key = key
        sink._kind = numpy.ascontiguousarray(kinds, dtype="int8")
        sink._typ = numpy.ascontiguousarray(types, dtype="int32")
        cdef const signed char[::1] kind = sink._kind
        cdef const int[::1] typ = sink._typ
        if typ.shape[0] != kind.shape[0]:
            raise ValueError(f"write_spans: {kind.shape[0]} kinds and {typ.shape[0]} types: give "
                             "one type per action (schemes.action_arrays)")
        sink.n_actions = kind.shape[0]
        if sink.n_actions:
            sink.kind, sink.typ = &kind[0], &typ[0]
        return sink

    def __init__(self, docs, hashes, int mode, str what):
        if not 0 <= mode <= 2:
            raise ValueError(f"LabelSink: mode {mode} (make one with LabelSink.tags or .spans)")
        self.docs = list(docs)
        self.n_docs = len(self.docs)
        self.mode, self.what = mode, what
        self._h = numpy.ascontiguousarray(hashes, dtype="uint64").reshape(-1)
        cdef const uint64_t[::1] h = self._h
        self.n_h = h.shape[0]
        if self.n_h:
            self.h = &h[0]
        self.tokens.resize(self.n_docs)
        self.lengths.resize(self.n_docs)
        self.status.resize(self.n_docs)
        self.bad.resize(self.n_docs)
        if mode == 2:
            self.found.resize(self.n_docs)
        cdef Doc doc
        cdef int d = 0
        for doc in self.docs:
            self.tokens[d], self.lengths[d] = doc.c, doc.length
            d += 1

    def over_content(self, WordRows rows):
        """put(i)'s ids are over doc i's words alone where `rows` (those its
        searches filled: docs_inputs' compact) left its whitespace out."""
        if rows.n_docs != self.n_docs:
            raise ValueError(f"{self.what}: rows of {rows.n_docs} docs for a sink of "
                             f"{self.n_docs}: give the rows of the batch the sink writes")
        self.content = rows

    def over_positions(self, indexes):
        """put(i)'s ids are over doc i's tokens at indexes[i] (int32
        positions, rising, in the doc: its words; None: every token). A doc
        of whitespace alone (no position: never searched) is written by
        finish()."""
        cdef int d
        cdef const int[::1] view
        if len(indexes) != self.n_docs:
            raise ValueError(f"{self.what}: {len(indexes)} docs' positions for a sink of "
                             f"{self.n_docs}: give each doc's (None: every token)")
        views = [None if index is None else numpy.ascontiguousarray(index, dtype="int32")
                 for index in indexes]
        for d, index in enumerate(views):  # (all checked before any is kept)
            if index is not None and len(index) and (
                    index[0] < 0 or index[-1] >= self.lengths[d]
                    or (len(index) > 1 and (numpy.diff(index) <= 0).any())):
                raise ValueError(f"{self.what}: doc {d}'s positions are not rising places in "
                                 f"its {self.lengths[d]} tokens: give content_index(doc)'s")
        self.positions.resize(self.n_docs)
        self.words.resize(self.n_docs)
        self._positions = []
        self.alone.clear()
        for d, index in enumerate(views):
            if index is None:
                continue
            view = index
            self._positions.append(view)
            self.words[d] = view.shape[0]
            if view.shape[0]:
                self.positions[d] = &view[0]
            elif self.lengths[d]:
                self.alone.push_back(d)

    cdef void put(self, int i, const int* out, int64_t stride, int n) noexcept nogil:
        cdef const int* positions = NULL
        cdef int words = -1
        if self.content is not None:
            words = self.content.content_of(i, &positions)
        elif self.positions.size():
            positions, words = self.positions[i], self.words[i]
        if positions != NULL:  # (its whitespace left out of its ids: put back here)
            if n != words:
                self.status[i], self.bad[i] = _BAD_LENGTH, n
            else:
                self._put_over(i, out, n, positions)
        elif n != self.lengths[i]:
            self.status[i], self.bad[i] = _BAD_LENGTH, n
        elif self.mode == 0:
            self.status[i] = _put_tags(self.tokens[i], out, n, self.h, self.n_h,
                                       self.saved.data() + self.saved_at[i] if self.saved.size()
                                       else NULL,
                                       &self.bad[i])
        else:
            self.status[i] = _put_spans(self.tokens[i], out, n, self.kind, self.typ,
                                        self.n_actions, self.h, self.n_h, self.mode == 1,
                                        &self.found[i] if self.mode == 2 else NULL, &self.bad[i],
                                        NULL, n)

    cdef void _put_over(self, int i, const int* out, int n, const int* positions) noexcept nogil:
        """Doc i's n ids, those of its tokens at `positions` (the others
        whitespace: the space tag, outside, inside a span only between two
        of its tokens)."""
        cdef vector[int] ids
        cdef int j
        if self.mode != 0:
            self.status[i] = _put_spans(self.tokens[i], out, n, self.kind, self.typ,
                                        self.n_actions, self.h, self.n_h, self.mode == 1,
                                        &self.found[i] if self.mode == 2 else NULL,
                                        &self.bad[i], positions, self.lengths[i])
        elif la_resize(ids, self.lengths[i]) != 0:
            self.status[i] = _NO_MEMORY
        else:
            for j in range(self.lengths[i]):
                ids[j] = -1  # (the space tag)
            for j in range(n):
                ids[positions[j]] = out[j]
            self.status[i] = _put_tags(self.tokens[i], ids.data(), self.lengths[i], self.h,
                                       self.n_h, self.saved.data() + self.saved_at[i]
                                       if self.saved.size() else NULL, &self.bad[i])

    def undo(self):
        """The docs put, as they were before (see the class): for a batch
        that failed after its searches began."""
        if self.mode == 0 and self.n_docs and not self.saved.size():
            raise ValueError("LabelSink.undo: make the sink with tags(..., undoable=True)")
        cdef int d, j
        cdef TokenC* t
        with nogil:
            for d in range(self.n_docs):
                if self.status[d] != _PUT:
                    continue
                for j in range(self.lengths[d]):
                    t = &self.tokens[d][j]
                    if self.mode == 0:
                        t.tag = self.saved[self.saved_at[d] + j]
                    elif self.mode == 1:
                        t.ent_iob, t.ent_type, t.ent_kb_id, t.ent_id = 0, 0, 0, 0
                self.status[d] = _NOT_PUT
                if self.mode == 2:
                    self.found[d].clear()
        for doc, group in reversed(self.replaced or ()):  # (groups finish() made)
            if group is None:
                del doc.spans.data[self.key]
            else:
                doc.spans.data[self.key] = group
        self.replaced = None

    def finish(self, scores=None, score_starts=None, absent=None, alone=None):
        """With the GIL, after every put: a span group's groups, for the
        docs before the first that failed; that doc's error raised.
        absent: the docs (places in the batch) not put on purpose, which
        the caller writes itself (those whose rows the searching thread
        could not fill: WordRows.returned()); no group is made for them.
        alone: the docs of whitespace alone (never searched: WordRows.
        returned(whitespace=True)), written here as over_positions' are."""
        cdef int d, first = self.n_docs
        cdef int none[1]
        pending = set(self.alone)
        for d in (alone if alone is not None else ()):
            if not 0 <= d < self.n_docs or self.status[d] != _NOT_PUT or d in pending:
                raise ValueError(f"{self.what}: doc {d} cannot be written as whitespace alone "
                                 f"in a batch of {self.n_docs} (out of range, put, or given "
                                 "twice): give the docs that were not put")
            pending.add(d)
        for d in (alone if alone is not None else ()):
            self.alone.push_back(d)
        for d in self.alone:
            self._put_over(d, none, 0, none)  # (no id: every token is whitespace)
        self.alone.clear()
        if absent is not None:
            for d in absent:
                if not 0 <= d < self.n_docs or self.status[d] not in (_NOT_PUT, _ABSENT):
                    raise ValueError(f"{self.what}: doc {d} cannot be absent from a batch of "
                                     f"{self.n_docs} (out of range, or put): give the docs "
                                     "that were not put")
                self.status[d] = _ABSENT
        for d in range(self.n_docs):
            if self.status[d] == _ABSENT:
                continue
            if self.status[d] != _PUT and (self.status[d] != _NOT_PUT or self.lengths[d]):
                first = d
                break
        if self.mode == 2:
            self.replaced = []
            _set_groups(self.docs, self.key, self.found, first, scores, score_starts,
                        self.status.data(), self.replaced)
        if first == self.n_docs:
            return
        cdef int why = self.status[first], bad = self.bad[first]
        if why == _NO_MEMORY:
            raise MemoryError(f"{self.what}: no memory left for the spans of doc {first} of the "
                              f"batch ({self.lengths[first]} tokens): free memory, or annotate "
                              "fewer or shorter docs at once")
        if why == _BAD_ID:
            raise ValueError(f"{self.what}: label id {bad} out of range for "
                             f"{self.n_h if self.mode == 0 else self.n_actions} labels: give the "
                             "component's label ids")
        if why == _BAD_TYPE:
            raise ValueError(f"{self.what}: span type {bad} out of range for {self.n_h} hashes: "
                             "give a hash per span type")
        if why == _BAD_LENGTH:
            raise ValueError(f"{self.what}: {bad} labels for doc {first} of the batch "
                             f"({self.lengths[first]} tokens): give one label per token (per "
                             "word where its whitespace was left out: over_positions)")
        raise RuntimeError(f"{self.what}: doc {first} of the batch ({self.lengths[first]} "
                           "tokens) was never written: the search that should have put it did "
                           "not run (a bug: please report it)")


cdef signed char _put_tags(TokenC* tokens, const int* ids, int n, const uint64_t* h, int n_h,
                           uint64_t* saved, int* bad) noexcept nogil:
    """One doc's tags (each token's tag before into `saved`, where given);
    a doc with an id out of range is left as it was."""
    cdef int i, a
    for i in range(n):
        if ids[i] >= n_h or ids[i] < -n_h:
            bad[0] = ids[i]
            return _BAD_ID
    for i in range(n):
        a = ids[i]
        if saved != NULL:
            saved[i] = tokens[i].tag
        tokens[i].tag = h[a if a >= 0 else n_h + a]
    return _PUT


cdef signed char _put_spans(TokenC* tokens, const int* ids, int n, const signed char* kind,
                            const int* typ, int n_actions, const uint64_t* h, int n_types,
                            bint ents, vector[SpanC]* into, int* bad, const int* positions,
                            int n_tokens) noexcept nogil:
    """The spans of one doc's ids: into its tokens' entity fields (ents,
    as Doc.set_ents(spans, default="outside")), else appended to `into`.
    positions (or NULL: ids[j] is token j's): the n ids are those of the
    doc's tokens at these positions, of its n_tokens (the others
    whitespace: a span over ids j..k covers the tokens from positions[j]
    to positions[k], the whitespace between them included)."""
    cdef vector[int] found
    cdef int i, j
    cdef size_t k
    cdef TokenC* t
    for i in range(n):
        if ids[i] >= n_actions or ids[i] < -n_actions:
            bad[0] = ids[i]
            return _BAD_ID
    if n and id_spans(ids, n, kind, typ, n_actions, &found) != 0:
        return _NO_MEMORY
    for k in range(0, found.size(), 3):
        if found[k + 2] < 0 or found[k + 2] >= n_types:
            bad[0] = found[k + 2]
            return _BAD_TYPE
        if positions != NULL:  # (ids' places -> the doc's tokens; the end exclusive)
            found[k + 1] = positions[found[k + 1] - 1] + 1
            found[k] = positions[found[k]]
    if ents:
        for i in range(n_tokens):
            t = &tokens[i]
            t.ent_iob, t.ent_type, t.ent_kb_id, t.ent_id = 2, 0, 0, 0
        for k in range(0, found.size(), 3):
            for j in range(found[k], found[k + 1]):
                tokens[j].ent_iob = 3 if j == found[k] else 1
                tokens[j].ent_type = h[found[k + 2]]
        return _PUT
    if la_reserve(into[0], into.size() + found.size() // 3) != 0:
        return _NO_MEMORY
    for k in range(0, found.size(), 3):  # (no allocation: reserved)
        if la_push(into[0], _span(tokens, found[k], found[k + 1], h[found[k + 2]])) != 0:
            return _NO_MEMORY
    return _PUT


def write_phrases(docs, phrases, hashes, str key, offsets=None):
    """A new span group doc.spans[key] of each doc from its phrases: rows
    (start, end inclusive, type index into hashes), as the FR recogniser
    gives them; per doc, or with `offsets` (n_docs + 1,) every doc's rows
    in one (M, 3) array, doc k's at rows offsets[k]:offsets[k + 1]. No
    Python per span (as write_spans)."""
    cdef const uint64_t[::1] h = numpy.ascontiguousarray(hashes, dtype="uint64")
    if offsets is None:
        per_doc = [numpy.asarray(doc_rows, dtype="int32").reshape((-1, 3)) for doc_rows in phrases]
        if len(per_doc) != len(docs):
            raise ValueError(f"write_phrases: {len(per_doc)} outputs for {len(docs)} docs")
        offsets = numpy.zeros((len(per_doc) + 1,), dtype="int64")
        numpy.cumsum([len(doc_rows) for doc_rows in per_doc], out=offsets[1:])
        phrases = numpy.concatenate(per_doc) if per_doc else numpy.zeros((0, 3), dtype="int32")
    cdef const int[:, ::1] rows = numpy.ascontiguousarray(phrases, dtype="int32").reshape((-1, 3))
    cdef const int64_t[::1] ov = numpy.ascontiguousarray(offsets, dtype="int64")
    cdef int n_docs = len(docs), n_types = h.shape[0], d = 0
    if ov.shape[0] != n_docs + 1 or ov[0] != 0 or ov[n_docs] != rows.shape[0]:
        raise ValueError(f"write_phrases: offsets do not match {n_docs} docs and "
                         f"{rows.shape[0]} phrases")
    cdef vector[TokenC*] tokens
    cdef vector[int] lengths
    cdef Doc doc
    tokens.resize(n_docs)
    lengths.resize(n_docs)
    for doc in docs:
        if ov[d + 1] < ov[d]:
            raise ValueError("write_phrases: offsets must rise")
        tokens[d] = doc.c
        lengths[d] = doc.length
        d += 1
    cdef vector[vector[SpanC]] spans
    cdef int64_t r, bad = -1
    spans.resize(n_docs)
    cdef int64_t t0 = now_ns()
    with nogil:
        for d in range(n_docs):
            spans[d].reserve(ov[d + 1] - ov[d])
            for r in range(ov[d], ov[d + 1]):
                if not (0 <= rows[r, 0] <= rows[r, 1] < lengths[d]) \
                        or not (0 <= rows[r, 2] < n_types):
                    bad = r
                    break
                spans[d].push_back(_span(tokens[d], rows[r, 0], rows[r, 1] + 1, h[rows[r, 2]]))
            if bad >= 0:
                break
    add_since(t0)
    _set_groups(docs, key, spans, d if bad >= 0 else n_docs)
    if bad >= 0:
        raise ValueError(f"write_phrases: phrase {tuple(rows[bad])} out of range for a "
                         f"doc of {lengths[d]} tokens and {n_types} types")


cdef inline SpanC _span(const TokenC* tokens, int start, int end, uint64_t label) noexcept nogil:
    cdef SpanC span
    span.id, span.kb_id = 0, 0
    span.start, span.end = start, end
    span.start_char = tokens[start].idx
    span.end_char = tokens[end - 1].idx + tokens[end - 1].lex.length
    span.label = label
    return span


cdef int _set_groups(docs, str key, vector[vector[SpanC]]& spans, int upto, scores=None,
                     score_starts=None, const signed char* status=NULL,
                     list replaced=None) except -1:
    """doc.spans[key] = a new group of each doc's spans (doc d's: spans[d],
    checked by the caller, moved into the group: `spans` gives them up),
    for the first `upto` docs; with scores, its attrs["scores"] the doc's
    slice of them (doc d's at score_starts[d]:score_starts[d + 1]); none
    for a doc whose `status` (a LabelSink's, where given) is _ABSENT.
    replaced: (doc, its group before or None) appended per group set."""
    cdef SpanGroup group
    cdef Doc doc
    cdef int d = 0
    cdef const int64_t[::1] bounds
    if scores is not None:
        bounds = numpy.ascontiguousarray(score_starts, dtype="int64")
    for doc in docs:
        if d >= upto:
            break
        if status != NULL and status[d] == _ABSENT:
            d += 1
            continue
        # (made without __init__'s argument handling, the weak reference by
        # the C API: a doc's group per call, with the GIL held)
        group = SpanGroup.__new__(SpanGroup)
        group._doc_ref = PyWeakref_NewRef(doc, None)
        group.name = key
        group.attrs = {} if scores is None else {"scores": scores[bounds[d]:bounds[d + 1]]}
        group.c.swap(spans[d])
        # SpanGroups is a UserDict: its own __setitem__ checks in Python that the
        # group is this doc's, which it is by construction
        groups = doc.spans.data
        if replaced is not None:
            replaced.append((doc, groups.get(key)))
        groups[key] = group
        d += 1
    return 0


def _lexeme_atoms(substrings, classes):
    atoms = LexemeAtoms(substrings)
    atoms.set_classes(classes)
    return atoms


cdef int64_t _doc_units(const TokenC* tokens, int64_t n, int64_t base, bint hooked, int given,
                        const unsigned char* first, const unsigned char* space,
                        const WordC* const* lexes,
                        vector[int64_t]* words, vector[int64_t]* unit_starts) noexcept nogil:
    """One doc's units (sentence_units'), after those before it: its
    words' batch positions (base + i; whitespace tokens, where `space`
    (per token) or `lexes` (its word types) say so, left out) appended to
    `words`, and where each of its units ends in them to `unit_starts`
    (whose last entry is words' size on entry: where the first begins).
    first: per token, whether it starts a sentence (NULL: token.sent_start
    == 1, as docs_inputs' sent_starts); given: whether a token after the first has a sentence start set
    (docs_inputs' sent_set), -1: read here. Returns the doc's words where
    it is decoded as one unit without boundaries (0 where it has them),
    -1 where memory ran out."""
    cdef bint bounded = n >= 2 and hooked
    cdef int64_t i, sentence = -1, last = -1, n_words = 0
    if n >= 2 and not bounded and given >= 0:
        bounded = given != 0
    elif n >= 2 and not bounded:
        for i in range(1, n):
            if tokens[i].sent_start != 0:
                bounded = True
                break
    for i in range(n):
        if bounded and ((first[i] != 0) if first != NULL else (tokens[i].sent_start == 1)):
            sentence += 1
        if (space != NULL and space[i]) or (lexes != NULL and lexes[i].is_space):
            continue
        if sentence != last and words.size() > <size_t>unit_starts.back():
            if la_push(unit_starts[0], <int64_t>words.size()) != 0:
                return -1
        last = sentence
        if la_push(words[0], base + i) != 0:
            return -1
        n_words += 1
    if words.size() > <size_t>unit_starts.back():
        if la_push(unit_starts[0], <int64_t>words.size()) != 0:
            return -1
    return 0 if bounded else n_words


def sentence_units(docs, starts, space, sent_starts, sent_set=None):
    """What the phrase recognisers decode as one unit, for a batch (its
    docs' tokens one after the other from `starts`, (n_docs + 1,)): the
    words (tokens with `space` 0; space None: no whitespace token) of each
    sentence where a doc has sentence boundaries (as
    Doc.has_annotation("SENT_START"): a "sents" hook, or a sentence start
    set on a token after the first; `sent_starts` (N,) bool, token.is_sent_start,
    splits them), else of the whole doc. Returns (words (W,) int64 batch
    positions, unit_starts (U + 1,) int64 into words, unit_base (U,) int64:
    where the unit's doc begins, unit_doc (U,) int64, longest: the most words
    of a doc decoded as one unit without boundaries). Units without words
    are left out. sent_set: docs_inputs' (per doc, a sentence start set
    after its first token), else read from the tokens here."""
    cdef const int64_t[::1] sv = numpy.ascontiguousarray(starts, dtype="int64")
    cdef const unsigned char[::1] sp = None if space is None else \
        numpy.ascontiguousarray(space, dtype="uint8")
    cdef const unsigned char[::1] first = numpy.ascontiguousarray(sent_starts).view("uint8")
    cdef int64_t n_docs = len(docs)
    if sv.shape[0] != n_docs + 1:
        raise ValueError("sentence_units: the token columns do not match the docs")
    cdef int64_t N = sv[n_docs]
    if first.shape[0] != N or (sp is not None and sp.shape[0] != N):
        raise ValueError("sentence_units: the token columns do not match the docs")
    cdef vector[int64_t] words, unit_starts, unit_base, unit_doc
    cdef vector[const TokenC*] tokens
    cdef vector[unsigned char] hooked
    cdef const unsigned char[::1] given = None if sent_set is None else \
        numpy.ascontiguousarray(sent_set, dtype="uint8")
    if given is not None and given.shape[0] != n_docs:
        raise ValueError("sentence_units: sent_set does not match the docs: give "
                         "docs_inputs' sent_set of the same docs")
    cdef Doc doc
    cdef int64_t d = 0, i, base, longest = 0, n_words
    cdef bint has_space = sp is not None
    tokens.resize(n_docs)
    hooked.resize(n_docs)
    words.reserve(N)
    unit_starts.reserve(n_docs + 1)
    unit_base.reserve(n_docs)
    unit_doc.reserve(n_docs)
    for doc in docs:
        if sv[d + 1] - sv[d] != doc.length:
            raise ValueError("sentence_units: the token columns do not match the docs")
        tokens[d] = doc.c
        hooked[d] = "sents" in doc.user_hooks
        d += 1
    cdef size_t before
    cdef bint no_memory = False
    cdef int64_t t0 = now_ns()
    with nogil:
        no_memory = la_push(unit_starts, <int64_t>0) != 0
        for d in range(n_docs):
            if no_memory:
                break
            base = sv[d]
            before = unit_starts.size()
            n_words = _doc_units(tokens[d], sv[d + 1] - base, base, hooked[d],
                                 given[d] if given is not None else -1, &first[base] if N else NULL,
                                 &sp[base] if has_space else NULL, NULL, &words, &unit_starts)
            no_memory = n_words < 0
            for i in range(<int64_t>(unit_starts.size() - before)):
                if la_push(unit_base, base) != 0 or la_push(unit_doc, d) != 0:
                    no_memory = True
            if n_words > longest:
                longest = n_words
    add_since(t0)
    if no_memory:
        raise MemoryError(f"sentence_units: no memory for the units of {N} tokens: free memory, "
                          "or give fewer or shorter docs at once")
    return (_int64s(words), _int64s(unit_starts), _int64s(unit_base), _int64s(unit_doc), longest)


def sentence_ids(docs, starts):
    """The given sentences of a batch's docs (their tokens one after the
    other from `starts`, (n_docs + 1,)): per token the number of its
    sentence in its doc, int32 (1 from the doc's first token on, one more
    at each token.sent_start == 1), and per doc, uint8, whether its
    sentences are given, as Doc.has_annotation("SENT_START") says (a "sents"
    hook, a doc of one token, or a sentence start or its absence set on a
    token after the first). A C loop: no Python per doc but the hook's look-up."""
    cdef const int64_t[::1] sv = numpy.ascontiguousarray(starts, dtype="int64")
    cdef int64_t n_docs = len(docs)
    if sv.shape[0] != n_docs + 1:
        raise ValueError("sentence_ids: the starts do not match the docs")
    ids = numpy.zeros((sv[n_docs] if n_docs else 0,), dtype="int32")
    given = numpy.zeros((n_docs,), dtype="uint8")
    cdef int[::1] iv = ids
    cdef unsigned char[::1] gv = given
    cdef Doc doc
    cdef int64_t d = 0, i, n, base
    cdef int sentence
    for doc in docs:
        n = sv[d + 1] - sv[d]
        if n != doc.length:
            raise ValueError("sentence_ids: the starts do not match the docs")
        if n:
            gv[d] = n == 1 or "sents" in doc.user_hooks
            for i in range(1, n):
                if gv[d]:
                    break
                gv[d] = doc.c[i].sent_start != 0
            base, sentence = sv[d], 1
            iv[base] = 1
            for i in range(1, n):
                sentence += doc.c[i].sent_start == 1
                iv[base + i] = sentence
        d += 1
    return ids, given


cdef object _int64s(const vector[int64_t]& values):
    out = numpy.empty((values.size(),), dtype="int64")
    cdef int64_t[::1] view = out
    if values.size():
        memcpy(&view[0], values.data(), values.size() * sizeof(int64_t))
    return out
