"""The parser's features: its feature templates (systems/parser_templates.py:
the fixed sets and the user's, compiled into two groups) read in C at the
stack and buffer positions of a state (parse_state.pxd).

Two fixed sets: "base" (Huang and Sagae 2010 plus distance, valency and
dependent labels) and "rich": base plus, after it, Zhang and Nivre's
(2011) third-order features (the second leftmost/rightmost dependents of s0
and s1), a few suffix features that hold up under POS errors, and their
label sets (the labels of s0's and s1's left and right dependents, each with
the word's tag); a user's templates come after them. A label set is a
64-bit mask with bit (label % 64): with 64 labels or more, labels that are
equal modulo 64 share a bit.

With `alternatives`, either set is followed by features of the
tagger's alternative tags (the atom A_TAG_ALT: a likely other tag of the
word, or ATOM_SURE), alone and with the tags of s0, s1 and q0: the tagger's
uncertainty as parser features (k-best tags, k = 2).

The features fall in two groups (parser_templates.py): the structure
templates, which read no arc label, and the label templates, one feature
each, which the system's score cache and bounds keep apart."""
from libc.stdint cimport uint64_t
from cymem.cymem cimport Pool
from murmurhash.mrmr cimport hash64

from ..core.features cimport (N_ATOMS, COLUMN_ONE, MAX_CONJUNCTION, A_TAG, A_TAG_ALT,
                              ATOM_BEFORE, LABEL_ATOM, path_prefix)
from ..core.weights cimport feat_t
from .parse_state cimport (ParseStateC, SlotC, slot_at, s_at, ALT_WORD, ALT_LC, ALT_RC, ALT_LC2,
                           ALT_RC2)
from .parser_templates import compile_group, parser_groups, reads_positions
from .templates import PARSER_SLOTS, PARSER_STATE_COLUMNS

# the positions, in the order of templates.PARSER_SLOTS
cdef enum:
    P_S0
    P_S1
    P_S2
    P_Q0
    P_Q1
    P_Q2
    P_S0L
    P_S0R
    P_S1L
    P_S1R
    P_S0L2
    P_S0R2
    P_S1L2
    P_S1R2
    N_POSITIONS

# the state's atoms, after the constant column, in the order of
# templates.PARSER_STATE_ATOMS (which says what each is)
cdef enum:
    C_CTAG = COLUMN_ONE + 1
    C_LABEL
    C_LSET
    C_RSET
    C_NL
    C_NR
    C_DIST
    C_DEPTH
    C_QEMPTY

# the C enums and the Python tables must agree
assert len(PARSER_SLOTS) == N_POSITIONS and PARSER_STATE_COLUMNS["ctag"] == C_CTAG \
    and PARSER_STATE_COLUMNS["qempty"] == C_QEMPTY


cdef struct ParseViewC:      # what the templates read of one state
    const ParseStateC* s
    int tokens[N_POSITIONS]  # the word at each position, -1: none
    unsigned char alt[N_POSITIONS]  # 1: the word's chosen tag is its alternative


cdef inline int position_of(const ParseStateC* s, int slot, unsigned char* alt) noexcept nogil:
    """The word at a position of the state (-1: none), and into alt whether
    its chosen tag is its alternative (joint tagging; the buffer's never)."""
    cdef const SlotC* t
    alt[0] = 0
    if slot == P_Q0 or slot == P_Q1 or slot == P_Q2:
        return s.i + slot - P_Q0 if s.i + slot - P_Q0 < s.n else -1
    t = slot_at(s, 0 if slot in (P_S0, P_S0L, P_S0R, P_S0L2, P_S0R2) else
                1 if slot in (P_S1, P_S1L, P_S1R, P_S1L2, P_S1R2) else 2)
    if t == NULL:
        return -1
    if slot == P_S0 or slot == P_S1 or slot == P_S2:
        alt[0] = (t.alts & ALT_WORD) != 0
        return t.word
    if slot == P_S0L or slot == P_S1L:
        alt[0] = (t.alts & ALT_LC) != 0
        return t.lc
    if slot == P_S0R or slot == P_S1R:
        alt[0] = (t.alts & ALT_RC) != 0
        return t.rc
    if slot == P_S0L2 or slot == P_S1L2:
        alt[0] = (t.alts & ALT_LC2) != 0
        return t.lc2
    alt[0] = (t.alts & ALT_RC2) != 0
    return t.rc2


cdef inline void view_of(ParseViewC* v, const ParseStateC* s) noexcept nogil:
    cdef int p
    v.s = s
    for p in range(N_POSITIONS):
        v.tokens[p] = position_of(s, p, &v.alt[p])


cdef inline uint64_t parse_atom(const ParseStateC* s, const GroupAtomC* a, int i, bint alt
                                ) noexcept nogil:
    """The atom's value at the state, where i is the word at its position
    and alt its alternative bit (position_of); 0: absent. An empty position
    is the sentinel ATOM_BEFORE, but for a label set (0: no labels)."""
    cdef int col = a.column
    cdef const SlotC* t
    cdef uint64_t x
    if col < N_ATOMS:
        if i < 0:
            return ATOM_BEFORE
        x = s.doc.atoms[i * N_ATOMS + col]
        if a.flag >= 0:
            return (x >> a.flag) & 1
        return path_prefix(x, a.bits) if a.bits > 0 else x
    if col == COLUMN_ONE:
        return 1
    if col == C_CTAG:
        if i < 0:
            return ATOM_BEFORE
        return s.doc.atoms[i * N_ATOMS + (A_TAG_ALT if alt else A_TAG)]
    if col == C_DEPTH:
        return 10 + min(s.depth, 3)
    if col == C_QEMPTY:
        return 10 + (s.i >= s.n)
    if col == C_DIST:  # at s1: its distance to s0
        return 10 + min(s_at(s, 0) - i, 5) if i >= 0 else ATOM_BEFORE
    # the others read s0's or s1's slot
    t = slot_at(s, 0 if a.slot in (P_S0, P_S0L, P_S0R) else 1)
    if col == C_LABEL:  # at s0l, s0r, s1l, s1r
        if i < 0:
            return ATOM_BEFORE
        return LABEL_ATOM + (t.lc_label if a.slot == P_S0L or a.slot == P_S1L else t.rc_label)
    if col == C_LSET:
        return t.lset if t != NULL else 0
    if col == C_RSET:
        return t.rset if t != NULL else 0
    if t == NULL:
        return ATOM_BEFORE
    return 10 + (t.nl if col == C_NL else t.nr)


cdef inline int group_feature(feat_t* f, const GroupTemplateC* t, const uint64_t* values
                              ) noexcept nogil:
    """Template t's feature from the values of its group's atoms into f[0]
    (1), or none where an atom is absent (0) and t keeps no zero."""
    cdef uint64_t buf[MAX_CONJUNCTION]
    cdef int j
    for j in range(t.n):
        buf[j] = values[t.atom[j]]
        if buf[j] == 0 and not t.keep_zero:
            return 0
    f[0] = hash64(buf, t.n * sizeof(uint64_t), t.id)
    return 1


cdef inline void group_values(uint64_t* values, const FeatureGroupC* g, const ParseViewC* v
                              ) noexcept nogil:
    """The values of the group's distinct atoms at the state."""
    cdef int k, slot
    for k in range(g.n_atoms):
        slot = g.atoms[k].slot
        values[k] = parse_atom(v.s, &g.atoms[k], v.tokens[slot], v.alt[slot])


cdef inline int extract_group(feat_t* f, const FeatureGroupC* g, const ParseViewC* v
                              ) noexcept nogil:
    """The features of every template of the group at the state, in order;
    each distinct atom read once. Returns how many."""
    cdef uint64_t values[MAX_GROUP_ATOMS]
    cdef int k, n = 0
    group_values(values, g, v)
    for k in range(g.n_templates):
        n += group_feature(&f[n], &g.templates[k], values)
    return n


cdef inline int template_atoms(uint64_t* values, const FeatureGroupC* g, int k,
                               const ParseStateC* s) noexcept nogil:
    """The values of the k-th template's atoms at the state, in its order
    (only its own atoms read). Returns how many."""
    cdef const GroupTemplateC* t = &g.templates[k]
    cdef const GroupAtomC* a
    cdef unsigned char alt
    cdef int j, i
    for j in range(t.n):
        a = &g.atoms[t.atom[j]]
        i = position_of(s, a.slot, &alt)
        values[j] = parse_atom(s, a, i, alt)
    return t.n


cdef inline feat_t template_hash(const FeatureGroupC* g, int k, const uint64_t* values
                                 ) noexcept nogil:
    """The k-th template's feature from its atoms' values (template_atoms),
    as group_feature makes it (0: none)."""
    cdef const GroupTemplateC* t = &g.templates[k]
    cdef int j
    if not t.keep_zero:
        for j in range(t.n):
            if values[j] == 0:
                return 0
    return hash64(<void*>values, t.n * sizeof(uint64_t), t.id)


cdef FeatureGroupC make_group(Pool mem, dict arrays) except *:
    """The C form of parser_templates.compile_group's arrays, in mem."""
    cdef FeatureGroupC g
    cdef int k, j
    g.n_atoms = arrays["n_atoms"]
    g.n_templates = len(arrays["ids"])
    g.atoms = <GroupAtomC*>mem.alloc(max(g.n_atoms, 1), sizeof(GroupAtomC))
    g.templates = <GroupTemplateC*>mem.alloc(max(g.n_templates, 1), sizeof(GroupTemplateC))
    for k in range(g.n_atoms):
        g.atoms[k].slot = arrays["atom_slot"][k]
        g.atoms[k].column = arrays["atom_column"][k]
        g.atoms[k].bits = arrays["atom_bits"][k]
        g.atoms[k].flag = arrays["atom_flag"][k]
    for k in range(g.n_templates):
        g.templates[k].id = arrays["ids"][k]
        g.templates[k].n = arrays["n"][k]
        g.templates[k].keep_zero = arrays["keep_zero"][k]
        g.templates[k].reads_set = arrays["reads_set"][k]
        for j in range(MAX_CONJUNCTION):
            g.templates[k].atom[j] = arrays["atoms"][k, j]
    return g


cdef class ParseFeatures:
    """The fixed set ("base" or "rich" preset, and with `alternatives` the
    alternative tags' features) and the user's templates over stack and
    buffer positions, as the two groups of parser_templates.py, compiled
    for C and owned here; TemplateError names a bad template."""

    def __init__(self, str preset, bint alternatives, list templates):
        self.templates = templates
        structure, labels = parser_groups(preset, alternatives, templates)
        self.structure_templates, self.label_templates = structure, labels
        self.mem = Pool()
        self.structure = make_group(self.mem, compile_group(structure))
        self.labels = make_group(self.mem, compile_group(labels))
        self.reads_second = reads_positions(structure, ("s0l2", "s0r2", "s1l2", "s1r2"))

    cdef int extract_structure(self, feat_t* f, const ParseStateC* s) noexcept nogil:
        """The features that do not read arc labels: equal for all states
        with the same structure_key() (arc_standard.pyx)."""
        cdef ParseViewC v
        view_of(&v, s)
        return extract_group(f, &self.structure, &v)

    cdef int extract_labels(self, feat_t* f, const ParseStateC* s) noexcept nogil:
        """The features that read the dependents' arc labels (and the
        end-of-queue feature), which differ between siblings LEFT-ARC(l) /
        RIGHT-ARC(l): one per label template."""
        cdef ParseViewC v
        view_of(&v, s)
        return extract_group(f, &self.labels, &v)

    cdef int label_values(self, uint64_t* values, const ParseStateC* s) noexcept nogil:
        """The label templates' distinct atoms' values at the state
        (MAX_GROUP_ATOMS at most); returns the number of label templates:
        label_value_feature(values, k) for each is extract_labels()."""
        cdef ParseViewC v
        view_of(&v, s)
        group_values(values, &self.labels, &v)
        return self.labels.n_templates

    cdef feat_t label_value_feature(self, const uint64_t* values, int position) noexcept nogil:
        """The position-th label template's feature from label_values()."""
        cdef feat_t f = 0
        group_feature(&f, &self.labels.templates[position], values)  # (one each: keep_zero)
        return f

    cdef bint label_values_differ(self, const uint64_t* a, const uint64_t* b, int position
                                  ) noexcept nogil:
        """Whether the position-th label template reads an atom whose value
        differs between two label_values(): else its features are equal."""
        cdef const GroupTemplateC* t = &self.labels.templates[position]
        cdef int j
        for j in range(t.n):
            if a[t.atom[j]] != b[t.atom[j]]:
                return True
        return False

    cdef bint label_family(self, feat_t* out, const uint64_t* at0, const uint64_t* at1,
                           int position, int n_labels) noexcept nogil:
        """out[l] = the position-th label feature of the state with label l
        on one arc, for every l < n_labels, from its atoms (label_atoms) at
        labels 0 and 1, without the states: where every atom that differs
        reads that arc's label itself (C_LABEL: LABEL_ATOM + label, written
        where the structure says, never where the label says). False (out
        unset) where another atom differs, or for a template that reads a
        label set: adding labels 0 and 1 to a set that holds them already
        changes nothing, and another label would."""
        cdef const GroupTemplateC* t = &self.labels.templates[position]
        cdef uint64_t values[MAX_CONJUNCTION]
        cdef unsigned varying = 0
        cdef int j, l
        if t.reads_set:
            return False
        for j in range(t.n):
            values[j] = at0[j]
            if at0[j] != at1[j]:
                if (self.labels.atoms[t.atom[j]].column != C_LABEL or at0[j] != LABEL_ATOM
                        or at1[j] != LABEL_ATOM + 1):
                    return False
                varying |= 1u << j
        for l in range(n_labels):
            for j in range(t.n):
                if varying >> j & 1:
                    values[j] = LABEL_ATOM + <uint64_t>l
            out[l] = template_hash(&self.labels, position, values)
        return True

    cdef feat_t label_feature(self, const ParseStateC* s, int position) noexcept nogil:
        """The position-th feature of extract_labels (branch-and-bound computes
        one feature over every label)."""
        cdef uint64_t values[MAX_CONJUNCTION]
        template_atoms(values, &self.labels, position, s)
        return template_hash(&self.labels, position, values)

    cdef int label_atoms(self, uint64_t* values, const ParseStateC* s, int position
                         ) noexcept nogil:
        """The atoms' values of the position-th label template at the state
        (MAX_CONJUNCTION at most; returns how many): label_hash(values,
        position) is its label_feature, and a family of states whose values
        differ in known atoms is enumerated without the states."""
        return template_atoms(values, &self.labels, position, s)

    cdef feat_t label_hash(self, const uint64_t* values, int position) noexcept nogil:
        """The position-th label template's feature from its atoms' values
        (label_atoms' layout)."""
        return template_hash(&self.labels, position, values)
