# cython: language_level=3
# distutils: sources = csrc/lib/scan/scan.c csrc/lib/scan/cuts.c csrc/lib/scan/markers.c csrc/lib/common/piecetable.c csrc/lib/count/count.c csrc/lib/scan/specials.c csrc/lib/scan/regex_vm.c
# distutils: depends = csrc/lib/scan/regex_vm.h csrc/lib/common/bounds.h csrc/lib/common/hash.h csrc/lib/common/utf8.h csrc/lib/scan/scan.h csrc/lib/scan/scanners.h csrc/lib/scan/markers.h csrc/lib/scan/markers_scan.h csrc/lib/scan/splitter.h csrc/lib/count/count.h csrc/lib/scan/specials.h csrc/lib/common/piecetable.h csrc/piecetable.pxd csrc/status.pxd csrc/utf8.pxd
"""The pre-tokenization scanner and piece counter: the built-in patterns at memory speed.

This module owns the scanner: the C files that install its tables (csrc/lib/scan/scan.c,
csrc/lib/scan/markers.c) are compiled here only, the tables are measured and installed here once
per process, on first use, and the encoder borrows them (:func:`_classes_capsule`,
:func:`_markers_capsule`), inlining the scanners of csrc/lib/scan/scanners.h and
csrc/lib/scan/markers_scan.h into its own loops.

Performance notes (what was tried, and why it is like this):

* regex + Counter spends its time in the regex engine (backtracking alternation, one Python
  string per match) and in hashing those strings. Here each built-in pattern is a
  hand-written scanner (csrc/lib/scan/scanners.h) that reads every character once and knows in
  closed form where the regex's backtracking would stop; pieces go straight into a C hash
  table (csrc/lib/common/piecetable.c) as UTF-8 byte ranges, and a Python string is made once per
  distinct piece, at the end.
* Text is scanned as UTF-8, not as Python's 1/2/4-byte code units: the table keys are the
  bytes BPE trains on, an ASCII string's buffer is already UTF-8 (no copy), and a file
  unit needs no decoding at all, only a validity check.
* Character classes are one byte per code point, measured from the installed regex module
  (functionalbpe/unicode/charclasses.py): one load per character, no branches per category. A
  two-level table would be smaller (the flat one is 1.1 MB), but the hot part (ASCII, one
  script) stays in cache either way, and the flat one saves a dependent load.
* Short pieces (<= 16 bytes, nearly all) live inside their hash slot: a probe compares two
  words, and the key is read from the text with two unaligned loads and a mask.
* Parallelism: Python threads that each call into C with the GIL released, one table per
  thread, units of work (documents, units of files) taken from an atomic counter; tables are
  merged at the end and put in order of first occurrence, so the result (content and
  order) does not depend on the number of threads. Processes would need the text pickled
  across; OpenMP would need a compiler flag that not every toolchain has.
"""
from cpython cimport array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_SetItem
from cpython.unicode cimport PyUnicode_DecodeUTF8
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport SIZE_MAX, int32_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memset

from piecetable cimport (
    fbpe_entry, fbpe_entry_bytes, fbpe_merge_in_order, fbpe_order_tables, fbpe_table,
    fbpe_table_free, fbpe_table_init, fbpe_table_memory,
)
from utf8 cimport fbpe_utf8_invalid, utf8_bytes
from status cimport (
    FBPE_ENOMEM, FBPE_EPATTERN, FBPE_EUTF8, FBPE_MAX_THREADS, FBPE_MORE, FBPE_OK, check, fbpe_grow_to, fbpe_status,
)

import array as pyarray
import os
import threading


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL
    bint PyUnicode_IS_ASCII(object text)
    int PyUnicode_READY(object text)
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    # Private but stable since CPython 3.0: a dict sized for n keys, so that building a
    # result of a million pieces does not rehash it twenty times on the way.
    dict _PyDict_NewPresized(Py_ssize_t n)


cdef extern from "lib/scan/scan.h":
    ctypedef enum fbpe_scanner:
        FBPE_GPT2
        FBPE_GPT4
        FBPE_O200K
        FBPE_FUNCTIONALIZER
        FBPE_FUNCTIONALIZER_RUNS
        FBPE_LLAMA_DIGITS
        FBPE_CL100K
        FBPE_JOIN_RUNS
    ctypedef struct fbpe_classes:
        pass
    const fbpe_classes *fbpe_install_classes(const uint8_t *table, const uint32_t *fold_cps,
                                             const char *fold_letters, size_t num_folds)
    size_t fbpe_piece_end(const fbpe_classes *cl, fbpe_scanner which, const uint8_t *s, size_t i,
                          size_t n) nogil
    size_t fbpe_safe_cut(const fbpe_classes *cl, const uint8_t *s, size_t n, size_t lo,
                         size_t hi) nogil
    size_t fbpe_ucs_safe_cut(const fbpe_classes *cl, const void *s, int kind, size_t n, size_t lo,
                             size_t hi) nogil


cdef extern from "lib/scan/markers.h":
    ctypedef struct fbpe_mk_map:
        const uint16_t *index
        const int32_t *blocks
    ctypedef struct fbpe_mk_tables:
        const uint8_t *classes
        fbpe_mk_map lower
        fbpe_mk_map upper
        fbpe_mk_map sigma
    ctypedef struct fbpe_markers:
        pass
    const fbpe_markers *fbpe_mk_install(const fbpe_mk_tables *t)
    ctypedef fbpe_status (*fbpe_mk_sink)(void *ctx, const uint8_t *piece, size_t len,
                                         size_t readable, size_t at) noexcept nogil
    fbpe_status fbpe_mk_pieces(const fbpe_markers *m, int options, const uint8_t *s, size_t n,
                               fbpe_mk_sink emit, void *ctx) nogil
    int fbpe_mk_case_code(const fbpe_markers *m, const uint8_t *s, size_t n, uint8_t *out,
                          size_t *out_len) nogil


cdef extern from "lib/scan/regex_vm.h":
    ctypedef struct fbpe_rx_ins:
        uint32_t op, a, b, c
    ctypedef struct fbpe_rx:
        const fbpe_rx_ins *code
        uint32_t num_code
        uint32_t num_alts
        const uint32_t *starts
        const uint64_t *ascii_masks
        const uint64_t *ascii_alts
        const uint16_t *index
        const uint8_t *blocks
        const uint64_t *masks
        const uint64_t *alts
        const uint64_t *guards
        const uint64_t *heads
        uint32_t num_blocks, num_classes
        uint32_t num_guards
        uint64_t letter_atoms
        uint64_t space_atoms
    ctypedef struct fbpe_rx_vm:
        fbpe_status status
    void fbpe_rx_vm_init(fbpe_rx_vm *vm, size_t n) nogil
    void fbpe_rx_vm_free(fbpe_rx_vm *vm) nogil
    size_t fbpe_rx_piece_end(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i,
                             size_t n) nogil
    fbpe_status fbpe_rx_check(const fbpe_rx *p)
    void fbpe_rx_prepare(fbpe_rx *p)
    size_t fbpe_rx_safe_cut(const fbpe_rx *p, const uint8_t *s, size_t n, size_t hi,
                            fbpe_status *status) nogil


cdef extern from "lib/scan/splitter.h":
    ctypedef struct fbpe_splitter:
        const fbpe_markers *markers
        int options
        const fbpe_classes *classes
        fbpe_scanner which
        const fbpe_rx *prog
        int whole


cdef extern from "lib/scan/specials.h":
    ctypedef struct fbpe_specials:
        size_t num_nodes
    ctypedef fbpe_status (*fbpe_special_sink)(void *ctx, size_t start, size_t len) noexcept nogil
    fbpe_status fbpe_specials_build(fbpe_specials *m, const uint8_t *const *tokens,
                                    const size_t *lens, size_t num)
    void fbpe_specials_free(fbpe_specials *m)
    size_t fbpe_specials_window(const fbpe_specials *m, size_t n) nogil
    fbpe_status fbpe_specials_cut(const fbpe_specials *m, const uint8_t *s, size_t n,
                                  uint32_t *scratch, fbpe_special_sink emit, void *ctx) nogil


cdef extern from "lib/common/take_next.h":
    size_t fbpe_take_size(size_t n, size_t bytes, size_t threads)


cdef extern from "lib/count/count.h":
    ctypedef struct fbpe_unit:
        const uint8_t *data
        size_t len
        uint64_t base
        int validate
    ctypedef struct fbpe_count_config:
        fbpe_splitter split
        const fbpe_specials *specials
    ctypedef struct fbpe_batch:
        fbpe_unit *units
        size_t num_units
        size_t take
        size_t next
    ctypedef struct fbpe_count_error:
        fbpe_status status
        uint64_t offset
        size_t unit
    ctypedef struct fbpe_parts:
        fbpe_table *parts
        size_t num_parts
    void fbpe_count_batch(const fbpe_count_config *cfg, const fbpe_parts *w, fbpe_batch *batch,
                          fbpe_count_error *err) nogil


# Patterns with a scanner; llama3 cuts every text exactly as gpt4 does (csrc/lib/scan/scanners.h).
# "cl100k-tiktoken" is no built-in pattern's name: it is the scanner of tiktoken's own cl100k
# string (patterns.HAND_SCANNED), which any custom pattern with that exact text gets.
PATTERN_SCANNERS = {"gpt2": FBPE_GPT2, "gpt4": FBPE_GPT4, "llama3": FBPE_GPT4, "o200k": FBPE_O200K,
                    "functionalizer": FBPE_FUNCTIONALIZER,
                    "functionalizer-runs": FBPE_FUNCTIONALIZER_RUNS,
                    "functionalizer-llama": FBPE_LLAMA_DIGITS,
                    "cl100k-tiktoken": FBPE_CL100K}
# What ends a scanner's name whose runs of >= 3 identical pieces are joined, as the
# Functionalizer joins them with repeat on ("functionalizer" + JOINED).
JOINED = "+joined"
SCANNERS = {**PATTERN_SCANNERS,
            **{name + JOINED: which | FBPE_JOIN_RUNS for name, which in PATTERN_SCANNERS.items()}}


# ---- the tables, installed once per process on first use ---------------------------------
#
# Measuring the classes from regex takes a few tenths of a second: a process that never
# scans (one that only decodes, or uses a custom pattern) never pays for it.

cdef const fbpe_classes *_installed_classes = NULL
cdef const fbpe_markers *_installed_markers = NULL
# The tables the marker scheme points at (it does not copy them), kept alive for good.
_markers_tables = None
_install_lock = threading.Lock()


cdef const fbpe_classes *_classes() except NULL:
    """The pattern scanners' character classes (functionalbpe.unicode.charclasses)."""
    global _installed_classes
    if _installed_classes:
        return _installed_classes
    from functionalbpe.unicode.charclasses import class_table, contraction_folds

    cdef uint32_t cps[64]
    cdef char letters[64]
    cdef size_t k
    with _install_lock:
        if not _installed_classes:
            table = class_table()
            folds = contraction_folds()
            if len(folds) > 64:  # FBPE_MAX_FOLDS; regex 2026 has one (U+017F)
                raise RuntimeError(f"regex folds {len(folds)} characters to contraction letters; the scanner holds 64")
            for k in range(len(folds)):
                cps[k] = folds[k][0]
                letters[k] = ord(folds[k][1])
            _installed_classes = fbpe_install_classes(<const uint8_t *>PyBytes_AS_STRING(table), cps,
                                                      letters, len(folds))
    return _installed_classes


cdef fbpe_mk_map _two_level(table):
    cdef fbpe_mk_map m
    cdef const uint16_t[::1] index = table.index
    cdef const int32_t[::1] blocks = table.blocks
    m.index = &index[0]
    m.blocks = &blocks[0]
    return m


cdef const fbpe_markers *_markers() except NULL:
    """The boundary-marker scheme's tables (functionalbpe.unicode.markerclasses)."""
    global _installed_markers, _markers_tables
    if _installed_markers:
        return _installed_markers
    from functionalbpe.unicode.markerclasses import case_maps, unit_class_table

    cdef fbpe_mk_tables t
    with _install_lock:
        if not _installed_markers:
            classes = unit_class_table()
            maps = case_maps()
            t.classes = <const uint8_t *>PyBytes_AS_STRING(classes)
            t.lower = _two_level(maps.lower)
            t.upper = _two_level(maps.upper)
            t.sigma = _two_level(maps.sigma)
            _markers_tables = (classes, maps)
            _installed_markers = fbpe_mk_install(&t)
    return _installed_markers


def _classes_capsule():
    """The installed character classes (``const fbpe_classes *``), for the encoder."""
    return PyCapsule_New(<void *>_classes(), b"functionalbpe._scanner.classes", NULL)


def _markers_capsule():
    """The installed marker scheme (``const fbpe_markers *``), for the encoder."""
    return PyCapsule_New(<void *>_markers(), b"functionalbpe._scanner.markers", NULL)


def markers_scanner_names():
    """``{"markers[w,p,↑]": options, ...}``: the scheme's name (BoundaryMarkers.name) for each
    of the eight combinations of the options (csrc/lib/scan/markers.h's bits)."""
    names = {}
    for options in range(8):
        kinds = ["w"] + ["p"] * (options & 1) + ["d"] * (options >> 1 & 1) + ["↑"] * (options >> 2 & 1)
        names["markers[" + ",".join(kinds) + "]"] = options
    return names


# ---- compiled patterns (functionalbpe/unicode/regex_program.py, csrc/lib/scan/regex_vm.h) --------
#
# A compiled pattern's scanner is named PROGRAM + its regex text. Its program and tables are
# made on first use and kept for the life of the process: an encoder may hold a pointer to
# them in another module (_program_capsule), so they are never freed.

PROGRAM = "regex:"
_programs = {}
_programs_lock = threading.Lock()


cdef class _Program:
    """A pattern's program and tables, and the C structure that points into them."""
    cdef fbpe_rx rx
    cdef readonly object program
    cdef object keep

    def __cinit__(self, program, tables):
        from functionalbpe.unicode.regex_program import settled_code

        code_bytes = settled_code(program, tables)
        cdef const uint8_t[::1] code = code_bytes
        starts = pyarray.array("I", program.starts)
        cdef const uint32_t[::1] starts_view = starts
        # One word more than the guards, so that a program without guards has an array too.
        guards = pyarray.array("Q", list(program.guards) + [0])
        cdef const uint64_t[::1] guards_view = guards
        cdef const uint8_t[::1] ascii_masks = tables.ascii
        cdef const uint8_t[::1] ascii_alts = tables.ascii_alternatives
        cdef const uint8_t[::1] index = tables.index
        cdef const uint8_t[::1] blocks = tables.blocks
        cdef const uint8_t[::1] masks = tables.masks
        cdef const uint8_t[::1] alts = tables.alternatives
        if (len(tables.index) != 0x1100 * 2 or len(tables.ascii) != 128 * 8
                or len(tables.ascii_alternatives) != 128 * 8 or len(tables.blocks) % 256
                or len(tables.masks) % 8 or len(tables.alternatives) != len(tables.masks)
                or len(program.code) % 16):
            raise ValueError("a compiled pattern's tables have the wrong sizes")
        self.program = program
        heads = pyarray.array("Q", [word for head in program.heads for word in head])
        if len(heads) != 2 * len(program.starts):
            raise ValueError("a compiled pattern's heads do not match its alternatives")
        cdef const uint64_t[::1] heads_view = heads
        self.rx.heads = &heads_view[0]
        self.keep = (program, tables, code_bytes, starts, guards, heads)
        self.rx.guards = &guards_view[0]
        self.rx.num_guards = len(program.guards)
        ascii = pyarray.array("Q")
        ascii.frombytes(tables.ascii)
        letters = frozenset(c for c in range(128) if chr(c).isalpha())  # A-Z a-z
        self.rx.letter_atoms = sum(1 << k for k in range(len(program.atoms))
                                   if all(bool(ascii[c] >> k & 1) == (c in letters) for c in range(128)))
        self.rx.space_atoms = sum(1 << k for k in range(len(program.atoms)) if ascii[32] >> k & 1)
        self.rx.code = <const fbpe_rx_ins *>&code[0]
        self.rx.num_code = len(program.code) // 16
        self.rx.num_alts = len(program.starts)
        self.rx.starts = &starts_view[0]
        self.rx.ascii_masks = <const uint64_t *>&ascii_masks[0]
        self.rx.ascii_alts = <const uint64_t *>&ascii_alts[0]
        self.rx.index = <const uint16_t *>&index[0]
        self.rx.blocks = &blocks[0]
        self.rx.masks = <const uint64_t *>&masks[0]
        self.rx.alts = <const uint64_t *>&alts[0]
        self.rx.num_blocks = len(tables.blocks) // 256
        self.rx.num_classes = len(tables.masks) // 8
        check(fbpe_rx_check(&self.rx), "while checking a compiled pattern",
              "a compiled pattern's program or tables are out of bounds")
        fbpe_rx_prepare(&self.rx)


cdef _Program _program_of(str name):
    """The compiled program of a scanner named PROGRAM + regex text; Unsupported (a
    ValueError naming the construct) if the pattern is outside the compiled subset."""
    found = _programs.get(name)
    if found is not None:
        return found
    from functionalbpe.unicode.regex_program import compile_program, tables

    program = compile_program(name[len(PROGRAM):])
    with _programs_lock:
        found = _programs.get(name)
        if found is None:
            found = _programs[name] = _Program(program, tables(program))
    return found


def has_program(str name not None):
    """Is ``name`` a compiled pattern's scanner (PROGRAM + a regex in the compiled subset)?"""
    if not name.startswith(PROGRAM):
        return False
    from functionalbpe.unicode.regex_program import Unsupported

    try:
        _program_of(name)
    except Unsupported:
        return False
    return True


def program_safe_cut(const uint8_t[::1] data, str name not None, hi=None):
    """The largest offset ``c <= hi`` (0 if none) where UTF-8 ``data``, which starts where a
    piece starts, can be cut under the compiled pattern ``name``: the pieces of ``data[:c]``
    are those of any text that starts with ``data``, found without reading at or past its
    end (``fbpe_rx_safe_cut``). 0 for a pattern that tests for the start of the text.

    >>> program_safe_cut(b"one two three", PROGRAM + r"\S+|\s+")
    8
    """
    cdef _Program prog = _program_of(name)
    cdef size_t n = data.shape[0], cut = 0
    cdef size_t top = n if hi is None else min(<size_t>max(hi, 0), n)
    cdef fbpe_status rc = FBPE_OK
    if n == 0 or not prog.program.cuts:
        return 0
    # The matcher reads whole characters: the data must not end inside one (the rest of it
    # is the caller's valid UTF-8, as everywhere a scanner reads).
    cdef size_t last = n - 1
    while last > 0 and n - last < 4 and (data[last] & 0xC0) == 0x80:
        last -= 1
    if last + utf8_lead_length(data[last]) != n:
        raise ValueError("program_safe_cut: the data ends inside a UTF-8 character")
    with nogil:
        cut = fbpe_rx_safe_cut(&prog.rx, &data[0], n, top, &rc)
    check(rc, "while looking for a safe cut")
    return cut


cdef inline size_t utf8_lead_length(uint8_t b) noexcept:
    return 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4


def _program_capsule(str name not None):
    """The compiled pattern's ``const fbpe_rx *``, for the encoder (kept for good here)."""
    cdef _Program prog = _program_of(name)
    return PyCapsule_New(<void *>&prog.rx, b"functionalbpe._scanner.program", NULL)


cdef fbpe_scanner _scanner_of(str pattern) except *:
    try:
        return SCANNERS[pattern]
    except KeyError:
        raise ValueError(f"no scanner for pattern {pattern!r}; scanners: {', '.join(SCANNERS)}") from None


def scan(str text not None, str pattern not None):
    """The pieces of ``text`` under a built-in pattern, as ``regex.findall`` gives them.

    >>> scan("Hello world!!", "gpt4")
    ['Hello', ' world', '!!']
    """
    if pattern.startswith(PROGRAM):
        return _scan_program(text, _program_of(pattern))
    cdef fbpe_scanner which = _scanner_of(pattern)
    cdef const fbpe_classes *cl = _classes()
    data = utf8_bytes(text)
    cdef const uint8_t *s = <const uint8_t *>PyBytes_AS_STRING(data)
    cdef size_t n = PyBytes_GET_SIZE(data), i = 0, e
    out = []
    while i < n:
        e = fbpe_piece_end(cl, which, s, i, n)
        out.append(PyUnicode_DecodeUTF8(<const char *>s + i, e - i, "surrogatepass"))
        i = e
    return out


cdef list _scan_program(str text, _Program prog):
    """The pieces of text under a compiled pattern; CompiledPatternGaveUp where its matcher
    gives up (the caller then runs regex). The ends are found without the GIL."""
    data = utf8_bytes(text)
    cdef const uint8_t *s = <const uint8_t *>PyBytes_AS_STRING(data)
    cdef size_t n = PyBytes_GET_SIZE(data), i = 0, e, count = 0, k, start = 0
    cdef size_t *ends = NULL
    cdef size_t cap = 0
    cdef fbpe_rx_vm vm
    cdef fbpe_status rc = FBPE_OK
    cdef void *grown
    fbpe_rx_vm_init(&vm, n)
    try:
        with nogil:
            while i < n:
                e = fbpe_rx_piece_end(&prog.rx, &vm, s, i, n)
                if e == i:
                    rc = vm.status
                    break
                if count == cap:
                    cap = fbpe_grow_to(cap, 256, count + 1, sizeof(size_t))
                    grown = realloc(ends, cap * sizeof(size_t)) if cap else NULL
                    if not grown:
                        rc = FBPE_ENOMEM
                        break
                    ends = <size_t *>grown
                ends[count] = e
                count += 1
                i = e
        check(rc, "while cutting the text into pieces")
        out = []
        for k in range(count):
            out.append(PyUnicode_DecodeUTF8(<const char *>s + start, ends[k] - start, "surrogatepass"))
            start = ends[k]
        return out
    finally:
        fbpe_rx_vm_free(&vm)
        free(ends)


cdef struct _piece_list:
    uint8_t *data
    size_t len, cap
    size_t *ends
    size_t count, ends_cap


cdef fbpe_status _collect_piece(void *ctx, const uint8_t *piece, size_t n, size_t readable,
                               size_t at) noexcept nogil:
    cdef _piece_list *out = <_piece_list *>ctx
    cdef size_t cap
    cdef void *grown
    if n > out.cap - out.len:
        cap = fbpe_grow_to(out.cap, 4096, out.len + n, 1) if n <= SIZE_MAX - out.len else 0
        if not cap:
            return FBPE_ENOMEM
        grown = realloc(out.data, cap)
        if not grown:
            return FBPE_ENOMEM
        out.data = <uint8_t *>grown
        out.cap = cap
    if out.count == out.ends_cap:
        cap = fbpe_grow_to(out.ends_cap, 256, out.count + 1, sizeof(size_t))
        if not cap:
            return FBPE_ENOMEM
        grown = realloc(out.ends, cap * sizeof(size_t))
        if not grown:
            return FBPE_ENOMEM
        out.ends = <size_t *>grown
        out.ends_cap = cap
    memcpy(out.data + out.len, piece, n)
    out.len += n
    out.ends[out.count] = out.len
    out.count += 1
    return FBPE_OK


def markers_pieces(str text not None, int options):
    """The boundary-marker scheme's pieces of ``text`` (``options``: csrc/lib/scan/markers.h's
    bits punct 1, digits 2, case 4), as ``BoundaryMarkers.pieces`` gives them.

    >>> markers_pieces("The cat, 3", 7) == ["\ue301\ue300the\ue300", "\ue300cat\ue300", ",\ue300", "\ue3003"]
    True
    """
    if not 0 <= options <= 7:
        raise ValueError(f"markers options are bits 1, 2 and 4, got {options}")
    cdef const fbpe_markers *m = _markers()
    data = utf8_bytes(text)
    cdef const uint8_t *s = <const uint8_t *>PyBytes_AS_STRING(data)
    cdef size_t n = PyBytes_GET_SIZE(data), k, start = 0
    cdef _piece_list out
    cdef fbpe_status rc
    memset(&out, 0, sizeof(out))
    try:
        with nogil:
            rc = fbpe_mk_pieces(m, options, s, n, _collect_piece, &out)
        check(rc, "while cutting the text into pieces")
        pieces = []
        for k in range(out.count):
            pieces.append(PyUnicode_DecodeUTF8(<const char *>out.data + start, out.ends[k] - start, "surrogatepass"))
            start = out.ends[k]
        return pieces
    finally:
        free(out.data)
        free(out.ends)


def markers_case_code(str word not None):
    """``markers.case_code(word)`` by the compiled case coder, for a word of word characters
    (tests compare the two on every code point)."""
    cdef const fbpe_markers *markers = _markers()
    data = utf8_bytes(word)
    cdef size_t n = PyBytes_GET_SIZE(data), m = 0
    out = PyBytes_FromStringAndSize(NULL, 2 * n + 1)
    cdef int code = fbpe_mk_case_code(markers, <const uint8_t *>PyBytes_AS_STRING(data), n,
                                      <uint8_t *>PyBytes_AS_STRING(out), &m)
    if not code:
        return "", word
    return ("\ue301" if code == 1 else "\ue302"), out[:m].decode("utf-8")


def utf8_invalid(const uint8_t[::1] data, bint allow_surrogates=False):
    """``(offset, incomplete)``: the first byte that is not valid UTF-8 (``len(data)`` if
    none), and whether it starts a character cut short by the end of ``data``.

    >>> utf8_invalid(b"ab\\xe2\\x82")
    (2, True)
    """
    cdef int incomplete = 0
    cdef size_t n = data.shape[0], bad = 0
    if n:
        with nogil:
            bad = fbpe_utf8_invalid(&data[0], n, allow_surrogates, &incomplete)
    return bad, bool(incomplete)


def safe_cut(const uint8_t[::1] data, size_t lo=0, hi=None):
    """The largest offset in ``(lo, hi]`` where UTF-8 ``data`` can be cut without changing
    any built-in pattern's pieces (0 if none). See csrc/lib/scan/scan.c for the rules.

    >>> safe_cut(b"one.\\ntwo.\\nthree")
    10
    """
    cdef size_t n = data.shape[0], cut = 0
    if n == 0 or (hi is not None and hi <= lo):
        return 0
    cdef size_t top = n if hi is None else min(<size_t>hi, n)
    cdef const fbpe_classes *cl = _classes()
    with nogil:
        cut = fbpe_safe_cut(cl, &data[0], n, lo, top)
    return cut


def safe_cut_text(str text not None, size_t lo=0, hi=None):
    """:func:`safe_cut` on a str, in characters: the largest index in ``(lo, hi]`` where the
    UTF-8 of ``text`` can be cut (0 if none), never beside a surrogate. Its cuts are those of
    safe_cut on the UTF-8, so a long text is cut before its UTF-8 is written.

    >>> safe_cut_text("один.\nдва.\nтри")
    10
    """
    cdef size_t n = len(text), cut = 0
    if n == 0 or (hi is not None and hi <= lo):
        return 0
    if PyUnicode_READY(text) < 0:  # a no-op since 3.12; 3.11 may hold legacy strings
        raise MemoryError()
    cdef size_t top = n if hi is None else min(<size_t>hi, n)
    cdef const fbpe_classes *cl = _classes()
    cdef const void *data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text)
    with nogil:
        cut = fbpe_ucs_safe_cut(cl, data, kind, n, lo, top)
    return cut


def _wait_all(futures):
    """Wait for every future, even through Ctrl-C (the workers read a batch's texts and
    write its tables, so nothing may be freed before they are done); the first failure, or
    None."""
    failure = None
    for f in futures:
        while True:
            try:
                f.result()
                break
            except BaseException as exc:
                failure = failure or exc
                if not isinstance(exc, KeyboardInterrupt) or f.done():
                    break
    return failure


class BadUTF8(ValueError):
    """Invalid UTF-8 in bytes given to :meth:`PieceCounter.add_bytes`.

    ``origin`` is what the caller passed with those bytes, ``offset`` the position of the
    first bad byte within them.
    """

    def __init__(self, origin, offset):
        super().__init__(f"invalid UTF-8 at offset {offset} of {origin!r}")
        self.origin = origin
        self.offset = offset


def default_threads():
    """All the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def thread_count(threads):
    """``threads`` checked against the C core's own limit (FBPE_MAX_THREADS), which sizes
    arrays by it: an integer in 1..FBPE_MAX_THREADS, or None for all cores."""
    from functionalbpe.core._native import thread_count as checked

    return checked(threads, default_threads(), FBPE_MAX_THREADS)


# A batch is dispatched when it holds this much text or this many units: big enough that
# thread hand-offs cost nothing, small enough that Ctrl-C is answered in well under a second.
BATCH_BYTES = 8 << 20
BATCH_UNITS = 1 << 16
# Below this much text one thread does the batch: starting the others would cost more.
PARALLEL_MIN_BYTES = 256 << 10


cdef struct _spans:
    size_t *at
    size_t n, cap
    int first_only


cdef fbpe_status _add_span(void *ctx, size_t start, size_t length) noexcept nogil:
    cdef _spans *sp = <_spans *>ctx
    cdef size_t *grown
    if sp.n + 2 > sp.cap:
        grown = <size_t *>realloc(sp.at, 2 * (sp.cap + 8) * sizeof(size_t))
        if not grown:
            return FBPE_ENOMEM
        sp.at = grown
        sp.cap = 2 * (sp.cap + 8)
    sp.at[sp.n] = start
    sp.at[sp.n + 1] = start + length
    sp.n += 2
    # The first token is all that search() asks for: stop the cut there.
    return FBPE_MORE if sp.first_only else FBPE_OK


cdef class SpecialCutter:
    """Special tokens found in one pass, however many (``csrc/lib/scan/specials.h``): what
    ``patterns.split_special`` does, in linear time.

    >>> SpecialCutter(["<a>", "<a><b>", "a>"]).split("x<a><b>a>b")
    [('x', False), ('<a><b>', True), ('a>', True), ('b', False)]
    >>> SpecialCutter(["<a>"]).search("é<a>")
    (1, '<a>')
    """
    cdef fbpe_specials m

    def __cinit__(self, tokens):
        encoded = [utf8_bytes(t) for t in sorted({t for t in tokens if t})]
        cdef size_t k, num = len(encoded)
        cdef const uint8_t **ptrs = <const uint8_t **>malloc((num + 1) * sizeof(uint8_t *))
        cdef size_t *lens = <size_t *>malloc((num + 1) * sizeof(size_t))
        try:
            if not ptrs or not lens:
                raise MemoryError()
            for k in range(num):
                ptrs[k] = <const uint8_t *>PyBytes_AS_STRING(encoded[k])
                lens[k] = PyBytes_GET_SIZE(encoded[k])
            check(fbpe_specials_build(&self.m, ptrs, lens, num), "while indexing the special tokens",
                  "the special tokens hold 2**31 bytes or more")
        finally:
            free(ptrs)
            free(lens)

    def __dealloc__(self):
        fbpe_specials_free(&self.m)

    cdef _spans _find(self, const uint8_t *s, size_t n, int first_only) except *:
        cdef _spans sp
        sp.at = NULL
        sp.n = sp.cap = 0
        sp.first_only = first_only
        cdef size_t window = fbpe_specials_window(&self.m, n)
        cdef uint32_t *scratch = <uint32_t *>malloc((window + 1) * sizeof(uint32_t))
        cdef fbpe_status rc
        if not scratch:
            raise MemoryError()
        with nogil:
            rc = fbpe_specials_cut(&self.m, s, n, scratch, _add_span, &sp)
        free(scratch)
        if rc < 0:
            free(sp.at)
            check(rc, "while cutting out special tokens")
        return sp

    def split(self, str text not None):
        """``(segment, is_special)`` pairs, in order; ordinary segments are never empty."""
        cdef Py_ssize_t size
        cdef const char *data
        cdef bint ascii = PyUnicode_IS_ASCII(text)
        encoded = _utf8_buffer(text, &data, &size)  # kept alive while data is read
        cdef _spans sp = self._find(<const uint8_t *>data, size, 0)
        cdef size_t k, last = 0
        out = []
        try:
            for k in range(0, sp.n, 2):
                if sp.at[k] > last:
                    out.append((_part(text, data, ascii, last, sp.at[k]), False))
                out.append((_part(text, data, ascii, sp.at[k], sp.at[k + 1]), True))
                last = sp.at[k + 1]
        finally:
            free(sp.at)
        if <size_t>size > last:
            out.append((_part(text, data, ascii, last, size), False))
        return out

    def search(self, str text not None):
        """``(offset, token)`` of the first special token the cut takes, or None."""
        cdef Py_ssize_t size
        cdef const char *data
        cdef bint ascii = PyUnicode_IS_ASCII(text)
        encoded = _utf8_buffer(text, &data, &size)  # kept alive while data is read
        cdef _spans sp = self._find(<const uint8_t *>data, size, 1)
        cdef size_t start, end, k, chars = 0
        if not sp.n:
            return None
        start, end = sp.at[0], sp.at[1]
        free(sp.at)
        for k in range(start):  # characters before the token: bytes that start one
            chars += (<const uint8_t *>data)[k] & 0xC0 != 0x80
        return chars, _part(text, data, ascii, start, end)


cdef object _utf8_buffer(str text, const char **data, Py_ssize_t *size):
    """Point *data at the UTF-8 of text: the str's own buffer when it is ASCII (no copy;
    returns None), else a new bytes object, returned so that the caller keeps it alive."""
    if PyUnicode_IS_ASCII(text):
        data[0] = PyUnicode_AsUTF8AndSize(text, size)
        return None
    encoded = utf8_bytes(text)
    data[0] = PyBytes_AS_STRING(encoded)
    size[0] = PyBytes_GET_SIZE(encoded)
    return encoded


cdef object _part(str text, const char *data, bint ascii, size_t start, size_t end):
    if ascii:
        return text[start:end]
    return PyUnicode_DecodeUTF8(data + start, end - start, "surrogatepass")


cdef class PieceCounter:
    """Counts the pieces of texts under a built-in pattern, on ``threads`` threads; with
    the pattern ``"markers"``, the boundary-marker scheme's pieces under the options
    ``markers`` (the bits of :func:`markers_pieces`).

    Worker ``t`` counts into its own tables, one per partition of the hash space
    (``threads`` partitions); merging is parallel too, partition ``p`` by worker ``p``.
    After a merge, worker 0's tables hold everything.

    >>> c = PieceCounter("gpt2")
    >>> c.add_text("a a a"); c.add_text("a")
    >>> c.result()
    {'a': 2, ' a': 2}
    """
    cdef fbpe_count_config cfg
    cdef fbpe_table *tables  # threads x threads: worker t's partition p is tables[t * threads + p]
    cdef size_t num_tables
    cdef fbpe_parts *workers
    cdef fbpe_count_error *errors
    cdef readonly int threads
    cdef fbpe_unit *units
    cdef size_t num_units, units_cap, batch_bytes
    cdef uint64_t offset
    cdef list keep
    cdef list origins
    # The batch being counted while the next one is filled (flush returns at once): its
    # units, the objects that own their bytes, their origins, the workers' futures.
    cdef fbpe_unit *flying_units
    cdef size_t flying_cap
    cdef list flying_keep
    cdef list flying_origins
    cdef object flying
    cdef int flying_workers
    cdef SpecialCutter cutter
    cdef object pool
    cdef fbpe_batch _batch
    cdef public uint64_t bytes_counted

    def __cinit__(self, str pattern, threads=1, special_tokens=(), int markers=0):
        cdef size_t t
        if pattern == "markers":  # the boundary-marker scheme's pieces, options `markers`
            if not 0 <= markers <= 7:
                raise ValueError(f"markers options are bits 1, 2 and 4, got {markers}")
            self.cfg.split.markers = _markers()
            self.cfg.split.options = markers
        elif pattern.startswith(PROGRAM):  # a compiled pattern (kept for good: see _programs)
            self.cfg.split.prog = &_program_of(pattern).rx
        else:
            self.cfg.split.which = _scanner_of(pattern)
            self.cfg.split.classes = _classes()
        self.threads = thread_count(threads)
        # At most FBPE_MAX_THREADS squared: no overflow, and calloc checks the product.
        self.num_tables = <size_t>self.threads * <size_t>self.threads
        self.tables = <fbpe_table *>calloc(self.num_tables, sizeof(fbpe_table))
        self.workers = <fbpe_parts *>calloc(self.threads, sizeof(fbpe_parts))
        self.errors = <fbpe_count_error *>calloc(self.threads, sizeof(fbpe_count_error))
        self.units_cap = 1024
        self.units = <fbpe_unit *>malloc(self.units_cap * sizeof(fbpe_unit))
        self.flying_cap = self.units_cap
        self.flying_units = <fbpe_unit *>malloc(self.flying_cap * sizeof(fbpe_unit))
        if not self.tables or not self.workers or not self.errors or not self.units or not self.flying_units:
            raise MemoryError()
        for t in range(self.num_tables):
            fbpe_table_init(&self.tables[t])
        for t in range(<size_t>self.threads):
            self.workers[t].parts = &self.tables[t * self.threads]
            self.workers[t].num_parts = self.threads
        self.keep = []
        self.origins = []
        self.flying_keep = []
        self.flying_origins = []
        specials = frozenset(s for s in special_tokens if s)
        if specials:
            self.cutter = SpecialCutter(specials)
            self.cfg.specials = &self.cutter.m

    def __dealloc__(self):
        cdef size_t t
        if self.tables:
            for t in range(self.num_tables):
                fbpe_table_free(&self.tables[t])
        free(self.tables)
        free(self.workers)
        free(self.errors)
        free(self.units)
        free(self.flying_units)

    cdef int _push(self, object owner, const char *data, size_t n, bint validate, object origin) except -1:
        cdef fbpe_unit *grown
        if self.num_units == self.units_cap:
            grown = <fbpe_unit *>realloc(self.units, 2 * self.units_cap * sizeof(fbpe_unit))
            if not grown:
                raise MemoryError()
            self.units = grown
            self.units_cap *= 2
        self.units[self.num_units].data = <const uint8_t *>data
        self.units[self.num_units].len = n
        self.units[self.num_units].base = self.offset
        self.units[self.num_units].validate = validate
        self.num_units += 1
        self.keep.append(owner)
        self.origins.append(origin)
        self.offset += n
        self.batch_bytes += n
        self.bytes_counted += n
        if self.batch_bytes >= BATCH_BYTES or self.num_units >= BATCH_UNITS:
            self.flush()
        return 0

    def add_text(self, str text not None):
        """Count the pieces of one text (a document, or a part cut at a safe boundary)."""
        self._add_text(text)

    def add_texts(self, texts):
        """Count the pieces of every text of an iterable."""
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"a text must be a str, got {type(text).__name__}")
            self._add_text(text)

    cdef int _add_text(self, str text) except -1:
        cdef Py_ssize_t size
        cdef const char *data
        if PyUnicode_READY(text) < 0:  # a no-op since Python 3.12; 3.11 may hold legacy strings
            raise MemoryError()
        if PyUnicode_IS_ASCII(text):
            # A compact ASCII string's buffer is its UTF-8: no copy.
            data = PyUnicode_AsUTF8AndSize(text, &size)
            self._push(text, data, size, False, None)
        else:
            encoded = utf8_bytes(text)
            self._push(encoded, PyBytes_AS_STRING(encoded), PyBytes_GET_SIZE(encoded), False, None)
        return 0

    def add_bytes(self, bytes data not None, origin=None):
        """Count the pieces of UTF-8 ``data``; invalid UTF-8 raises :class:`BadUTF8` with
        ``origin`` (raised by :meth:`flush`, at the latest by :meth:`result`)."""
        self._push(data, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), True, origin)

    def add_run(self, bytes text not None, const uint64_t[::1] ends not None):
        """Count the pieces of several documents at once, each a unit of its own: document k
        is ``text[ends[k - 1]:ends[k]]`` (UTF-8, checked; the first from 0). A JSONL file's
        documents come so (``functionalbpe.text.corpus.DocumentRun``), with no ``str`` and no
        Python call per document."""
        cdef size_t k, start = 0, n = ends.shape[0], size = PyBytes_GET_SIZE(text)
        cdef const char *base = PyBytes_AS_STRING(text)
        for k in range(n):
            if ends[k] < start or ends[k] > size:
                raise ValueError(f"document {k} ends at {ends[k]}, outside the text's {size} bytes")
            self._push(text, base + start, ends[k] - start, True, None)
            start = ends[k]

    def _work(self, int t):
        cdef fbpe_batch *batch = &self._batch
        with nogil:
            fbpe_count_batch(&self.cfg, &self.workers[t], batch, &self.errors[t])

    def flush(self):
        """Start counting what has been added so far (run by itself when a batch is full)
        and return: the workers count it while the caller reads the next batch, which the
        next flush hands over once they are done. Reading a file (and checking and cutting
        its blocks) is then no longer time of its own: with it in series, two threads
        trained only 1.22 times as fast as one on 111 MB of prose."""
        self._wait()
        if not self.num_units:
            return
        cdef fbpe_unit *units = self.units
        cdef size_t cap = self.units_cap
        self.units, self.units_cap = self.flying_units, self.flying_cap
        self.flying_units, self.flying_cap = units, cap
        self.keep, self.flying_keep = self.flying_keep, self.keep
        self.origins, self.flying_origins = self.flying_origins, self.origins
        self._batch.units = self.flying_units
        self._batch.num_units = self.num_units
        self._batch.next = 0
        workers = 1 if self.batch_bytes < PARALLEL_MIN_BYTES else min(self.threads, self.num_units)
        self._batch.take = fbpe_take_size(self.num_units, self.batch_bytes, workers)
        self.num_units = 0
        self.batch_bytes = 0
        self.flying_workers = workers
        if workers == 1:
            self.flying = ()
            try:
                self._work(0)
            finally:
                self._wait()
        else:
            pool = self._pool()
            self.flying = [pool.submit(self._work, k) for k in range(workers)]

    def _wait(self):
        """Wait for the batch being counted, even through Ctrl-C (the workers read its
        texts and write the tables), then raise its first error."""
        if self.flying is None:
            return
        futures, self.flying = self.flying, None
        failure = _wait_all(futures)
        try:
            if failure is not None:
                raise failure
            self._raise_errors(self.flying_workers)
        finally:
            self.flying_keep.clear()
            self.flying_origins.clear()

    cdef _raise_errors(self, int workers):
        cdef int t
        bad = None
        for t in range(workers):
            if self.errors[t].status in (FBPE_ENOMEM, FBPE_EPATTERN):
                rc = self.errors[t].status
                memset(self.errors, 0, self.threads * sizeof(fbpe_count_error))
                check(rc, "while counting pieces")
            if self.errors[t].status == FBPE_EUTF8 and (bad is None or self.errors[t].offset < bad[0]):
                bad = (self.errors[t].offset, self.errors[t].unit)
        memset(self.errors, 0, self.threads * sizeof(fbpe_count_error))
        if bad is not None:
            offset, unit = bad
            raise BadUTF8(self.flying_origins[unit], offset - self.flying_units[unit].base)

    def _pool(self):
        if self.pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="functionalbpe-count")
        return self.pool

    def _on_all(self, fn, int count):
        """fn(0) .. fn(count - 1), on this thread and count - 1 pool threads."""
        futures = [self._pool().submit(fn, k) for k in range(1, count)] if count > 1 else []
        failure = None
        try:
            fn(0)
        except BaseException as exc:
            failure = exc
        failure = failure or _wait_all(futures)
        if failure is not None:
            raise failure

    def _merge_part(self, int p):
        cdef int t, n = self.threads
        cdef fbpe_status rc
        cdef fbpe_table merged
        cdef fbpe_table **ins = <fbpe_table **>malloc(n * sizeof(fbpe_table *))
        if not ins:
            raise MemoryError()
        for t in range(n):
            ins[t] = &self.tables[t * n + p]
        fbpe_table_init(&merged)
        with nogil:
            rc = fbpe_merge_in_order(&merged, ins, n)
        free(ins)
        if rc:
            fbpe_table_free(&merged)
            check(rc, "while merging piece tables")
        self.tables[p] = merged  # worker 0's partition p; the inputs were freed

    cdef uint64_t *_ordered(self, size_t *size) except NULL:
        """Flush, merge, and list every entry in order of first occurrence: a malloc'd array
        of (partition << 32 | entry) over worker 0's tables."""
        self.flush()
        self._wait()
        if self.threads > 1:
            self._on_all(self._merge_part, self.threads)
        cdef size_t k, total = 0
        for k in range(self.threads):
            total += self.tables[k].size
        cdef uint64_t *order = <uint64_t *>malloc((total if total else 1) * sizeof(uint64_t))
        if not order:
            raise MemoryError()
        cdef fbpe_status rc
        with nogil:
            rc = fbpe_order_tables(self.tables, self.threads, order)
        if rc:
            free(order)
            check(rc, "while ordering the pieces")
        size[0] = total
        return order

    cdef inline fbpe_entry *_entry(self, uint64_t ref) nogil:
        return &self.tables[ref >> 32].entries[ref & 0xFFFFFFFFu]

    def result(self):
        """``{piece: count}`` in order of first occurrence."""
        cdef size_t k, n
        cdef uint64_t *order = self._ordered(&n)
        cdef const fbpe_entry *e
        try:
            out = _PyDict_NewPresized(n)
            for k in range(n):
                e = self._entry(order[k])
                piece = PyUnicode_DecodeUTF8(<const char *>fbpe_entry_bytes(&self.tables[order[k] >> 32], e),
                                             e.len, "surrogatepass")
                PyDict_SetItem(out, piece, e.count)
        finally:
            free(order)
        return out

    def flat(self):
        """The counts laid out flat, in order of first occurrence: ``(data, offsets, counts)``
        with piece ``i`` = ``data[offsets[i]:offsets[i + 1]]`` (UTF-8) occurring ``counts[i]``
        times; ``offsets`` and ``counts`` are ``array('q')``. No Python object per piece:
        what the fast trainer's ``train_merges_utf8`` takes.
        """
        cdef size_t k, n, total = 0, at = 0
        cdef uint64_t *order = self._ordered(&n)
        cdef const fbpe_entry *e
        try:
            for k in range(n):
                total += self._entry(order[k]).len
            data = PyBytes_FromStringAndSize(NULL, total)
            offsets = array.clone(pyarray.array("q"), n + 1, False)
            counts = array.clone(pyarray.array("q"), n, False)
            self._fill_flat(order, n, PyBytes_AS_STRING(data), offsets, counts)
        finally:
            free(order)
        return data, offsets, counts

    cdef _fill_flat(self, const uint64_t *order, size_t n, char *out, array.array offsets,
                    array.array counts):
        cdef long long *offs = offsets.data.as_longlongs
        cdef long long *cnts = counts.data.as_longlongs
        cdef size_t k, at = 0
        cdef const fbpe_entry *e
        with nogil:
            for k in range(n):
                e = self._entry(order[k])
                offs[k] = at
                cnts[k] = <long long>e.count
                memcpy(out + at, fbpe_entry_bytes(&self.tables[order[k] >> 32], e), e.len)
                at += e.len
            offs[n] = at

    def stats(self):
        """``(pieces held, bytes of memory they take)`` over all tables. Before the merge a
        piece counted by two workers is held (and counted here) twice."""
        self._wait()  # the tables are not read while workers write them
        cdef size_t t
        unique = memory = 0
        for t in range(self.num_tables):
            unique += self.tables[t].size
            memory += fbpe_table_memory(&self.tables[t])
        return unique, memory

    def close(self):
        """Stop the worker threads (the counts stay readable)."""
        try:
            self._wait()
        except BaseException:
            pass  # closing after a failure: the failure is already on its way
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None


def utf8_length(const uint8_t[::1] data):
    """The number of characters of valid UTF-8 ``data`` (its bytes that start one).

    >>> utf8_length("héllo".encode())
    5
    """
    cdef Py_ssize_t n = data.shape[0], k, chars = 0
    if n == 0:
        return 0
    cdef const uint8_t *s = &data[0]
    with nogil:
        for k in range(n):
            chars += (s[k] & 0xC0) != 0x80
    return chars


def utf8_prefix(const uint8_t[::1] data, Py_ssize_t chars):
    """The byte length of the first ``chars`` characters of valid UTF-8 ``data``.

    >>> utf8_prefix("héllo".encode(), 2)
    3
    """
    cdef Py_ssize_t n = data.shape[0], k = 0, seen = 0
    if chars <= 0 or n == 0:
        return 0
    cdef const uint8_t *s = &data[0]
    with nogil:
        while k < n:
            if (s[k] & 0xC0) != 0x80:
                if seen == chars:
                    break
                seen += 1
            k += 1
    return k
