from .beam cimport Beam
from .instance cimport Instance
from .search cimport Workspace

cdef Workspace workspace_for(Workspace ws, Instance inst, int depth)
cdef Beam beam_for(Beam beam, Instance inst, int width)
