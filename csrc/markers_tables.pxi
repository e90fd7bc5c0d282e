# The compiled boundary-marker scheme (csrc/lib/markers.h), for the modules that hold a copy
# of it: _scanner (pieces, counting) and _encoder (encoding). Each copy has tables of its own
# to point at; they are measured once per process (functionalbpe/markerclasses.py), on the
# first use of the scheme, not at import.

from libc.stdint cimport int32_t, uint16_t


cdef extern from "lib/markers.h":
    ctypedef struct fbpe_mk_map:
        const uint16_t *index
        const int32_t *blocks
    ctypedef struct fbpe_mk_tables:
        const uint8_t *classes
        fbpe_mk_map lower
        fbpe_mk_map upper
        fbpe_mk_map sigma
    void fbpe_mk_install(const fbpe_mk_tables *t)
    int fbpe_mk_installed()
    ctypedef int (*fbpe_mk_sink)(void *ctx, const uint8_t *piece, size_t len, size_t readable,
                                 size_t at) noexcept nogil
    int fbpe_mk_pieces(int options, const uint8_t *s, size_t n, fbpe_mk_sink emit, void *ctx) nogil
    int fbpe_mk_case_code(const uint8_t *s, size_t n, uint8_t *out, size_t *out_len) nogil


# The tables the C code points at, kept alive for good once installed.
_markers_tables = None


cdef fbpe_mk_map _two_level(table):
    cdef fbpe_mk_map m
    cdef const uint16_t[::1] index = table.index
    cdef const int32_t[::1] blocks = table.blocks
    m.index = &index[0]
    m.blocks = &blocks[0]
    return m


cdef int install_markers() except -1:
    """Point this module's copy of the scanner at its tables (idempotent: installing twice
    writes the same pointers)."""
    global _markers_tables
    if fbpe_mk_installed():
        return 0
    from functionalbpe.schemes.markerclasses import case_maps, unit_class_table

    classes = unit_class_table()
    maps = case_maps()
    cdef fbpe_mk_tables t
    t.classes = <const uint8_t *>PyBytes_AS_STRING(classes)
    t.lower = _two_level(maps.lower)
    t.upper = _two_level(maps.upper)
    t.sigma = _two_level(maps.sigma)
    _markers_tables = (classes, maps)
    fbpe_mk_install(&t)
    return 0


def markers_scanner_names():
    """``{"markers[w,p,↑]": options, ...}``: the scheme's name (BoundaryMarkers.name) for each
    of the eight combinations of the options (csrc/lib/markers.h's bits)."""
    names = {}
    for options in range(8):
        kinds = ["w"] + ["p"] * (options & 1) + ["d"] * (options >> 1 & 1) + ["↑"] * (options >> 2 & 1)
        names["markers[" + ",".join(kinds) + "]"] = options
    return names
