# A hash map from 64-bit keys to pointers that one thread writes while any
# number of threads read it, with no lock: the word cache that a batch's
# search threads read while the thread that makes the next batch adds the
# words it has not seen (spacy_io.WordCache).
#
# How: open addressing (linear probing). A writer stores a cell's value,
# then publishes its key (release); a reader that sees the key (acquire)
# sees the value. A key, once in, never changes or leaves. A full table is
# copied into one twice as large, which is then published whole (release);
# the old tables stay readable (chained on `older`) until the map is freed,
# as a reader may still be probing one (at most as much memory again as the
# newest table). A reader that misses a key added at that moment sees it
# absent: the readers here treat absent as "not yet" and leave that doc to
# the writer.
#
# Writers: one at a time (the caller's lock). Key 0 has a cell of its own.

from libc.stdint cimport uint64_t

cdef extern from *:
    """
    #include <stdint.h>
    #include <stdlib.h>
    #ifdef _MSC_VER  /* the Interlocked intrinsics: full barriers, so acquire/release too */
    #include <intrin.h>
    static inline uint64_t la_rm_load_key(const uint64_t* p) {
        return (uint64_t)_InterlockedOr64((volatile __int64*)p, 0);
    }
    static inline void la_rm_store_key(uint64_t* p, uint64_t v) {
        _InterlockedExchange64((volatile __int64*)p, (__int64)v);
    }
    static inline void* la_rm_load_ptr(void** p) {
        return _InterlockedCompareExchangePointer((void* volatile*)p, NULL, NULL);
    }
    static inline void la_rm_store_ptr(void** p, void* v) {
        _InterlockedExchangePointer((void* volatile*)p, v);
    }
    #else
    static inline uint64_t la_rm_load_key(const uint64_t* p) {
        return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    }
    static inline void la_rm_store_key(uint64_t* p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
    }
    static inline void* la_rm_load_ptr(void** p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void la_rm_store_ptr(void** p, void* v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    #endif

    typedef struct { uint64_t key; void* value; } la_rm_cell;
    typedef struct la_rm_table {
        la_rm_cell* cells;
        size_t mask;                /* cells - 1 (a power of two) */
        size_t filled;
        struct la_rm_table* older;  /* kept readable until la_rm_free */
    } la_rm_table;
    typedef struct {
        void* table;  /* la_rm_table*, NULL while empty (void*: the atomics take void**) */
        void* zero;   /* key 0's value */
        size_t size;  /* keys in (the writer's count) */
    } la_readmap;

    /* key's value, or NULL: any thread, any time */
    static inline void* la_rm_get(la_readmap* m, uint64_t key) {
        if (key == 0)
            return la_rm_load_ptr(&m->zero);
        la_rm_table* t = (la_rm_table*)la_rm_load_ptr(&m->table);
        if (t == NULL)
            return NULL;
        size_t i = (size_t)key & t->mask;
        for (;;) {
            uint64_t k = la_rm_load_key(&t->cells[i].key);
            if (k == key)
                return t->cells[i].value;  /* (stored before its key was published) */
            if (k == 0)
                return NULL;
            i = (i + 1) & t->mask;
        }
    }

    static inline void la_rm_place(la_rm_table* t, uint64_t key, void* value) {
        size_t i = (size_t)key & t->mask;
        while (t->cells[i].key != 0)
            i = (i + 1) & t->mask;
        t->cells[i].value = value;
        la_rm_store_key(&t->cells[i].key, key);
        t->filled++;
    }

    /* key -> value for a key not in the map (the writer: one at a time);
       0, or -1 where there is no memory (the map as it was) */
    static inline int la_rm_add(la_readmap* m, uint64_t key, void* value) {
        if (key == 0) {
            la_rm_store_ptr(&m->zero, value);
            m->size++;
            return 0;
        }
        la_rm_table* t = (la_rm_table*)m->table;
        if (t == NULL || (t->filled + 1) * 2 > t->mask + 1) {  /* at most half full */
            size_t cells = t == NULL ? 64 : (t->mask + 1) * 2, i;
            la_rm_table* grown = (la_rm_table*)calloc(1, sizeof(la_rm_table));
            if (grown == NULL)
                return -1;
            grown->cells = (la_rm_cell*)calloc(cells, sizeof(la_rm_cell));
            if (grown->cells == NULL) {
                free(grown);
                return -1;
            }
            grown->mask = cells - 1;
            grown->older = t;
            for (i = 0; t != NULL && i <= t->mask; i++)
                if (t->cells[i].key != 0)
                    la_rm_place(grown, t->cells[i].key, t->cells[i].value);
            la_rm_store_ptr(&m->table, grown);  /* (whole before any reader sees it) */
            t = grown;
        }
        la_rm_place(t, key, value);
        m->size++;
        return 0;
    }

    /* every table (no reader left: the owner's dealloc) */
    static inline void la_rm_free(la_readmap* m) {
        la_rm_table* t = (la_rm_table*)m->table;
        while (t != NULL) {
            la_rm_table* older = t->older;
            free(t->cells);
            free(t);
            t = older;
        }
        m->table = NULL;
        m->zero = NULL;
        m->size = 0;
    }
    """
    ctypedef struct la_readmap:
        size_t size
    void* la_rm_get(la_readmap* m, uint64_t key) nogil
    int la_rm_add(la_readmap* m, uint64_t key, void* value) nogil
    void la_rm_free(la_readmap* m) nogil
