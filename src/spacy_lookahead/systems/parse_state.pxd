"""The arc-standard parser's C state (systems/arc_standard.pyx): a doc, a
state header followed by its stack slots, and the accessors the system and
its features (parse_features.pxd) share."""
from libc.stdint cimport uint64_t

cdef enum:
    MAX_STACK = 256     # see arc_standard.pyx's docstring
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
