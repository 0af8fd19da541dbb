"""C threads for a batch's passes (decoding, lattice passes, phrase
recognition): each pass is cut into CRuns, one per thread, which share its
work (e.g. a counter of docs) and never touch Python, so that a pool of C++
threads runs them without taking the GIL. A Python thread pool takes the
GIL in every thread at every call's start and end, which at many threads
and short batches costs as much as the search (25 us a call on a 2-core
Xeon)."""
cimport cython
from libcpp.vector cimport vector

import numpy

# chunks per thread: docs differ in length, so a few chunks each keep the
# threads busy to the end of the batch
CHUNKS_PER_THREAD = 4


cdef extern from *:
    """
    /* A pool of C++ threads per process, for batch passes whose work never
       touches Python (CRun.run): a Python thread pool takes the GIL in
       every thread at every call's start and end, which at many threads
       and short batches costs as much as the search. Items go to a queue;
       each thread takes the next; a group counts its items down and wakes
       its waiter. A forked child (os.fork, n_process) starts a pool of its
       own: the parent's threads are not there, and its pool is left as it
       was (never freed: a pool's threads may still block on it). */
    #include <condition_variable>
    #include <deque>
    #include <mutex>
    #include <new>
    #include <thread>
    #ifdef _WIN32
    #include <process.h>
    static long la_pid(void) { return (long)_getpid(); }
    #else
    #include <unistd.h>
    static long la_pid(void) { return (long)getpid(); }
    #endif
    typedef void (*la_fn)(void*);
    struct la_group { std::mutex m; std::condition_variable cv; int pending; };
    struct la_item { la_fn fn; void* arg; la_group* group; };
    struct la_pool { std::mutex m; std::condition_variable cv; std::deque<la_item> queue;
                     int threads; long pid; };
    static la_pool* la_the_pool = NULL;
    static void la_worker(la_pool* pool) {
        for (;;) {
            la_item item;
            {
                std::unique_lock<std::mutex> lock(pool->m);
                pool->cv.wait(lock, [pool] { return !pool->queue.empty(); });
                item = pool->queue.front();
                pool->queue.pop_front();
            }
            item.fn(item.arg);
            std::lock_guard<std::mutex> done(item.group->m);
            if (--item.group->pending == 0) item.group->cv.notify_all();
        }
    }
    static la_group* la_group_new(void) {
        la_group* g = new (std::nothrow) la_group();
        if (g) g->pending = 0;
        return g;
    }
    static void la_group_free(la_group* g) { delete g; }
    /* n items for this process's pool, which grows to n threads; the caller
       holds the GIL (so no other thread is here at a fork). Returns 0, or
       -1 where no thread could be started (nothing queued). */
    static int la_run(la_fn fn, void** args, int n, la_group* g) {
        if (la_the_pool == NULL || la_the_pool->pid != la_pid()) {
            la_pool* fresh = new (std::nothrow) la_pool();
            if (fresh == NULL) return -1;
            fresh->threads = 0;
            fresh->pid = la_pid();
            la_the_pool = fresh;
        }
        la_pool* pool = la_the_pool;
        try {
            while (pool->threads < n) {
                std::thread(la_worker, pool).detach();
                pool->threads++;
            }
        } catch (...) {}
        if (pool->threads == 0) return -1;
        g->pending = n;
        {
            std::lock_guard<std::mutex> lock(pool->m);
            for (int i = 0; i < n; i++) pool->queue.push_back(la_item{fn, args[i], g});
        }
        pool->cv.notify_all();
        return 0;
    }
    static void la_wait(la_group* g) {
        std::unique_lock<std::mutex> lock(g->m);
        g->cv.wait(lock, [g] { return g->pending == 0; });
    }
    """
    ctypedef void (*la_fn)(void*) noexcept nogil
    ctypedef struct la_group:
        pass
    la_group* la_group_new() nogil
    void la_group_free(la_group* g) nogil
    int la_run(la_fn fn, void** args, int n, la_group* g) nogil
    void la_wait(la_group* g) nogil
    long la_pid() nogil


cdef class CRun:
    """One thread's share of a batch pass: made with the GIL (its scratch),
    run() without it, on any thread, finish() with it: the run's outputs
    (a list, in the order the pass defines), or its error raised.
    Subclasses define both; a run is one thread's (its scratch is)."""
    cdef void run(self) noexcept nogil:
        pass

    cdef list finish(self):
        return []


cdef void _run_one(void* run) noexcept nogil:
    (<CRun>run).run()


# Not tracked by the cycle collector: its references to the runs then count
# as external, so a cycle that holds it can never clear (tp_clear) the runs,
# their scratch or their outputs while its C threads still use them; its own
# dealloc waits for them first.
@cython.no_gc
cdef class RunsStarted:
    """CRuns (one per thread) started on this process's C threads; results()
    waits for them without the GIL, then gives their finish()es' outputs in
    the runs' order (raising the first error). One run is run here, at
    once: no thread to wake. A forked child starts a pool of its own; runs
    in flight at a fork are the parent's (results() raises in the child)."""
    cdef list runs
    cdef la_group* group
    cdef bint waited
    cdef long pid

    def __cinit__(self):
        self.group = la_group_new()
        if self.group == NULL:
            raise MemoryError()

    def __init__(self, runs):
        self.runs = list(runs)
        for run in self.runs:
            if not isinstance(run, CRun):
                raise TypeError(f"RunsStarted takes CRuns, got {type(run).__name__}")
        if len({id(run) for run in self.runs}) != len(self.runs):
            raise ValueError("RunsStarted: a run given twice (its scratch is one "
                             "thread's): make one run per thread")
        cdef CRun each_run
        for each_run in self.runs:
            if each_run.busy:
                raise ValueError("RunsStarted: a run already started and not waited for (its "
                                 "scratch is one thread's): make one run per thread")
        for each_run in self.runs:
            each_run.busy = True
        self.pid = la_pid()
        cdef vector[void*] args
        cdef size_t k
        for each in self.runs:
            args.push_back(<void*>each)
        if args.size() > 1 and la_run(_run_one, args.data(), <int>args.size(), self.group) == 0:
            return
        with nogil:  # (one run, or no thread could be started: here, one after the other)
            for k in range(args.size()):
                _run_one(args[k])
        self._done()

    cdef void _done(self):
        cdef CRun run
        self.waited = True
        for run in self.runs:
            run.busy = False

    def __dealloc__(self):
        if self.group != NULL:
            if not self.waited and self.pid != la_pid():
                return  # (a parent's, in a forked child: its threads are not here; kept)
            if not self.waited:  # (abandoned: its threads still use the runs)
                with nogil:
                    la_wait(self.group)
                self._done()
            la_group_free(self.group)

    def results(self) -> list:
        if not self.waited:
            if self.pid != la_pid():
                raise RuntimeError("these runs were started in the parent process before a "
                                   "fork and never finish here: start them again in this one")
            with nogil:
                la_wait(self.group)
            self._done()
        cdef CRun run
        out = []
        for run in self.runs:
            out.extend(run.finish())
        return out


def ranges_by_cost(costs, int threads):
    """Contiguous ranges [lo, hi) over the items for `threads` threads (as
    many as batch.ranges_for cuts) holding about equal shares of the items'
    total cost, not equal counts: where an item's work grows faster than
    its length (a phrase recogniser's unit), equal counts leave one thread
    the long units. A range ends at the first item past each equal share
    of the cost. In C: a batch's numpy calls cost more than the cut."""
    cdef const double[::1] c = numpy.ascontiguousarray(costs, dtype="float64").reshape(-1)
    cdef Py_ssize_t n = c.shape[0], i, j, lo = 0, parts, size
    if threads <= 1 or n < 2:
        return [(0, n)]
    parts = min(n, threads * CHUNKS_PER_THREAD)
    cdef double total = 0.0, share, cum = 0.0
    for i in range(n):
        total += c[i]
    if not total > 0.0:  # (no cost: equal counts, as batch.ranges_for)
        size = (n + parts - 1) // parts
        return [(a, min(n, a + size)) for a in range(0, n, size)]
    cdef list out = []
    i, j = 0, 1
    while j < parts:
        share = total * j / parts
        while i < n and cum + c[i] <= share:  # (i: the first item whose running sum passes it)
            cum += c[i]
            i += 1
        hi = min(max(i, 1), n - 1)
        if hi > lo:
            out.append((lo, hi))
            lo = hi
        j += 1
    out.append((lo, n))
    return out
