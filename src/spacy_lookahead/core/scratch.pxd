# Scratch memory that one thread writes while others run: a search's
# workspace, a beam, a chain. cymem's Pool takes its blocks from pymalloc by
# default, which packs small blocks of different owners side by side: two
# threads' workspaces made one after the other then share cache lines, and
# every write of a search state by one thread takes the line from the other
# (false sharing: two threads decoded a tagger's batches 1.5-1.6x as fast as
# one; with Python's malloc in place of pymalloc, 1.8-1.9x). These blocks
# start on a line of their own and fill whole lines, from the calling
# thread's malloc arena.
from cymem.cymem cimport Pool, WrapFree, WrapMalloc

cdef extern from *:
    """
    #include <stdlib.h>
    #ifdef _MSC_VER
    #include <malloc.h>
    #endif
    #define LA_LINE 64
    static void* la_line_malloc(size_t n) {
        size_t size = ((n ? n : 1) + LA_LINE - 1) & ~(size_t)(LA_LINE - 1);
        void* p = NULL;
    #ifdef _MSC_VER
        p = _aligned_malloc(size, LA_LINE);
    #else
        if (posix_memalign(&p, LA_LINE, size) != 0)
            p = NULL;
    #endif
        return p;
    }
    static void la_line_free(void* p) {
    #ifdef _MSC_VER
        _aligned_free(p);
    #else
        free(p);
    #endif
    }
    """
    void* la_line_malloc(size_t n) nogil
    void la_line_free(void* p) nogil


cdef inline Pool scratch_pool():
    """A Pool whose blocks each take whole cache lines of their own."""
    return Pool(WrapMalloc(la_line_malloc), WrapFree(la_line_free))
