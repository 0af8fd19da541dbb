"""Filtering-ranking phrase recognition (Carreras, Marquez & Castro 2005).

For each phrase type k: a start filter h_S^k and an end filter h_E^k over
word features phi_w, and a score function w^k over phrase features phi_p.
The candidates F(x) are the (s, e)_k whose start and end filters both fire
(w . phi_w > 0); the recogniser R(x) (eq. 1) returns the coherent subset of
candidates with the highest sum of scores:

* flat phrases (chunks: no overlap, no embedding): left-to-right Viterbi DP,
  phi_p sees the chunks of the partial solution to the left of s;
* embedded phrases (clauses: no overlap, embedding allowed, one phrase per
  span): bottom-up CKY DP, phi_p sees the top phrases inside (s, e).

All vectors live in one `Weights` table: for type k, class 3k is w_S^k,
3k+1 is w_E^k and 3k+2 is the score vector w^k. `train` is the FR-Perceptron
of Figure 1 (feedback "recognition"), or online classification feedback
(the paper's CO-VP baseline, Section 5.1.1: every local decision corrected).

Degree-2 polynomial kernel: the paper trains dual perceptrons with
K(x, x') = (x.x' + 1)^2. We stay primal (hashed sparse weights, O(1)
updates, nogil dot products) and add explicit conjunctions of the atoms
whose pairs carry the kernel's gain: neighbouring POS / chunk tags, the
boundary tags of a phrase, the internal pattern with the outside context.
"""
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memset
from cymem.cymem cimport Pool

import numpy
from spacy.strings import get_string_id

from ..core.features cimport N_ATOMS, A_ORTH, A_LOWER, A_TAG, A_CHUNK, feat1, feat2, feat3
from ..core.weights cimport Weights, feat_t
from ..core.features import word_atoms

# Atom values outside the sentence (never the hash of a string).
DEF BEFORE = 3
DEF AFTER = 5
DEF NEG_INF = -1e300

DEF MAX_WFEATS = 64
DEF N_EL = 7

# Relevant elements (paper Section 4.1): bits of doc.elem.
DEF EL_PUNCT = 1     # , . :
DEF EL_QUOTE = 2     # `` ''
DEF EL_CC = 4        # coordinate conjunctions
DEF EL_THAT = 8      # the word "that"
DEF EL_REL = 16      # relative pronouns (WDT WP WP$ WRB)
DEF EL_VP = 32       # verb phrase chunks (counted at their first word)
DEF EL_SBAR = 64     # relative/subordinate phrase chunks (SBAR), at their first word
DEF CLAUSE_SYMBOL = 11  # an inner clause in the internal pattern

# Feature sets
DEF FS_CHUNK = 0
DEF FS_CLAUSE = 1

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


cdef struct PhraseDocC:
    int n
    int K
    const uint64_t* atoms          # n x N_ATOMS
    const unsigned char* inside    # n: 1 if the word continues a chunk (clauses)
    int* elem                      # n: relevant-element bits
    int* prefix                    # (n + 1) x N_EL counts of the elements
    feat_t* wfeats                 # n x MAX_WFEATS, phi_w as used by the filters
    int* n_wf
    double* hs                     # n x K start-filter scores
    double* he                     # n x K end-filter scores
    int* tops                      # n: end of an inner top phrase starting here, or -1
    int left_n                     # flat context: the chunks left of s, nearest first
    int left_type[3]
    int left_gap[3]
    feat_t* pfeats                 # phrase feature buffer
    double* scores                 # 3K
    double* at_start               # chunks: n x K scores of the s-only features
    double* at_end                 # n x K, e-only features
    double* bag                    # 3 x (n + 1) x K prefix sums of the inside features
    # DP tables (flat: n + 1 cells; embedded: n x n)
    double* best
    double* inner
    double* top
    int* choice                    # flat: start of the last chunk; embedded: inner choice
    int* top_type                  # flat: its type; embedded: type of the phrase (s, e)
    unsigned char* best_is_top
    int n_candidates


cdef uint64_t _hash(str text):
    return get_string_id(text)


cdef class PhraseSystem:
    """The FR recogniser for `nr_type` phrase types, flat or embedded."""
    cdef readonly int nr_type
    cdef readonly bint embedded
    cdef readonly int feature_set
    cdef readonly int max_length
    cdef uint64_t h_that
    cdef uint64_t[3] punct_tags
    cdef uint64_t[4] rel_tags
    cdef uint64_t h_quote1, h_quote2, h_cc, h_bvp, h_bsbar

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

    def __reduce__(self):
        return (PhraseSystem, (self.nr_type, self.embedded, self.feature_set_name, self.max_length))

    # --- atoms ------------------------------------------------------------

    cdef inline uint64_t atom(self, const PhraseDocC* d, int i, int a) noexcept nogil:
        if i < 0:
            return BEFORE
        if i >= d.n:
            return AFTER
        return d.atoms[i * N_ATOMS + a]

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
                fl[j - 1] = BEFORE
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
                f[n] = feat2(T_PLEFT, j, BEFORE); n += 1
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

    cdef inline double chunk_static_score(self, const PhraseDocC* d, int s, int e, int k) noexcept nogil:
        cdef int n = d.n, K = d.K
        cdef const double* uni = d.bag
        cdef const double* bi = &d.bag[(n + 1) * K]
        cdef const double* tri = &d.bag[2 * (n + 1) * K]
        cdef double v = d.at_start[s * K + k] + d.at_end[e * K + k]
        v += uni[(e + 1) * K + k] - uni[s * K + k]
        v += bi[(e + 1) * K + k] - bi[(s + 1) * K + k]
        if e >= s + 2:
            v += tri[(e + 1) * K + k] - tri[(s + 2) * K + k]
        return v

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

    # --- contexts (the partial solution phi_p looks at) -----------------------

    cdef void flat_context_dp(self, PhraseDocC* d, int s) noexcept nogil:
        """The chunks left of s in the best partial solution of x[0:s]."""
        cdef int pos = s, start
        d.left_n = 0
        while pos > 0 and d.left_n < 3:
            start = d.choice[pos]
            if start < 0:
                pos -= 1
                continue
            d.left_type[d.left_n] = d.top_type[pos]
            d.left_gap[d.left_n] = s - pos
            d.left_n += 1
            pos = start

    cdef int inner_tops_dp(self, PhraseDocC* d, int s, int e, int* starts) noexcept nogil:
        """Set d.tops for the top phrases of the best solution inside (s, e)
        that excludes the phrase (s, e) itself; returns how many (their
        starts go to `starts`, to clear them afterwards)."""
        cdef int n = d.n, pos = s, c, m = 0
        cdef bint first = True
        while pos <= e:
            if not first and d.best_is_top[pos * n + e]:
                d.tops[pos] = e
                starts[m] = pos
                m += 1
                break
            c = d.choice[pos * n + e]
            if c < 0:
                pos += 1
            else:
                d.tops[pos] = c
                starts[m] = pos
                m += 1
                pos = c + 1
            first = False
        return m

    # --- decoding: R(x) = argmax over coherent subsets of F(x) ------------------

    cdef bint any_candidate(self, const PhraseDocC* d, int s, int e) noexcept nogil:
        cdef int k
        if self.max_length and e - s + 1 > self.max_length:
            return False
        for k in range(d.K):
            if d.hs[s * d.K + k] > 0 and d.he[e * d.K + k] > 0:
                return True
        return False

    cdef void decode_flat(self, PhraseDocC* d, Weights W) noexcept nogil:
        """best[e] = the best solution over x[0:e]; a chunk (s, e-1)_k extends
        best[s]. O(n^2 K) scores at most."""
        cdef int n = d.n, K = d.K, e, s, k, nf
        cdef double v
        cdef bint chunk = self.feature_set == FS_CHUNK
        if chunk:
            self.chunk_tables(d, W)
        d.best[0] = 0.0
        d.choice[0] = -1
        d.n_candidates = 0
        for e in range(n):
            d.best[e + 1] = d.best[e]
            d.choice[e + 1] = -1
            d.top_type[e + 1] = -1
            for s in range(e, -1, -1):
                if not self.any_candidate(d, s, e):
                    continue
                self.flat_context_dp(d, s)
                if chunk:
                    nf = self.chunk_joint_feats(d.pfeats, d, s, e)
                else:
                    nf = self.phrase_features(d.pfeats, d, s, e)
                memset(d.scores, 0, 3 * K * sizeof(double))
                W.dot(d.scores, d.pfeats, nf)
                for k in range(K):
                    if d.hs[s * K + k] > 0 and d.he[e * K + k] > 0:
                        d.n_candidates += 1
                        v = d.best[s] + d.scores[3 * k + 2]
                        if chunk:
                            v += self.chunk_static_score(d, s, e, k)
                        if v > d.best[e + 1]:
                            d.best[e + 1] = v
                            d.choice[e + 1] = s
                            d.top_type[e + 1] = k

    cdef void decode_embedded(self, PhraseDocC* d, Weights W, int* starts) noexcept nogil:
        """CKY, bottom up. For each span (s, e):
        inner[s,e] = best solution inside x[s..e] without the phrase (s, e):
                     word s uncovered (best[s+1,e]) or covered by a top
                     phrase (s, m), m < e (top[s,m] + best[m+1,e]);
        top[s,e]   = inner[s,e] + the best candidate score of (s, e)_k, whose
                     phi_p sees the top phrases of inner[s,e];
        best[s,e]  = max(inner[s,e], top[s,e])."""
        cdef int n = d.n, K = d.K, length, s, e, m, k, nf, ntops, j
        cdef double v, c, right, t
        d.n_candidates = 0
        for length in range(1, n + 1):
            for s in range(n - length + 1):
                e = s + length - 1
                v = d.best[(s + 1) * n + e] if s < e else 0.0
                d.choice[s * n + e] = -1
                for m in range(s, e):
                    if d.top_type[s * n + m] < 0:
                        continue
                    right = d.best[(m + 1) * n + e]
                    c = d.top[s * n + m] + right
                    if c > v:
                        v = c
                        d.choice[s * n + e] = m
                d.inner[s * n + e] = v
                d.top_type[s * n + e] = -1
                d.best[s * n + e] = v
                d.best_is_top[s * n + e] = 0
                if not self.any_candidate(d, s, e):
                    continue
                ntops = self.inner_tops_dp(d, s, e, starts)
                nf = self.phrase_features(d.pfeats, d, s, e)
                for j in range(ntops):
                    d.tops[starts[j]] = -1
                memset(d.scores, 0, 3 * K * sizeof(double))
                W.dot(d.scores, d.pfeats, nf)
                t = NEG_INF
                for k in range(K):
                    if d.hs[s * K + k] > 0 and d.he[e * K + k] > 0:
                        d.n_candidates += 1
                        if v + d.scores[3 * k + 2] > t:
                            t = v + d.scores[3 * k + 2]
                            d.top_type[s * n + e] = k
                d.top[s * n + e] = t
                if t > v:
                    d.best[s * n + e] = t
                    d.best_is_top[s * n + e] = 1

    cdef int solution_flat(self, const PhraseDocC* d, int* out) noexcept nogil:
        cdef int pos = d.n, m = 0, start
        while pos > 0:
            start = d.choice[pos]
            if start < 0:
                pos -= 1
                continue
            out[3 * m] = start
            out[3 * m + 1] = pos - 1
            out[3 * m + 2] = d.top_type[pos]
            m += 1
            pos = start
        return m

    cdef int solution_embedded(self, const PhraseDocC* d, int* out, int* stack) noexcept nogil:
        """Walk the back-pointers from best[0, n-1]. The stack holds cells
        (start, end, is_inner) still to expand."""
        cdef int n = d.n, m = 0, sp = 0, s, e, pos, c
        cdef bint inner
        if n == 0:
            return 0
        stack[0] = 0; stack[1] = n - 1; stack[2] = 0
        sp = 1
        while sp > 0:
            sp -= 1
            s = stack[3 * sp]; e = stack[3 * sp + 1]; inner = stack[3 * sp + 2]
            pos = s
            while pos <= e:
                if not inner and d.best_is_top[pos * n + e]:
                    out[3 * m] = pos; out[3 * m + 1] = e; out[3 * m + 2] = d.top_type[pos * n + e]
                    m += 1
                    stack[3 * sp] = pos; stack[3 * sp + 1] = e; stack[3 * sp + 2] = 1
                    sp += 1
                    break
                c = d.choice[pos * n + e]
                if c < 0:
                    pos += 1
                else:
                    out[3 * m] = pos; out[3 * m + 1] = c; out[3 * m + 2] = d.top_type[pos * n + c]
                    m += 1
                    stack[3 * sp] = pos; stack[3 * sp + 1] = c; stack[3 * sp + 2] = 1
                    sp += 1
                    pos = c + 1
                inner = False
        return m

    # --- Python entry points (one call per doc) --------------------------------

    def predict(self, list inputs, Weights W):
        """For each doc input: (phrases, n_candidates, start_fired, end_fired),
        phrases an (m, 3) int32 array of (start, end inclusive, type)."""
        out = []
        for item in inputs:
            doc = _PhraseDoc(self, item)
            out.append(doc.recognise(W))
        return out

    def train(self, list inputs, list golds, Weights W, str feedback="recognition"):
        """One online pass; returns (mistakes, candidates): mistakes counts
        missed + over-predicted phrases."""
        if feedback not in ("recognition", "classification"):
            raise ValueError(f"feedback must be 'recognition' or 'classification', got {feedback!r}")
        mistakes = candidates = 0
        for item, gold in zip(inputs, golds):
            doc = _PhraseDoc(self, item)
            m, c = doc.learn(W, gold, feedback == "recognition")
            mistakes += m
            candidates += c
            W.tick()
        return mistakes, candidates

    def decode_scores(self, int n, start_fired, end_fired, scores):
        """For tests: R(x) with static phrase scores (scores[s, e, k]), no
        features. Returns (phrases, best total score)."""
        doc = _PhraseDoc(self, {"atoms": numpy.zeros((n, N_ATOMS), dtype="uint64")})
        return doc.decode_static(start_fired, end_fired, scores)

    def phi_w(self, item, int i):
        """For tests: phi_w of word i (filters not yet run: no left flags)."""
        doc = _PhraseDoc(self, item)
        return doc.phi_w(i)

    def flat_score(self, item, Weights W, int s, int e, solution=()):
        """For tests: the chunk score of (s, e) per type as decode_flat
        computes it, from per-word tables."""
        if self.feature_set != FS_CHUNK:
            raise ValueError("flat_score is for the chunk feature set")
        return _PhraseDoc(self, item).flat_score(W, s, e, solution)

    def phi_p(self, item, int s, int e, solution=()):
        """For tests: phi_p((s, e)) with the partial solution taken from
        `solution` ((start, end, type) rows)."""
        doc = _PhraseDoc(self, item)
        return doc.phi_p(s, e, solution)


cdef class _PhraseDoc:
    """The C arrays of one document for the duration of a call."""
    cdef PhraseDocC c
    cdef PhraseSystem system
    cdef Pool mem
    cdef object atoms, inside
    cdef int* starts
    cdef int* out

    def __init__(self, PhraseSystem system, item):
        self.system = system
        self.mem = Pool()
        self.atoms = numpy.ascontiguousarray(item["atoms"], dtype="uint64")
        cdef int n = self.atoms.shape[0]
        if n and (self.atoms.ndim != 2 or self.atoms.shape[1] != N_ATOMS):
            raise ValueError(f"expected ({n}, {N_ATOMS}) word atoms, got {self.atoms.shape}")
        cdef int K = system.nr_type
        cdef uint64_t[:, ::1] av
        cdef unsigned char[::1] iv
        memset(&self.c, 0, sizeof(PhraseDocC))
        self.c.n = n
        self.c.K = K
        if n:
            av = self.atoms
            self.c.atoms = &av[0, 0]
        if item.get("inside") is not None and n:
            self.inside = numpy.ascontiguousarray(item["inside"], dtype="uint8")
            if self.inside.shape != (n,):
                raise ValueError(f"'inside' has shape {self.inside.shape} for {n} tokens")
            iv = self.inside
            self.c.inside = &iv[0]
        cdef int cells = n * n if system.embedded else n + 1
        m = max(n, 1)
        self.c.elem = <int*>self.mem.alloc(m, sizeof(int))
        self.c.prefix = <int*>self.mem.alloc((n + 1) * N_EL, sizeof(int))
        self.c.wfeats = <feat_t*>self.mem.alloc(m * MAX_WFEATS, sizeof(feat_t))
        self.c.n_wf = <int*>self.mem.alloc(m, sizeof(int))
        self.c.hs = <double*>self.mem.alloc(m * K, sizeof(double))
        self.c.he = <double*>self.mem.alloc(m * K, sizeof(double))
        self.c.tops = <int*>self.mem.alloc(m, sizeof(int))
        self.c.pfeats = <feat_t*>self.mem.alloc(system.max_phrase_feats(n), sizeof(feat_t))
        self.c.scores = <double*>self.mem.alloc(3 * K, sizeof(double))
        self.c.at_start = <double*>self.mem.alloc(m * K, sizeof(double))
        self.c.at_end = <double*>self.mem.alloc(m * K, sizeof(double))
        self.c.bag = <double*>self.mem.alloc(3 * (n + 1) * K, sizeof(double))
        self.c.best = <double*>self.mem.alloc(max(cells, 1), sizeof(double))
        self.c.inner = <double*>self.mem.alloc(max(cells, 1), sizeof(double))
        self.c.top = <double*>self.mem.alloc(max(cells, 1), sizeof(double))
        self.c.choice = <int*>self.mem.alloc(max(cells, 1), sizeof(int))
        self.c.top_type = <int*>self.mem.alloc(max(cells, 1), sizeof(int))
        self.c.best_is_top = <unsigned char*>self.mem.alloc(max(cells, 1), 1)
        self.starts = <int*>self.mem.alloc(m + 1, sizeof(int))
        self.out = <int*>self.mem.alloc(3 * (2 * m + 1), sizeof(int))
        system.prepare(&self.c)

    cdef object solution(self):
        cdef int m, i
        cdef int* stack
        if self.system.embedded:
            stack = <int*>self.mem.alloc(3 * (2 * max(self.c.n, 1) + 2), sizeof(int))
            m = self.system.solution_embedded(&self.c, self.out, stack)
        else:
            m = self.system.solution_flat(&self.c, self.out)
        arr = numpy.zeros((m, 3), dtype="int32")
        cdef int[:, ::1] view = arr
        for i in range(m):
            view[i, 0] = self.out[3 * i]
            view[i, 1] = self.out[3 * i + 1]
            view[i, 2] = self.out[3 * i + 2]
        return arr[numpy.lexsort((-arr[:, 1], arr[:, 0]))] if m else arr

    cdef void _decode(self, Weights W) noexcept nogil:
        self.system.run_filters(&self.c, W)
        if self.system.embedded:
            self.system.decode_embedded(&self.c, W, self.starts)
        else:
            self.system.decode_flat(&self.c, W)

    def recognise(self, Weights W):
        if self.c.n:
            with nogil:
                self._decode(W)
        return (self.solution(), self.c.n_candidates, self.fired(self.c.hs), self.fired(self.c.he))

    cdef object fired(self, double* h):
        """(n, K) booleans: where the filter fires (score > 0)."""
        cdef int n = self.c.n, K = self.c.K
        if n == 0:
            return numpy.zeros((0, K), dtype="bool")
        return (numpy.asarray(<double[:n * K]>h) > 0).reshape((n, K))

    def phi_w(self, int i):
        cdef int nf = self.system.word_features(self.c.wfeats, &self.c, i)
        return numpy.asarray(<feat_t[:nf]>self.c.wfeats).copy() if nf else numpy.zeros((0,), dtype="uint64")

    def phi_p(self, int s, int e, solution):
        sol = numpy.asarray(solution, dtype="int32").reshape((-1, 3))
        sol = numpy.ascontiguousarray(sol[numpy.lexsort((-sol[:, 1], sol[:, 0]))]) if sol.shape[0] \
            else numpy.zeros((1, 3), dtype="int32")
        self.context_from_solution(s, e, sol, len(solution))
        cdef int nf = self.system.phrase_features(self.c.pfeats, &self.c, s, e)
        self.clear_tops(s, e)
        return numpy.asarray(<feat_t[:nf]>self.c.pfeats).copy()

    def flat_score(self, Weights W, int s, int e, solution):
        """Score of (s, e) per type as decode_flat computes it (tests: it
        must equal W . phi_p)."""
        sol = numpy.asarray(solution, dtype="int32").reshape((-1, 3))
        sol = numpy.ascontiguousarray(sol) if sol.shape[0] else numpy.zeros((1, 3), dtype="int32")
        self.context_from_solution(s, e, sol, len(solution))
        self.system.chunk_tables(&self.c, W)
        cdef int nf = self.system.chunk_joint_feats(self.c.pfeats, &self.c, s, e)
        memset(self.c.scores, 0, 3 * self.c.K * sizeof(double))
        W.dot(self.c.scores, self.c.pfeats, nf)
        return [self.c.scores[3 * k + 2] + self.system.chunk_static_score(&self.c, s, e, k)
                for k in range(self.c.K)]

    def decode_static(self, start_fired, end_fired, scores):
        """The DP with a score table instead of phi_p (tests)."""
        cdef int n = self.c.n, K = self.c.K, s, e, k, length, m, j
        cdef double v, c, t
        cdef PhraseDocC* d = &self.c
        start_fired = numpy.asarray(start_fired, dtype="bool").reshape((n, K))
        end_fired = numpy.asarray(end_fired, dtype="bool").reshape((n, K))
        scores = numpy.asarray(scores, dtype="float64").reshape((n, n, K))
        for s in range(n):
            for k in range(K):
                self.c.hs[s * K + k] = 1.0 if start_fired[s, k] else -1.0
                self.c.he[s * K + k] = 1.0 if end_fired[s, k] else -1.0
        if n == 0:
            return numpy.zeros((0, 3), dtype="int32"), 0.0
        if not self.system.embedded:
            d.best[0] = 0.0
            d.choice[0] = -1
            for e in range(n):
                d.best[e + 1] = d.best[e]
                d.choice[e + 1] = -1
                d.top_type[e + 1] = -1
                for s in range(e, -1, -1):
                    if not self.system.any_candidate(d, s, e):
                        continue
                    for k in range(K):
                        if start_fired[s, k] and end_fired[e, k]:
                            v = d.best[s] + scores[s, e, k]
                            if v > d.best[e + 1]:
                                d.best[e + 1] = v
                                d.choice[e + 1] = s
                                d.top_type[e + 1] = k
            return self.solution(), d.best[n]
        for length in range(1, n + 1):
            for s in range(n - length + 1):
                e = s + length - 1
                v = d.best[(s + 1) * n + e] if s < e else 0.0
                d.choice[s * n + e] = -1
                for m in range(s, e):
                    if d.top_type[s * n + m] >= 0 and d.top[s * n + m] + d.best[(m + 1) * n + e] > v:
                        v = d.top[s * n + m] + d.best[(m + 1) * n + e]
                        d.choice[s * n + e] = m
                d.inner[s * n + e] = v
                d.best[s * n + e] = v
                d.best_is_top[s * n + e] = 0
                d.top_type[s * n + e] = -1
                if not self.system.any_candidate(d, s, e):
                    continue
                t = NEG_INF
                for k in range(K):
                    if start_fired[s, k] and end_fired[e, k] and v + scores[s, e, k] > t:
                        t = v + scores[s, e, k]
                        d.top_type[s * n + e] = k
                d.top[s * n + e] = t
                if t > v:
                    d.best[s * n + e] = t
                    d.best_is_top[s * n + e] = 1
        return self.solution(), d.best[n - 1]

    # --- learning -----------------------------------------------------------

    cdef void context_from_solution(self, int s, int e, int[:, ::1] sol, int m) noexcept:
        """Set the partial-solution context of (s, e) from a solution y
        (sorted by start, then by decreasing end): the chunks left of s
        (flat), or the top phrases of y strictly inside (s, e) (embedded)."""
        cdef PhraseDocC* d = &self.c
        cdef int j, cur = s - 1, ps, pe
        if not self.system.embedded:
            d.left_n = 0
            for j in range(m - 1, -1, -1):
                if sol[j, 1] < s and d.left_n < 3:
                    d.left_type[d.left_n] = sol[j, 2]
                    d.left_gap[d.left_n] = s - sol[j, 1] - 1
                    d.left_n += 1
            return
        for j in range(m):
            ps = sol[j, 0]
            pe = sol[j, 1]
            if ps < s or pe > e or (ps == s and pe == e) or ps <= cur:
                continue
            d.tops[ps] = pe
            cur = pe

    cdef void clear_tops(self, int s, int e) noexcept:
        cdef int i
        for i in range(s, e + 1):
            self.c.tops[i] = -1

    cdef void update_phrase(self, Weights W, int s, int e, int k, double delta,
                            int[:, ::1] context, int m) except *:
        cdef int nf
        self.context_from_solution(s, e, context, m)
        nf = self.system.phrase_features(self.c.pfeats, &self.c, s, e)
        if self.system.embedded:
            self.clear_tops(s, e)
        W.update_all(self.c.pfeats, nf, 3 * k + 2, delta)

    cdef void update_word(self, Weights W, int i, int clas, double delta) except *:
        W.update_all(&self.c.wfeats[i * MAX_WFEATS], self.c.n_wf[i], clas, delta)

    def learn(self, Weights W, gold, bint recognition):
        """Predict with the current vectors, then apply the feedback. All
        conditions read the filter scores of the prediction, i.e. the vectors
        before any update (Figure 1, note 1)."""
        cdef PhraseDocC* d = &self.c
        cdef int n = d.n, K = d.K, i, k, s, e
        gold = numpy.ascontiguousarray(numpy.asarray(gold, dtype="int32").reshape((-1, 3)))
        if n == 0:
            return 0, 0
        if gold.shape[0] and (gold[:, 0].min() < 0 or gold[:, 1].max() >= n
                              or (gold[:, 0] > gold[:, 1]).any() or gold[:, 2].max() >= K
                              or gold[:, 2].min() < 0):
            raise ValueError(f"gold phrases out of range for {n} tokens and {K} types: {gold.tolist()}")
        with nogil:
            self._decode(W)
        pred = self.solution()
        gold_set = {(int(a), int(b), int(c)) for a, b, c in gold}
        pred_set = {(int(a), int(b), int(c)) for a, b, c in pred}
        missed = sorted(gold_set - pred_set)
        over = sorted(pred_set - gold_set)
        cdef int[:, ::1] ctx = numpy.ascontiguousarray(pred, dtype="int32") if pred.shape[0] \
            else numpy.zeros((1, 3), dtype="int32")
        cdef int n_ctx = pred.shape[0]
        gold_s = numpy.zeros((n, K), dtype="bool")
        gold_e = numpy.zeros((n, K), dtype="bool")
        for s, e, k in gold_set:
            gold_s[s, k] = True
            gold_e[e, k] = True
        if recognition:
            # Filter updates once per word and vector (note 2): the first
            # rule that applies to (word, S/E, k) wins.
            filters = {}
            for s, e, k in missed:
                hs = d.hs[s * K + k]
                he = d.he[e * K + k]
                if hs <= 0 and self.system.can_start(d, s):           # type A
                    filters.setdefault((s, 3 * k), 1.0)
                if he <= 0 and self.system.can_end(d, e):
                    filters.setdefault((e, 3 * k + 1), 1.0)
                if hs > 0 and he > 0 and not (self.system.max_length and e - s + 1 > self.system.max_length):
                    self.update_phrase(W, s, e, k, 1.0, ctx, n_ctx)  # candidate was generated
            for s, e, k in over:
                self.update_phrase(W, s, e, k, -1.0, ctx, n_ctx)
                if not gold_s[s, k]:                                  # type B
                    filters.setdefault((s, 3 * k), -1.0)
                if not gold_e[e, k]:
                    filters.setdefault((e, 3 * k + 1), -1.0)
            for (i, clas), delta in filters.items():
                self.update_word(W, i, clas, delta)
        else:
            self.classification_feedback(W, gold_s, gold_e, gold_set)
        return len(missed) + len(over), d.n_candidates

    cdef void classification_feedback(self, Weights W, gold_s, gold_e, gold_set) except *:
        """CO-VP: each filter decision on each word, and each score decision
        on each generated candidate, is corrected on its own (a binary
        perceptron per function). Candidate features are those the decoder
        used (the DP tables still hold its partial solutions)."""
        cdef PhraseDocC* d = &self.c
        cdef int n = d.n, K = d.K, i, k, s, e, nf, ntops, j
        cdef double h
        updates = []
        for i in range(n):
            for k in range(K):
                if self.system.can_start(d, i) and (d.hs[i * K + k] > 0) != gold_s[i, k]:
                    updates.append((i, 3 * k, 1.0 if gold_s[i, k] else -1.0))
                if self.system.can_end(d, i) and (d.he[i * K + k] > 0) != gold_e[i, k]:
                    updates.append((i, 3 * k + 1, 1.0 if gold_e[i, k] else -1.0))
        phrase_updates = []
        for e in range(n):
            for s in range(e + 1):
                if not self.system.any_candidate(d, s, e):
                    continue
                if self.system.embedded:
                    ntops = self.system.inner_tops_dp(d, s, e, self.starts)
                    nf = self.system.phrase_features(d.pfeats, d, s, e)
                    for j in range(ntops):
                        d.tops[self.starts[j]] = -1
                else:
                    self.system.flat_context_dp(d, s)
                    nf = self.system.phrase_features(d.pfeats, d, s, e)
                memset(d.scores, 0, 3 * K * sizeof(double))
                W.dot(d.scores, d.pfeats, nf)
                feats = numpy.asarray(<feat_t[:nf]>d.pfeats).copy()
                for k in range(K):
                    if d.hs[s * K + k] > 0 and d.he[e * K + k] > 0:
                        positive = (s, e, k) in gold_set
                        if (d.scores[3 * k + 2] > 0) != positive:
                            phrase_updates.append((feats, 3 * k + 2, 1.0 if positive else -1.0))
        for i, clas, h in updates:
            self.update_word(W, i, clas, h)
        cdef feat_t[::1] fv
        for feats, clas, h in phrase_updates:
            fv = feats
            if fv.shape[0]:
                W.update_all(&fv[0], fv.shape[0], clas, h)
