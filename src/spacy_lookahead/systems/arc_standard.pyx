"""Arc-standard dependency parsing as a transition system (Nivre 2004;
Tsuruoka et al. 2011, Figure 1 and Section 4.2).

Actions: SHIFT (0), LEFT-ARC(label) (1..L: s1 <- s0), RIGHT-ARC(label)
(L+1..2L: s1 -> s0). A doc may end with several words on the stack: once
the buffer is empty, SHIFT means "finish" and the words left become roots
(sentence boundaries follow, as in spaCy's parser). With `sent_ids` given,
arcs stay inside the given sentences and each sentence gets one root.

The state, and what each move does to it, is in parse_state.pxd; the
features (the "base" or, with `rich=True`, the "rich" set of templates, and
with `alternatives=True` those of the tagger's alternative tags) in
parse_features.pyx. This module is the system: which actions are valid, the
static oracle, the scores (cached across label siblings), the bounds that
branch-and-bound prunes with, and a doc's C arrays (_ParseDoc).

With `joint=True` (needs `alternatives`), tagging and parsing are one
search (Hatori et al. 2011; Bohnet and Nivre 2012, with the tagger's k = 2
best tags): SHIFT-ALT (2L + 1) shifts q0 with its alternative tag, SHIFT
with the tagger's tag, so a beam keeps both readings of an uncertain word.
A word's tag is chosen when it is shifted: the features read the chosen tag
of every stack word and of its dependents (a bit per slot says which) and
the tagger's tags of the buffer words. The gold SHIFT-ALT is where the
alternative is the gold tag. Without joint, every bit is 0: the same
features, states and scores as before."""
from libc.stdint cimport int64_t, uint64_t
from libc.math cimport INFINITY
from libc.string cimport memcpy, memset
from cymem.cymem cimport Pool
from libcpp.vector cimport vector
from murmurhash.mrmr cimport hash64

import numpy
cimport numpy as cnp

cnp.import_array()

from ..core.features cimport N_ATOMS, A_TAG_ALT, ATOM_SURE, MAX_CONJUNCTION
from ..core.instance cimport Docs, Instance
from ..core.system cimport TransitionSystem
from ..core.weights cimport Weights, feat_t
from .parse_features cimport MAX_GROUP_ATOMS, ParseFeatures
from .parse_state cimport (MAX_STACK, ParseDocC, ParseStateC, SlotC, _slots, copy_parse_state,
                           left_arc, right_arc, s_at, shift, slot_at, state_size_for)
from .parser_templates import MAX_LABEL_TEMPLATES

DEF MAX_LABEL_FEATS = 32  # parser_templates.MAX_LABEL_TEMPLATES


cdef extern from *:
    """
    /* The largest of x[0 .. n) and `init`, in four running maxima (one
       chain of n dependent compares waits on each compare's latency). A
       maximum is the same value in any order (scores are never NaN; which
       of -0.0 and 0.0 it keeps no comparison can tell). */
    static double la_max(const double* x, int n, double init) {
        double m0 = init, m1 = init, m2 = init, m3 = init;
        int j = 0;
        for (; j + 4 <= n; j += 4) {
            m0 = x[j] > m0 ? x[j] : m0;
            m1 = x[j + 1] > m1 ? x[j + 1] : m1;
            m2 = x[j + 2] > m2 ? x[j + 2] : m2;
            m3 = x[j + 3] > m3 ? x[j + 3] : m3;
        }
        for (; j < n; j++) m0 = x[j] > m0 ? x[j] : m0;
        m0 = m1 > m0 ? m1 : m0;
        m2 = m3 > m2 ? m3 : m2;
        return m2 > m0 ? m2 : m0;
    }
    """
    double la_max(const double* x, int n, double init) noexcept nogil
# Score cache (see ArcStandardSystem.score): slots in the caller's cache
# buffer (cache_size bytes); a slot is KEY_WORDS key words then nr_class
# doubles; a clock word and a fingerprint per slot (of its key: the scan
# reads them, not the slots) follow the slots. A depth-2 decision meets up
# to 13 structures (the state, 3 children and 9 grandchildren, up to labels)
# and the next one reuses 4: 32 slots score each about once on EWT (7.4
# structure scorings a decision against 7.5 with 1,024 slots; 8 slots made
# 10.5).
DEF N_SLOTS = 32
DEF KEY_WORDS = 22  # 18, and the second dependents of s0, s1 where templates read them
# upper_after()'s scratch in the same buffer, after the score cache: a
# direct-mapped cache of label-family bounds (LabelMaxC), a state and the
# validity of an action row
DEF LABEL_MAX_SLOTS = 4096
# The bounds keep the classes apart in groups (the shifts, the left arcs, the
# right arcs): a feature whose label varies over a family of states is
# bounded by its largest weight within the group of each class
# (Weights.rows_group_max), the others add their own weights (dot_bounded)
DEF N_GROUPS = 3

assert MAX_LABEL_TEMPLATES == MAX_LABEL_FEATS


cdef struct LabelMaxC:
    # max over the labels it reads of the largest weight of a label feature
    # (a family: see family_max; `key` hashes it), for the weights `table`
    # at `version`
    uint64_t key
    uint64_t table
    int64_t version
    double value[N_GROUPS]  # per group of classes


cdef class ArcStandardSystem(TransitionSystem):
    """The arc-standard system over `n_labels` arc labels (nr_class = 1 + 2L);
    rich: the rich feature set (parse_features.pyx), else the base set;
    alternatives: also the features of the tagger's alternative tags; joint:
    also SHIFT-ALT (nr_class = 2 + 2L), tagging in the parser's search."""
    cdef readonly int n_labels
    cdef readonly bint rich
    cdef readonly bint alternatives
    cdef readonly bint joint
    cdef readonly int shift_alt  # SHIFT-ALT's action id (2L + 1), or -1 without joint
    cdef readonly int n_label_feats  # extract_labels()'s count
    cdef ParseFeatures features      # the templates, compiled for C (parse_features.pyx)
    # score() reuses the structure features' scores between states that
    # differ only in arc labels; False scores every state from scratch (the
    # same numbers, slower: for tests and measurements)
    cdef public bint score_cache
    cdef Pool mem
    cdef int* group_of               # [action]: its group in the bounds (N_GROUPS)

    def __init__(self, int n_labels, bint score_cache=True, bint rich=False,
                 bint alternatives=False, bint joint=False, templates=None):
        if n_labels < 1:
            raise ValueError("an arc-standard system needs at least one arc label")
        if joint and not alternatives:
            raise ValueError("joint tagging chooses between the tagger's tag and its "
                             "alternative: it needs alternatives=True")
        self.n_labels = n_labels
        self.score_cache = score_cache
        self.rich = rich
        self.alternatives = alternatives
        self.joint = joint
        self.shift_alt = 1 + 2 * n_labels if joint else -1
        self.nr_class = 1 + 2 * n_labels + joint
        self.features = ParseFeatures("rich" if rich else "base", alternatives,
                                      [] if templates is None else list(templates))
        self.n_label_feats = len(self.features.label_templates)
        self.max_feats = len(self.features.structure_templates) + self.n_label_feats
        # features, then the score cache's slots and its clock (see score()),
        # then the bounds' scratch: a state, two rows of validity, a feature
        # per label, a row of scores, two label templates' atoms per label
        self.cache_size = (self._family_offset() + n_labels * sizeof(feat_t)
                           + self.nr_class * sizeof(double)
                           + 2 * n_labels * MAX_CONJUNCTION * sizeof(uint64_t))
        self.mem = Pool()
        self.group_of = <int*>self.mem.alloc(self.nr_class, sizeof(int))
        for a in range(self.nr_class):
            self.group_of[a] = 0 if a == 0 or a == self.shift_alt else 1 if a <= n_labels else 2
        self.bounds_two_steps = True
        self.n_sibling_groups = 3
        self.n_action_families = 4 if joint else 3
        self.state_size = state_size_for(1)

    # the features' templates (no docstrings: stubgen reads a type from them)
    @property
    def templates(self):  # the user's, read after the fixed set
        return self.features.templates

    @property
    def structure_templates(self):  # [(text, id, keep zero)]: parser_templates
        return self.features.structure_templates

    @property
    def label_templates(self):  # ... that read an arc label: one feature each
        return self.features.label_templates

    def __reduce__(self):
        return (ArcStandardSystem, (self.n_labels, self.score_cache, self.rich,
                                    self.alternatives, self.joint, self.templates))

    # --- actions -------------------------------------------------------------
    cdef bint is_final(self, const void* state) noexcept nogil:
        cdef const ParseStateC* s = <const ParseStateC*>state
        return s.done or (s.i >= s.n and s.depth <= 1)

    cdef int set_valid(self, int* is_valid, const void* state) noexcept nogil:
        cdef const ParseStateC* s = <const ParseStateC*>state
        cdef int L = self.n_labels, a
        cdef bint arcs = s.depth >= 2 and not s.done
        cdef bint can_shift = not s.done and (s.i < s.n or s.depth >= 2)
        cdef const int* sent = s.doc.sent_ids
        cdef int s0 = s_at(s, 0), s1 = s_at(s, 1)
        if sent != NULL and s.depth >= 2:
            # Arcs stay inside a sentence; a sentence is closed (by shifting
            # the next one's first word, or finishing) only with one root left.
            arcs = arcs and sent[s0] == sent[s1]
            if sent[s0] == sent[s1] and (s.i >= s.n or sent[s.i] != sent[s0]):
                can_shift = False
        if s.i >= s.n and s.depth < 2:
            can_shift = False
        if (sent != NULL and s.depth == MAX_STACK and s.i < s.n
                and sent[_slots(s)[0].word] == sent[s.i]):
            # a full stack would push out a word of the given sentence as a
            # second root: reduce first (arcs are valid: s0, s1 are in it)
            can_shift = False
        is_valid[0] = can_shift
        for a in range(1, 1 + 2 * L):
            is_valid[a] = arcs
        if self.joint:  # (a shift, not the finish; where the tagger has an alternative)
            is_valid[self.shift_alt] = (can_shift and s.i < s.n
                                        and s.doc.atoms[s.i * N_ATOMS + A_TAG_ALT] != ATOM_SURE)
            return can_shift + 2 * L * arcs + is_valid[self.shift_alt]
        return can_shift + 2 * L * arcs

    cdef void apply(self, void* state, int clas) noexcept nogil:
        cdef ParseStateC* s = <ParseStateC*>state
        if clas == 0 or clas == self.shift_alt:
            if s.i < s.n:
                shift(s, clas == self.shift_alt)
            else:
                s.done = 1
        elif clas <= self.n_labels:
            left_arc(s, clas - 1)
        else:
            right_arc(s, clas - 1 - self.n_labels)

    cdef void copy_state(self, void* dst, const void* src, size_t size) noexcept nogil:
        copy_parse_state(dst, <const ParseStateC*>src)

    cdef int oracle(self, const void* state) noexcept nogil:
        """The static oracle: LEFT-ARC if s1's head is s0; RIGHT-ARC if s0's
        head is s1 and s0 has all its dependents; else SHIFT (= finish once
        the buffer is empty), SHIFT-ALT (joint) where q0's alternative tag
        is the gold one. -1 where the gold is unknown."""
        cdef const ParseStateC* s = <const ParseStateC*>state
        cdef const ParseDocC* d = s.doc
        if d.gold_heads == NULL:
            return -1
        cdef int s0 = s_at(s, 0), s1 = s_at(s, 1)
        if s1 >= 0:
            if d.gold_heads[s1] < 0 or d.gold_heads[s0] < 0:
                return -1
            if d.gold_heads[s1] == s0:
                return 1 + d.gold_labels[s1] if d.gold_labels[s1] >= 0 else -1
            if d.gold_heads[s0] == s1 and slot_at(s, 0).nl + slot_at(s, 0).nr == d.gold_kids[s0]:
                return 1 + self.n_labels + d.gold_labels[s0] if d.gold_labels[s0] >= 0 else -1
        if self.joint and d.gold_alt != NULL and s.i < s.n and d.gold_alt[s.i]:
            return self.shift_alt
        return 0

    # --- features ------------------------------------------------------------
    cdef int extract(self, feat_t* f, const void* state) noexcept nogil:
        cdef const ParseStateC* s = <const ParseStateC*>state
        cdef int n = self.features.extract_structure(f, s)
        return n + self.features.extract_labels(&f[n], s)

    cdef void score(self, double* scores, const void* state, Weights W, feat_t* buf,
                    void* cache) noexcept nogil:
        """scores = w . phi(state, a) for every a, equal to extract() + dot()
        (the same additions in the same order), with the structure features'
        partial scores cached in `cache` (cache_size bytes). Siblings
        LEFT-ARC(l) / RIGHT-ARC(l) differ only in one arc label, so a labelled
        lookahead scores each structure once, not once per label: with L
        labels, depth D costs about 3^D structure scorings per step instead of
        (2L + 1)^D. The cache belongs to the caller's Workspace or Beam (one
        per search, so threads never share it) and is keyed by the weights'
        identity and version, so an update invalidates it."""
        cdef const ParseStateC* s = <const ParseStateC*>state
        cdef int n
        if not self.score_cache:
            TransitionSystem.score(self, scores, state, W, buf, cache)
            return
        memcpy(scores, self.structure_scores(s, W, buf, cache), self.nr_class * sizeof(double))
        n = self.features.extract_labels(buf, s)
        W.dot(scores, buf, n)

    cdef double upper(self, const void* state, Weights W, feat_t* buf, void* cache) noexcept nogil:
        """The best valid action's score itself: with the structure scores
        cached, it costs what a bound of each label feature's row would."""
        cdef double* row = self._scratch_row(cache)
        cdef int* valid = self._scratch_valid2(cache)
        if not self.score_cache:
            return TransitionSystem.upper(self, state, W, buf, cache)
        self.set_valid(valid, state)
        self.score(row, state, W, buf, cache)
        return self._best_valid(row, valid)

    cdef bint upper_is_best_score(self) noexcept nogil:
        return self.score_cache

    cdef double _best_valid(self, const double* row, const int* valid) noexcept nogil:
        """The best score in row of a valid action (set_valid's: the arcs
        are valid or not together); where none is valid (a stuck state,
        value -inf: any bound holds), of every action."""
        cdef int a
        cdef bint any_valid = valid[0] or valid[1]
        cdef double best = row[0] if valid[0] else -INFINITY
        if valid[1]:
            best = la_max(&row[1], 2 * self.n_labels, best)
        if self.joint and valid[self.shift_alt]:
            any_valid = True
            if row[self.shift_alt] > best:
                best = row[self.shift_alt]
        if not any_valid:
            for a in range(self.nr_class):
                if row[a] > best:
                    best = row[a]
        return best

    cdef size_t _label_max_offset(self) noexcept nogil:
        return (N_SLOTS * (KEY_WORDS + self.nr_class + 1) + 1) * sizeof(uint64_t)

    cdef double upper_after(self, const void* state, Weights W, feat_t* buf,
                            void* cache, double enough=INFINITY) noexcept nogil:
        """A bound of upper(child) over every child: the SHIFT (and
        SHIFT-ALT) child's own, and one for the L label siblings of each arc
        direction; +inf as soon as one reaches `enough`."""
        cdef const ParseStateC* s = <const ParseStateC*>state
        cdef int* valid = self._scratch_valid(cache)
        cdef double best = -INFINITY, bound
        cdef int L = self.n_labels
        self.set_valid(valid, state)
        if valid[0]:
            best = self.family_bound(s, W, buf, cache, 0, False, -1, False)
        if self.joint and valid[self.shift_alt] and best < enough:
            bound = self.family_bound(s, W, buf, cache, self.shift_alt, False, -1, False)
            if bound > best:
                best = bound
        if valid[1] and best < enough:  # arcs are valid or not together
            bound = self.family_bound(s, W, buf, cache, 1, True, -1, False)
            if bound > best:
                best = bound
            if best < enough:
                bound = self.family_bound(s, W, buf, cache, 1 + L, True, -1, False)
                if bound > best:
                    best = bound
        return INFINITY if best >= enough else best

    cdef int sibling_group(self, const void* state, int action) noexcept nogil:
        """LEFT-ARC(l) for every l is one group (1), RIGHT-ARC(l) another (2);
        SHIFT and SHIFT-ALT are on their own (-1: no group bound)."""
        if action == 0 or action == self.shift_alt:
            return -1
        return 1 if action <= self.n_labels else 2

    cdef int action_family(self, const void* state, int action) noexcept nogil:
        """SHIFT (0), the LEFT-ARCs (1), the RIGHT-ARCs (2), SHIFT-ALT (3)."""
        if action == 0:
            return 0
        if action == self.shift_alt:
            return 3
        return 1 if action <= self.n_labels else 2

    cdef double upper_group(self, const void* state, int group, int steps, Weights W,
                            feat_t* buf, void* cache) noexcept nogil:
        return self.upper_group_families(state, group, steps, W, buf, cache, NULL)

    cdef double upper_group_families(self, const void* state, int group, int steps, Weights W,
                                     feat_t* buf, void* cache, double* by_family) noexcept nogil:
        """For every action of the group (every label of one arc direction):
        steps 1, a bound of its child's best action score (the siblings'
        shared structure plus each label feature's largest weight over the
        labels), by the family of the child's action; steps 2, the same
        over the grandchildren, by family over the labels of both arcs (a
        family of the child's actions each). by_family NULL: upper_group,
        without the parts."""
        cdef const ParseStateC* s = <const ParseStateC*>state
        cdef int L = self.n_labels, F
        cdef int first = 1 if group == 1 else 1 + L
        cdef void* child = self._scratch_state(cache)
        cdef int* valid = self._scratch_valid(cache)
        cdef double far = -INFINITY
        cdef double parts[4]
        if steps == 1:  # (family_bound writes every family where asked)
            return self.family_bound(s, W, buf, cache, first, True, -1, False, by_family)
        if by_family == NULL:
            by_family = parts
        for F in range(self.n_action_families):
            by_family[F] = -INFINITY
        if steps > 2:
            for F in range(self.n_action_families):
                by_family[F] = INFINITY
            return INFINITY
        self.copy_state(child, state, 0)
        self.apply(child, first)
        if self.is_final(child):
            by_family[0] = 0.0
            return 0.0
        self.set_valid(valid, child)
        if valid[0]:
            by_family[0] = self.family_bound(s, W, buf, cache, first, True, 0, False)
        if self.joint and valid[self.shift_alt]:
            by_family[3] = self.family_bound(s, W, buf, cache, first, True, self.shift_alt, False)
        if valid[1]:
            by_family[1] = self.family_bound(s, W, buf, cache, first, True, 1, True)
            by_family[2] = self.family_bound(s, W, buf, cache, first, True, 1 + L, True)
        for F in range(self.n_action_families):
            if by_family[F] > far:
                far = by_family[F]
        if far == -INFINITY:  # stuck: nothing to bound
            for F in range(self.n_action_families):
                by_family[F] = INFINITY
            return INFINITY
        return far

    cdef void* _scratch_state(self, void* cache) noexcept nogil:
        return <char*>cache + self._label_max_offset() + LABEL_MAX_SLOTS * sizeof(LabelMaxC)

    cdef int* _scratch_valid(self, void* cache) noexcept nogil:
        return <int*>(<char*>self._scratch_state(cache) + state_size_for(MAX_STACK))

    cdef int* _scratch_valid2(self, void* cache) noexcept nogil:
        """(family_bound's and upper's: _scratch_valid is held by their callers)"""
        return &self._scratch_valid(cache)[self.nr_class]

    cdef double* _scratch_row(self, void* cache) noexcept nogil:
        """upper's and family_bound's: a row of scores"""
        return <double*>(<char*>cache + self._family_offset() + self.n_labels * sizeof(feat_t))

    cdef uint64_t* _scratch_atoms(self, void* cache) noexcept nogil:
        """family_pair_max's: a label template's atoms, 2 x n_labels times"""
        return <uint64_t*>(<char*>self._scratch_row(cache) + self.nr_class * sizeof(double))

    cdef feat_t* _scratch_family(self, void* cache) noexcept nogil:
        """family_max's: a feature per label"""
        return <feat_t*>(<char*>cache + self._family_offset())

    cdef size_t _family_offset(self) noexcept nogil:
        return ((self._label_max_offset() + LABEL_MAX_SLOTS * sizeof(LabelMaxC)
                 + state_size_for(MAX_STACK) + 2 * self.nr_class * sizeof(int) + 7) // 8 * 8)

    cdef void _apply_pair(self, void* child, const ParseStateC* s, int first, int l, int second,
                          int m) noexcept nogil:
        """child = s after action first + l, then (second >= 0) second + m."""
        self.copy_state(child, s, 0)
        self.apply(child, first + l)
        if second >= 0:
            self.apply(child, second + m)

    cdef double family_bound(self, const ParseStateC* s, Weights W, feat_t* buf, void* cache,
                             int first, bint labels1, int second, bint labels2,
                             double* by_family=NULL) noexcept nogil:
        """A bound of the best action score of every state reached from s by
        action first (+ l for every label l if labels1), then action second
        (+ m for every m if labels2; none if second < 0): they share their
        structure, their valid actions and the label features that read no
        varying label, so per class its structure score plus each label
        feature's weight, or where the feature reads a varying label its
        largest weight in the class's group over the labels it reads (cached
        per feature family), summed as score() sums them (dot_bounded); the
        largest over the valid classes. 0 if those states are final (search
        value 0). by_family (if given): the same bound by the family of the
        class (action_family), as upper_group_families gives it."""
        cdef feat_t k00[MAX_LABEL_FEATS]
        cdef feat_t k10, k01
        cdef uint64_t v00[MAX_GROUP_ATOMS]
        cdef uint64_t v10[MAX_GROUP_ATOMS]
        cdef uint64_t v01[MAX_GROUP_ATOMS]
        cdef double m[MAX_LABEL_FEATS * N_GROUPS]
        cdef bint varies[MAX_LABEL_FEATS]
        cdef void* child = self._scratch_state(cache)
        cdef int* valid = self._scratch_valid2(cache)
        cdef double* row = self._scratch_row(cache)
        cdef int i, n
        cdef bint dep1, dep2
        cdef bint vary1 = labels1 and self.n_labels > 1, vary2 = labels2 and self.n_labels > 1
        self._apply_pair(child, s, first, 0, second, 0)
        if self.is_final(child):
            if by_family != NULL:
                by_family[0] = 0.0
                for i in range(1, self.n_action_families):
                    by_family[i] = -INFINITY
            return 0.0
        self.set_valid(valid, child)  # (the same for every label: validity reads no label)
        memcpy(row, self.structure_scores(<const ParseStateC*>child, W, buf, cache),
               self.nr_class * sizeof(double))
        # the label features at labels 0 (extract_labels()), and the atoms
        # at label 1 of each varying arc: only the features that read them
        # are hashed again
        n = self.features.label_values(v00, <const ParseStateC*>child)
        for i in range(n):
            k00[i] = self.features.label_value_feature(v00, i)
        if vary1:
            self._apply_pair(child, s, first, 1, second, 0)
            self.features.label_values(v10, <const ParseStateC*>child)
        if vary2:
            self._apply_pair(child, s, first, 0, second, 1)
            self.features.label_values(v01, <const ParseStateC*>child)
        for i in range(n):
            # A feature reads an arc's label where labels 0 and 1 give two
            # features (it reads an atom whose value differs). Not so a
            # label set: it does not change where both bits are set already
            # (yet may for the other labels), so it is taken to read every
            # arc's label whose label varies.
            if self.features.labels.templates[i].reads_set:
                dep1 = vary1
                dep2 = vary2
            else:
                dep1 = vary1 and self.features.label_values_differ(v00, v10, i)
                dep2 = vary2 and self.features.label_values_differ(v00, v01, i)
            varies[i] = dep1 or dep2
            if varies[i]:
                k10 = self.features.label_value_feature(v10, i) if dep1 else 0
                k01 = self.features.label_value_feature(v01, i) if dep2 else 0
                self.family_max(&m[i * N_GROUPS], s, W, cache, first, dep1, second, dep2, i,
                                k00[i], k10 if dep1 else k01, k01 if dep1 and dep2 else 0)
        W.dot_bounded(row, self.nr_class, k00, n, varies, m, self.group_of, N_GROUPS)
        if by_family != NULL:
            self._best_by_family(row, valid, by_family)
        return self._best_valid(row, valid)

    cdef void _best_by_family(self, const double* row, const int* valid,
                              double* by_family) noexcept nogil:
        """_best_valid by action family (action_family): -inf for a family
        with no valid action; where none is valid, +inf for every family."""
        cdef int L = self.n_labels, F
        by_family[0] = row[0] if valid[0] else -INFINITY
        by_family[1] = la_max(&row[1], L, -INFINITY) if valid[1] else -INFINITY
        by_family[2] = la_max(&row[1 + L], L, -INFINITY) if valid[1] else -INFINITY
        if self.joint:
            by_family[3] = row[self.shift_alt] if valid[self.shift_alt] else -INFINITY
        if not (valid[0] or valid[1] or (self.joint and valid[self.shift_alt])):
            for F in range(self.n_action_families):
                by_family[F] = INFINITY

    cdef void family_max(self, double* out, const ParseStateC* s, Weights W, void* cache,
                         int first, bint dep1, int second, bint dep2, int position,
                         feat_t key0, feat_t key1, feat_t key2) noexcept nogil:
        """out[g]: the max of row_group_max(the position-th label feature)[g]
        over the labels it reads (those of action first if dep1, of second
        if dep2), cached by (key0 and key1 = its label-0 and label-1
        versions, the actions, position; where it reads both, key2, its
        version with label 1 in the second action only) and the weights.
        (key0 alone names the family of a feature that reads the label
        itself, not of one that reads a label set: adding label 0 to a set
        hides whether it held label 0 already; key1 tells.) Where it reads
        both, the L^2 features by their atoms (family_pair_max), or, for a
        label set (which both arcs may add to), the table's bound of every
        weight (W.top)."""
        cdef uint64_t parts[6]
        parts[0] = key0
        parts[1] = <uint64_t>first | (<uint64_t>dep1 << 32)
        parts[2] = <uint64_t>(second + 1) | (<uint64_t>dep2 << 32)
        parts[3] = <uint64_t>position
        parts[4] = key1
        parts[5] = key2
        cdef uint64_t key = hash64(parts, sizeof(parts), 17)
        cdef LabelMaxC* entry = &(<LabelMaxC*>(<char*>cache + self._label_max_offset()))[
            key & (LABEL_MAX_SLOTS - 1)]
        cdef void* child = self._scratch_state(cache)
        cdef feat_t* family = self._scratch_family(cache)
        cdef uint64_t at0[MAX_CONJUNCTION]
        cdef uint64_t at1[MAX_CONJUNCTION]
        cdef int l, g, n = self.n_labels
        if dep1 and dep2 and self.features.labels.templates[position].reads_set:
            for g in range(N_GROUPS):  # (a set both arcs may add to: see family_pair_max)
                out[g] = W.top
            return
        if entry.key == key and entry.table == <uint64_t><size_t><void*>W and entry.version == W.version:
            memcpy(out, entry.value, sizeof(entry.value))
            return
        if dep1 and dep2:
            if not self.family_pair_max(out, s, W, cache, first, second, position):
                for g in range(N_GROUPS):  # (cannot happen: only a label set reads two labels)
                    out[g] = W.top
        else:
            # the family's features first (from the atoms at labels 0 and 1
            # where only the label atoms vary, else state by state), then
            # their rows at once (their cache misses overlap:
            # Weights.rows_group_max)
            self._apply_pair(child, s, first, 0, second, 0)
            self.features.label_atoms(at0, <const ParseStateC*>child, position)
            self._apply_pair(child, s, first, 1 if dep1 else 0, second, 0 if dep1 else 1)
            self.features.label_atoms(at1, <const ParseStateC*>child, position)
            if not self.features.label_family(family, at0, at1, position, n):
                for l in range(n):
                    self._apply_pair(child, s, first, l if dep1 else 0, second, 0 if dep1 else l)
                    family[l] = self.features.label_feature(<const ParseStateC*>child, position)
            W.rows_group_max(family, n, self.group_of, N_GROUPS, out)
        entry.key = key
        entry.table = <uint64_t><size_t><void*>W
        entry.version = W.version
        memcpy(entry.value, out, sizeof(entry.value))

    cdef bint family_pair_max(self, double* out, const ParseStateC* s, Weights W, void* cache,
                              int first, int second, int position) noexcept nogil:
        """out[g]: the max over every label l, m of row_group_max(the
        position-th label feature after actions first + l, second + m)[g],
        exactly, with 2L states instead of L^2. Each atom reads one field of
        the state: an arc's label is written in one place, and which atom
        reads it depends on the structure, never on a label. So an atom that
        varies with l (at m = 0) takes its values of the states (first + l,
        second), one that varies with m those of (first, second + m), and
        the L^2 features are hashed from those values. False (out unset)
        where an atom varies with both: a label set both arcs add to."""
        cdef uint64_t v00[MAX_CONJUNCTION]
        cdef uint64_t values[MAX_CONJUNCTION]
        cdef double row[N_GROUPS]
        cdef uint64_t* va = self._scratch_atoms(cache)
        cdef uint64_t* vb = &va[self.n_labels * MAX_CONJUNCTION]
        cdef void* child = self._scratch_state(cache)
        cdef feat_t* family = self._scratch_family(cache)
        cdef int L = self.n_labels, l, m, j, g, n
        cdef unsigned a_bits = 0, b_bits = 0
        self._apply_pair(child, s, first, 0, second, 0)
        n = self.features.label_atoms(v00, <const ParseStateC*>child, position)
        for l in range(L):
            self._apply_pair(child, s, first, l, second, 0)
            self.features.label_atoms(&va[l * MAX_CONJUNCTION], <const ParseStateC*>child, position)
            self._apply_pair(child, s, first, 0, second, l)
            self.features.label_atoms(&vb[l * MAX_CONJUNCTION], <const ParseStateC*>child, position)
            for j in range(n):
                a_bits |= <unsigned>(va[l * MAX_CONJUNCTION + j] != v00[j]) << j
                b_bits |= <unsigned>(vb[l * MAX_CONJUNCTION + j] != v00[j]) << j
        if a_bits & b_bits:
            return False
        for g in range(N_GROUPS):
            out[g] = 0.0
        memcpy(values, v00, sizeof(values))
        for l in range(L):
            for j in range(n):
                if a_bits >> j & 1:
                    values[j] = va[l * MAX_CONJUNCTION + j]
            for m in range(L):
                for j in range(n):
                    if b_bits >> j & 1:
                        values[j] = vb[m * MAX_CONJUNCTION + j]
                family[m] = self.features.label_hash(values, position)
            W.rows_group_max(family, L, self.group_of, N_GROUPS, row)
            for g in range(N_GROUPS):
                if row[g] > out[g]:
                    out[g] = row[g]
        return True

    cdef const double* structure_scores(self, const ParseStateC* s, Weights W, feat_t* buf,
                                        void* cache) noexcept nogil:
        """The structure features' scores of every action, from the cache
        (scored into its next slot, round robin, on a miss)."""
        cdef uint64_t key[KEY_WORDS]
        cdef int slot_words = KEY_WORDS + self.nr_class
        cdef uint64_t* slots = <uint64_t*>cache
        cdef uint64_t* clock = &slots[N_SLOTS * slot_words]
        cdef uint64_t* prints = &clock[1]
        cdef uint64_t* slot
        cdef uint64_t fp = 0
        cdef double* cached
        cdef int k, j, n
        self.structure_key(key, s, W)
        for j in range(KEY_WORDS):
            fp = (fp ^ key[j]) * <uint64_t>0x9E3779B97F4A7C15
        for k in range(N_SLOTS):
            if prints[k] != fp:
                continue
            slot = &slots[k * slot_words]
            for j in range(KEY_WORDS):
                if slot[j] != key[j]:
                    break
            else:
                return <const double*>&slot[KEY_WORDS]
        k = clock[0] % N_SLOTS
        clock[0] += 1
        prints[k] = fp
        slot = &slots[k * slot_words]
        cached = <double*>&slot[KEY_WORDS]
        memset(cached, 0, self.nr_class * sizeof(double))
        n = self.features.extract_structure(buf, s)
        W.dot(cached, buf, n)
        memcpy(slot, key, KEY_WORDS * sizeof(uint64_t))
        return cached

    cdef void structure_key(self, uint64_t* key, const ParseStateC* s, Weights W) noexcept nogil:
        """Everything extract_structure() reads, plus the weights: states with
        equal keys have equal structure scores. key[0] is never 0, so a zeroed
        slot never matches."""
        cdef int s0 = s_at(s, 0), s1 = s_at(s, 1)
        key[0] = <uint64_t><size_t><void*>W
        key[1] = <uint64_t>W.version
        key[2] = s.doc.uid
        key[3] = <uint64_t>s.n
        key[4] = <uint64_t>s.i
        key[5] = <uint64_t>(s0 + 1)
        key[6] = <uint64_t>(s1 + 1)
        key[7] = <uint64_t>(s_at(s, 2) + 1)
        cdef const SlotC* t0 = slot_at(s, 0)
        cdef const SlotC* t1 = slot_at(s, 1)
        key[8] = <uint64_t>(t0.lc + 1) if s0 >= 0 else 0
        key[9] = <uint64_t>(t0.rc + 1) if s0 >= 0 else 0
        key[10] = <uint64_t>(t0.nl) if s0 >= 0 else 0
        key[11] = <uint64_t>(t0.nr) if s0 >= 0 else 0
        key[12] = <uint64_t>(t1.lc + 1) if s1 >= 0 else 0
        key[13] = <uint64_t>(t1.rc + 1) if s1 >= 0 else 0
        key[14] = <uint64_t>(t1.nl) if s1 >= 0 else 0
        key[15] = <uint64_t>(t1.nr) if s1 >= 0 else 0
        # (joint: which stack words and dependents took the alternative tag)
        key[16] = (<uint64_t>s.depth | (<uint64_t>(t0.alts if s0 >= 0 else 0) << 32)
                   | (<uint64_t>(t1.alts if s1 >= 0 else 0) << 40)
                   | (<uint64_t>(slot_at(s, 2).alts if s.depth > 2 else 0) << 48))
        key[17] = <uint64_t>s.done
        # the rich set's third order reads the second dependents too
        cdef bint rich = self.features.reads_second
        key[18] = <uint64_t>(t0.lc2 + 1) if rich and s0 >= 0 else 0
        key[19] = <uint64_t>(t0.rc2 + 1) if rich and s0 >= 0 else 0
        key[20] = <uint64_t>(t1.lc2 + 1) if rich and s1 >= 0 else 0
        key[21] = <uint64_t>(t1.rc2 + 1) if rich and s1 >= 0 else 0

    def family_bound_of(self, size_t state, Weights W, int first, bint labels1, int second,
                        bint labels2):
        """family_bound() at a state (a pointer from Instance.state_after),
        for tests."""
        cdef Pool mem = Pool()
        cdef feat_t* feats = <feat_t*>mem.alloc(max(self.max_feats, 1), sizeof(feat_t))
        cdef void* cache = mem.alloc(self.cache_size, 1)
        return self.family_bound(<const ParseStateC*>state, W, feats, cache, first, labels1,
                                 second, labels2)

    def label_features_of(self, size_t state):
        """label_feature() of every label template at a state (a pointer from
        Instance.state_after), for tests: extract_labels' features, one by
        one."""
        return [self.features.label_feature(<const ParseStateC*>state, k)
                for k in range(self.n_label_feats)]

    def slots_of(self, size_t state):
        """The stack of a state (a pointer from Instance.state_after), bottom
        first, as dicts of the slots' fields, for tests."""
        cdef const ParseStateC* s = <const ParseStateC*>state
        cdef const SlotC* t
        slots = []
        for k in range(s.depth):
            t = &_slots(s)[k]
            slots.append({"word": t.word, "lc": t.lc, "rc": t.rc, "lc2": t.lc2, "rc2": t.rc2,
                          "nl": t.nl, "nr": t.nr, "lc_label": t.lc_label,
                          "rc_label": t.rc_label, "lset": t.lset, "rset": t.rset,
                          "alts": t.alts})
        return slots

    # --- Python: the engine's view of a doc ---------------------------------
    def instance(self, doc_input, gold=None):
        """A doc as the engine sees it: its atoms array (n, N_ATOMS), or a
        dict with "atoms" and optionally "sent_ids"; gold: (heads, labels),
        -1 where unknown. The output of an action sequence is the tree
        (heads, labels)."""
        return _ParseDoc(self, doc_input, gold)

    def batch_docs(self, dict batch):
        """The docs of a batch for core.decode.decode_docs, without a Python
        object per doc: "atoms" (N, N_ATOMS), the docs' tokens one after the
        other; "starts" (n_docs + 1,) where each doc's begin; optionally
        "sent_ids" (N,) int32 with "sent_docs" (n_docs,): 1 where doc d's
        sentences are given (its tokens' sent_ids, as an instance's).
        Prediction only (no gold); the output planes are the heads, the
        labels and (joint) the alternative-tag flags (write_tree)."""
        return _ParseBatch(self, batch)


cdef inline int _shared_length(int n) noexcept nogil:
    """The doc length a state is sized for: 64 up to 64 words, else the next
    power of two (the stack holds MAX_STACK words at most). A search's
    Workspace or Beam is reused over the docs of a batch while their states
    have one size, so most docs share one instead of allocating their own
    (its score cache, the bounds' scratch: a few hundred KB)."""
    cdef int size = 64
    while size < n and size < MAX_STACK:
        size *= 2
    return size


cdef uint64_t _next_doc_uid = 0  # ParseDocC.uid of the last doc made


cdef class _ParseDoc(Instance):
    """The C arrays of one document. Input: the (n, N_ATOMS) atoms array, or
    a dict with "atoms" and optionally "sent_ids" (int32 per token). Gold:
    (heads, labels), and with a joint system optionally a third array,
    1 where the alternative tag is the gold one. A derivation has at most
    2n + 2 actions."""
    cdef ParseDocC c
    cdef ArcStandardSystem parsing
    cdef object atoms, sents, heads, labels, kids, gold_alt

    def __init__(self, ArcStandardSystem system, doc_input, gold=None):
        Instance.__init__(self, system)
        self.parsing = system
        extras = doc_input if isinstance(doc_input, dict) else {"atoms": doc_input}
        self.atoms = numpy.ascontiguousarray(extras["atoms"], dtype="uint64")
        n = self.atoms.shape[0]
        if n and (self.atoms.ndim != 2 or self.atoms.shape[1] != N_ATOMS):
            raise ValueError(f"expected ({n}, {N_ATOMS}) word atoms, got {self.atoms.shape}")
        memset(&self.c, 0, sizeof(ParseDocC))
        # a number of its own, not its address: a search's Beam or Workspace
        # keeps its score cache from doc to doc, and a freed doc's address
        # comes back for the next one (made under the GIL: no race)
        global _next_doc_uid
        _next_doc_uid += 1
        self.c.uid = _next_doc_uid
        self.c.length = n
        self.length = n
        self.max_steps = 2 * n + 2
        self.state_size = state_size_for(_shared_length(n))
        cdef uint64_t[:, ::1] av
        cdef int[::1] iv
        cdef unsigned char[::1] bv
        if n:
            av = self.atoms
            self.c.atoms = &av[0, 0]
        if extras.get("sent_ids") is not None and n:
            self.sents = numpy.ascontiguousarray(extras["sent_ids"], dtype="int32")
            if self.sents.shape != (n,):
                raise ValueError("sent_ids do not match the doc length")
            iv = self.sents
            self.c.sent_ids = &iv[0]
        if gold is not None and n:
            heads, labels = gold[:2]
            if len(gold) > 2 and gold[2] is not None and system.joint:
                self.gold_alt = numpy.ascontiguousarray(gold[2], dtype="uint8")
                if self.gold_alt.shape != (n,):
                    raise ValueError(f"gold alternative-tag flags do not match the doc length {n}")
                bv = self.gold_alt
                self.c.gold_alt = &bv[0]
            self.heads = numpy.ascontiguousarray(heads, dtype="int32")
            self.labels = numpy.ascontiguousarray(labels, dtype="int32")
            if self.heads.shape != (n,) or self.labels.shape != (n,):
                raise ValueError(f"gold heads/labels do not match the doc length {n}")
            if self.heads.max() >= n or self.labels.max() >= system.n_labels:
                raise ValueError("gold head or label index out of range")
            known = self.heads[(self.heads >= 0) & (self.heads != numpy.arange(n))]
            self.kids = numpy.bincount(known, minlength=n).astype("int32")
            iv = self.heads
            self.c.gold_heads = &iv[0]
            iv = self.labels
            self.c.gold_labels = &iv[0]
            iv = self.kids
            self.c.gold_kids = &iv[0]
            self.has_gold = True

    cdef int init_state(self, void* state) except -1:
        cdef int n = self.c.length
        cdef ParseStateC* s = <ParseStateC*>state
        s.doc = &self.c
        s.n = n
        s.i = s.depth = s.done = 0
        return 0

    def output(self, actions):
        """(heads, labels) after the actions (write_tree): words left on
        the stack (and any never shifted) are roots (head = self, label -1).
        Joint: (heads, labels, alts), alts 1 for the words shifted with
        their alternative tag (SHIFT-ALT)."""
        cdef int n = self.c.length
        cdef bint joint = self.parsing.joint
        # one array for heads and labels (joint: and alts), filled in C
        # through numpy's C API (numpy.full, arange and typed memoryviews
        # cost more than a short parse)
        planes = numpy.empty((3 if joint else 2, n), dtype="int32")
        cdef int* hv = <int*>cnp.PyArray_DATA(planes)
        cdef cnp.ndarray acts = actions if isinstance(actions, cnp.ndarray) else None
        if acts is None or cnp.PyArray_TYPE(acts) != cnp.NPY_INT32 \
                or not cnp.PyArray_IS_C_CONTIGUOUS(acts) or cnp.PyArray_NDIM(acts) != 1:
            acts = numpy.ascontiguousarray(actions, dtype="int32").reshape(-1)
        write_tree(self.parsing, <ParseStateC*>self.start(), <const int*>cnp.PyArray_DATA(acts),
                   cnp.PyArray_DIM(acts, 0), hv, n)
        if joint:
            return planes[0], planes[1], planes[2].astype("uint8")
        return planes[0], planes[1]


cdef void write_tree(ArcStandardSystem system, ParseStateC* s, const int* actions, int k,
                     int* out, int64_t stride) noexcept nogil:
    """The tree the k actions build from the start state s (replayed on it):
    out[i] the head of word i (itself for a root: a word left on the stack
    or never shifted), out[stride + i] its label id (-1 for a root), and
    with joint out[2 * stride + i] 1 where SHIFT-ALT shifted it (the
    alternative tag)."""
    cdef int n = s.n, L = system.n_labels, shift_alt = system.shift_alt, a, j, s0, s1
    cdef int* heads = out
    cdef int* labels = out + stride
    cdef int* alts = out + 2 * stride if system.joint else NULL
    for j in range(n):
        heads[j] = j
        labels[j] = -1
        if alts != NULL:
            alts[j] = 0
    for j in range(k):
        a = actions[j]
        if a == shift_alt and alts != NULL:
            alts[s.i] = 1
        elif a > 0:
            s0 = s_at(s, 0)
            s1 = s_at(s, 1)
            if a <= L:
                heads[s1] = s0
                labels[s1] = a - 1
            else:
                heads[s0] = s1
                labels[s0] = a - 1 - L
        system.apply(s, a)


cdef class _ParseBatch(Docs):
    """The docs of a batch as ArcStandardSystem.batch_docs reads them: one
    ParseDocC per doc pointing into the batch's arrays, every state sized
    for the longest doc (a larger state parses as a smaller one: only the
    stack's depth is used)."""
    cdef ArcStandardSystem parsing
    cdef vector[ParseDocC] docs
    cdef object atoms, sents

    def __init__(self, ArcStandardSystem system, dict batch):
        starts = numpy.ascontiguousarray(batch["starts"], dtype="int64")
        cdef int n_docs = starts.shape[0] - 1
        if n_docs < 0 or starts[0] != 0 or (n_docs and numpy.any(numpy.diff(starts) < 0)):
            raise ValueError("starts must rise from 0 to the number of tokens")
        Docs.__init__(self, system, n_docs, 3 if system.joint else 2)
        self.parsing = system
        cdef int64_t N = starts[n_docs] if n_docs else 0
        self.atoms = numpy.ascontiguousarray(batch["atoms"], dtype="uint64")
        if self.atoms.size == 0 and N == 0:
            self.atoms = numpy.zeros((0, N_ATOMS), dtype="uint64")
        if self.atoms.ndim != 2 or self.atoms.shape[1] != N_ATOMS or self.atoms.shape[0] != N:
            raise ValueError(f"expected ({N}, {N_ATOMS}) word atoms, got {self.atoms.shape}")
        cdef const unsigned char[::1] given = None
        cdef const int[::1] iv = None
        if batch.get("sent_ids") is not None:
            self.sents = numpy.ascontiguousarray(batch["sent_ids"], dtype="int32")
            given = numpy.ascontiguousarray(batch["sent_docs"], dtype="uint8")
            if self.sents.shape != (N,) or given.shape[0] != n_docs:
                raise ValueError("sent_ids and sent_docs do not match the batch")
            iv = self.sents
        cdef const uint64_t[:, ::1] av = self.atoms
        cdef const int64_t[::1] sv = starts
        cdef int d, n, longest = 0
        cdef ParseDocC* c
        global _next_doc_uid
        self.docs.resize(n_docs)
        for d in range(n_docs):
            n = <int>(sv[d + 1] - sv[d])
            c = &self.docs[d]
            memset(c, 0, sizeof(ParseDocC))
            _next_doc_uid += 1  # (the score cache's key: see _ParseDoc)
            c.uid = _next_doc_uid
            c.length = n
            if n:
                c.atoms = &av[sv[d], 0]
                if given is not None and given[d]:
                    c.sent_ids = &iv[sv[d]]
            longest = max(longest, n)
        self.state_size = state_size_for(_shared_length(longest))

    cdef int length(self, int i) noexcept nogil:
        return self.docs[i].length

    cdef int max_steps(self, int i) noexcept nogil:
        return 2 * self.docs[i].length + 2

    cdef void init_state(self, int i, void* state) noexcept nogil:
        cdef ParseStateC* s = <ParseStateC*>state
        s.doc = &self.docs[i]
        s.n = self.docs[i].length
        s.i = s.depth = s.done = 0

    cdef void output(self, int i, const int* actions, int k, int* out, int64_t stride,
                     void* scratch) noexcept nogil:
        self.init_state(i, scratch)
        write_tree(self.parsing, <ParseStateC*>scratch, actions, k, out, stride)
