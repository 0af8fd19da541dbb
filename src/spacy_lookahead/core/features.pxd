from libc.stdint cimport uint64_t
from cymem.cymem cimport Pool
from murmurhash.mrmr cimport hash64

from .weights cimport feat_t

# Word-level atoms, computed once per word type (spacy_io.LexemeAtoms) and
# copied per token. 0 means "absent": no feature is emitted for it.
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
    # ... from the vocab's lexeme (spaCy's attributes, read by spacy_io):
    # string ids of NORM, SHAPE, PREFIX, SUFFIX; the lexeme's flag bits
    # (IS_ALPHA ... as spaCy's attribute ids); the Brown cluster of the
    # `lexeme_cluster` table (its path's bits, first bit lowest) and the bin
    # of the log probability of `lexeme_prob` (PROB_BIN_BASE + floor(-log p);
    # 0 for a word the table lacks)
    A_NORM
    A_SP_SHAPE
    A_PREFIX
    A_SUFFIX
    A_FLAGS
    A_CLUSTER
    A_PROB
    # ... from the component: the word's ambiguity class (the tags it took in
    # training, where it was frequent: the tagger's tag dictionary), 0 if none
    A_CLASS
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


# Feature templates as data (systems/templates.py compiles them from the
# config): a conjunction of up to MAX_CONJUNCTION atoms, each one column of
# the atoms array read at one of the system's slots (a token offset for
# tagging), optionally cut to a bit prefix (clusters) or one flag bit.
cdef enum:
    MAX_CONJUNCTION = 4
    COLUMN_ONE = N_ATOMS      # the constant atom 1 (the bias), read nowhere
    # the other occurrences of a token's word (its A_LOWER) in the doc that
    # the `doc` templates read: the two before it and the two after it
    # nearest to it, nearest first (-1: none)
    MAX_OCCURRENCES = 4
# A system gives each slot's token in a `tokens` array (< 0: before the doc
# or an empty slot; >= length: after the doc: the sentinels).

cdef struct TemplateC:
    uint64_t id                     # the hash seed: equal atoms of two templates differ
    int n                           # atoms in the conjunction
    int substrings                  # 1: one feature per substring of slot[0]'s token
    int doc                         # 1: read at the other occurrences of the word in the doc
                                    # (extract_doc_templates), one feature per occurrence
    int slot[MAX_CONJUNCTION]
    int column[MAX_CONJUNCTION]
    int bits[MAX_CONJUNCTION]       # > 0: the first `bits` bits of a cluster path
    int flag[MAX_CONJUNCTION]       # >= 0: that bit of the column (0 / 1)


# word_substrings' bounds (features.MAX_SUBSTRING_LENGTH, MAX_SUBSTRINGS)
cdef enum:
    MAX_SUBSTRING_LENGTH_C = 9
    MAX_SUBSTRINGS_C = 64

# word_atoms of a word's text into atoms[0 .. A_NORM - 1], and its
# word_substrings into found[0 .. MAX_SUBSTRINGS_C - 1] (their number)
# (features.pyx)
cdef int word_atoms_into(str text, uint64_t* atoms) except -1
cdef int word_substrings_into(str text, uint64_t* found) except -1
# ... the same of a word's (valid) UTF-8, without the GIL: utf8_word_atoms
# 1 (all made) or 0 (A_LOWER, A_ALL_CAPS left to Python: not ASCII), -1
# out of memory; utf8_substrings their number or -1; utf8_is_space str.isspace
cdef int utf8_word_atoms(const char* text, Py_ssize_t nbytes, uint64_t* atoms) noexcept nogil
cdef int utf8_substrings(const char* text, Py_ssize_t nbytes, uint64_t* found) noexcept nogil
cdef int utf8_is_space(const char* text, Py_ssize_t nbytes) noexcept nogil

cdef TemplateC* make_templates(Pool mem, dict arrays) except NULL


cdef inline uint64_t path_prefix(uint64_t v, int bits) noexcept nogil:
    """A cluster path's first `bits` bits, with a leading 1 so that prefixes
    of different lengths (and an all-zero prefix) stay apart; 0 (absent)
    stays 0."""
    if v == 0:
        return 0
    return (v & ((<uint64_t>1 << bits) - 1)) | (<uint64_t>1 << bits)


cdef inline uint64_t template_atom(const TemplateC* t, int j, const uint64_t* atoms,
                                   int length, const int* tokens, int current) noexcept nogil:
    """Atom j of template t at the tokens of the slots; 0: absent. An input
    (tag, chunk) that the current token lacks is absent everywhere: the
    doc has no such input."""
    cdef int col = t.column[j], i
    cdef uint64_t v
    if col == COLUMN_ONE:
        return 1
    if col >= N_WORD_ATOMS and 0 <= current < length and atoms[current * N_ATOMS + col] == 0:
        return 0
    i = tokens[t.slot[j]]
    if i < 0:
        return ATOM_BEFORE
    if i >= length:
        return ATOM_AFTER
    v = atoms[i * N_ATOMS + col]
    if t.flag[j] >= 0:
        return (v >> t.flag[j]) & 1
    if t.bits[j] > 0:
        return path_prefix(v, t.bits[j])
    return v


cdef inline int conjunction(feat_t* f, const TemplateC* t, const uint64_t* atoms, int length,
                            const int* tokens, int current) noexcept nogil:
    """Template t's feature into f[0] (1), or none where an atom is absent (0)."""
    cdef uint64_t buf[MAX_CONJUNCTION]
    cdef int j
    for j in range(t.n):
        buf[j] = template_atom(t, j, atoms, length, tokens, current)
        if buf[j] == 0:
            return 0
    f[0] = hash64(buf, t.n * sizeof(uint64_t), t.id)
    return 1


cdef inline int extract_templates(feat_t* f, const TemplateC* templates, int n_templates,
                                  const uint64_t* atoms, int length, const int* tokens,
                                  int current, const int* sub_offsets, const uint64_t* subs,
                                  int max_subs) noexcept nogil:
    """The features of every template at the token `current`, in order, into
    f; a template any of whose atoms is absent (0) at a token of the doc
    gives none (a short word's 4-letter prefix, a flag that is off, a word
    without a cluster). Returns how many."""
    cdef int n = 0, k, j, i, m
    cdef const TemplateC* t
    cdef uint64_t buf[1]
    for k in range(n_templates):
        t = &templates[k]
        if t.doc:
            continue  # extract_doc_templates
        if t.substrings:
            i = tokens[t.slot[0]]
            if sub_offsets == NULL or i < 0 or i >= length:
                continue
            m = 0
            for j in range(sub_offsets[i], sub_offsets[i + 1]):
                if m >= max_subs:
                    break
                buf[0] = subs[j]
                f[n] = hash64(buf, sizeof(uint64_t), t.id); n += 1; m += 1
            continue
        n += conjunction(&f[n], t, atoms, length, tokens, current)
    return n


cdef inline int extract_doc_templates(feat_t* f, const TemplateC* templates, int n_templates,
                                      const uint64_t* atoms, int length, int* tokens, int n_slots,
                                      const int* doc_offsets, int n_doc_slots, int current,
                                      const int* occurrences, const int* sent_lo,
                                      const int* sent_hi) noexcept nogil:
    """The `doc` templates' features at the token `current` (Ratinov and
    Roth 2009's context aggregation): each template once per other
    occurrence of the word in the doc (`occurrences`: MAX_OCCURRENCES per
    token), its `doc` atoms read at offsets from that occurrence (slots
    n_slots.. of `tokens`, which this fills; within the occurrence's sentence,
    [sent_lo, sent_hi) per token, where given: outside it the sentinels), the
    others as usual; the same template id, so the features of all
    occurrences pool. Returns how many."""
    cdef int n = 0, k, m, d, other
    if occurrences == NULL or current < 0 or current >= length:
        return 0
    for m in range(MAX_OCCURRENCES):
        other = occurrences[current * MAX_OCCURRENCES + m]
        if other < 0:
            continue
        for d in range(n_doc_slots):
            tokens[n_slots + d] = other + doc_offsets[d]
            if sent_lo != NULL and tokens[n_slots + d] < sent_lo[other]:
                tokens[n_slots + d] = -1
            elif sent_hi != NULL and tokens[n_slots + d] >= sent_hi[other]:
                tokens[n_slots + d] = length
        for k in range(n_templates):
            if templates[k].doc:
                n += conjunction(&f[n], &templates[k], atoms, length, tokens, current)
    return n


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

