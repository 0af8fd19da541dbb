from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector
from cymem.cymem cimport Pool

from .system cimport TransitionSystem


cdef class Instance:
    """One document as a transition system sees it: the C arrays its states
    point into (inputs, and the gold the oracle reads while training), owned
    here for as long as the instance lives. Systems subclass it; the learners
    and decoders in core see only this and the TransitionSystem."""
    cdef Pool mem
    cdef readonly TransitionSystem system
    cdef readonly int length          # tokens; 0: nothing to search
    cdef readonly int max_steps       # no derivation has more actions
    cdef readonly size_t state_size   # bytes of one state of this doc
    cdef readonly bint has_gold       # the oracle knows (some of) the gold
    cdef readonly bint breaks         # the system's history starts again at some steps (a
                                      # tagging doc's sentence starts: there every
                                      # transition is the first step's; core/marginals.pyx,
                                      # TransitionSystem.history_restarts)

    cdef int init_state(self, void* state) except -1
    cdef void* start(self) except NULL
    cdef void* after(self, history) except NULL


cdef class DocRows:
    """Per-token input rows of a batch that are filled doc by doc, where
    they are read: decode_docs fills doc i's (fill(i)) on the thread that
    searches it, right before the search, so the thread that made the batch
    writes less, and the rows land in the cache of the core that reads them.
    fill(i) writes doc i's rows alone (threads fill different docs at once),
    and is false where it could not (its reader may look the doc's words up
    itself and find one missing: the doc is then not searched, and its
    maker does it again);
    after fill_all() (with the GIL) every row is there and fill() does
    nothing. row(k, out): token k's row (k: its place in the batch) into
    `out` (N_ATOMS), the batch's rows left as they are, for a reader that
    copies the rows it reads anyway (the phrase recognisers' units), from
    any thread. Made by whoever reads the docs (spacy_io); the engine sees
    only this."""
    cdef readonly int n_docs
    cdef readonly bint filled  # every doc's rows are there
    cdef readonly bint knows_units  # units_of() gives each doc's units
    cdef bint fill(self, int i) noexcept nogil
    cdef void row(self, int64_t k, uint64_t* out) noexcept nogil
    # after fill(i): where doc i's substrings are, if kept per doc (CSR:
    # its n + 1 offsets into its hashes); false: in the batch's arrays
    cdef bint substrings_of(self, int i, const int** offsets,
                            const uint64_t** hashes) noexcept nogil
    # after fill(i), for the phrase recognisers: doc i's units (its words,
    # whitespace out, by sentence where it has boundaries:
    # spacy_io.sentence_units), appended to `words` (batch positions) and
    # `unit_starts` (where each ends in words; its last entry on entry is
    # words' size). Returns the doc's words where it is one unit without
    # boundaries (0 where it has them); -1: these rows do not know units,
    # or memory ran out
    cdef int64_t units_of(self, int i, vector[int64_t]* words,
                          vector[int64_t]* unit_starts) noexcept nogil
    # after fill(i), for a reader of each doc's words alone (a tagging
    # system): where the rows leave whitespace tokens out (their words'
    # rows one after another from the doc's first), the number of doc i's
    # other tokens and, where it has whitespace, their positions in the doc
    # (else NULL: every token); -1: these rows keep every token
    cdef int content_of(self, int i, const int** positions) noexcept nogil


cdef class DocSink:
    """Where decode_docs puts each doc's output as soon as the thread that
    searched it has it (put(i): doc i's first plane, out[j] for its n
    tokens, the next plane at out + stride), on that thread, so that the
    thread that made the batch writes less, and the outputs are written
    while the doc's memory is in that core's cache. put(i) writes doc i's
    alone (threads put different docs at once) and never fails: it keeps
    its error for the owner to raise, with the GIL. Made by whoever writes
    the docs (spacy_io); the engine sees only this."""
    cdef readonly int n_docs
    cdef void put(self, int i, const int* out, int64_t stride, int n) noexcept nogil


cdef class Docs:
    """The documents of a batch as a transition system sees them, without a
    Python object per document (core.decode.decode_docs searches them in one
    nogil loop). Systems subclass it; what it points into lives as long as
    it does."""
    cdef readonly TransitionSystem system
    cdef readonly int n_docs
    cdef readonly size_t state_size   # bytes of one state (every doc's)
    cdef readonly int width           # ints of output per token (output's planes)
    cdef DocRows rows                 # rows filled per doc (load), or None: all there

    cdef bint load(self, int i) noexcept nogil       # doc i's rows, before its search
                                                     # (false: not there, skip the doc)

    cdef int length(self, int i) noexcept nogil      # tokens of doc i; 0: nothing to search
                                                     # (load(i) may lower it: rows that leave
                                                     # whitespace out, DocRows.content_of;
                                                     # its output fills the start of its slot)
    cdef int max_steps(self, int i) noexcept nogil   # no derivation of doc i has more actions
    cdef void init_state(self, int i, void* state) noexcept nogil  # (state_size zeroed bytes)
    cdef bint breaks(self, int i) noexcept nogil     # as Instance.breaks, for doc i
    cdef void output(self, int i, const int* actions, int k, int* out, int64_t stride,
                     void* scratch) noexcept nogil


cdef class InstanceDocs(Docs):
    """A list of Instances (of one system and state size) seen as Docs: the
    engine's batch passes take either (the Instances' own paths: docs of
    another vocab, training)."""
    cdef list instances
    cdef vector[const void*] starts
    cdef vector[int] lengths, steps
    cdef vector[char] broken
