# The piece hash table of csrc/lib/common/piecetable.h, as the Cython modules that hold one see it
# (cimported by _scanner.pyx and _functional.pyx; each names piecetable.c in its sources).
from libc.stdint cimport uint8_t, uint64_t

from status cimport fbpe_status


cdef extern from "lib/common/piecetable.h":
    ctypedef struct fbpe_entry:
        uint64_t count
        uint64_t len
    ctypedef struct fbpe_table:
        fbpe_entry *entries
        size_t size
    void fbpe_table_init(fbpe_table *t)
    void fbpe_table_free(fbpe_table *t) nogil
    fbpe_status fbpe_merge_in_order(fbpe_table *out, fbpe_table *const *ins, size_t count) nogil
    fbpe_status fbpe_order_tables(const fbpe_table *tables, size_t count, uint64_t *order) nogil
    const uint8_t *fbpe_entry_bytes(const fbpe_table *t, const fbpe_entry *e) nogil
    size_t fbpe_table_memory(const fbpe_table *t)
