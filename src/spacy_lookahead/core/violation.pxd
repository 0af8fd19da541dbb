from .beam cimport Beam
from .search cimport Workspace
from .weights cimport Weights

# Update methods of Huang et al. (2012), Sections 4-5.
cdef enum:
    STANDARD = 0
    EARLY = 1
    MAX_VIOLATION = 2
    HYBRID = 3
    LATEST = 4


cdef struct StepRecord:
    # Step t of a beam run against the gold sequence: the score of the best
    # item B_t[0], of the gold prefix y[1:t], whether y[1:t] is in B_t and
    # whether it is B_t[0] itself.
    double best
    double gold
    bint gold_in_beam
    bint best_is_gold


cdef struct Violation:
    # The triple (x, y[1:i], z[1:i]) of the paper: x is the start state, y the
    # gold prefix of the first `step` steps, z = B_step[0] (or, for the
    # standard update, the final best against the full gold sequence).
    int step
    bint full          # standard update: whole y against B_T[0]
    double gap         # w.Phi(z) - w.Phi(y); >= 0 iff a violation
    bint valid         # the triple is a violation


cdef int choose_violation(int method, const StepRecord* rec, int T, double final_best,
                          double final_gold, bint final_is_gold, Violation* out) noexcept nogil
cdef int find_violation(Beam beam, Weights W, const void* start, const int* gold, int n_gold,
                        int method, StepRecord* rec, void* gold_state,
                        Violation* out) noexcept nogil
cdef int fix_violation(Beam beam, Workspace ws, Weights W, const void* start, const int* gold,
                       int n_gold, const Violation* v, int* zbuf) except -1
