"""The parser's feature templates in C (systems/parser_templates.py compiles
them): what a template's atoms read at the stack and buffer positions of a
state, and the features of a group of templates."""
from libc.stdint cimport uint64_t
from murmurhash.mrmr cimport hash64

from ..core.features cimport (N_ATOMS, COLUMN_ONE, MAX_CONJUNCTION, A_TAG, A_TAG_ALT,
                              ATOM_BEFORE, LABEL_ATOM, path_prefix)
from ..core.weights cimport feat_t
from .parse_state cimport (ParseStateC, SlotC, slot_at, s_at, ALT_WORD, ALT_LC, ALT_RC, ALT_LC2,
                           ALT_RC2)

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

cdef enum:
    MAX_GROUP_ATOMS = 256   # parser_templates.MAX_GROUP_ATOMS


cdef struct GroupAtomC:      # one atom a group reads: a column at a position
    int slot
    int column
    int bits                 # > 0: the first `bits` bits of a cluster path
    int flag                 # >= 0: that bit of the column


cdef struct GroupTemplateC:
    uint64_t id              # the hash seed
    int n                    # atoms in the conjunction
    int keep_zero            # an atom that is 0 is hashed as 0 (else: no feature)
    int reads_set            # reads a label set (lset / rset): see family_bound
    int atom[MAX_CONJUNCTION]  # indices into the group's atoms


cdef struct FeatureGroupC:
    int n_atoms
    GroupAtomC* atoms
    int n_templates
    GroupTemplateC* templates


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


cdef inline int extract_group(feat_t* f, const FeatureGroupC* g, const ParseViewC* v
                              ) noexcept nogil:
    """The features of every template of the group at the state, in order;
    each distinct atom read once. Returns how many."""
    cdef uint64_t values[MAX_GROUP_ATOMS]
    cdef int k, n = 0, slot
    for k in range(g.n_atoms):
        slot = g.atoms[k].slot
        values[k] = parse_atom(v.s, &g.atoms[k], v.tokens[slot], v.alt[slot])
    for k in range(g.n_templates):
        n += group_feature(&f[n], &g.templates[k], values)
    return n


cdef inline feat_t template_feature(const FeatureGroupC* g, int k, const ParseStateC* s
                                    ) noexcept nogil:
    """The k-th template's feature of a group that keeps zeros (the labels:
    one feature each), only its own atoms read."""
    cdef uint64_t values[MAX_CONJUNCTION]
    cdef GroupTemplateC t = g.templates[k]
    cdef const GroupAtomC* a
    cdef unsigned char alt
    cdef int j, i
    cdef feat_t out = 0
    for j in range(t.n):
        a = &g.atoms[t.atom[j]]
        i = position_of(s, a.slot, &alt)
        values[j] = parse_atom(s, a, i, alt)
        t.atom[j] = j
    group_feature(&out, &t, values)
    return out
