"""The arc-standard parser's C state: a doc, a state header followed by its
stack slots, the accessors the system (arc_standard.pyx) and its features
(parse_features.pyx) share, and what each move does to the stack.

The state is one flat block: a header, then the stack as slots, one per
stack word, each with what the features read of it (leftmost/rightmost
dependent and their labels, the second leftmost/rightmost, left/right
valency, the sets of its left and right dependents' labels). Only stack words get
dependents, so this is all the state; and copy_parse_state copies the header and
the used slots only: a copy costs the stack's depth, not the doc's length.

The stack holds at most MAX_STACK words: without sentence boundaries the
root of every finished sentence stays on it, so a long doc would make every
copy (and every step) cost its number of sentences. A word pushed below
MAX_STACK leaves the stack as a root (no arc can reach it any more); with
given sentences, only a word of a finished one (else the parser must reduce
first, so that each given sentence keeps one root). Within
a sentence the stack is far shallower than this (the gold derivations of
EWT's training sentences need 18 words at most), so parses of ordinary docs
are unchanged.
Arcs are not stored as heads: the action path is replayed (`output`) to
write the tree."""
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memmove

cdef enum:
    MAX_STACK = 256     # see the docstring
    # SlotC.alts bits: the word shifted with its alternative tag (SHIFT-ALT),
    # and its dependents lc, rc, lc2, rc2 likewise
    ALT_WORD = 1
    ALT_LC = 2
    ALT_RC = 4
    ALT_LC2 = 8
    ALT_RC2 = 16


cdef struct ParseDocC:
    uint64_t uid             # this document's number in the process (the score cache's key)
    int length
    const uint64_t* atoms    # length x N_ATOMS
    const int* sent_ids      # length, or NULL: sentence boundaries to respect
    const int* gold_heads    # length, -1 unknown, i = root; NULL at prediction
    const int* gold_labels   # length, label id or -1 (unknown / root)
    const int* gold_kids     # length, the number of gold dependents
    const unsigned char* gold_alt  # length: 1 where the alternative tag is the gold one; NULL: none


cdef struct ParseStateC:
    const ParseDocC* doc
    int n
    int i          # the next buffer word (queue front q0)
    int depth      # stack size
    int done       # finished with words left on the stack
    # followed by room for min(n, MAX_STACK) SlotC, the stack from the bottom


cdef struct SlotC:  # a word on the stack
    int word
    int lc         # leftmost dependent, -1 if none
    int rc         # rightmost dependent, -1 if none
    int nl         # left valency
    int nr         # right valency
    int lc_label   # the labels of the arcs to lc and rc
    int rc_label
    int lc2        # second leftmost dependent, -1 if none
    int rc2        # second rightmost dependent, -1 if none
    unsigned char alts  # joint tagging: which of word, lc, rc, lc2, rc2 took the alternative tag
    uint64_t lset  # the labels of the left dependents: bit (label % 64)
    uint64_t rset  # ... of the right dependents


cdef inline SlotC* _slots(const ParseStateC* s) noexcept nogil:
    return <SlotC*>(<char*>s + sizeof(ParseStateC))


cdef inline size_t state_size_for(int n) noexcept nogil:
    return (sizeof(ParseStateC) + max(min(n, <int>MAX_STACK), 1) * sizeof(SlotC) + 7) // 8 * 8


cdef inline const SlotC* slot_at(const ParseStateC* s, int k) noexcept nogil:
    """The k-th stack slot from the top, NULL if none."""
    return &_slots(s)[s.depth - 1 - k] if k < s.depth else NULL


cdef inline int s_at(const ParseStateC* s, int k) noexcept nogil:
    """The k-th stack word from the top, -1 if none."""
    return _slots(s)[s.depth - 1 - k].word if k < s.depth else -1


cdef inline void copy_parse_state(void* dst, const ParseStateC* src) noexcept nogil:
    """The header and the used stack slots."""
    memcpy(dst, src, sizeof(ParseStateC) + src.depth * sizeof(SlotC))


# --- the moves (the system says which are valid) ----------------------------
cdef inline void shift(ParseStateC* s, bint alt) noexcept nogil:
    """q0 onto the stack (alt: with its alternative tag); from a full stack
    the bottom word leaves, a root. The buffer is not empty."""
    cdef SlotC* stack = _slots(s)
    cdef SlotC* top
    if s.depth == MAX_STACK:
        memmove(&stack[0], &stack[1], (MAX_STACK - 1) * sizeof(SlotC))
        s.depth -= 1
    top = &stack[s.depth]
    top.word = s.i
    top.lc = top.rc = top.lc_label = top.rc_label = -1
    top.lc2 = top.rc2 = -1
    top.nl = top.nr = 0
    top.lset = top.rset = 0
    top.alts = ALT_WORD if alt else 0
    s.depth += 1
    s.i += 1


cdef inline void left_arc(ParseStateC* s, int label) noexcept nogil:
    """s1 becomes a (left) dependent of s0, with the label, and leaves the
    stack. It is always s0's new leftmost: the old one becomes the second."""
    cdef SlotC* stack = _slots(s)
    cdef SlotC* top = &stack[s.depth - 1]     # s0
    cdef SlotC* below = &stack[s.depth - 2]   # s1
    if top.lc < 0 or below.word < top.lc:
        top.lc2 = top.lc
        top.lc = below.word
        top.lc_label = label
        top.alts = ((top.alts & ~(ALT_LC | ALT_LC2))
                    | (ALT_LC2 if top.alts & ALT_LC else 0)
                    | (ALT_LC if below.alts & ALT_WORD else 0))
    elif top.lc2 < 0 or below.word < top.lc2:
        top.lc2 = below.word
        top.alts = (top.alts & ~ALT_LC2) | (ALT_LC2 if below.alts & ALT_WORD else 0)
    top.nl += 1
    top.lset |= (<uint64_t>1) << (label & 63)
    below[0] = top[0]         # s0 takes s1's place
    s.depth -= 1


cdef inline void right_arc(ParseStateC* s, int label) noexcept nogil:
    """s0 becomes a (right) dependent of s1, with the label, and leaves the
    stack. It is always s1's new rightmost: the old one becomes the second."""
    cdef SlotC* stack = _slots(s)
    cdef SlotC* top = &stack[s.depth - 1]     # s0
    cdef SlotC* below = &stack[s.depth - 2]   # s1
    if below.rc < 0 or top.word > below.rc:
        below.rc2 = below.rc
        below.rc = top.word
        below.rc_label = label
        below.alts = ((below.alts & ~(ALT_RC | ALT_RC2))
                      | (ALT_RC2 if below.alts & ALT_RC else 0)
                      | (ALT_RC if top.alts & ALT_WORD else 0))
    elif below.rc2 < 0 or top.word > below.rc2:
        below.rc2 = top.word
        below.alts = (below.alts & ~ALT_RC2) | (ALT_RC2 if top.alts & ALT_WORD else 0)
    below.nr += 1
    below.rset |= (<uint64_t>1) << (label & 63)
    s.depth -= 1
