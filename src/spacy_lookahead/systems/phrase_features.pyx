"""The FR recogniser's features (Carreras, Marquez & Castro 2005, Section
4.1): phi_w, the word features of the start and end filters, and phi_p,
the phrase features of the score function, which also read the partial
solution (the chunks to the left for flat phrases, the inner top clauses for
embedded ones).

Degree-2 polynomial kernel: the paper trains dual perceptrons with
K(x, x') = (x.x' + 1)^2. We stay primal (hashed sparse weights, O(1)
updates, nogil dot products) and add explicit conjunctions of the atoms
whose pairs carry the kernel's gain: neighbouring POS / chunk tags, the
boundary tags of a phrase, the internal pattern with the outside context.
"""
from libc.stdint cimport uint64_t
from libc.string cimport memset

from spacy.strings import get_string_id

from ..core.features cimport (ATOM_BEFORE, N_ATOMS, A_ORTH, A_LOWER, A_TAG, A_CHUNK, feat1,
                              feat2, feat3)
from ..core.features import word_atoms
from ..core.weights cimport Weights, feat_t
from .phrase_doc cimport FS_CHUNK, FS_CLAUSE, MAX_WFEATS, N_EL, PhraseDocC

# Relevant elements (paper Section 4.1): bits of doc.elem.
DEF EL_PUNCT = 1     # , . :
DEF EL_QUOTE = 2     # `` ''
DEF EL_CC = 4        # coordinate conjunctions
DEF EL_THAT = 8      # the word "that"
DEF EL_REL = 16      # relative pronouns (WDT WP WP$ WRB)
DEF EL_VP = 32       # verb phrase chunks (counted at their first word)
DEF EL_SBAR = 64     # relative/subordinate phrase chunks (SBAR), at their first word
DEF CLAUSE_SYMBOL = 11  # an inner clause in the internal pattern

# Templates. Word features (phi_w) ...
cdef enum:
    T_WBIAS = 1
    T_WWORD        # + 7 offsets
    T_WPOS = T_WWORD + 7
    T_WCHUNK = T_WPOS + 7
    T_WWGRAM = T_WCHUNK + 7   # + 9 n-gram shapes around the word
    T_WPGRAM = T_WWGRAM + 9
    T_WPP = T_WPGRAM + 9      # conjunctions (kernel degree 2)
    T_WPN
    T_WCC_P
    T_WCC_N
    T_WWP
    T_WPPP
    T_WFLAG        # + 3 offsets: left start/end predictions
    T_WFLAGS = T_WFLAG + 4
    T_WCOUNT
    T_WCOUNT_POS
    T_WCONJ        # + 10 chunking conjunctions
    # ... and phrase features (phi_p)
    T_PBIAS = T_WCONJ + 10
    T_PSWORD       # + 4 offsets at s (0..-3)
    T_PSPOS = T_PSWORD + 4
    T_PEWORD = T_PSPOS + 4   # + 4 offsets at e (0..+3)
    T_PEPOS = T_PEWORD + 4
    T_PLEN = T_PEPOS + 4
    T_PBAGW
    T_PBAGP
    T_PBAGP2
    T_PBAGP3
    T_PPOSALL
    T_PLEFT        # (rank, type) of the chunks to the left
    T_PLEFT_ADJ
    T_PLEFT_POS
    T_PSE_POS
    T_PSS_POS
    T_PEE_POS
    T_PSE_CHUNK
    T_PSE_WORD
    T_PPATTERN
    T_PPATTERN_S
    T_PPATTERN_E
    T_PPATTERN_SE
    T_PCOUNT
    T_PNCLAUSES
    T_PWHOLE
    T_PCONJ        # + 10 chunking conjunctions
    T_PCL = T_PCONJ + 10   # + 10 clause conjunctions
    T_WCL = T_PCL + 10     # + 4 clause word conjunctions




cdef uint64_t _hash(str text):
    return get_string_id(text)


cdef class PhraseFeatures:
    def __init__(self, int nr_type, bint embedded, str feature_set="clause", int max_length=0):
        if nr_type < 1:
            raise ValueError(f"nr_type must be >= 1, got {nr_type}")
        if feature_set not in ("chunk", "clause"):
            raise ValueError(f"feature_set must be 'chunk' or 'clause', got {feature_set!r}")
        if max_length < 0:
            raise ValueError(f"max_length must be >= 0 (0: no limit), got {max_length}")
        self.nr_type = nr_type
        self.embedded = embedded
        self.feature_set = FS_CHUNK if feature_set == "chunk" else FS_CLAUSE
        self.max_length = max_length
        # Tags and chunk labels are spaCy string hashes (doc.to_array("TAG"),
        # StringStore.add); the lower-case form is a features.word_atoms hash.
        self.h_that = word_atoms("that")[A_LOWER]
        for i, tag in enumerate([",", ".", ":"]):
            self.punct_tags[i] = _hash(tag)
        for i, tag in enumerate(["WDT", "WP", "WP$", "WRB"]):
            self.rel_tags[i] = _hash(tag)
        self.h_quote1 = _hash("``")
        self.h_quote2 = _hash("''")
        self.h_cc = _hash("CC")
        self.h_bvp = _hash("B-VP")
        self.h_bsbar = _hash("B-SBAR")

    @property
    def feature_set_name(self):
        return "chunk" if self.feature_set == FS_CHUNK else "clause"

    # --- atoms ------------------------------------------------------------

    cdef int element(self, const uint64_t* w) noexcept nogil:
        cdef int bits = 0, j
        cdef uint64_t tag = w[A_TAG]
        for j in range(3):
            if tag == self.punct_tags[j]:
                bits |= EL_PUNCT
        if tag == self.h_quote1 or tag == self.h_quote2:
            bits |= EL_QUOTE
        if tag == self.h_cc:
            bits |= EL_CC
        if w[A_LOWER] == self.h_that:
            bits |= EL_THAT
        for j in range(4):
            if tag == self.rel_tags[j]:
                bits |= EL_REL
        if w[A_CHUNK] == self.h_bvp:
            bits |= EL_VP
        if w[A_CHUNK] == self.h_bsbar:
            bits |= EL_SBAR
        return bits

    cdef uint64_t symbol(self, const PhraseDocC* d, int i) noexcept nogil:
        """The element of word i in the internal pattern (0: not relevant)."""
        cdef int bits = d.elem[i]
        if bits & (EL_PUNCT | EL_QUOTE | EL_CC | EL_REL):
            return d.atoms[i * N_ATOMS + A_TAG]
        if bits & EL_THAT:
            return d.atoms[i * N_ATOMS + A_LOWER]
        if bits & EL_VP:
            return 13
        if bits & EL_SBAR:
            return 17
        return 0

    cdef void prepare(self, PhraseDocC* d) noexcept nogil:
        cdef int i, b
        for b in range(N_EL):
            d.prefix[b] = 0
        for i in range(d.n):
            d.elem[i] = self.element(&d.atoms[i * N_ATOMS])
            for b in range(N_EL):
                d.prefix[(i + 1) * N_EL + b] = d.prefix[i * N_EL + b] + ((d.elem[i] >> b) & 1)
            d.tops[i] = -1

    # --- phi_w --------------------------------------------------------------

    cdef bint can_start(self, const PhraseDocC* d, int i) noexcept nogil:
        # Clause boundaries never break an input chunk (paper Section 5.1).
        return d.inside == NULL or not d.inside[i]

    cdef bint can_end(self, const PhraseDocC* d, int i) noexcept nogil:
        return d.inside == NULL or i + 1 >= d.n or not d.inside[i + 1]

    cdef int word_features(self, feat_t* f, const PhraseDocC* d, int i) noexcept nogil:
        cdef int n = 0, j, a, b, c, L, k
        cdef uint64_t h, g
        cdef uint64_t fl[3]
        cdef int fired_s, fired_e
        f[n] = feat1(T_WBIAS, 1); n += 1
        if self.feature_set == FS_CHUNK:
            L = 2
            for j in range(-L, L + 1):
                f[n] = feat1(T_WWORD + j + 3, self.atom(d, i + j, A_ORTH)); n += 1
                f[n] = feat1(T_WPOS + j + 3, self.atom(d, i + j, A_TAG)); n += 1
            # Word- and PoS-grams of every window sequence that includes the word.
            for a in range(-L, 1):
                for b in range(0, L + 1):
                    if a == b:
                        continue
                    h = (a + 3) * 8 + b
                    g = h
                    for c in range(a, b + 1):
                        h = feat2(T_WWGRAM, h, self.atom(d, i + c, A_ORTH))
                        g = feat2(T_WPGRAM, g, self.atom(d, i + c, A_TAG))
                    f[n] = h; n += 1
                    f[n] = g; n += 1
            # Degree-2 conjunctions of the word with its POS context.
            f[n] = feat3(T_WCONJ, self.atom(d, i, A_ORTH), self.atom(d, i - 1, A_TAG), 0); n += 1
            f[n] = feat3(T_WCONJ + 1, self.atom(d, i, A_ORTH), self.atom(d, i + 1, A_TAG), 0); n += 1
            f[n] = feat2(T_WCONJ + 2, self.atom(d, i - 1, A_TAG), self.atom(d, i + 1, A_TAG)); n += 1
            f[n] = feat2(T_WCONJ + 3, self.atom(d, i - 1, A_ORTH), self.atom(d, i, A_TAG)); n += 1
            f[n] = feat2(T_WCONJ + 4, self.atom(d, i, A_TAG), self.atom(d, i + 1, A_ORTH)); n += 1
            f[n] = feat2(T_WCONJ + 5, self.atom(d, i - 1, A_ORTH), self.atom(d, i + 1, A_ORTH)); n += 1
            f[n] = feat3(T_WCONJ + 6, self.atom(d, i - 2, A_TAG), self.atom(d, i, A_TAG), 0); n += 1
            f[n] = feat3(T_WCONJ + 7, self.atom(d, i, A_TAG), self.atom(d, i + 2, A_TAG), 0); n += 1
            f[n] = feat3(T_WCONJ + 8, self.atom(d, i, A_ORTH), self.atom(d, i - 1, A_TAG),
                         self.atom(d, i + 1, A_TAG)); n += 1
            return n
        L = 3
        for j in range(-L, L + 1):
            f[n] = feat1(T_WWORD + j + 3, self.atom(d, i + j, A_LOWER)); n += 1
            f[n] = feat1(T_WPOS + j + 3, self.atom(d, i + j, A_TAG)); n += 1
            f[n] = feat1(T_WCHUNK + j + 3, self.atom(d, i + j, A_CHUNK)); n += 1
        f[n] = feat2(T_WPP, self.atom(d, i - 1, A_TAG), self.atom(d, i, A_TAG)); n += 1
        f[n] = feat2(T_WPN, self.atom(d, i, A_TAG), self.atom(d, i + 1, A_TAG)); n += 1
        f[n] = feat2(T_WCC_P, self.atom(d, i - 1, A_CHUNK), self.atom(d, i, A_CHUNK)); n += 1
        f[n] = feat2(T_WCC_N, self.atom(d, i, A_CHUNK), self.atom(d, i + 1, A_CHUNK)); n += 1
        f[n] = feat2(T_WWP, self.atom(d, i, A_LOWER), self.atom(d, i, A_TAG)); n += 1
        f[n] = feat3(T_WPPP, self.atom(d, i - 1, A_TAG), self.atom(d, i, A_TAG),
                     self.atom(d, i + 1, A_TAG)); n += 1
        f[n] = feat3(T_WCL, self.atom(d, i - 1, A_CHUNK), self.atom(d, i, A_CHUNK),
                     self.atom(d, i + 1, A_CHUNK)); n += 1
        f[n] = feat2(T_WCL + 1, self.atom(d, i, A_LOWER), self.atom(d, i - 1, A_TAG)); n += 1
        f[n] = feat2(T_WCL + 2, self.atom(d, i, A_LOWER), self.atom(d, i + 1, A_TAG)); n += 1
        f[n] = feat2(T_WCL + 3, self.atom(d, i - 1, A_LOWER), self.atom(d, i, A_TAG)); n += 1
        # Left start-end predictions: the filters' decisions on words i-3..i-1.
        for j in range(1, L + 1):
            if i - j < 0:
                fl[j - 1] = ATOM_BEFORE
            else:
                fired_s = fired_e = 0
                for k in range(d.K):
                    fired_s |= d.hs[(i - j) * d.K + k] > 0
                    fired_e |= d.he[(i - j) * d.K + k] > 0
                fl[j - 1] = 1 + fired_s + 2 * fired_e
            f[n] = feat1(T_WFLAG + j, fl[j - 1]); n += 1
        f[n] = feat3(T_WFLAGS, fl[0], fl[1], fl[2]); n += 1
        f[n] = feat2(T_WFLAGS + 1, fl[0], self.atom(d, i, A_TAG)); n += 1
        # Counts of the relevant elements in x[0:i] and x[i:n].
        for b in range(N_EL):
            a = d.prefix[i * N_EL + b]
            c = d.prefix[d.n * N_EL + b] - a
            f[n] = feat3(T_WCOUNT, b, 0, a if a < 4 else 4); n += 1
            f[n] = feat3(T_WCOUNT, b, 1, c if c < 4 else 4); n += 1
        f[n] = feat3(T_WCOUNT_POS, self.atom(d, i, A_TAG),
                     d.prefix[i * N_EL + 5] > 0, d.prefix[d.n * N_EL + 5] - d.prefix[i * N_EL + 5] > 0)
        n += 1
        return n

    cdef void run_filters(self, PhraseDocC* d, Weights W) noexcept nogil:
        """h_S^k and h_E^k on every word, left to right (the clause features
        look at the decisions on the words to the left)."""
        cdef int i, k, K = d.K
        cdef feat_t* f
        for i in range(d.n):
            f = &d.wfeats[i * MAX_WFEATS]
            d.n_wf[i] = self.word_features(f, d, i)
            memset(d.scores, 0, 3 * K * sizeof(double))
            W.dot(d.scores, f, d.n_wf[i])
            for k in range(K):
                d.hs[i * K + k] = d.scores[3 * k] if self.can_start(d, i) else -1.0
                d.he[i * K + k] = d.scores[3 * k + 1] if self.can_end(d, i) else -1.0

    # --- phi_p --------------------------------------------------------------

    cdef int chunk_start_feats(self, feat_t* f, const PhraseDocC* d, int s) noexcept nogil:
        cdef int n = 0, j
        cdef uint64_t p_s1 = self.atom(d, s - 1, A_TAG)
        for j in range(3):
            f[n] = feat1(T_PSWORD + j, self.atom(d, s - j, A_ORTH)); n += 1
            f[n] = feat1(T_PSPOS + j, self.atom(d, s - j, A_TAG)); n += 1
        f[n] = feat2(T_PSS_POS, p_s1, self.atom(d, s, A_TAG)); n += 1
        f[n] = feat2(T_PCONJ, p_s1, self.atom(d, s, A_ORTH)); n += 1
        f[n] = feat2(T_PCONJ + 7, self.atom(d, s - 1, A_ORTH), self.atom(d, s, A_ORTH)); n += 1
        return n

    cdef int chunk_end_feats(self, feat_t* f, const PhraseDocC* d, int e) noexcept nogil:
        cdef int n = 0, j
        cdef uint64_t p_e1 = self.atom(d, e + 1, A_TAG)
        for j in range(3):
            f[n] = feat1(T_PEWORD + j, self.atom(d, e + j, A_ORTH)); n += 1
            f[n] = feat1(T_PEPOS + j, self.atom(d, e + j, A_TAG)); n += 1
        f[n] = feat2(T_PEE_POS, self.atom(d, e, A_TAG), p_e1); n += 1
        f[n] = feat2(T_PCONJ + 1, self.atom(d, e, A_ORTH), p_e1); n += 1
        f[n] = feat2(T_PCONJ + 8, self.atom(d, e, A_ORTH), self.atom(d, e + 1, A_ORTH)); n += 1
        return n

    cdef int chunk_word_feats(self, feat_t* f, const PhraseDocC* d, int i, int gram) noexcept nogil:
        """Bag features of word i inside a chunk (no position): gram 0 its
        word and POS, 1 the POS bigram ending at i, 2 the POS trigram."""
        cdef const uint64_t* a = d.atoms
        if gram == 0:
            f[0] = feat1(T_PBAGW, a[i * N_ATOMS + A_ORTH])
            f[1] = feat1(T_PBAGP, a[i * N_ATOMS + A_TAG])
            return 2
        if gram == 1:
            f[0] = feat2(T_PBAGP2, a[(i - 1) * N_ATOMS + A_TAG], a[i * N_ATOMS + A_TAG])
            return 1
        f[0] = feat3(T_PBAGP3, a[(i - 2) * N_ATOMS + A_TAG], a[(i - 1) * N_ATOMS + A_TAG],
                     a[i * N_ATOMS + A_TAG])
        return 1

    cdef int chunk_joint_feats(self, feat_t* f, const PhraseDocC* d, int s, int e) noexcept nogil:
        """The chunk features of (s, e) jointly, and of the chunks to its left."""
        cdef int n = 0, j, i, c, length = e - s + 1
        cdef uint64_t h = T_PPOSALL
        cdef uint64_t p_s1 = self.atom(d, s - 1, A_TAG)
        cdef uint64_t p_e1 = self.atom(d, e + 1, A_TAG)
        f[n] = feat1(T_PBIAS, 1); n += 1
        f[n] = feat2(T_PSE_POS, self.atom(d, s, A_TAG), self.atom(d, e, A_TAG)); n += 1
        f[n] = feat1(T_PLEN, length if length < 8 else 8 + (length >= 16) + (length >= 32)); n += 1
        for i in range(s, e + 1):
            h = feat2(T_PPOSALL, h, d.atoms[i * N_ATOMS + A_TAG])
        f[n] = h; n += 1
        # The recognised chunks to the left of s, with their rank.
        for j in range(3):
            if j < d.left_n:
                f[n] = feat3(T_PLEFT, j, d.left_type[j], d.left_gap[j] == 0 if j == 0 else 2); n += 1
            else:
                f[n] = feat2(T_PLEFT, j, ATOM_BEFORE); n += 1
        c = d.left_type[0] if d.left_n else -1
        f[n] = feat3(T_PLEFT_POS, <uint64_t>(c + 1), p_s1, self.atom(d, s, A_TAG)); n += 1
        f[n] = feat2(T_PLEFT_ADJ, <uint64_t>(c + 1), d.left_n > 0 and d.left_gap[0] == 0); n += 1
        # Degree-2 conjunctions of the phrase boundaries and their context.
        f[n] = feat2(T_PCONJ + 2, self.atom(d, s, A_ORTH), self.atom(d, e, A_ORTH)); n += 1
        f[n] = feat2(T_PCONJ + 3, p_s1, p_e1); n += 1
        f[n] = feat2(T_PCONJ + 4, <uint64_t>(c + 1), self.atom(d, s, A_ORTH)); n += 1
        f[n] = feat2(T_PCONJ + 5, h, p_s1); n += 1
        f[n] = feat2(T_PCONJ + 6, h, p_e1); n += 1
        f[n] = feat3(T_PCONJ + 9, <uint64_t>(c + 1), h, p_s1); n += 1
        return n

    cdef void chunk_tables(self, PhraseDocC* d, Weights W) noexcept nogil:
        """Per-word score tables of the chunk features that depend on s
        only, on e only, or on one word inside (prefix sums): a candidate
        then costs only its joint features."""
        cdef int n = d.n, K = d.K, i, k, nf, g
        cdef double* part
        for k in range(K):
            d.bag[k] = d.bag[(n + 1) * K + k] = d.bag[2 * (n + 1) * K + k] = 0.0
        for i in range(n):
            nf = self.chunk_start_feats(d.pfeats, d, i)
            memset(d.scores, 0, 3 * K * sizeof(double))
            W.dot(d.scores, d.pfeats, nf)
            for k in range(K):
                d.at_start[i * K + k] = d.scores[3 * k + 2]
            nf = self.chunk_end_feats(d.pfeats, d, i)
            memset(d.scores, 0, 3 * K * sizeof(double))
            W.dot(d.scores, d.pfeats, nf)
            for k in range(K):
                d.at_end[i * K + k] = d.scores[3 * k + 2]
            for g in range(3):
                part = &d.bag[g * (n + 1) * K]
                memset(d.scores, 0, 3 * K * sizeof(double))
                if i >= g:
                    nf = self.chunk_word_feats(d.pfeats, d, i, g)
                    W.dot(d.scores, d.pfeats, nf)
                for k in range(K):
                    part[(i + 1) * K + k] = part[i * K + k] + d.scores[3 * k + 2]


    cdef int phrase_features(self, feat_t* f, const PhraseDocC* d, int s, int e) noexcept nogil:
        """phi_p((s, e), x, y): the context windows, the phrase itself, and the
        partial solution (d.left_* for chunks, d.tops for clauses)."""
        cdef int n = 0, j, i, b, c, length = e - s + 1
        cdef uint64_t h, p_s1, p_e1
        if self.feature_set == FS_CHUNK:
            # Parts that depend on s only, on e only, on one word inside, and
            # on (s, e) with the partial solution: decode_flat scores the first
            # three from per-word tables (the sum is the same linear score).
            n = self.chunk_start_feats(f, d, s)
            n += self.chunk_end_feats(&f[n], d, e)
            for i in range(s, e + 1):
                n += self.chunk_word_feats(&f[n], d, i, 0)
                if i > s:
                    n += self.chunk_word_feats(&f[n], d, i, 1)
                if i > s + 1:
                    n += self.chunk_word_feats(&f[n], d, i, 2)
            n += self.chunk_joint_feats(&f[n], d, s, e)
            return n
        p_s1 = self.atom(d, s - 1, A_TAG)
        p_e1 = self.atom(d, e + 1, A_TAG)
        f[n] = feat1(T_PBIAS, 1); n += 1
        cdef int L = 2 if self.feature_set == FS_CHUNK else 3
        cdef int word_atom = A_ORTH if self.feature_set == FS_CHUNK else A_LOWER
        for j in range(L + 1):
            f[n] = feat1(T_PSWORD + j, self.atom(d, s - j, word_atom)); n += 1
            f[n] = feat1(T_PSPOS + j, self.atom(d, s - j, A_TAG)); n += 1
            f[n] = feat1(T_PEWORD + j, self.atom(d, e + j, word_atom)); n += 1
            f[n] = feat1(T_PEPOS + j, self.atom(d, e + j, A_TAG)); n += 1
        f[n] = feat2(T_PSE_POS, self.atom(d, s, A_TAG), self.atom(d, e, A_TAG)); n += 1
        f[n] = feat2(T_PSS_POS, p_s1, self.atom(d, s, A_TAG)); n += 1
        f[n] = feat2(T_PEE_POS, self.atom(d, e, A_TAG), p_e1); n += 1
        f[n] = feat1(T_PLEN, length if length < 8 else 8 + (length >= 16) + (length >= 32)); n += 1

        f[n] = feat2(T_PSE_CHUNK, self.atom(d, s, A_CHUNK), self.atom(d, e, A_CHUNK)); n += 1
        f[n] = feat2(T_PSE_WORD, self.atom(d, s, A_LOWER), self.atom(d, e, A_TAG)); n += 1
        f[n] = feat1(T_PWHOLE, (s == 0) + 2 * (e == d.n - 1)); n += 1
        # Internal pattern: the relevant elements of x[s..e], each inner top
        # clause reduced to one symbol; counts skip the words inside them.
        cdef int counts[N_EL]
        cdef int n_clauses = 0, n_symbols = 0
        cdef uint64_t sym
        cdef uint64_t first[2]
        cdef uint64_t last[2]
        first[0] = first[1] = last[0] = last[1] = 0
        for b in range(N_EL):
            counts[b] = 0
        h = T_PPATTERN
        i = s
        while i <= e:
            sym = 0
            if d.tops[i] >= 0 and d.tops[i] <= e:
                sym = CLAUSE_SYMBOL
                n_clauses += 1
                i = d.tops[i] + 1
            else:
                if d.elem[i]:
                    sym = self.symbol(d, i)
                    for b in range(N_EL):
                        counts[b] += (d.elem[i] >> b) & 1
                i += 1
            if sym:
                h = feat2(T_PPATTERN, h, sym)
                if n_symbols < 2:
                    first[n_symbols] = sym
                last[0] = last[1]
                last[1] = sym
                n_symbols += 1
        f[n] = h; n += 1
        # The two ends of the pattern generalise over its middle.
        f[n] = feat3(T_PCL, first[0], first[1], p_s1); n += 1
        f[n] = feat3(T_PCL + 1, last[0], last[1], p_e1); n += 1
        f[n] = feat3(T_PCL + 2, p_s1, self.atom(d, s, A_TAG), self.atom(d, e, A_TAG)); n += 1
        f[n] = feat3(T_PCL + 3, self.atom(d, s, A_TAG), self.atom(d, e, A_TAG), p_e1); n += 1
        f[n] = feat2(T_PCL + 4, self.atom(d, s - 1, A_CHUNK), self.atom(d, s, A_CHUNK)); n += 1
        f[n] = feat2(T_PCL + 5, self.atom(d, e, A_CHUNK), self.atom(d, e + 1, A_CHUNK)); n += 1
        f[n] = feat2(T_PCL + 6, self.atom(d, s - 1, A_LOWER), self.atom(d, s, A_LOWER)); n += 1
        f[n] = feat3(T_PCL + 7, counts[5] if counts[5] < 3 else 3, n_clauses if n_clauses < 3 else 3,
                     self.atom(d, s, A_TAG)); n += 1
        f[n] = feat2(T_PPATTERN_S, h, p_s1); n += 1
        f[n] = feat2(T_PPATTERN_E, h, p_e1); n += 1
        f[n] = feat3(T_PPATTERN_SE, h, self.atom(d, s, A_TAG), self.atom(d, e, A_TAG)); n += 1
        for b in range(N_EL):
            f[n] = feat2(T_PCOUNT, b, counts[b] if counts[b] < 4 else 4); n += 1
        f[n] = feat1(T_PNCLAUSES, n_clauses if n_clauses < 4 else 4); n += 1
        return n

    cdef int max_phrase_feats(self, int n) noexcept nogil:
        return 64 + 4 * n

