# Runs on this process's C threads, which never take the GIL (threads.pyx).


cdef class CRun:
    """One thread's share of a batch pass: made with the GIL, run() without
    it on any thread (nothing in it touches Python), finish() with it."""
    cdef bint busy  # started by a RunsStarted not yet waited for
    cdef void run(self) noexcept nogil
    cdef list finish(self)
