# cython: language_level=3
# distutils: sources = csrc/lib/common/id_rows.c csrc/lib/common/bytelevel_read.c
# distutils: depends = csrc/lib/common/id_rows.h csrc/lib/common/bytelevel_read.h csrc/lib/common/hash.h csrc/lib/common/compact_slots.h csrc/lib/common/json_text.h
"""JSON tables of ids in C: a tokenizer file's merges read into an ``array('I')`` without a
Python object per number, and written back (csrc/lib/common/id_rows.h says why); and the
vocabularies and merges of byte-level BPE files (HF's tokenizer.json, GPT-2's encoder.json and
vocab.bpe) read as token bytes and arrays of ids (csrc/lib/common/bytelevel_read.h).

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

cdef extern from *:
    """
    /* glibc keeps memory freed in the middle of its heap (and raises the size from which it
     * maps large blocks apart each time one is freed): the reading of a million merges left
     * 70 MB of its freed text, vocabulary and merges there, which building the tokenizer did
     * not reuse. malloc_trim hands the free pages back; elsewhere there is nothing to do. */
    #if defined(__GLIBC__)
    #include <malloc.h>
    static void fbpe_trim_heap(void) { malloc_trim(0); }
    #else
    static void fbpe_trim_heap(void) {}
    #endif
    """
    void fbpe_trim_heap() nogil

cdef extern from "lib/common/id_rows.h":
    int fbpe_id_rows_read(const void *text, int kind, size_t n, size_t pos, size_t width, uint32_t *out,
                          size_t *rows, size_t *end) nogil
    size_t fbpe_id_rows_room(size_t num, size_t width, size_t sep_len) nogil
    size_t fbpe_id_rows_write(const uint32_t *ids, size_t num, size_t width, const uint8_t *sep,
                              size_t sep_len, uint8_t *out) nogil

cdef extern from "lib/common/json_text.h":
    int FBPE_JSON_UTF8

cdef extern from "lib/common/bytelevel_read.h":
    ctypedef struct fbpe_bl_vocab:
        uint8_t *bytes
        uint32_t *off
        uint32_t *ids
        size_t num
    void fbpe_bl_vocab_free(fbpe_bl_vocab *v) nogil
    int fbpe_bl_vocab_read(const void *text, int kind, size_t n, size_t pos, size_t max_entries,
                           size_t max_token_bytes, fbpe_bl_vocab *v, size_t *end) nogil
    long long fbpe_bl_vocab_find(const fbpe_bl_vocab *v, const uint8_t *s, size_t len) nogil
    int fbpe_bl_merges_read(const void *text, int kind, size_t n, size_t pos, const fbpe_bl_vocab *v,
                            size_t max_entries, uint32_t **out, size_t *num, size_t *end) nogil
    int fbpe_bl_lines_read(const void *text, int kind, size_t n, const fbpe_bl_vocab *v,
                           size_t max_entries, uint32_t **out, size_t *num) nogil
    int fbpe_bl_table(const fbpe_bl_vocab *v, uint8_t *removed, int unreached, const uint32_t *pairs,
                      size_t num, uint32_t *byte_ids, uint32_t *table, uint32_t *merge_ids,
                      uint32_t *joins, size_t *num_tokens, size_t *num_joins) nogil

from libc.stdlib cimport free
from libc.string cimport memcpy, memset

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


cdef int _BL_OK = 0, _BL_ENOMEM = -1


cdef class ByteLevelVocab:
    """A byte-level vocabulary read by :func:`read_bytelevel_vocab`: entry k is a token's bytes
    and its id, in the file's order."""
    cdef fbpe_bl_vocab v

    def __dealloc__(self):
        fbpe_bl_vocab_free(&self.v)

    def __len__(self):
        return self.v.num

    def token(self, size_t k):
        """The bytes of entry k."""
        if k >= self.v.num:
            raise IndexError(k)
        return PyBytes_FromStringAndSize(<const char *>self.v.bytes + self.v.off[k], self.v.off[k + 1] - self.v.off[k])

    def id(self, size_t k):
        """The id of entry k."""
        if k >= self.v.num:
            raise IndexError(k)
        return self.v.ids[k]

    def find(self, bytes data):
        """The entry whose bytes are ``data``, or -1."""
        return fbpe_bl_vocab_find(&self.v, <const uint8_t *>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


cdef object _ids_array(uint32_t *ids, size_t num):
    """An array('I') of ids[0..num), then ids freed."""
    cdef array out
    try:
        out = clone(_IDS, num, False)
        if num:
            memcpy(out.data.as_uints, ids, num * sizeof(uint32_t))
        return out
    finally:
        free(ids)


cdef const void *_json_text(object text, int *kind, size_t *n) except NULL:
    """The buffer of a str (its kind) or of UTF-8 bytes (FBPE_JSON_UTF8), for the readers."""
    if isinstance(text, bytes):
        kind[0] = FBPE_JSON_UTF8
        n[0] = PyBytes_GET_SIZE(text)
        return PyBytes_AS_STRING(text)
    if not isinstance(text, str):
        raise TypeError(f"a str or UTF-8 bytes, not {type(text).__name__}")
    kind[0] = PyUnicode_KIND(text)
    n[0] = len(text)
    return PyUnicode_DATA(text)


def read_bytelevel_vocab(text, Py_ssize_t pos, size_t max_entries, size_t max_token_bytes):
    """The JSON object of byte-level "token": id entries at ``text[pos:]`` (a str, or the
    UTF-8 bytes of a file: ``pos`` and the end then count bytes), as ``(a ByteLevelVocab, the
    index just past it)``; None when it is not strictly that (then parse it as JSON).

    >>> vocab, end = read_bytelevel_vocab('{"a": 5, "\\u0120b": 7} ', 0, 10, 10)
    >>> [(vocab.token(k), vocab.id(k)) for k in range(len(vocab))], end, vocab.find(b" b")
    ([(b'a', 5), (b' b', 7)], 17, 1)
    >>> read_bytelevel_vocab('{"a b": 5}', 0, 10, 10) is None
    True
    >>> read_bytelevel_vocab('{"\u0120b": 7}'.encode(), 0, 10, 10)[1]  # two bytes of UTF-8
    12
    """
    cdef ByteLevelVocab vocab = ByteLevelVocab()
    cdef size_t end = 0, n = 0
    cdef int kind = 0, rc
    cdef const void *data = _json_text(text, &kind, &n)
    if pos < 0 or <size_t>pos > n:
        return None
    with nogil:
        rc = fbpe_bl_vocab_read(data, kind, n, pos, max_entries, max_token_bytes, &vocab.v, &end)
    if rc == _BL_ENOMEM:
        raise MemoryError("reading a vocabulary")
    return (vocab, end) if rc == _BL_OK else None


def read_bytelevel_merges(text, Py_ssize_t pos, ByteLevelVocab vocab, size_t max_entries):
    """HF's merges (``"left right"`` strings or ``["left", "right"]`` pairs) at ``text[pos:]``
    (a str or UTF-8 bytes, as read_bytelevel_vocab) as ``(array('I') of the two entries of
    each merge in turn, the index just past them)``; None when they are not strictly that, or
    name a token not in ``vocab``.

    >>> vocab, _ = read_bytelevel_vocab('{"a": 0, "b": 1, "ab": 2}', 0, 10, 10)
    >>> read_bytelevel_merges('["a b", ["a", "ab"]]', 0, vocab, 10)
    (array('I', [0, 1, 0, 2]), 20)
    """
    cdef size_t end = 0, num = 0, n = 0
    cdef uint32_t *out = NULL
    cdef int kind = 0, rc
    cdef const void *data = _json_text(text, &kind, &n)
    if pos < 0 or <size_t>pos > n:
        return None
    with nogil:
        rc = fbpe_bl_merges_read(data, kind, n, pos, &vocab.v, max_entries, &out, &num, &end)
    if rc == _BL_ENOMEM:
        raise MemoryError("reading merges")
    return (_ids_array(out, 2 * num), end) if rc == _BL_OK else None


def read_bytelevel_lines(str text, ByteLevelVocab vocab, size_t max_entries):
    """GPT-2's vocab.bpe (an optional ``#version`` line, then a ``left right`` merge a line) as
    an array('I') of the two entries of each merge; None when it is not strictly that.

    >>> vocab, _ = read_bytelevel_vocab('{"a": 0, "b": 1, "ab": 2}', 0, 10, 10)
    >>> read_bytelevel_lines("#version: 0.2\\na b\\n\\n", vocab, 10)
    array('I', [0, 1])
    """
    cdef size_t num = 0, n = len(text)
    cdef uint32_t *out = NULL
    cdef const void *data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text), rc
    with nogil:
        rc = fbpe_bl_lines_read(data, kind, n, &vocab.v, max_entries, &out, &num)
    if rc == _BL_ENOMEM:
        raise MemoryError("reading merges")
    return _ids_array(out, 2 * num) if rc == _BL_OK else None


def bytelevel_table(ByteLevelVocab vocab, const uint32_t[::1] pairs, bytearray removed=None):
    """The merge table of ``vocab`` and its merges (``pairs``: two entries a merge), as
    formats/hf.py ``_merge_table`` makes it: ``(byte_ids, table, merge_ids, joins, removed)``,
    the first four array('I') (table two ids a token, joins three), ``removed`` one byte an
    entry. ``removed`` given: those entries are not tokens (added tokens kept in the
    vocabulary); None: every entry that is neither a byte nor made by a merge is removed (GPT-2's
    special tokens). None when the table is not one (the Python reading then says why).

    >>> vocab, _ = read_bytelevel_vocab('{"a": 0, "b": 1, "ab": 2}', 0, 10, 10)
    >>> from array import array
    >>> bytelevel_table(vocab, array("I", [0, 1])) is None  # not every byte is a token
    True
    """
    cdef size_t nv = vocab.v.num, num, k, num_tokens = 0, num_joins = 0
    cdef int rc, unreached = removed is None
    if pairs.shape[0] % 2:
        raise ValueError("pairs holds two entries a merge")
    num = pairs.shape[0] // 2
    for k in range(2 * num):
        if pairs[k] >= nv:
            raise ValueError(f"entry {pairs[k]} of a vocabulary of {nv}")
    if removed is None:
        removed = bytearray(nv)
    elif <size_t>len(removed) != nv:
        raise ValueError(f"removed holds {len(removed)} entries, the vocabulary {nv}")
    cdef array byte_ids = clone(_IDS, 256, True)
    cdef array table = clone(_IDS, 2 * num + 2, False)
    cdef array merge_ids = clone(_IDS, num + 1, False)
    cdef array joins = clone(_IDS, 3 * num + 1, False)
    cdef uint8_t[::1] gone = removed
    cdef uint8_t *gone_p = &gone[0] if nv else NULL
    cdef const uint32_t *pair_p = &pairs[0] if num else NULL
    with nogil:
        rc = fbpe_bl_table(&vocab.v, gone_p, unreached, pair_p, num, byte_ids.data.as_uints,
                           table.data.as_uints, merge_ids.data.as_uints, joins.data.as_uints,
                           &num_tokens, &num_joins)
    if rc == _BL_ENOMEM:
        raise MemoryError("building a merge table")
    if rc != _BL_OK:
        return None
    del table[2 * num_tokens:]
    del merge_ids[num_tokens:]
    del joins[3 * num_joins:]
    return byte_ids, table, merge_ids, joins, removed


def trim_heap():
    """Give the pages of memory freed by a large reading back to the system (glibc's
    malloc_trim; nothing elsewhere): called between reading a large vocabulary and building
    its tokenizer, so that the two do not add up."""
    with nogil:
        fbpe_trim_heap()
