# cython: language_level=3
# distutils: sources = csrc/lib/count/counts_sum.c csrc/lib/common/piecetable.c
# distutils: depends = csrc/lib/common/bounds.h csrc/lib/common/hash.h csrc/lib/common/piecetable.h csrc/lib/count/counts_sum.h csrc/piecetable.pxd csrc/status.pxd
"""Adding counted tables together in C: the merge of piece counts made anywhere.

A :class:`CountsSum` holds one piece hash table (csrc/lib/common/piecetable.h) and adds flat tables
into it (csrc/lib/count/counts_sum.c): memory is the result's, plus the one table being added, and no
Python object is made per piece. Pieces come out in order of first appearance over the
tables in the order they were added; a sum past 2^63 - 1 is an ``OverflowError``.

    >>> from array import array
    >>> t = CountsSum()
    >>> t.add(b"abc", array("q", [0, 1, 3]), array("q", [2, 1]))
    >>> t.add(b"bcd", array("q", [0, 2, 3]), array("q", [5, 1]))
    >>> data, offsets, counts = t.flat()
    >>> data, list(offsets), list(counts)
    (b'abcd', [0, 1, 3, 4], [2, 6, 1])
"""
from cpython cimport array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcpy

from piecetable cimport fbpe_entry, fbpe_entry_bytes, fbpe_table, fbpe_table_free, fbpe_table_init, fbpe_table_memory
from status cimport FBPE_EINVALID, FBPE_EOVERFLOW, check, fbpe_status

import array as pyarray


cdef extern from "lib/count/counts_sum.h":
    fbpe_status fbpe_counts_add(fbpe_table *t, uint64_t table, const uint8_t *data, size_t data_len,
                               const int64_t *offsets, const int64_t *counts, size_t n,
                               size_t *bad) nogil


cdef class CountsSum:
    """Piece counts added together (see the module's docstring). After an error the sum
    may hold part of a table, and refuses further use."""
    cdef fbpe_table table
    cdef bint broken
    cdef uint64_t added  # tables added so far: the next one is number added + 1

    def __cinit__(self):
        fbpe_table_init(&self.table)

    def __dealloc__(self):
        fbpe_table_free(&self.table)

    def __len__(self):
        return self.table.size

    def add(self, const uint8_t[::1] data not None, const int64_t[::1] offsets not None,
            const int64_t[::1] counts not None):
        """Add a flat table: ``offsets`` (n + 1) and ``counts`` (n) as ``array('q')``."""
        cdef size_t n = counts.shape[0], bad = 0
        cdef fbpe_status status
        cdef const uint8_t *p = &data[0] if data.shape[0] else <const uint8_t *>b""
        if self.broken:
            raise ValueError("this sum failed earlier and holds part of a table")
        if <size_t>offsets.shape[0] != n + 1:
            raise ValueError(f"{offsets.shape[0]} offsets for {n} counts; there must be one more")
        with nogil:
            status = fbpe_counts_add(&self.table, self.added + 1, p, data.shape[0], &offsets[0],
                                    &counts[0] if n else <const int64_t *>NULL, n, &bad)
        if status < 0:
            self.broken = True
        self.added += 1
        check(status, "while adding piece counts", _why(status, bad, offsets, counts))

    def flat(self):
        """``(data, offsets, counts)``: the sums, flat, in order of first appearance."""
        cdef size_t k, n = self.table.size, total = 0, at = 0
        cdef const fbpe_entry *e
        if self.broken:
            raise ValueError("this sum failed earlier and holds part of a table")
        for k in range(n):
            total += self.table.entries[k].len
        data = PyBytes_FromStringAndSize(NULL, total)
        offsets = array.clone(pyarray.array("q"), n + 1, False)
        counts = array.clone(pyarray.array("q"), n, False)
        cdef char *out = PyBytes_AS_STRING(data)
        cdef long long *offs = offsets.data.as_longlongs
        cdef long long *cnts = counts.data.as_longlongs
        with nogil:
            for k in range(n):
                e = &self.table.entries[k]
                offs[k] = at
                cnts[k] = <long long>e.count
                memcpy(out + at, fbpe_entry_bytes(&self.table, e), e.len)
                at += e.len
            offs[n] = at
        return data, offsets, counts

    def memory(self):
        """Bytes held by the hash table."""
        return fbpe_table_memory(&self.table)


def _why(fbpe_status status, size_t bad, const int64_t[::1] offsets, const int64_t[::1] counts):
    if status == FBPE_EOVERFLOW:
        return f"piece {bad}: its counts add up past 2**63 - 1, the largest count"
    if status == FBPE_EINVALID:
        return f"piece {bad}: the table is not a count (an empty, unordered or repeated piece, or a count below 1)"
    return None
