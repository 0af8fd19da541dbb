"""The engine's nogil time: each decoder's nogil section adds its wall time
here while `start()` is on, so a benchmark can tell what share of a pipe()
call ran without the GIL (1 thread: 1 - nogil / wall). Off by default; the
cost of a section is then two clock reads and a flag test."""
from libc.stdint cimport int64_t

cdef extern from *:
    """
    #ifdef _MSC_VER  /* MSVC: no clock_gettime, no GCC atomics */
    #include <chrono>
    #include <intrin.h>
    static long long sl_now_ns(void) {
        return (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    static void sl_add(long long *total, long long ns) {
        _InterlockedExchangeAdd64((volatile long long*)total, ns);
    }
    #else
    #include <time.h>
    static long long sl_now_ns(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
    }
    static void sl_add(long long *total, long long ns) {
        __atomic_fetch_add(total, ns, __ATOMIC_RELAXED);
    }
    #endif
    """
    long long sl_now_ns() nogil
    void sl_add(long long* total, long long ns) nogil

cdef long long _total = 0
cdef bint _on = False


cdef int64_t now_ns() noexcept nogil:
    return sl_now_ns() if _on else 0


cdef void add_since(int64_t t0) noexcept nogil:
    if _on and t0:
        sl_add(&_total, sl_now_ns() - t0)


def start() -> None:
    """Sum the nogil sections' time from 0."""
    global _total, _on
    _total = 0
    _on = True


def stop() -> float:
    """Stop summing; the seconds summed since start()."""
    global _on
    _on = False
    return _total / 1e9


def seconds() -> float:
    """The seconds summed so far."""
    return _total / 1e9
