# cython: language_level=3
# distutils: sources = csrc/lib/count/functional.c csrc/lib/common/piecetable.c
# distutils: depends = csrc/lib/common/bounds.h csrc/lib/common/hash.h csrc/lib/common/utf8.h csrc/lib/count/functional.h csrc/lib/common/piecetable.h csrc/piecetable.pxd csrc/status.pxd csrc/utf8.pxd
"""The Functionalizer's description of distinct pieces, compiled.

``Functionalizer.describe`` (functionalbpe/schemes/functional.py) is the reference; this module
gives the same text-form pieces for nearly every piece, and hands the others to it.

Performance notes (what was tried, and why it is like this):

* Training describes each distinct raw piece once. In Python, with string methods mapped
  over all pieces at C speed to sort out the ones that need nothing, that took 0.5-1.2 s for
  the standard library's 131,707 distinct pieces, more than twice the plain trainer's whole
  run: most of it the per-piece self-check (decoding each description back) and one Python
  string per text-form piece. Here pieces are read from the counter's flat UTF-8 table and
  written to another; nothing makes a Python object per piece. Measured: about 30 ms.
* Adding every piece's forms to one hash table costs 45 ms, 40% of it inserting (each
  insertion a cache miss into a table of all pieces, and the table regrown). So the pieces
  that are their own text form (nine in ten) are only marked; the table holds the
  forms of the others and stays small, and a second pass looks the marked pieces up in it
  (a base ``hello`` of ``Hello`` that also occurs as ``hello``). The result is put in order
  of first occurrence by one sort of the small table, so that it is the pure-Python path's
  dict, order included.
* An ASCII piece is decided on its bytes first, in loops without branches (any byte >= 0x80?
  a capital? a run of 3?) and a prefix-function period scan that stops at the first prefix
  whose period is too long: most pieces are done before anything is decoded.
* Case and accents need Unicode data. Rather than a table of every code point built at
  import (a scan of all 1.1 million code points costs 0.2-0.5 s, more than the whole
  description), the plans of a Unicode block (256 code points) are asked from Python the
  first time a piece has a character of that block in its first 256 characters: a few dozen
  blocks in a real corpus, each computed by ``functional.block_plans`` with the reference's
  own code, and kept by the describer (one per set of options) for later calls.
* Pieces that need LITERAL, a plan that is more than a one-character substitution, or that
  fail the check are rare (none of the standard library's 131,707; 12 pieces of Chinese
  text in all the shared corpora); they go to the Python reference one by one, so the rare
  cases have one implementation.
"""
from cpython cimport array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_SetItem
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from piecetable cimport (
    fbpe_entry, fbpe_entry_bytes, fbpe_table, fbpe_table_free, fbpe_table_init,
)
from status cimport FBPE_ENOMEM, check, fbpe_status
from utf8 cimport utf8_bytes

import array as pyarray


cdef extern from "Python.h":
    dict _PyDict_NewPresized(Py_ssize_t n)


cdef extern from "lib/count/functional.h":
    enum:
        FBPE_MAX_PLAN_OPS
        FBPE_NOT_A_SUBSTITUTION
        FBPE_DESCRIBED
        FBPE_AS_IS
        FBPE_LEAVE
        FBPE_NEED_BLOCK
    ctypedef struct fbpe_char_plan:
        uint32_t letter
        uint32_t decoded
        uint8_t capitalized
        uint8_t num_ops
        uint8_t ops[4]
    ctypedef struct fbpe_describer:
        uint32_t need_block
        uint8_t *out
        size_t out_cap
        size_t *form_end
        size_t num_forms
    void fbpe_describer_init(fbpe_describer *d, int repeat, int split_operators)
    void fbpe_describer_free(fbpe_describer *d)
    fbpe_status fbpe_describer_add_block(fbpe_describer *d, uint32_t block, const uint32_t *cps,
                                         const fbpe_char_plan *plans, size_t n)
    int fbpe_describe(fbpe_describer *d, const uint8_t *s, size_t len)
    fbpe_status fbpe_count_form(fbpe_table *t, const uint8_t *p, size_t len, size_t readable,
                                uint64_t count, uint64_t first)
    uint64_t FBPE_FIRST(size_t i, size_t f)
    uint64_t FBPE_FORM_ENTRY
    int fbpe_describe_flat(fbpe_describer *d, fbpe_table *t, const uint8_t *data,
                           const int64_t *offsets, const int64_t *counts, size_t n, size_t *next,
                           uint8_t *as_is) nogil
    size_t fbpe_describe_merge(fbpe_table *t, const uint8_t *data, size_t data_len,
                               const int64_t *offsets, const int64_t *counts, size_t n,
                               uint8_t *as_is) nogil
    fbpe_status fbpe_describe_order(const fbpe_table *t, const uint8_t *as_is, size_t n,
                                    uint64_t *order) nogil


cdef class Describer:
    """Describes raw pieces as ``Functionalizer.describe`` does, and counts their text-form
    pieces.

    ``block_plans(block)`` gives the character plans of a Unicode block (see
    ``functional.block_plans``); blocks, once asked for, stay installed. The methods that
    describe many pieces take ``fallback(piece)``, the reference description, for what the
    compiled one leaves.

    The GIL is held throughout (the work is a few tens of milliseconds per table): so one
    describer may serve several threads, its scratch buffers used by one call at a time.

    >>> from functionalbpe.schemes.functional import Functionalizer
    >>> f = Functionalizer()
    >>> f._describer().describe_dict({"Hello": 2, "hello": 1}, f.describe)
    {'\\ue100\\ue000': 2, 'hello': 3}
    """
    cdef fbpe_describer d
    cdef object block_plans
    cdef readonly Py_ssize_t left  # pieces handed to a fallback, over all calls

    def __cinit__(self, bint repeat, bint split_operators, block_plans):
        fbpe_describer_init(&self.d, repeat, split_operators)
        self.block_plans = block_plans

    def __dealloc__(self):
        fbpe_describer_free(&self.d)

    cdef int _install(self, uint32_t block) except -1:
        plans = self.block_plans(block)
        cdef Py_ssize_t n = len(plans), k, m
        cdef uint32_t *cps = <uint32_t *>malloc((n if n else 1) * sizeof(uint32_t))
        cdef fbpe_char_plan *out = <fbpe_char_plan *>malloc((n if n else 1) * sizeof(fbpe_char_plan))
        cdef fbpe_status rc = FBPE_ENOMEM
        try:
            if not cps or not out:
                raise MemoryError()
            for k in range(n):
                cp, letter, decoded, capitalized, ops = plans[k]
                if cp >> 8 != block or not (0 <= letter <= 0x10FFFF and 0 <= decoded <= 0x10FFFF):
                    raise ValueError(f"plan {k} of block {block}: {(cp, letter, decoded)!r} are not its code points")
                cps[k] = cp
                out[k].letter = letter
                out[k].decoded = decoded
                out[k].capitalized = capitalized
                if ops is None or len(ops) > FBPE_MAX_PLAN_OPS:
                    out[k].num_ops = FBPE_NOT_A_SUBSTITUTION
                else:
                    out[k].num_ops = len(ops)
                    for m in range(len(ops)):
                        out[k].ops[m] = ops[m]
            rc = fbpe_describer_add_block(&self.d, block, cps, out, n)
        finally:
            free(cps)
            free(out)
        return check(rc, "while describing pieces", f"block {block} brings the plans past 65,535")

    cdef int _describe(self, const uint8_t *s, size_t n) except -1:
        """fbpe_describe, with the blocks it asks for installed on the way."""
        cdef int status
        while True:
            status = fbpe_describe(&self.d, s, n)
            if status == FBPE_NEED_BLOCK:
                self._install(self.d.need_block)
            else:
                return check(status, "while describing pieces")

    def describe(self, str piece not None):
        """The text-form pieces of one raw piece, or None where the reference must decide.

        >>> from functionalbpe.schemes.functional import Functionalizer
        >>> Functionalizer()._describer().describe("Hello") == ("\\ue100\\ue000", "hello")
        True
        """
        b = utf8_bytes(piece)
        cdef int status = self._describe(<const uint8_t *>PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))
        if status == FBPE_AS_IS:
            return (piece,)
        if status != FBPE_DESCRIBED:
            return None
        # Copied out before any object that the garbage collector tracks is made (which
        # could run Python code, and so another thread's describe).
        cdef size_t f, start = 0, n = self.d.num_forms
        ends = [self.d.form_end[f] for f in range(n)]
        out = PyBytes_FromStringAndSize(<const char *>self.d.out, self.d.form_end[n - 1])
        forms = []
        for f in range(n):
            forms.append(PyUnicode_DecodeUTF8(PyBytes_AS_STRING(out) + start, ends[f] - start, "surrogatepass"))
            start = ends[f]
        return tuple(forms)

    def describe_flat(self, data, offsets, counts, fallback):
        """The text-form pieces, counted, of distinct raw pieces laid out flat, both as a
        :class:`~functionalbpe.text.counting.PieceTable` holds them: ``(data, offsets, counts)``,
        piece ``i`` = ``data[offsets[i]:offsets[i + 1]]`` (UTF-8) occurring ``counts[i]``
        times; ``offsets`` and ``counts`` are ``array('q')``.

        In order of first occurrence: as a loop over the pieces in order, adding the forms
        of each in order, meets them.
        """
        return self._run(data, offsets, counts, None, fallback)

    def describe_dict(self, dict raw not None, fallback):
        """:meth:`describe_flat` of ``{piece: count}``, as a dict (same order)."""
        keys = list(raw)
        encoded = [utf8_bytes(key) for key in keys]
        offsets = array.clone(pyarray.array("q"), len(keys) + 1, False)
        cdef long long *offs = (<array.array>offsets).data.as_longlongs
        cdef Py_ssize_t k
        offs[0] = 0
        for k in range(len(keys)):
            offs[k + 1] = offs[k] + PyBytes_GET_SIZE(encoded[k])
        return self._run(b"".join(encoded), offsets, pyarray.array("q", raw.values()), keys, fallback)

    cdef object _run(self, data, offsets_buffer, counts_buffer, list keys, fallback):
        cdef const uint8_t[::1] text = data
        cdef const long long[::1] offsets = offsets_buffer
        cdef const long long[::1] counts = counts_buffer
        cdef size_t n = counts.shape[0], i, nxt = 0, kept
        if <size_t>offsets.shape[0] != n + 1:
            raise ValueError(f"{n} counts need {n + 1} offsets, got {offsets.shape[0]}")
        for i in range(n):
            if not 0 <= offsets[i] <= offsets[i + 1] <= text.shape[0] or counts[i] < 0:
                raise ValueError(f"piece {i}: offsets {offsets[i]}, {offsets[i + 1]} or count {counts[i]} "
                                 f"do not fit {text.shape[0]} bytes of data")
        cdef const uint8_t *base = &text[0] if text.shape[0] else <const uint8_t *>b""
        cdef const int64_t *offs = <const int64_t *>&offsets[0]
        cdef const int64_t *cnts = <const int64_t *>&counts[0] if n else NULL
        cdef uint8_t *as_is = <uint8_t *>calloc(n if n else 1, 1)
        cdef uint64_t *order = NULL
        cdef fbpe_table forms
        cdef int status
        fbpe_table_init(&forms)
        try:
            if not as_is:
                raise MemoryError()
            while nxt < n:
                status = fbpe_describe_flat(&self.d, &forms, base, offs, cnts, n, &nxt, as_is)
                if status == FBPE_NEED_BLOCK:
                    self._install(self.d.need_block)
                elif status == FBPE_LEAVE:
                    piece = keys[nxt] if keys is not None else PyUnicode_DecodeUTF8(
                        <const char *>base + offs[nxt], offs[nxt + 1] - offs[nxt], "surrogatepass")
                    self.left += 1
                    self._count_forms(&forms, fallback(piece), cnts[nxt], nxt)
                    nxt += 1
                else:
                    check(status, "while describing pieces")
            kept = fbpe_describe_merge(&forms, base, text.shape[0], offs, cnts, n, as_is)
            order = <uint64_t *>malloc((kept + forms.size + 1) * sizeof(uint64_t))
            if not order:
                raise MemoryError()
            check(fbpe_describe_order(&forms, as_is, n, order), "while describing pieces")
            if keys is not None:
                return self._dict(&forms, keys, cnts, order, kept + forms.size)
            return self._flat(&forms, base, offs, cnts, order, kept + forms.size)
        finally:
            free(as_is)
            free(order)
            fbpe_table_free(&forms)

    cdef int _count_forms(self, fbpe_table *t, forms, uint64_t count, size_t piece) except -1:
        """The fallback's forms of piece number ``piece``, into the table of forms."""
        cdef size_t f
        for f, form in enumerate(forms):
            b = utf8_bytes(form)
            check(fbpe_count_form(t, <const uint8_t *>PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b),
                                  PyBytes_GET_SIZE(b), count, FBPE_FIRST(piece, f if f < 4096 else 4095)),
                  "while describing pieces")
        return 0

    cdef object _flat(self, const fbpe_table *t, const uint8_t *base, const int64_t *offs,
                      const int64_t *cnts, const uint64_t *order, size_t size):
        cdef size_t i, k, total = 0, at = 0
        cdef const fbpe_entry *e
        for k in range(size):
            if order[k] & FBPE_FORM_ENTRY:
                total += t.entries[order[k] & ~FBPE_FORM_ENTRY].len
            else:
                total += offs[order[k] + 1] - offs[order[k]]
        data = PyBytes_FromStringAndSize(NULL, total)
        offsets = array.clone(pyarray.array("q"), size + 1, False)
        counts = array.clone(pyarray.array("q"), size, False)
        cdef char *out = PyBytes_AS_STRING(data)
        cdef long long *o = (<array.array>offsets).data.as_longlongs
        cdef long long *c = (<array.array>counts).data.as_longlongs
        with nogil:
            for k in range(size):
                o[k] = at
                if order[k] & FBPE_FORM_ENTRY:
                    e = &t.entries[order[k] & ~FBPE_FORM_ENTRY]
                    c[k] = <long long>e.count
                    memcpy(out + at, fbpe_entry_bytes(t, e), e.len)
                    at += e.len
                else:
                    i = order[k]
                    c[k] = cnts[i]
                    memcpy(out + at, base + offs[i], offs[i + 1] - offs[i])
                    at += offs[i + 1] - offs[i]
            o[size] = at
        return data, offsets, counts

    cdef object _dict(self, const fbpe_table *t, list keys, const int64_t *cnts, const uint64_t *order,
                      size_t size):
        cdef size_t k
        cdef const fbpe_entry *e
        out = _PyDict_NewPresized(size)
        for k in range(size):
            if order[k] & FBPE_FORM_ENTRY:
                e = &t.entries[order[k] & ~FBPE_FORM_ENTRY]
                PyDict_SetItem(out, PyUnicode_DecodeUTF8(<const char *>fbpe_entry_bytes(t, e), e.len,
                                                         "surrogatepass"), e.count)
            else:
                PyDict_SetItem(out, keys[order[k]], cnts[order[k]])
        return out
