from libc.stdint cimport uint64_t
from cymem.cymem cimport Pool

from ..core.features cimport MAX_CONJUNCTION
from ..core.weights cimport feat_t
from .parse_state cimport ParseStateC


cdef enum:
    MAX_GROUP_ATOMS = 256   # parser_templates.MAX_GROUP_ATOMS


cdef struct GroupAtomC:      # one atom a group reads: a column at a position
    int slot
    int column
    int bits                 # > 0: the first `bits` bits of a cluster path
    int flag                 # >= 0: that bit of the column


cdef struct GroupTemplateC:
    uint64_t id              # the hash seed
    int n                    # atoms in the conjunction
    int keep_zero            # an atom that is 0 is hashed as 0 (else: no feature)
    int reads_set            # reads a label set (lset / rset): see arc_standard.pyx family_bound
    int atom[MAX_CONJUNCTION]  # indices into the group's atoms


cdef struct FeatureGroupC:
    int n_atoms
    GroupAtomC* atoms
    int n_templates
    GroupTemplateC* templates


cdef class ParseFeatures:
    cdef readonly list templates            # the user's, read after the fixed set
    cdef readonly list structure_templates  # [(text, id, keep zero)]: parser_templates
    cdef readonly list label_templates
    cdef FeatureGroupC structure            # the templates that read no arc label
    cdef FeatureGroupC labels               # ... that do: one feature each
    cdef bint reads_second                  # structure templates read s0l2 .. s1r2
    cdef Pool mem                           # the groups' arrays

    cdef int extract_structure(self, feat_t* f, const ParseStateC* s) noexcept nogil
    cdef int extract_labels(self, feat_t* f, const ParseStateC* s) noexcept nogil
    cdef int label_values(self, uint64_t* values, const ParseStateC* s) noexcept nogil
    cdef feat_t label_value_feature(self, const uint64_t* values, int position) noexcept nogil
    cdef bint label_values_differ(self, const uint64_t* a, const uint64_t* b, int position
                                  ) noexcept nogil
    cdef bint label_family(self, feat_t* out, const uint64_t* at0, const uint64_t* at1,
                           int position, int n_labels) noexcept nogil
    cdef feat_t label_feature(self, const ParseStateC* s, int position) noexcept nogil
    cdef int label_atoms(self, uint64_t* values, const ParseStateC* s, int position) noexcept nogil
    cdef feat_t label_hash(self, const uint64_t* values, int position) noexcept nogil
