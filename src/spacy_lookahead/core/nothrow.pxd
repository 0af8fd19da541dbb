# C++ container calls that report running out of memory by their result
# instead of by an exception. Cython turns the exception of a call declared
# `except +` (push_back, resize) into a Python one, which takes the GIL, and
# in a noexcept function (a C thread's run) only prints it and goes on, the
# container too short; one it does not declare so (vector.assign) leaves a
# noexcept function through std::terminate: the process aborts. These never
# touch Python; the caller raises MemoryError once it holds the GIL.

cdef extern from *:
    """
    /* 0, or -1 where the container could not grow (bad_alloc, length_error) */
    template <typename V, typename T> static int la_push(V& v, const T& x) {
        try { v.push_back(x); return 0; } catch (...) { return -1; }
    }
    template <typename Q, typename T> static int la_heap_push(Q& q, const T& x) {
        try { q.push(x); return 0; } catch (...) { return -1; }
    }
    template <typename V> static int la_resize(V& v, size_t n) {
        try { v.resize(n); return 0; } catch (...) { return -1; }
    }
    template <typename V> static int la_reserve(V& v, size_t n) {
        try { v.reserve(n); return 0; } catch (...) { return -1; }
    }
    template <typename V, typename T> static int la_assign(V& v, size_t n, const T& x) {
        try { v.assign(n, x); return 0; } catch (...) { return -1; }
    }
    """
    int la_push[V, T](V& v, const T& x) nogil
    int la_heap_push[Q, T](Q& q, const T& x) nogil
    int la_resize[V](V& v, size_t n) nogil
    int la_reserve[V](V& v, size_t n) nogil
    int la_assign[V, T](V& v, size_t n, const T& x) nogil
