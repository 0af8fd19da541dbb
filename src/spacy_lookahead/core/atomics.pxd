# Atomic counters and flags shared by the threads of a batch pass.

cdef extern from *:
    """
    /* the next doc of a batch for the thread that asks (relaxed: the docs
       are read-only and each output slot has one writer) */
    #ifdef _MSC_VER  /* MSVC: the Interlocked intrinsics (int and long are 32 bits there) */
    #include <intrin.h>
    static inline int la_take(int* counter) {
        return (int)_InterlockedExchangeAdd((volatile long*)counter, 1);
    }
    static inline int la_load(int* flag) { return (int)_InterlockedOr((volatile long*)flag, 0); }
    static inline void la_store(int* flag, int v) { _InterlockedExchange((volatile long*)flag, v); }
    static inline void la_min(int* x, int v) {
        long old = _InterlockedOr((volatile long*)x, 0);
        while (v < old) {
            long seen = _InterlockedCompareExchange((volatile long*)x, v, old);
            if (seen == old) break;
            old = seen;
        }
    }
    /* (the Interlocked intrinsics are full barriers: acquire and release) */
    static inline int la_load_acquire(int* flag) { return la_load(flag); }
    static inline void la_store_release(int* flag, int v) { la_store(flag, v); }
    static inline int la_claim(int* flag, int expected, int v) {
        return _InterlockedCompareExchange((volatile long*)flag, v, expected) == expected;
    }
    #else
    static inline int la_take(int* counter) {
        return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    static inline int la_load(int* flag) { return __atomic_load_n(flag, __ATOMIC_RELAXED); }
    static inline void la_store(int* flag, int v) { __atomic_store_n(flag, v, __ATOMIC_RELAXED); }
    static inline void la_min(int* x, int v) {  /* *x = min(*x, v) */
        int old = __atomic_load_n(x, __ATOMIC_RELAXED);
        while (v < old && !__atomic_compare_exchange_n(x, &old, v, 0, __ATOMIC_RELAXED,
                                                       __ATOMIC_RELAXED)) {}
    }
    /* a flag that hands over what its writer made before it (release: the
       writes before the store are seen by whoever loads it with acquire) */
    static inline int la_load_acquire(int* flag) { return __atomic_load_n(flag, __ATOMIC_ACQUIRE); }
    static inline void la_store_release(int* flag, int v) {
        __atomic_store_n(flag, v, __ATOMIC_RELEASE);
    }
    /* *flag from `expected` to v, by this thread alone: 1, or 0 where another
       changed it first */
    static inline int la_claim(int* flag, int expected, int v) {
        return __atomic_compare_exchange_n(flag, &expected, v, 0, __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE);
    }
    #endif
    #include <thread>
    #if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
    #include <immintrin.h>
    #define LA_SPIN_PAUSE() _mm_pause()
    #else
    #define LA_SPIN_PAUSE() ((void)0)
    #endif
    /* a wait's turn: spin a little (a pause: the core's other thread runs),
       then let the OS run another thread (the one waited for, on a machine
       with fewer cores than threads) */
    static inline void la_wait_turn(int turn) {
        if (turn >= 64)
            std::this_thread::yield();
        else
            LA_SPIN_PAUSE();
    }
    """
    int la_take(int* counter) nogil
    int la_load(int* flag) nogil
    void la_store(int* flag, int v) nogil
    void la_min(int* x, int v) nogil
    int la_load_acquire(int* flag) nogil
    void la_store_release(int* flag, int v) nogil
    bint la_claim(int* flag, int expected, int v) nogil
    void la_wait_turn(int turn) nogil
