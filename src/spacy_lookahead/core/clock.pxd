from libc.stdint cimport int64_t

# The time the engine's nogil sections take, summed over every thread: what
# part of a pipe() call runs without the GIL (benchmarks/gil.py). A section
# reads the clock twice (about 40 ns); nothing is summed until start().
cdef int64_t now_ns() noexcept nogil
cdef void add_since(int64_t t0) noexcept nogil
