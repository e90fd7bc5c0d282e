# cython: language_level=3
# distutils: sources = csrc/lib/common/id_rows.c
# distutils: depends = csrc/lib/common/id_rows.h
"""JSON tables of ids in C: a tokenizer file's merges read into an ``array('I')`` without a
Python object per number, and written back (csrc/lib/common/id_rows.h says why).

>>> ids, end = read_id_rows('{"m": [[104, 105], [256,33]]}', 6, 2)
>>> ids.tolist(), end
([104, 105, 256, 33], 28)
>>> read_id_rows('[[1, 2.5]]', 0, 2) is None, write_id_rows(ids, 2, b",", 0, 2)
(True, b'[104,105],[256,33]')
"""
from cpython.array cimport array, clone
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.ref cimport PyObject
from libc.stdint cimport uint8_t, uint32_t

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    int _PyBytes_Resize(PyObject **b, Py_ssize_t size) except -1
    void incref "Py_INCREF"(PyObject *o)
    void decref "Py_DECREF"(PyObject *o)

cdef extern from "lib/common/id_rows.h":
    int fbpe_id_rows_read(const void *text, int kind, size_t n, size_t pos, size_t width, uint32_t *out,
                          size_t *rows, size_t *end) nogil
    size_t fbpe_id_rows_room(size_t num, size_t width, size_t sep_len) nogil
    size_t fbpe_id_rows_write(const uint32_t *ids, size_t num, size_t width, const uint8_t *sep,
                              size_t sep_len, uint8_t *out) nogil

cdef array _IDS = array("I")


def read_id_rows(str text, Py_ssize_t pos, Py_ssize_t width):
    """The JSON array of rows of ``width`` ids at ``text[pos:]`` (whitespace before it
    allowed), as ``(array('I') of the ids row after row, the index just past it)``; None
    when it is not strictly that (then parse it as JSON)."""
    cdef size_t rows = 0, end = 0, n = len(text)
    cdef const void *data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text)
    if pos < 0 or width < 1 or <size_t>pos > n:
        return None
    if not fbpe_id_rows_read(data, kind, n, pos, width, NULL, &rows, &end):
        return None
    # Counted first, then read into an array of exactly that size: the text is read twice
    # (0.1 s for 61 MB), and no growing array holds twice the ids at a time.
    cdef array ids = clone(_IDS, rows * width, False)
    if rows:
        fbpe_id_rows_read(data, kind, n, pos, width, ids.data.as_uints, &rows, &end)
    return ids, end


def write_id_rows(const uint32_t[::1] ids, size_t width, bytes sep, size_t start, size_t stop):
    """Rows ``start`` to ``stop`` of ``ids`` (``width`` ids a row) as compact JSON rows
    joined by ``sep``: what json.dumps writes of them with separators ``(",", ":")``."""
    cdef size_t num, room, got
    cdef PyObject *raw
    cdef const uint32_t *rows
    cdef const uint8_t *between
    cdef size_t between_len
    cdef uint8_t *dst
    if width < 1 or stop < start or stop * width > <size_t>ids.shape[0]:
        raise ValueError(f"rows {start}..{stop} of width {width} are not in {ids.shape[0]} ids")
    num = stop - start
    room = fbpe_id_rows_room(num, width, PyBytes_GET_SIZE(sep))
    if room > <size_t>(<Py_ssize_t>-1 >> 1):
        raise MemoryError(f"{num} rows do not fit in one bytes object")
    out = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>room)
    rows = &ids[start * width] if num else NULL
    between = <const uint8_t *>PyBytes_AS_STRING(sep)
    between_len = PyBytes_GET_SIZE(sep)
    dst = <uint8_t *>PyBytes_AS_STRING(out)
    with nogil:
        got = fbpe_id_rows_write(rows, num, width, between, between_len, dst)
    raw = <PyObject *>out
    incref(raw)
    out = None  # raw is the only reference: the bytes may shrink in place
    _PyBytes_Resize(&raw, <Py_ssize_t>got)
    out = <object>raw
    decref(raw)
    return out
