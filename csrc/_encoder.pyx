# cython: language_level=3
# distutils: sources = csrc/lib/encode/encode.c csrc/lib/encode/encode_text.c csrc/lib/encode/ucs_utf8.c csrc/lib/encode/ranks.c csrc/lib/encode/pack.c csrc/lib/encode/file_encode.c csrc/lib/scan/cuts.c csrc/lib/scan/jsonl.c csrc/lib/scan/regex_vm.c csrc/lib/common/workers.c
# distutils: depends = csrc/lib/scan/regex_vm.h csrc/lib/scan/jsonl.h csrc/lib/common/bounds.h csrc/lib/common/hash.h csrc/lib/common/compact_slots.h csrc/lib/common/utf8.h csrc/lib/encode/encode.h csrc/lib/encode/encode_text.h csrc/lib/encode/ucs_utf8.h csrc/lib/encode/pack.h csrc/lib/encode/file_encode.h csrc/lib/encode/ranks.h csrc/lib/encode/vocab_slots.h csrc/lib/common/key_heap.h csrc/lib/scan/scan.h csrc/lib/scan/scanners.h csrc/lib/scan/markers.h csrc/lib/scan/markers_scan.h csrc/lib/scan/splitter.h csrc/lib/common/take_next.h csrc/lib/common/workers.h csrc/status.pxd
"""The compiled encoder and decoder: merge tables applied at memory speed.

Performance notes: what each choice is, and the measurement that made it.

* Merges live in a C hash table keyed by the pair of ids (one 64-bit key, linear probing,
  at most half full): one multiply and usually one cache line per lookup. The merged id is
  the rank, so there is no separate rank table.
* The vocabulary is the first cache, as in tiktoken: most pieces of real text are tokens
  already, and a piece that is a token needs no merging. A token is taken whole only if its
  own bytes encode to it (checked once, when the table is built): true of every token a
  trainer makes, not of every merge table, and the shortcut must never change a result.
* The second cache holds pieces that are not tokens (``" reconfiguration"`` as three ids).
  Each thread takes its own from a small pool in the encoder and gives it back after the
  call, so a cache is never shared while in use and needs no lock, yet is kept from one
  call to the next. A cache that reaches 65,536 pieces starts again from empty.
* A piece that is neither a token nor cached, 16 bytes or longer, is cut at every boundary
  that no merge can join across (a bit table of the bytes around each merge's meeting point,
  csrc/lib/encode/encode.c), and each part is looked up and merged alone: the result is the
  same, and the parts (single CJK characters and short words) are tokens or repeat. Chinese
  clauses under the gpt4 pattern are long pieces that seldom repeat whole: on 695 KB of
  zh-CN with a 32k vocabulary trained on 22 languages, callgrind counts 72 M instructions
  with the cut and 150 M without; 400 KB of base64 costs 1.3% more. Pieces of 3 bytes or
  fewer are merged each time: cheaper than a cache lookup and insert.
* Short pieces (≤ 64 symbols) merge by scanning an array on the stack for the lowest rank:
  quadratic in theory, and the fastest thing there is for the 2-20 symbols of a real piece.
* Long pieces that are a few runs (a megabyte of spaces, of one letter) merge in rounds over
  their run-length form, one short round per merge. Other long pieces (a minified file, a
  base64 blob) go to a sweep over buckets of positions in a linked array, one rank at a
  time, lowest first: each position is filed at most three times, so it is O(n log n) at
  worst. On a megabyte of spaces (32k vocabulary): the sweep alone 13 MB/s, the rounds over
  runs 300 MB/s; ordinary text 80-100 MB/s.
* The large tables (whole tokens, pairs, token bytes) sit on transparent huge pages where
  Linux gives them: o200k's whole-token table is 12.6 MB and nearly every piece probes it at
  a random place, so with 4 KB pages each probe is also a TLB miss; paired wall time
  1.01-1.10x faster (csrc/lib/encode/encode.c, table_alloc).
* A vocabulary grown in two stages (superwords; ``continued_from`` in ``tok.training``)
  encodes a piece of 16 bytes or more as its words' first-stage ids (tokens or cached),
  checked where words meet, then merges the second stage over those ids; a failed check sends
  the piece back to its bytes. Fresh English with a superword tokenizer of 8,192 ids: 145 M
  instructions before, 74 M after, about 42 M of them the compiled pattern engine
  (csrc/lib/encode/encode.c, "a piece in two stages").
* A backtracking encoder (the `bpe` crate's idea: each token compatible with the one before,
  read left to right from a trie) is built on request and tested exact, but not used: it
  saves 6-12% of the instructions on ja and ru parts of 16-64 bytes and loses wall time to
  its trie's cache misses (csrc/lib/encode/encode.c says how much).
* One new Python int per id would cost as much as all of the encoding before it: the ints
  of every token are made once per table, and the output list takes references to them.
* Text reaches C as UTF-8 without a copy when it is ASCII; other text is written as UTF-8
  by C from the str's own buffer (ucs_utf8.c: ASCII sixteen characters at a time, two-byte
  scripts eight; str.encode costs 11 instructions a byte on English prose, a sixth of
  encoding it with o200k; this about 5), except UCS-1 and UCS-4 text that is not mostly ASCII,
  which keeps str.encode (ours has no block path for its non-ASCII characters). For
  the built-in patterns the C scanner cuts it (csrc/lib/encode/encode_text.c inlines the
  scanner of each pattern into its own loop; the character tables are the scanner module's,
  borrowed) and no Python object is made per piece: a profile of the standard library shows
  the piece lookup (vocabulary probe, cache) at 2.5 times the scanner's time and the list at
  a third of it. Custom patterns and the schemes hand over pieces cut by ``regex`` (one
  UTF-8 pointer read and one probe each), and ``regex`` sets the pace there.
* Threads: worker threads take the texts of a batch from an atomic counter with the GIL
  released (a small batch stays on the calling thread). They are C threads made once and
  woken per call (csrc/lib/common/workers.c): a Python pool needs a Future, a work item and
  the GIL on each worker before and after its share. Each worker takes a cache from the
  pool, appends the ids of all its texts to one array of its own (one array per text is a
  malloc and a free per text), and reads a non-ASCII str's own buffer (1, 2 or 4 bytes per
  code point), writing its UTF-8 into a scratch array of its own without the GIL
  (encode_text.c). With short texts (49,020 lines of LibreOffice help) the calling thread's
  share under the GIL, turning ids into lists, takes as long as the encoding itself and is
  what bounds the gain of a second thread: Tokenizer.encode_batch plans no text when no
  special token is allowed, the outer list of results is made at its size, and
  encode_texts_flat skips the lists altogether (two numpy arrays written in C).
* Token files: encode_buffer_packed takes one buffer of bytes read from files and the ends
  of its units, so text from a file never becomes a str; the eot id after each document is
  written by the same C loop that packs the ids (numpy.insert would copy every id).
  jsonl_extract reads the text fields of a block of JSONL lines without the GIL
  (csrc/lib/scan/jsonl.c), leaving every line it is not sure of to Python.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_New
from cpython.sequence cimport PySequence_Fast_ITEMS
from cpython.pyport cimport PY_SSIZE_T_MAX
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import os
import threading
from array import array

from .util.checks import plain_str
from .util.collector import collector_paused


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL
    bint PyUnicode_IS_ASCII(object text)
    bint PyUnicode_IS_COMPACT_ASCII(object text)
    bint PyUnicode_Check(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    int PyUnicode_READY(object text)
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    # Borrowed and stolen references, without Cython's bookkeeping on a temporary.
    PyObject *tuple_item "PyTuple_GET_ITEM"(object t, Py_ssize_t i)
    PyObject *list_item "PyList_GET_ITEM"(object l, Py_ssize_t i)
    void list_set "PyList_SET_ITEM"(object l, Py_ssize_t i, PyObject *o)
    void incref "Py_INCREF"(PyObject *o)
    void decref "Py_DECREF"(PyObject *o)
    int _PyBytes_Resize(PyObject **b, Py_ssize_t size) except -1
    object PyMemoryView_FromMemory(char *mem, Py_ssize_t size, int flags)
    int PyBUF_READ


from cpython.pycapsule cimport PyCapsule_GetPointer

from status cimport (
    FBPE_ENOMEM, FBPE_MAX_THREADS, FBPE_MAX_TOKEN_BYTES, FBPE_MAX_TOTAL_TOKEN_BYTES,
    FBPE_MAX_VOCAB_SIZE, FBPE_MORE, FBPE_OK, check, fbpe_status,
)

import functionalbpe._scanner as _scanner
from utf8 cimport fbpe_utf8_invalid


cdef extern from "lib/encode/encode.h":
    ctypedef struct fbpe_ids:
        uint32_t *ids
        size_t len
        size_t cap
    ctypedef struct fbpe_cache:
        pass
    ctypedef struct fbpe_bpe:
        uint32_t num_fixed
        uint32_t num_tokens
        uint32_t num_ids
        uint32_t num_self_encoding
        uint32_t stage_limit
        int compact
    uint32_t FBPE_NO_RANK
    int FBPE_TABLES_AUTO, FBPE_TABLES_WIDE, FBPE_TABLES_COMPACT
    void fbpe_ids_init(fbpe_ids *v) nogil
    void fbpe_ids_free(fbpe_ids *v) nogil
    fbpe_status fbpe_ids_reserve(fbpe_ids *v, size_t extra) nogil
    fbpe_status fbpe_bpe_add_joins(fbpe_bpe *b, const uint32_t *joins, size_t num, int whole_pieces) nogil
    fbpe_status fbpe_bpe_new(const uint32_t *atom_cps, size_t num_atoms, const uint32_t *merges,
                             size_t num_merges, const uint8_t *const *specials,
                             const size_t *special_lens, size_t num_specials, int tables,
                             fbpe_bpe **out) nogil
    void fbpe_bpe_free(fbpe_bpe *b) nogil
    uint32_t fbpe_rank(const fbpe_bpe *b, uint32_t left, uint32_t right) nogil
    fbpe_status fbpe_merge(const fbpe_bpe *b, uint32_t *ids, size_t n, int method, size_t *len) nogil
    fbpe_status fbpe_bpe_backtracking(fbpe_bpe *b) nogil
    fbpe_status fbpe_bpe_set_stages(fbpe_bpe *b, uint32_t limit) nogil
    fbpe_status fbpe_encode_piece(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s, size_t n,
                                  size_t readable, fbpe_ids *out) nogil
    uint32_t fbpe_whole_token(const fbpe_bpe *b, const uint8_t *s, size_t n) nogil
    fbpe_cache *fbpe_cache_take(fbpe_bpe *b) nogil
    fbpe_cache *fbpe_cache_new(size_t limit)
    void fbpe_cache_delete(fbpe_cache *c)
    void fbpe_cache_store(fbpe_cache *c, const uint8_t *s, size_t n, const uint32_t *ids, size_t m)
    void fbpe_cache_give(fbpe_bpe *b, fbpe_cache *c) nogil
    void fbpe_cache_counts(fbpe_bpe *b, size_t *shared_pieces, size_t *pooled) nogil
    fbpe_status fbpe_decoded_size(const fbpe_bpe *b, const uint32_t *ids, size_t n, size_t *size) nogil
    void fbpe_decode(const fbpe_bpe *b, const uint32_t *ids, size_t n, uint8_t *out) nogil


cdef extern from "lib/scan/splitter.h":
    ctypedef struct fbpe_classes:
        pass
    ctypedef struct fbpe_markers:
        pass
    ctypedef enum fbpe_scanner:
        pass
    ctypedef struct fbpe_rx:
        pass
    ctypedef struct fbpe_splitter:
        const fbpe_markers *markers
        int options
        const fbpe_classes *classes
        fbpe_scanner which
        const fbpe_rx *prog
        int whole


cdef extern from "lib/encode/ucs_utf8.h":
    size_t fbpe_ucs_utf8_room(int kind, size_t n) nogil
    int fbpe_ucs_writes_faster(const void *s, int kind, size_t n) nogil
    size_t fbpe_ucs_to_utf8(const void *s, int kind, size_t n, uint8_t *dst) nogil
    size_t fbpe_ucs_utf8_len(const void *s, int kind, size_t n) nogil


cdef extern from "lib/encode/encode_text.h":
    ctypedef struct fbpe_text_unit:
        const uint8_t *data
        size_t len
        const void *ucs
        size_t ucs_len
        int ucs_kind
        size_t worker
        size_t off
        size_t count
        fbpe_status status
        int holds_needle
    ctypedef struct fbpe_needles:
        size_t num
    void fbpe_needles_init(fbpe_needles *nd, const uint8_t *const *text, const size_t *len, size_t num)
    int fbpe_needles_in(const fbpe_needles *nd, const uint8_t *s, size_t n) nogil
    ctypedef struct fbpe_text_batch:
        fbpe_ids *outs
        size_t num_workers
        size_t next_worker
        fbpe_text_unit *units
        size_t num_units
        size_t bytes
        size_t take
        size_t next
        const fbpe_needles *needles
    fbpe_status fbpe_encode_text(const fbpe_bpe *b, fbpe_cache *cache, const fbpe_splitter *sp,
                                 const uint8_t *s, size_t n, fbpe_ids *out) nogil
    void fbpe_encode_batch(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch) nogil
    void fbpe_encode_batch_on(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch,
                              size_t threads) nogil
    fbpe_status fbpe_encode_cached(const fbpe_cache *raw, const fbpe_splitter *sp, const uint8_t *s,
                                   size_t n, size_t *pos, size_t *end, fbpe_ids *out)


cdef extern from "lib/encode/pack.h":
    ctypedef struct fbpe_pack_job:
        const fbpe_text_batch *batch
        const uint32_t *out_map
        const uint8_t *last
        uint32_t eot
        int width
        const uint64_t *starts
        uint8_t *dst
        size_t next
        uint32_t widest
    void fbpe_pack_batch(fbpe_pack_job *job, size_t threads) nogil


cdef extern from "lib/common/workers.h":
    int fbpe_workers_available() nogil


# A piece this long is merged with the GIL released: long enough that other threads gain.
cdef size_t NOGIL_PIECE = 4096
# Below this much text in all, a batch is encoded on the calling thread: handing texts to
# other threads would cost more than it saves.
PARALLEL_MIN_BYTES = 256 << 10
# One text of at least this many bytes of UTF-8 is cut at safe places (fbpe_safe_cut,
# csrc/lib/scan/scan.c: the pieces of the units are the pieces of the whole) and its units are
# encoded on the worker threads, like a batch's texts. Module attributes, so that tests can
# make them tiny.
PARALLEL_TEXT_BYTES = 128 << 10
# A batch of at least this many characters, encoded on several threads into lists, is encoded in
# RESULT_STEPS steps: the lists of one step are made on the calling thread (they need the
# GIL) while the workers encode the next, instead of after all of them, when the other
# cores have nothing left to do. On 165,000 lines of English with cl100k the lists took
# 0.1 s against 0.14 s for encoding them on two threads.
STEPPED_MIN_CHARS = 1 << 20
RESULT_STEPS = 8
# Ids from which a batch's ids are laid out flat by all of its workers (pack.h).
PACK_PARALLEL_MIN_IDS = 1 << 16
# Ids from which one long text's ints are put in its list by the workers, and the most
# workers that do it (_TextBatch.ints_on_workers: each keeps a count per token).
INTS_PARALLEL_MIN_IDS = 1 << 16
cdef enum:
    INTS_MAX_WORKERS = 8
# The units: about UNITS_PER_THREAD per thread, so that a unit slower than the others (a
# paragraph of rare CJK) does not leave the other threads waiting; none under
# TEXT_UNIT_MIN_BYTES.
UNITS_PER_THREAD = 4
TEXT_UNIT_MIN_BYTES = 32 << 10
# A cut is looked for this far before each planned place, never further: a text without one
# there (a megabyte of spaces) loses that cut, not the time of a search through the unit.
CUT_WINDOW = 16 << 10
# encode_cached's cache of raw pieces, read when a BPE makes its cache: more than the distinct
# pieces of the standard library cut by the functionalizer split (131,707), which a smaller
# cache would keep emptying. A module attribute, so that tests can make it tiny.
RAW_CACHE_PIECES = 1 << 18

# A table of at most this many tokens makes the int of every token's id when it is built (at
# most 10 MB, the ints and their pointers, 0.02 s: every published vocabulary, o200k's 200,000
# ids among them), and its lists of ids are built without testing for one not made yet (about 2
# instructions an id of 8); a larger one makes each int the first time it is needed: made all
# at once, they were 40 MB of loading a million merges (a file of 17 MB) and 125 MB of 4.1
# million, most of them never encoded.
EAGER_INTS = 1 << 18

# The limits the C core keeps (csrc/lib/common/bounds.h); functionalbpe.core.limits and
# functionalbpe.core._native hold the same numbers, and the tests compare them.
LIMITS = {"MAX_VOCAB_SIZE": FBPE_MAX_VOCAB_SIZE, "MAX_TOKEN_BYTES": FBPE_MAX_TOKEN_BYTES,
          "MAX_TOTAL_TOKEN_BYTES": FBPE_MAX_TOTAL_TOKEN_BYTES, "MAX_THREADS": FBPE_MAX_THREADS}


# The threads of a call: the scanner module's rules, the same for counting and encoding.
thread_count = _scanner.thread_count
default_threads = _scanner.default_threads
markers_scanner_names = _scanner.markers_scanner_names

# The scanner of each pattern (llama3 cuts as gpt4), and the boundary-marker schemes by name
# ("markers[w,p,↑]"): MARKERS + the scheme's options.
MARKERS = 16
SCANNERS = dict(_scanner.SCANNERS)
# The pattern that leaves a unit whole: encode_each_piece's units are pieces already. The
# encoder takes it as one piece without running the pattern (fbpe_splitter.whole): the
# compiled engine spent 10 instructions a byte finding that a piece ends where the unit does.
WHOLE_PIECE = _scanner.PROGRAM + r"[\s\S]+"
SCANNERS.update({name: MARKERS + options for name, options in markers_scanner_names().items()})

# The scanner's tables, borrowed from the module that installs them (csrc/_scanner.pyx), the
# first time a text is cut: a tokenizer that only decodes, or uses a custom pattern, never
# has them measured.
cdef const fbpe_classes *_classes = NULL
cdef const fbpe_markers *_markers = NULL


_pool = None
_pool_pid = None
_pool_lock = threading.Lock()


def _thread_pool():
    """The worker threads, started on first use. A forked child starts its own: the
    parent's threads do not exist there, and their executor would wait for them forever."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(default_threads(), thread_name_prefix="functionalbpe-encode")
            _pool_pid = os.getpid()
        return _pool


def _held_across(str text, _TextBatch units, needles):
    """Whether a needle's text lies across a place where ``units`` cut ``text`` (each unit
    was searched on its own): the characters around each cut, as many as the longest needle
    has bytes, less one, on either side."""
    cdef size_t k, cut, start = 0, reach = max(len(n) for n in needles) - 1
    cdef bint ascii = PyUnicode_IS_ASCII(text)
    if not reach:
        return False
    for k in range(units.batch.num_units - 1):
        start += units.batch.units[k].len if ascii else units.batch.units[k].ucs_len
        cut = start
        around = text[cut - min(cut, reach):cut + reach].encode("utf-8", "surrogatepass")
        if any(needle in around for needle in needles):
            return True
    return False


def plain_strs(texts):
    """``texts`` as a list of exact ``str``, in one pass in C: util.checks.plain_str of each
    (a str as it is, a subclass copied, anything else a TypeError). As a map of plain_str,
    a Python call per text: 57 ms of 661,086 short lines, a sixth of encoding them on two
    threads, all of it before any worker starts.

    >>> plain_strs(("a", "b"))
    ['a', 'b']
    """
    cdef list out = list(texts)
    cdef Py_ssize_t k
    for k in range(len(out)):
        if type(<object>list_item(out, k)) is not str:
            out[k] = plain_str(<object>list_item(out, k))
    return out


def _run_batch(_TextBatch batch, size_t workers):
    _run(batch, workers)


cdef _run(_TextBatch batch, size_t workers):
    """Encode the batch on ``workers`` threads, the calling thread one of them: C threads
    made once (csrc/lib/common/workers.c), or where there are none (Windows) a Python pool."""
    if workers <= 1:
        batch.work()
        return
    if fbpe_workers_available():
        with nogil:
            fbpe_encode_batch_on(batch.b, &batch.split, &batch.batch, workers)
        return
    pool = _thread_pool()
    futures = [pool.submit(batch.work) for _ in range(workers - 1)]
    batch.work()
    for f in futures:
        f.result()


cdef object utf8_of(str text, const uint8_t **data, size_t *size):
    """Point at the UTF-8 of text; return the object that owns those bytes.

    A compact ASCII string's buffer is already its UTF-8: no copy. Other text is written by
    fbpe_ucs_to_utf8 where fbpe_ucs_writes_faster says it is the faster (UCS-2 on a processor
    with SSSE3, mostly-ASCII text of any width: ucs_utf8.c has the measurements); the rest,
    and text that holds a surrogate, by str.encode, strictly: a lone surrogate raises
    UnicodeEncodeError, which the caller handles."""
    cdef Py_ssize_t n
    cdef size_t room, got
    cdef int kind
    cdef PyObject *raw
    if PyUnicode_IS_ASCII(text):
        data[0] = <const uint8_t *>PyUnicode_AsUTF8AndSize(text, &n)
        size[0] = n
        return text
    kind = PyUnicode_KIND(text)
    room = fbpe_ucs_utf8_room(kind, len(text))
    if room <= <size_t>PY_SSIZE_T_MAX and fbpe_ucs_writes_faster(PyUnicode_DATA(text), kind, len(text)):
        encoded = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>room)
        got = fbpe_ucs_to_utf8(PyUnicode_DATA(text), kind, len(text),
                               <uint8_t *>PyBytes_AS_STRING(encoded))
        if got != <size_t>-1:
            raw = <PyObject *>encoded
            incref(raw)
            encoded = None  # raw is the only reference now: the bytes may be resized in place
            _PyBytes_Resize(&raw, <Py_ssize_t>got)  # shrinking: no copy, no failure
            encoded = <object>raw
            decref(raw)
            data[0] = <const uint8_t *>PyBytes_AS_STRING(encoded)
            size[0] = got
            return encoded
    encoded = text.encode("utf-8")
    data[0] = <const uint8_t *>PyBytes_AS_STRING(encoded)
    size[0] = PyBytes_GET_SIZE(encoded)
    return encoded


cdef int splitter_of(str pattern, fbpe_splitter *sp) except -1:
    """How ``pattern`` cuts text (a name of SCANNERS), with the scanner's tables."""
    global _classes, _markers
    sp.markers = NULL
    sp.options = 0
    sp.classes = NULL
    sp.which = <fbpe_scanner>0
    sp.prog = NULL
    sp.whole = pattern == WHOLE_PIECE
    if sp.whole:
        return 0
    if pattern.startswith(_scanner.PROGRAM):  # a compiled pattern, kept for good by _scanner
        sp.prog = <const fbpe_rx *>PyCapsule_GetPointer(_scanner._program_capsule(pattern),
                                                        b"functionalbpe._scanner.program")
        return 0
    try:
        which = SCANNERS[pattern]
    except KeyError:
        raise ValueError(f"no C scanner for pattern {pattern!r}; scanners: {', '.join(SCANNERS)}") from None
    if which >= MARKERS:
        if not _markers:
            _markers = <const fbpe_markers *>PyCapsule_GetPointer(
                _scanner._markers_capsule(), b"functionalbpe._scanner.markers")
        sp.markers = _markers
        sp.options = which - MARKERS
    else:
        if not _classes:
            _classes = <const fbpe_classes *>PyCapsule_GetPointer(
                _scanner._classes_capsule(), b"functionalbpe._scanner.classes")
        sp.classes = _classes
        sp.which = <fbpe_scanner>which
    return 0


cdef class _Needles:
    """The UTF-8 of the special tokens a batch looks for (fbpe_needles, encode_text.h)."""
    cdef fbpe_needles nd
    cdef list owned
    cdef const uint8_t **text
    cdef size_t *lens

    def __cinit__(self, needles):
        cdef size_t k, n
        self.owned = [bytes(x) for x in needles if len(x)]
        n = len(self.owned)
        self.text = <const uint8_t **>malloc((n + 1) * sizeof(uint8_t *))
        self.lens = <size_t *>malloc((n + 1) * sizeof(size_t))
        if not self.text or not self.lens:
            raise MemoryError()
        for k in range(n):
            self.text[k] = <const uint8_t *>PyBytes_AS_STRING(self.owned[k])
            self.lens[k] = PyBytes_GET_SIZE(self.owned[k])
        fbpe_needles_init(&self.nd, self.text, self.lens, n)

    def __dealloc__(self):
        free(self.text)
        free(self.lens)


cdef class _TextBatch:
    """Texts shared by worker threads; each worker calls work() with the GIL released."""
    cdef fbpe_text_batch batch
    cdef fbpe_bpe *b
    cdef fbpe_splitter split
    cdef list owners
    cdef BPE bpe  # kept alive: b, out_map and the ids' ints are its
    cdef const uint32_t *out_map  # the ids written for each token, or NULL: its own

    def __cinit__(self, BPE bpe, texts, str pattern, size_t workers, buffer=None, const uint64_t[::1] ends=None,
                  _Needles needles=None):
        """The units are ``texts`` (str), or with ``buffer`` (bytes of valid UTF-8) the byte
        ranges of it that ``ends`` closes: unit k is buffer[ends[k - 1]:ends[k]]. A unit that
        holds one of ``needles`` is not encoded (:meth:`holding_needles`)."""
        cdef size_t n = len(texts) if buffer is None else ends.shape[0], k
        cdef const uint8_t *base
        cdef size_t start = 0, size
        cdef int kind
        self.b = bpe.b
        self.bpe = bpe
        self.out_map = bpe.out_map
        splitter_of(pattern, &self.split)
        self.batch.units = <fbpe_text_unit *>calloc(n + 1, sizeof(fbpe_text_unit))
        # Zeroed arrays are empty ones (fbpe_ids_init).
        self.batch.outs = <fbpe_ids *>calloc(workers + 1, sizeof(fbpe_ids))
        if not self.batch.units or not self.batch.outs:
            raise MemoryError()
        self.batch.num_units = n
        self.batch.next = 0
        self.batch.num_workers = workers
        self.batch.next_worker = 0
        self.owners = []
        if needles is not None:
            self.owners.append(needles)
            self.batch.needles = &needles.nd
        if buffer is not None:
            # Bytes from a file, checked as UTF-8 where they were read: no str is ever made.
            # Or one text cut into units (BPE._text_units): an ASCII str, cut in bytes, or
            # another str, cut in characters, whose units the workers write as UTF-8.
            self.owners.append(buffer)
            if isinstance(buffer, str) and not PyUnicode_IS_ASCII(buffer):
                base = <const uint8_t *>PyUnicode_DATA(buffer)
                kind = PyUnicode_KIND(buffer)
                size = len(<str>buffer)
                for k in range(n):
                    if ends[k] < start or ends[k] > size:
                        raise ValueError(f"unit {k} ends at {ends[k]}, outside the text's {size} characters")
                    self.batch.units[k].ucs = base + start * kind
                    self.batch.units[k].ucs_len = ends[k] - start
                    self.batch.units[k].ucs_kind = kind
                    start = ends[k]
                self.batch.bytes = 2 * size
                return
            if isinstance(buffer, str):
                self.owners.append(utf8_of(buffer, &base, &size))
            else:
                base = <const uint8_t *>PyBytes_AS_STRING(buffer)
                size = PyBytes_GET_SIZE(buffer)
            for k in range(n):
                if ends[k] < start or ends[k] > size:
                    raise ValueError(f"unit {k} ends at {ends[k]}, outside the buffer's {size} bytes")
                self.batch.units[k].data = base + start
                self.batch.units[k].len = ends[k] - start
                start = ends[k]
            self.batch.bytes = size
            return
        # One tuple holds every text while the workers read them (the caller's list may change
        # under them), and the loop reads each text's buffer in place: a compact ASCII str's
        # is its UTF-8; for any other the worker writes the UTF-8 (encode_text.h). With an
        # append and a call per text this loop took a tenth of encoding 165,000 short lines
        # on one thread, all of it before any worker started.
        cdef tuple held = tuple(texts)
        cdef PyObject *item
        cdef fbpe_text_unit *u
        cdef size_t total = 0
        if <size_t>len(held) != n:
            raise ValueError(f"{len(held)} texts where {n} were counted")  # changed meanwhile
        self.owners.append(held)
        for k in range(n):
            item = tuple_item(held, k)
            if not PyUnicode_Check(<object>item):
                raise TypeError(f"a text must be a str, got {type(<object>item).__name__}")
            if PyUnicode_READY(<object>item) < 0:  # a no-op since 3.12; 3.11 may hold legacy strings
                raise MemoryError()
            u = &self.batch.units[k]
            if PyUnicode_IS_COMPACT_ASCII(<object>item):
                u.data = <const uint8_t *>PyUnicode_DATA(<object>item)
                u.len = PyUnicode_GET_LENGTH(<object>item)
                total += u.len
            else:
                u.ucs = PyUnicode_DATA(<object>item)
                u.ucs_len = PyUnicode_GET_LENGTH(<object>item)
                u.ucs_kind = PyUnicode_KIND(<object>item)
                total += 2 * u.ucs_len
        self.batch.bytes = total

    def __dealloc__(self):
        cdef size_t k
        if self.batch.outs:
            for k in range(self.batch.num_workers):
                fbpe_ids_free(&self.batch.outs[k])
            free(self.batch.outs)
        free(self.batch.units)

    def work(self):
        with nogil:
            fbpe_encode_batch(self.b, &self.split, &self.batch)

    def results(self):
        """One list of ids per text, in one pass: the outer list is made at its size, and
        each inner list takes references to the table's ints (no int is made).

        The cyclic garbage collector is held off while the lists are made: each new list is
        a tracked container, so every 700 of them started a collection that walked the
        young lists and every id in them. On 231,222 paragraphs (8.6 M ids) the lists took
        0.9-1.4 s with it, as long as encoding them on one thread, and 0.16-0.21 s without
        (a shared, loaded machine; the ratio held over three runs). Lists of ints hold no
        cycle, so nothing is left for the collector to find."""
        cdef list out = PyList_New(self.batch.num_units)
        with collector_paused():
            self.results_into(out, 0)
        return out

    cdef results_into(self, list out, size_t at):
        """Put the list of ids of unit k at out[at + k] (out made by PyList_New, the slots
        still empty)."""
        cdef size_t k, total = 0
        cdef fbpe_text_unit *u
        cdef list ids
        for k in range(self.batch.num_units):
            check(self.batch.units[k].status, "while encoding")
            total += self.batch.units[k].count
        if self.lists_on_workers(out, at, total):
            return
        for k in range(self.batch.num_units):
            u = &self.batch.units[k]
            ids = ids_to_list(self.bpe, self.batch.outs[u.worker].ids + u.off, u.count)
            incref(<PyObject *>ids)
            list_set(out, at + k, <PyObject *>ids)

    @property
    def num_units(self):
        return self.batch.num_units

    def holding_needles(self):
        """The units, in order, that hold one of the batch's needles."""
        cdef size_t k
        return [k for k in range(self.batch.num_units) if self.batch.units[k].holds_needle]

    def joined(self):
        """The ids of every unit, one unit after another, as one list: the units of one text
        (BPE._text_units)."""
        cdef size_t k, j, total = 0
        cdef fbpe_text_unit *u
        cdef const uint32_t *ids
        for k in range(self.batch.num_units):
            check(self.batch.units[k].status, "while encoding")
            total += self.batch.units[k].count
        cdef list out = PyList_New(total)
        if self.ints_on_workers(out, total):
            return out
        total = 0
        for k in range(self.batch.num_units):
            u = &self.batch.units[k]
            ids = self.batch.outs[u.worker].ids + u.off
            ids_into(self.bpe, out, total, ids, u.count)
            total += u.count
        return out

    cdef size_t ints_workers(self, size_t total):
        """How many workers put the ints of ``total`` ids into lists' slots (ints_by_workers),
        or 0 where that does not pay or cannot be done: every token's int must be made
        already (a worker makes none), and the ids many."""
        cdef size_t workers = min(self.batch.num_workers, self.batch.num_units, INTS_MAX_WORKERS)
        if workers <= 1 or total < INTS_PARALLEL_MIN_IDS or total > 0xFFFFFFFF or not self.bpe.all_ints_made \
                or not fbpe_workers_available():
            return 0
        return workers

    cdef ints_by_workers(self, PyObject ***dst, size_t workers):
        """Put the ints of unit k's ids into the empty slots from dst[k] on, for every unit,
        on ``workers`` threads (ints_workers).

        The calling thread keeps the GIL throughout: no other thread may change an int's
        count while the workers tally theirs, which are then added once per int. Put by the
        calling thread alone, the ints were a sixth of encoding English with o200k on one
        thread (perf), all of it after the workers had finished."""
        cdef BPE bpe = self.bpe
        cdef size_t num_touched[INTS_MAX_WORKERS]
        cdef fbpe_ints_job job
        cdef size_t k
        bpe.reserve_int_counts(workers)
        job.objects = bpe.id_objects
        job.num_objects = bpe.num_id_objects
        job.batch = &self.batch
        job.dst = dst
        job.take = fbpe_take_size(self.batch.num_units, self.batch.bytes, workers)
        job.counts = bpe.int_counts
        job.touched = bpe.int_touched
        job.num_touched = num_touched
        job.workers = workers
        for k in range(workers):
            num_touched[k] = 0
        fbpe_ints_run(&job)
        fbpe_ints_take(&job)

    cdef bint ints_on_workers(self, list out, size_t total) except -1:
        """Put the ints of every unit's ids into out's empty slots on the workers, one unit
        after another, or return False where that does not pay or cannot be done."""
        return self.ints_into_lists(out, 0, total, False)

    cdef bint lists_on_workers(self, list out, size_t at, size_t total) except -1:
        """Make each unit's list at out[at + k] here, empty, and let the workers put the ints
        in (ints_by_workers), or return False where that does not pay or cannot be done: the
        calling thread, which must hold the GIL to make a list, then writes no id. (While the
        workers encode a batch's next step, _encoded_in_steps, the ints are put by this
        thread alone, as before.)"""
        return self.ints_into_lists(out, at, total, True)

    cdef bint ints_into_lists(self, list out, size_t at, size_t total, bint per_unit) except -1:
        """The ints of the units' ``total`` ids put by the workers: into out's own slots, one
        unit after another (``per_unit`` false), or into a new list per unit at out[at + k];
        False, and nothing done, where that does not pay or cannot be done."""
        cdef size_t workers = self.ints_workers(total), k, units = self.batch.num_units
        cdef PyObject **items = PySequence_Fast_ITEMS(out)
        cdef list ids
        if not workers:
            return False
        cdef PyObject ***dst = <PyObject ***>malloc((units + 1) * sizeof(PyObject **))
        if not dst:
            raise MemoryError()
        try:
            for k in range(units):
                if per_unit:
                    ids = PyList_New(self.batch.units[k].count)
                    incref(<PyObject *>ids)
                    list_set(out, at + k, <PyObject *>ids)
                    dst[k] = PySequence_Fast_ITEMS(ids)
                else:
                    dst[k] = items
                    items += self.batch.units[k].count
            self.ints_by_workers(dst, workers)
        finally:
            free(dst)
        return True

    def total(self):
        """How many ids all the units encode to."""
        cdef size_t k, total = 0
        for k in range(self.batch.num_units):
            check(self.batch.units[k].status, "while encoding")
            total += self.batch.units[k].count
        return total

    def packed_with_eot(self, int width, const uint8_t[::1] last, long long eot):
        """All the ids as little-endian integers of ``width`` bytes, with ``eot`` (when it is
        not negative) after each unit whose ``last`` is 1 (the end of a document), and the
        number of ids of each unit (its eot not counted) as a uint64 array: a token file's
        bytes and where its documents end, with no Python object per id or per unit."""
        cdef size_t k, total = 0, units = self.batch.num_units, threads
        cdef bint with_eot = eot >= 0
        if width != 2 and width != 4:
            raise ValueError(f"width must be 2 or 4, got {width}")
        if <size_t>last.shape[0] != units:
            raise ValueError(f"{last.shape[0]} end flags for {units} units")
        if eot > 0xFFFFFFFF:
            raise OverflowError(f"eot {eot} is not a 32-bit id")
        import numpy
        counts = numpy.empty(units, dtype=numpy.uint64)
        starts = numpy.empty(units, dtype=numpy.uint64)
        cdef uint64_t[::1] counted = counts
        cdef uint64_t[::1] begins = starts
        for k in range(units):
            check(self.batch.units[k].status, "while encoding")
            begins[k] = total
            counted[k] = self.batch.units[k].count
            total += self.batch.units[k].count + (1 if with_eot and last[k] else 0)
        if total > <size_t>PY_SSIZE_T_MAX // 4:
            check(FBPE_ENOMEM, f"for {total} ids")
        data = PyBytes_FromStringAndSize(NULL, total * width)
        cdef fbpe_pack_job job
        job.batch = &self.batch
        job.out_map = self.out_map
        job.last = &last[0] if with_eot and units else NULL
        job.eot = <uint32_t>eot if with_eot else 0
        job.width = width
        job.starts = &begins[0] if units else NULL
        job.dst = <uint8_t *>PyBytes_AS_STRING(data)
        # On the workers that encoded the batch, where there are enough ids to share.
        threads = self.batch.num_workers if total >= PACK_PARALLEL_MIN_IDS else 1
        with nogil:
            fbpe_pack_batch(&job, threads)
        if width == 2 and job.widest > 0xFFFF:
            raise OverflowError("an id does not fit in 2 bytes; use 4")
        return data, counts

    def packed(self, int width):
        """All the ids one after another as little-endian integers of ``width`` bytes (2 or
        4), and the number of ids of each text: a token file's bytes, with no Python int per
        id (making the list and then an array of it cost more than the encoding)."""
        import numpy
        data, counts = self.packed_with_eot(width, numpy.zeros(self.batch.num_units, dtype=numpy.uint8), -1)
        return data, counts.tolist()


cdef list ids_to_list(BPE bpe, const uint32_t *ids, size_t n):
    """A list of the Python ints for ids. The ints are made once per token (new_id_object), so
    building the list allocates nothing but the list: making a new int per id cost more than
    all of the encoding before it."""
    cdef list out = PyList_New(n)
    ids_into(bpe, out, 0, ids, n)
    return out


cdef extern from *:
    """
    /* The ints of ids[0..n) into dst[0..), new references, up to the first id whose int is
     * not made yet (objects[id] NULL): how many were put. Plain C, so that the loop is
     * what the loop over a tuple of every token's int was. */
    static size_t fbpe_ints_into(PyObject *const *objects, const uint32_t *ids, size_t n,
                                 PyObject **dst) {
        size_t k = 0;
        for (; k < n; k++) {
            PyObject *o = objects[ids[k]];
            if (!o) break;
            Py_INCREF(o);
            dst[k] = o;
        }
        return k;
    }
    /* The same where every int is made: no test. */
    static void fbpe_all_ints_into(PyObject *const *objects, const uint32_t *ids, size_t n,
                                   PyObject **dst) {
        for (size_t k = 0; k < n; k++) {
            PyObject *o = objects[ids[k]];
            Py_INCREF(o);
            dst[k] = o;
        }
    }
    """
    size_t fbpe_ints_into(PyObject **objects, const uint32_t *ids, size_t n, PyObject **dst)
    void fbpe_all_ints_into(PyObject **objects, const uint32_t *ids, size_t n, PyObject **dst)


cdef extern from *:
    """
    #include "lib/common/take_next.h"
    #include "lib/common/workers.h"
    /* The ints of a batch's ids put into a list's slots by the workers (ints_on_workers). A
     * worker only reads objects[id] and writes the slot: it touches no object, so it needs
     * no GIL; the references are taken afterwards, with the GIL, as one addition to each
     * int's count (counts[id], the ids whose count left zero listed in touched). */
    typedef struct {
        PyObject *const *objects;  /* the int of each token */
        size_t num_objects;
        const fbpe_text_batch *batch;
        PyObject **const *dst;     /* per unit: the empty slot its first id's int goes to */
        size_t take;               /* units a worker takes at a time */
        uint32_t *counts;          /* per worker: num_objects counts, zero before */
        uint32_t *touched;         /* per worker: room for num_objects ids */
        size_t *num_touched;       /* per worker */
        size_t workers, next, next_worker;
    } fbpe_ints_job;

    static void fbpe_ints_work(void *arg) {
        fbpe_ints_job *job = (fbpe_ints_job *)arg;
        size_t w = fbpe_take_next(&job->next_worker), t = 0;
        if (w >= job->workers) return;
        uint32_t *count = job->counts + w * job->num_objects;
        uint32_t *touched = job->touched + w * job->num_objects;
        PyObject *const *objects = job->objects;
        size_t first, last;
        while (fbpe_take_range(&job->next, job->take, job->batch->num_units, &first, &last)) {
            for (size_t k = first; k < last; k++) {
                const fbpe_text_unit *u = &job->batch->units[k];
                const uint32_t *ids = job->batch->outs[u->worker].ids + u->off;
                PyObject **dst = job->dst[k];
                for (size_t j = 0; j < u->count; j++) {
                    uint32_t id = ids[j];
                    dst[j] = objects[id];
                    if (!count[id]++) touched[t++] = id;
                }
            }
        }
        job->num_touched[w] = t;
    }

    static void fbpe_ints_run(fbpe_ints_job *job) {
        job->next = job->next_worker = 0;
        fbpe_workers_run(job->workers, fbpe_ints_work, job);
    }

    /* Take the references counted by the workers, and leave the counts at zero. */
    static void fbpe_ints_take(fbpe_ints_job *job) {
        for (size_t w = 0; w < job->workers; w++) {
            uint32_t *count = job->counts + w * job->num_objects;
            const uint32_t *touched = job->touched + w * job->num_objects;
            for (size_t t = 0; t < job->num_touched[w]; t++) {
                PyObject *o = job->objects[touched[t]];
    #if defined(Py_REF_DEBUG) || defined(Py_GIL_DISABLED)
                for (uint32_t c = count[touched[t]]; c; c--) Py_INCREF(o);
    #else
                Py_SET_REFCNT(o, Py_REFCNT(o) + (Py_ssize_t)count[touched[t]]);
    #endif
                count[touched[t]] = 0;
            }
            job->num_touched[w] = 0;
        }
    }
    """
    ctypedef struct fbpe_ints_job:
        PyObject **objects
        size_t num_objects
        const fbpe_text_batch *batch
        PyObject ***dst
        size_t take
        uint32_t *counts
        uint32_t *touched
        size_t *num_touched
        size_t workers
    void fbpe_ints_run(fbpe_ints_job *job)
    void fbpe_ints_take(fbpe_ints_job *job)
    size_t fbpe_take_size(size_t n, size_t bytes, size_t threads)


cdef int ids_into(BPE bpe, list out, size_t at, const uint32_t *ids, size_t n) except -1:
    """Put the ints of ids[0..n) at out[at..at + n) (slots of a new list, still empty): a loop
    in C that stops at a token whose int is not made yet, which is then made, and goes on.
    (A call for that inside the loop made it 10 instructions an id under callgrind, against
    the 8 of the tuple it replaces; the test alone costs about 2, which a table of at most
    EAGER_INTS tokens, every int made with it, does not pay.)"""
    cdef PyObject **items = PySequence_Fast_ITEMS(out) + at
    cdef size_t k = 0
    if bpe.all_ints_made:
        fbpe_all_ints_into(bpe.id_objects, ids, n, items)
        return 0
    while True:
        k += fbpe_ints_into(bpe.id_objects, ids + k, n - k, items + k)
        if k == n:
            return 0
        bpe.new_id_object(ids[k])


cdef class BPE:
    """A merge table compiled for encoding and decoding.

    ``atoms`` are the code points of the scheme's atoms (ids 256 on), ``merges`` the
    ``(left, right)`` pairs in order, ``specials`` the special tokens' texts.

    ``output_ids``, when given, is the id each of the tokens (bytes, atoms, merges) is
    written as in encoding's output: the ids of an imported vocabulary.

    >>> bpe = BPE([], [(104, 105)], ["<|e|>"])
    >>> bpe.encode_pieces(["hi", "hii"]), bpe.decode_bytes([256, 257])
    ([256, 256, 105], b'hi<|e|>')
    """
    cdef fbpe_bpe *b
    # The Python int of each token's output id, made the first time the token leaves as one
    # (id_object) and kept: building a list of ids then allocates nothing but the list. Made
    # all at once, they were 125 MB and 0.3 s of loading 4.1 million merges, most of them
    # never encoded.
    cdef PyObject **id_objects
    cdef size_t num_id_objects
    cdef bint all_ints_made
    # The id written for each token where ids leave C as numbers (token files, flat batches),
    # as id_objects is where they leave as Python ints; NULL when every token is its own id.
    cdef uint32_t *out_map
    cdef fbpe_cache *raw_cache  # encode_cached's: raw piece -> ids of its text form
    # The merges the table borrows (fbpe_bpe_new): the caller's flat array('I') (Pairs.ids,
    # held here, and exported, so it cannot be resized), or a copy of a list of pairs.
    cdef const uint32_t[::1] merges_view
    cdef uint32_t *own_merges
    # _TextBatch.ints_on_workers's tallies: per worker, a count per token (zero between
    # calls) and room for the tokens counted; for int_workers workers, made on first use.
    cdef uint32_t *int_counts
    cdef uint32_t *int_touched
    cdef size_t int_workers

    def __cinit__(self, atoms, merges, specials=(), output_ids=None, joins=(), bint whole_pieces=False,
                  compact=None):
        # compact: None chooses the tables' layout by the vocabulary's size (encode.h,
        # FBPE_COMPACT_FROM); True or False forces it, for tests (the ids are the same).
        cdef int tables = FBPE_TABLES_AUTO if compact is None else (
            FBPE_TABLES_COMPACT if compact else FBPE_TABLES_WIDE)
        cdef size_t num_atoms = len(atoms), num_merges = len(merges), num_specials = len(specials)
        cdef fbpe_status rc
        cdef const uint32_t[::1] flat = None
        cdef const uint32_t *merge_ids
        if isinstance(merges, array) and merges.typecode == "I":
            # The merges laid out flat, left and right of each in turn (Pairs.ids): read
            # where they are, with no Python object per id.
            flat = merges
            num_merges = len(merges) // 2
        if num_atoms > 0x1000 or num_merges > FBPE_MAX_VOCAB_SIZE or num_specials > FBPE_MAX_VOCAB_SIZE:
            raise ValueError(f"{num_atoms} atoms, {num_merges} merges and {num_specials} special tokens "
                             f"are more than {FBPE_MAX_VOCAB_SIZE} ids")
        cdef uint32_t *atom_cps = <uint32_t *>malloc((num_atoms + 1) * sizeof(uint32_t))
        cdef uint32_t *pairs = <uint32_t *>malloc((2 * num_merges + 1) * sizeof(uint32_t)) if flat is None \
            else <uint32_t *>malloc(sizeof(uint32_t))
        cdef const uint8_t **special_ptrs = <const uint8_t **>malloc((num_specials + 1) * sizeof(uint8_t *))
        cdef size_t *special_lens = <size_t *>malloc((num_specials + 1) * sizeof(size_t))
        cdef size_t k
        encoded = [s.encode("utf-8") for s in specials]
        try:
            if not atom_cps or not pairs or not special_ptrs or not special_lens:
                raise MemoryError()
            for k in range(num_atoms):
                atom_cps[k] = atoms[k]
            if flat is None:
                for k in range(num_merges):
                    left, right = merges[k]
                    pairs[2 * k] = left
                    pairs[2 * k + 1] = right
            for k in range(num_specials):
                special_ptrs[k] = <const uint8_t *>PyBytes_AS_STRING(encoded[k])
                special_lens[k] = PyBytes_GET_SIZE(encoded[k])
            # Kept for as long as the table borrows them.
            if flat is not None and num_merges:
                merge_ids = &flat[0]
                self.merges_view = flat
            else:
                merge_ids = pairs
                self.own_merges, pairs = pairs, NULL
            with nogil:
                rc = fbpe_bpe_new(atom_cps, num_atoms, merge_ids, num_merges, special_ptrs, special_lens,
                                  num_specials, tables, &self.b)
            check(rc, "for the merge table",
                  "the merge table is inconsistent (a merge of an id not defined before it, a pair "
                  "merged twice, a bad atom) or passes a limit of functionalbpe.core.limits")
            if joins or whole_pieces:
                self._add_joins(joins, whole_pieces)
            self.id_objects = <PyObject **>calloc(self.b.num_tokens, sizeof(PyObject *))
            if not self.id_objects:
                raise MemoryError()
            self.num_id_objects = self.b.num_tokens
            if output_ids is not None:
                if len(output_ids) != self.b.num_tokens:
                    raise ValueError(f"output_ids gives {len(output_ids)} ids for {self.b.num_tokens} tokens")
                self.out_map = <uint32_t *>malloc(self.b.num_tokens * sizeof(uint32_t))
                if not self.out_map:
                    raise MemoryError()
                identity = True
                for k in range(self.b.num_tokens):
                    out_id = int(output_ids[k])
                    if not 0 <= out_id <= 0xFFFFFFFF:
                        raise ValueError(f"output id {out_id} is not a 32-bit id")
                    self.out_map[k] = out_id
                    identity = identity and out_id == k
                if identity:
                    free(self.out_map)
                    self.out_map = NULL
            if self.b.num_tokens <= EAGER_INTS:
                for k in range(self.b.num_tokens):
                    self.new_id_object(<uint32_t>k)
                self.all_ints_made = True
        finally:
            free(atom_cps)
            free(pairs)
            free(special_ptrs)
            free(special_lens)

    def _add_joins(self, joins, bint whole_pieces):
        cdef size_t n = len(joins), k
        cdef fbpe_status rc
        cdef uint32_t *flat = <uint32_t *>malloc((3 * n + 1) * sizeof(uint32_t))
        if not flat:
            raise MemoryError()
        try:
            for k in range(n):
                flat[3 * k], flat[3 * k + 1], flat[3 * k + 2] = joins[k]
            with nogil:
                rc = fbpe_bpe_add_joins(self.b, flat, n, whole_pieces)
            check(rc, "for the joins", "a join names an id out of range, bytes that are not its "
                  "token's, or a pair given twice")
        finally:
            free(flat)

    cdef int reserve_int_counts(self, size_t workers) except -1:
        """Room for the tallies of ``workers`` workers (int_counts, zero; int_touched)."""
        if workers <= self.int_workers:
            return 0
        free(self.int_counts)
        free(self.int_touched)
        self.int_workers = 0
        self.int_counts = <uint32_t *>calloc(workers * self.num_id_objects, sizeof(uint32_t))
        self.int_touched = <uint32_t *>malloc(workers * self.num_id_objects * sizeof(uint32_t) + 1)
        if not self.int_counts or not self.int_touched:
            raise MemoryError()
        self.int_workers = workers
        return 0

    def __dealloc__(self):
        cdef size_t k
        free(self.int_counts)
        free(self.int_touched)
        if self.id_objects:
            for k in range(self.num_id_objects):
                if self.id_objects[k]:
                    decref(self.id_objects[k])
        free(self.id_objects)
        free(self.out_map)
        fbpe_cache_delete(self.raw_cache)
        fbpe_bpe_free(self.b)
        free(self.own_merges)

    cdef PyObject *new_id_object(self, uint32_t token) except NULL:
        """The int of ``token``'s output id, made and kept (the GIL held: no other thread
        writes the table meanwhile)."""
        cdef object value = self.out_map[token] if self.out_map else token
        cdef PyObject *made = <PyObject *>value
        incref(made)
        self.id_objects[token] = made
        return made

    @property
    def num_ids(self):
        return self.b.num_ids

    @property
    def num_self_encoding(self):
        """How many tokens (atoms and merges) encode to themselves from their own bytes."""
        return self.b.num_self_encoding

    @property
    def compact_tables(self):
        """Whether the pair and whole-token tables are compact (a large vocabulary, encode.h)."""
        return bool(self.b.compact)

    @property
    def all_self_encoding(self):
        return self.b.num_self_encoding == self.b.num_tokens - 256

    def rank(self, uint32_t left, uint32_t right):
        """The id that (left, right) merges into, or None."""
        cdef uint32_t r = fbpe_rank(self.b, left, right)
        return None if r == FBPE_NO_RANK else r

    def whole_token(self, bytes piece):
        """The token whose text-form bytes are ``piece`` and which encodes to itself, or None."""
        cdef uint32_t r = fbpe_whole_token(self.b, <const uint8_t *>PyBytes_AS_STRING(piece),
                                           PyBytes_GET_SIZE(piece))
        return None if r == FBPE_NO_RANK else r

    def set_stages(self, uint32_t limit):
        """Say that the merges from id ``limit`` on were learned after those before it (a
        vocabulary grown in two stages: superwords, continued training); long pieces are then
        encoded in two stages, with the same ids (csrc/lib/encode/encode.c, "a piece in two
        stages"). ``num_tokens`` (or the first merged id): one stage. ValueError for a limit
        out of that range, or a table with atoms or joins. Call it before other threads use
        the table."""
        check(fbpe_bpe_set_stages(self.b, limit), "while setting the stages",
              f"the limit is between {self.b.num_fixed} and {self.b.num_tokens}, and a table "
              "with atoms or joins has one stage")

    @property
    def stage_limit(self):
        """The first id of the second stage, or None for one stage."""
        return self.b.stage_limit or None

    def cache_counts(self):
        """``(pieces, pooled)``: the pieces in the cache that calls take first and share
        among their threads (0 while a call holds it), and the caches waiting in the pool for
        calls made while another holds it."""
        cdef size_t pieces, pooled
        fbpe_cache_counts(self.b, &pieces, &pooled)
        return pieces, pooled

    @property
    def num_tokens(self):
        return self.b.num_tokens

    def build_backtracking(self):
        """Build the backtracking encoder that ``merge_symbols(..., 4)`` runs and that then
        encodes pieces of 2-64 bytes in place of the short scan: fewer instructions, more cache
        misses, and not built by default (csrc/lib/encode/encode.c says why). ValueError for a
        table with atoms or joins. Call it before other threads use the table."""
        cdef fbpe_status rc
        with nogil:
            rc = fbpe_bpe_backtracking(self.b)
        check(rc, "while building the backtracking encoder", "a table with atoms or joins has none")

    def merge_symbols(self, symbols, int method=0):
        """Merge a sequence of symbol ids (method 1: the short scan, 2: the long sweep, 3: the
        rounds over runs, 4: the backtracking encoder, bytes only, where it is built)."""
        cdef size_t n = len(symbols), k, m
        cdef fbpe_status rc
        cdef uint32_t *ids = <uint32_t *>malloc((n + 1) * sizeof(uint32_t))
        if not ids:
            raise MemoryError()
        try:
            for k in range(n):
                ids[k] = symbols[k]
                if ids[k] >= self.b.num_tokens:
                    raise ValueError(f"symbol {ids[k]} at position {k} is not a token")
            with nogil:
                rc = fbpe_merge(self.b, ids, n, method, &m)
            check(rc, "while merging", "the short scan takes at most 64 symbols; the backtracking "
                  "encoder takes bytes, once built")
            return ids_to_list(self, ids, m)
        finally:
            free(ids)

    def encode_pieces(self, pieces):
        """The ids of text-form pieces (str), one after the other."""
        cdef fbpe_ids out
        cdef fbpe_cache *cache = fbpe_cache_take(self.b)
        fbpe_ids_init(&out)
        if not cache:
            raise MemoryError()
        try:
            self._append_pieces(pieces, cache, &out)
            return ids_to_list(self, out.ids, out.len)
        finally:
            fbpe_cache_give(self.b, cache)
            fbpe_ids_free(&out)

    cdef int _append_pieces(self, pieces, fbpe_cache *cache, fbpe_ids *out) except -1:
        """Append the ids of text-form pieces (str) to out; a long piece without the GIL."""
        cdef Py_ssize_t size
        cdef const char *data
        cdef fbpe_status rc
        for piece in pieces:
            data = PyUnicode_AsUTF8AndSize(piece, &size)
            if <size_t>size >= NOGIL_PIECE:
                with nogil:
                    rc = fbpe_encode_piece(self.b, cache, <const uint8_t *>data, size, size, out)
            else:
                rc = fbpe_encode_piece(self.b, cache, <const uint8_t *>data, size, size, out)
            check(rc, "while encoding")
        return 0

    def encode_piece(self, str piece):
        return self.encode_pieces((piece,))

    def encode_cached(self, str text, str pattern, forms):
        """The ids of ``text`` (no special tokens) cut by the C scanner for ``pattern``, for a
        scheme that writes each raw piece's text form on its own: ``forms(piece)`` gives the
        text-form pieces of a raw piece. The ids of each raw piece are cached, so ``forms``
        is called once per new piece, and a repeated piece costs one lookup in C.

        The cache belongs to this object and is only touched with the GIL held, between
        calls of ``forms``, so several threads may share it.
        """
        cdef fbpe_splitter split
        cdef const uint8_t *data
        cdef size_t size, pos = 0, end = 0
        cdef fbpe_status rc
        cdef fbpe_ids out, piece_ids
        cdef fbpe_cache *cache
        splitter_of(pattern, &split)
        if split.markers:
            raise ValueError(f"{pattern!r} is a marker scheme, not a pattern")
        if not self.raw_cache:
            self.raw_cache = fbpe_cache_new(RAW_CACHE_PIECES)
            if not self.raw_cache:
                raise MemoryError()
        owner = utf8_of(text, &data, &size)
        fbpe_ids_init(&out)
        fbpe_ids_init(&piece_ids)
        cache = fbpe_cache_take(self.b)
        try:
            if not cache:
                raise MemoryError()
            while True:
                rc = fbpe_encode_cached(self.raw_cache, &split, data, size, &pos, &end, &out)
                if rc == FBPE_OK:
                    return ids_to_list(self, out.ids, out.len)
                check(rc, "while encoding")  # else FBPE_MORE: a piece not in the cache
                piece_ids.len = 0
                # The scanner cuts at code points: the piece is whole UTF-8.
                self._append_pieces(forms((<const char *>data)[pos:end].decode("utf-8")), cache, &piece_ids)
                check(fbpe_ids_reserve(&out, piece_ids.len), "while encoding")
                memcpy(out.ids + out.len, piece_ids.ids, piece_ids.len * sizeof(uint32_t))
                out.len += piece_ids.len
                fbpe_cache_store(self.raw_cache, data + pos, end - pos, piece_ids.ids, piece_ids.len)
                pos = end
        finally:
            fbpe_cache_give(self.b, cache)
            fbpe_ids_free(&out)
            fbpe_ids_free(&piece_ids)

    cdef int _encode_text(self, str text, str pattern, fbpe_ids *out, _Needles needles=None,
                          refuse=None) except -1:
        """Encode text into out (which the caller frees), the GIL released; when its UTF-8
        holds one of ``needles``, ``refuse()`` first (from the same UTF-8: a str that is
        not ASCII has it written once)."""
        cdef fbpe_splitter split
        cdef const uint8_t *data
        cdef size_t size
        cdef fbpe_cache *cache
        cdef fbpe_status rc
        cdef int found = 0
        splitter_of(pattern, &split)
        owner = utf8_of(text, &data, &size)  # keeps the bytes alive while the GIL is off
        if needles is not None:
            with nogil:
                found = fbpe_needles_in(&needles.nd, data, size)
            if found:
                refuse()
        with nogil:
            cache = fbpe_cache_take(self.b)
            rc = fbpe_encode_text(self.b, cache, &split, data, size, out)
            fbpe_cache_give(self.b, cache)
        return check(rc, "while encoding")

    def encode_text(self, str text, str pattern, threads=1, needles=(), refuse=None):
        """The ids of ``text`` (no special tokens) cut by the C scanner for ``pattern``; a long
        text on ``threads`` threads (None: all cores), the same ids for any number.

        When the text holds the UTF-8 of one of ``needles`` (bytes), ``refuse()`` is called
        first, and decides (it raises where the text holds a special token it refuses): the
        search runs in C, on the workers for a long text, a tenth of the time of str's own
        search for each token on one thread."""
        cdef fbpe_ids out
        cdef _Needles looked_for = _Needles(needles) if needles else None
        if threads != 1:
            units = self._text_units(text, pattern, threads, looked_for)
            if units is not None:
                if looked_for is not None and (units.holding_needles() or _held_across(text, units, needles)):
                    refuse()
                    return self.encode_text(text, pattern, threads)
                return units.joined()
        fbpe_ids_init(&out)
        try:
            self._encode_text(text, pattern, &out, looked_for, refuse)
            return ids_to_list(self, out.ids, out.len)
        finally:
            fbpe_ids_free(&out)

    def count_text(self, str text, str pattern, threads=1):
        """How many ids ``text`` encodes to (as ``len(encode_text(...))``, without the list)."""
        cdef fbpe_ids out
        if threads != 1:
            units = self._text_units(text, pattern, threads)
            if units is not None:
                return units.total()
        fbpe_ids_init(&out)
        try:
            self._encode_text(text, pattern, &out)
            return out.len
        finally:
            fbpe_ids_free(&out)

    def _text_units(self, str text, str pattern, threads, _Needles needles=None):
        """One long text cut at safe places and its units encoded on the worker threads (a
        _TextBatch of them, in order), or None when it stays on one thread:
        it is short, one thread is asked for, no safe place is found, or the scanner is one
        whose pieces a safe cut may change (the marker scheme's, whose dropped spaces need
        both neighbours; a scanner that joins runs of identical pieces, scan.c).

        A safe cut is a place where a piece of the whole text ends and every piece before it
        was decided as the end of the text would decide it, so the pieces of the units are
        the pieces of the whole; each piece is encoded on its own, so the ids are too."""
        cdef const uint8_t *data
        cdef size_t size, wanted, k, target, prev = 0, cut, lo, length = len(text), extent
        cdef bint ascii
        if length < PARALLEL_TEXT_BYTES // 4:  # at most 4 bytes a character
            return None
        if pattern not in _scanner.PATTERN_SCANNERS:  # the marker scheme, joined runs
            return None
        workers = thread_count(threads)
        if workers <= 1:
            return None
        # An ASCII str's buffer is its UTF-8, cut in bytes. Any other is cut in characters
        # (the same cuts, _scanner.safe_cut_text) and each worker writes the UTF-8 of its
        # units: on one thread beforehand, that was a sixth of the instructions of the call
        # on Russian and a fifth on English that holds one emoji (a UCS-4 str).
        ascii = PyUnicode_IS_ASCII(text)
        if ascii:
            owner = utf8_of(text, &data, &size)
            extent = size
        else:
            if PyUnicode_READY(text) < 0:
                raise MemoryError()
            owner = text
            # At least a byte a character: counted only when that does not decide (3 M
            # instructions on a megabyte of Russian, on the calling thread).
            size = length if length >= <size_t>PARALLEL_TEXT_BYTES else \
                fbpe_ucs_utf8_len(PyUnicode_DATA(text), PyUnicode_KIND(text), length)
            extent = length
        if size < PARALLEL_TEXT_BYTES:
            return None
        wanted = min(<size_t>(workers * UNITS_PER_THREAD), size // max(<size_t>TEXT_UNIT_MIN_BYTES, 1))
        if ascii:
            view = PyMemoryView_FromMemory(<char *>data, size, PyBUF_READ)
        ends = array("Q")
        for k in range(1, wanted):
            target = extent // wanted * k
            lo = target - CUT_WINDOW if target > prev + CUT_WINDOW else prev
            cut = _scanner.safe_cut(view, lo, target) if ascii else _scanner.safe_cut_text(text, lo, target)
            if cut > prev:
                ends.append(cut)
                prev = cut
        if not ends:
            return None
        ends.append(extent)
        workers = min(workers, len(ends))
        batch = _TextBatch(self, (), pattern, workers, owner, ends, needles)
        _run(batch, workers)
        return batch

    def encode_texts(self, texts, str pattern, threads=None, needles=(), refuse=None):
        """The ids of each text, the texts spread over ``threads`` threads (None: all cores).

        A small batch (under 256 KiB in all) is encoded on the calling thread; a large one in
        steps (STEPPED_MIN_CHARS). Each text that holds the UTF-8 of one of ``needles``
        (bytes) is given to ``refuse`` (its index), in order, before anything is returned:
        the special tokens a caller refuses, looked for by the workers."""
        if not isinstance(texts, list):
            texts = list(texts)
        workers = max(1, min(thread_count(threads), len(texts)))
        if workers > 1 and len(texts) >= 2 * RESULT_STEPS:
            stepped = self._encoded_in_steps(texts, pattern, workers, needles, refuse)
            if stepped is not None:
                return stepped
        return self._encoded(texts, pattern, threads, needles=needles, refuse=refuse).results()

    def _encoded_in_steps(self, list texts, str pattern, size_t workers, needles, refuse):
        """:meth:`encode_texts` of a large batch, its lists made while the workers encode
        the next step, and each step's texts taken in while the workers encode the one
        before; None for a batch too small to gain."""
        cdef size_t n = len(texts), steps = RESULT_STEPS, k, first
        if sum(map(len, texts)) < STEPPED_MIN_CHARS:
            return None
        looked_for = _Needles(needles) if needles else None
        bounds = [n * k // steps for k in range(steps + 1)]

        def step(size_t k):
            return _TextBatch(self, texts[bounds[k]:bounds[k + 1]], pattern, workers, None, None, looked_for)

        cdef list out = PyList_New(n)
        pool = _thread_pool()
        current = step(0)
        pending = pool.submit(_run_batch, current, workers)
        try:
            with collector_paused():
                for k in range(steps):
                    following = step(k + 1) if k + 1 < steps else None
                    pending.result()
                    pending = pool.submit(_run_batch, following, workers) if following is not None else None
                    holding = (<_TextBatch>current).holding_needles() if looked_for is not None else ()
                    if holding:
                        first = bounds[k]
                        for j in holding:
                            refuse(first + j)  # raises where the text holds the token itself
                        # Not the token's text after all (_encoded says when): from the start,
                        # in one batch, which refuses any text of a later step.
                        if pending is not None:
                            pending.result()
                            pending = None
                        return self._encoded(texts, pattern, workers, needles=needles, refuse=refuse).results()
                    (<_TextBatch>current).results_into(out, bounds[k])
                    current = following
        finally:
            if pending is not None:  # an error left a step running: it ends before its texts go
                pending.cancel() or pending.exception()
        return out

    def encode_texts_packed(self, texts, str pattern, threads=None, int width=4, needles=(), refuse=None):
        """:meth:`encode_texts` as one ``bytes`` of little-endian ids of ``width`` bytes (2 or
        4), one text's after another, and the number of ids of each text."""
        return self._encoded(texts, pattern, threads, needles=needles, refuse=refuse).packed(width)

    def encode_texts_flat(self, texts, str pattern, threads=None, needles=(), refuse=None):
        """:meth:`encode_texts` as two arrays, ``(ids, offsets)``: the ids of every text one
        after another (uint32) and where each text's start (uint64, one more than the texts,
        the last the total), made in C with no Python object per id or per text."""
        cdef _TextBatch batch = self._encoded(texts, pattern, threads, needles=needles, refuse=refuse)
        cdef size_t units = batch.batch.num_units
        import numpy
        data, counts = batch.packed_with_eot(4, numpy.zeros(units, dtype=numpy.uint8), -1)
        offsets = numpy.zeros(units + 1, dtype=numpy.uint64)
        numpy.cumsum(counts, out=offsets[1:])
        return numpy.frombuffer(data, dtype="<u4"), offsets

    def encode_each_piece(self, bytes data, const int64_t[::1] offsets, threads=None):
        """The ids of each piece of a flat table (piece k is ``data[offsets[k]:offsets[k + 1]]``,
        ``offsets[0]`` 0; ValueError where the data is not valid UTF-8) encoded whole, as :meth:`encode_pieces` encodes one, on
        ``threads`` threads: ``(ids, ends)``, the uint32 ids of every piece one after another
        and where each piece's end (int64). Continued training replays its base's merges on
        every distinct piece this way: one call, no Python object per piece.

        >>> ids, ends = BPE([], [(104, 105)]).encode_each_piece(b"hihi!", array("q", [0, 2, 5]))
        >>> ids.tolist(), ends.tolist()
        ([256, 256, 33], [1, 3])
        """
        cdef size_t n = offsets.shape[0], k
        if n == 0 or offsets[0] != 0 or <size_t>offsets[n - 1] != <size_t>len(data):
            raise ValueError("offsets must start at 0 and end at the data's length")
        for k in range(1, n):
            if offsets[k] < offsets[k - 1]:
                raise ValueError(f"offsets[{k}] = {offsets[k]} is before offsets[{k - 1}] = {offsets[k - 1]}")
        import numpy
        ends = numpy.asarray(offsets[1:], dtype=numpy.uint64)
        cdef int incomplete
        cdef size_t bad, size = PyBytes_GET_SIZE(data)
        cdef const uint8_t *base = <const uint8_t *>PyBytes_AS_STRING(data)
        with nogil:
            bad = fbpe_utf8_invalid(base, size, 0, &incomplete)
        if bad != size:
            raise ValueError(f"the pieces are not valid UTF-8 (byte {bad})")
        # Each piece is one unit of a batch, which the pattern [\s\S]+ leaves whole.
        batch = self._encoded((), WHOLE_PIECE, threads, data, ends)
        packed, counts = batch.packed_with_eot(4, numpy.zeros(n - 1, dtype=numpy.uint8), -1)
        return numpy.frombuffer(packed, dtype="<u4"), numpy.cumsum(counts, dtype=numpy.int64)

    def encode_buffer_packed(self, bytes buffer, const uint64_t[::1] ends, const uint8_t[::1] last,
                             str pattern, threads=None, int width=4, long long eot=-1, needles=(), refuse=None):
        """The ids of the units of ``buffer`` (valid UTF-8; unit k is
        ``buffer[ends[k - 1]:ends[k]]``) as :meth:`_TextBatch.packed_with_eot` gives them,
        ``eot`` after each unit whose ``last`` is 1: the bytes pipeline of token files, where
        text read from a file reaches the encoder without ever being a ``str``. ``needles``
        and ``refuse`` as for :meth:`encode_texts`."""
        return self._encoded((), pattern, threads, buffer, ends, needles, refuse).packed_with_eot(width, last, eot)

    def _encoded(self, texts, str pattern, threads, buffer=None, const uint64_t[::1] ends=None, needles=(),
                 refuse=None):
        """The texts encoded, on the worker threads when the batch is large enough; each
        text holding a needle given to ``refuse`` first (:meth:`encode_texts`)."""
        if buffer is None and not isinstance(texts, list):
            texts = list(texts)
        units = len(texts) if buffer is None else ends.shape[0]
        workers = max(1, min(thread_count(threads), units))
        looked_for = _Needles(needles) if needles else None
        batch = _TextBatch(self, texts, pattern, workers, buffer, ends, looked_for)
        _run(batch, 1 if batch.batch.bytes < PARALLEL_MIN_BYTES else workers)
        if looked_for is not None:
            holding = batch.holding_needles()
            if holding:
                for k in holding:
                    refuse(k)  # raises where the text holds the token itself
                # A needle's bytes that are not its text (the U+FFFD that a lone surrogate
                # became): nothing refused, so the texts are encoded without looking.
                return self._encoded(texts, pattern, threads, buffer, ends)
        return batch

    def decode_bytes(self, ids):
        """The bytes of ``ids`` joined, or None when one of them is not an id of this table."""
        cdef size_t n = len(ids), k, size = 0
        cdef fbpe_status rc
        cdef uint32_t *buf = <uint32_t *>malloc((n + 1) * sizeof(uint32_t))
        cdef long long value
        cdef uint8_t *dst
        if not buf:
            raise MemoryError()
        try:
            k = 0
            for token in ids:
                if k == n:  # a sequence that yields more items than its len() says
                    return None
                if (type(token) is not int and not isinstance(token, int)) or type(token) is bool:
                    return None
                value = token if -1 <= token <= 0xFFFFFFFF else -1
                if value < 0 or value >= self.b.num_ids:
                    return None
                buf[k] = <uint32_t>value
                k += 1
            if k != n:
                return None
            with nogil:
                rc = fbpe_decoded_size(self.b, buf, n, &size)
            if rc or size > <size_t>PY_SSIZE_T_MAX:  # more bytes than memory holds
                check(FBPE_ENOMEM, f"for the bytes of {n} ids")
            out = PyBytes_FromStringAndSize(NULL, size)
            dst = <uint8_t *>PyBytes_AS_STRING(out)
            with nogil:
                fbpe_decode(self.b, buf, n, dst)
            return out
        finally:
            free(buf)


cdef extern from "lib/encode/ranks.h":
    ctypedef struct fbpe_ranks:
        pass
    fbpe_status fbpe_ranks_new(const uint8_t *arena, const uint32_t *off, uint32_t num,
                               fbpe_ranks **out) nogil
    void fbpe_ranks_free(fbpe_ranks *t) nogil
    fbpe_status fbpe_tiktoken_parts(const fbpe_ranks *t, uint32_t r, size_t *parts, size_t *cut,
                                    uint32_t *left, uint32_t *right) nogil


def tiktoken_splits(tokens):
    """For each token (bytes, given in rank order: token r has rank r), what tiktoken's
    procedure makes of it with the ranks below it: ``(number of parts, end of the first,
    rank of the first, rank of the second)``, the two ranks -1 unless there are two parts.

    >>> tiktoken_splits([b"a", b"b", b"ab", b"abb"])[2:]
    [(2, 1, 0, 1), (2, 2, 2, 1)]
    """
    if len(tokens) > FBPE_MAX_VOCAB_SIZE:
        raise ValueError(f"{len(tokens)} ranks; a rank file holds at most {FBPE_MAX_VOCAB_SIZE}")
    cdef uint32_t num = len(tokens), r, left, right
    cdef size_t parts, cut
    cdef fbpe_status rc = FBPE_OK
    arena = b"".join(tokens)
    if len(arena) > 0xFFFFFFFF:
        raise ValueError(f"the ranks' tokens hold {len(arena)} bytes, more than 32-bit offsets reach")
    cdef uint32_t *off = <uint32_t *>malloc((num + 1) * sizeof(uint32_t))
    # Per token: parts, cut, left, right (parts and cut are at most a token's length).
    cdef uint32_t *found = <uint32_t *>malloc((4 * <size_t>num + 1) * sizeof(uint32_t))
    cdef fbpe_ranks *table = NULL
    if not off or not found:
        free(off)
        free(found)
        raise MemoryError()
    try:
        off[0] = 0
        for r in range(num):
            off[r + 1] = off[r] + len(tokens[r])
        check(fbpe_ranks_new(<const uint8_t *>PyBytes_AS_STRING(arena), off, num, &table),
              "while reading the ranks", f"a token is empty or longer than {FBPE_MAX_TOKEN_BYTES} bytes")
        with nogil:
            for r in range(num):
                rc = fbpe_tiktoken_parts(table, r, &parts, &cut, &left, &right)
                if rc:
                    break
                found[4 * r] = <uint32_t>parts
                found[4 * r + 1] = <uint32_t>cut
                found[4 * r + 2] = left
                found[4 * r + 3] = right
        check(rc, "while reading the ranks")
        return [(found[4 * r], found[4 * r + 1],
                 -1 if found[4 * r + 2] == FBPE_NO_RANK else found[4 * r + 2],
                 -1 if found[4 * r + 3] == FBPE_NO_RANK else found[4 * r + 3]) for r in range(num)]
    finally:
        fbpe_ranks_free(table)
        free(off)
        free(found)


cdef extern from "lib/scan/jsonl.h":
    ctypedef struct fbpe_jsonl_docs:
        uint8_t *text
        size_t len
        uint64_t *ends
        uint64_t *lines
        size_t num
    void fbpe_jsonl_docs_init(fbpe_jsonl_docs *d) nogil
    void fbpe_jsonl_docs_free(fbpe_jsonl_docs *d) nogil
    fbpe_status fbpe_jsonl_docs_add(fbpe_jsonl_docs *d, const uint8_t *s, size_t n, uint64_t line) nogil
    fbpe_status fbpe_jsonl_extract(const uint8_t *s, size_t n, const uint8_t *key, size_t key_len,
                                   size_t *pos, size_t *line_end, uint64_t *line, fbpe_jsonl_docs *d) nogil


def jsonl_extract(bytes data not None, bytes key not None, uint64_t lines_before, fallback):
    """The documents of the whole JSONL lines ``data`` (the field ``key``, UTF-8), read in C
    with the GIL released (csrc/lib/scan/jsonl.c): ``(text, ends, lines)``, the documents' UTF-8
    one after another, where each ends (uint64) and its line number (uint64, the first line
    of ``data`` being ``lines_before + 1``), and the number of the last line read. A line that C leaves to Python is given to
    ``fallback(line, number, offset)`` (``offset``: where it starts in ``data``), which returns the document's UTF-8, None for no document
    (a blank line), or raises the error of that line.

    >>> jsonl_extract(b'{"text": "a\\\\u00e9"}\\n\\n{"id": 1, "text": "b"}\\n', b"text", 0, None)[0]
    b'a\\xc3\\xa9b'
    """
    cdef fbpe_jsonl_docs d
    cdef size_t pos = 0, line_end = 0, n = PyBytes_GET_SIZE(data), k
    cdef uint64_t line = lines_before
    cdef const uint8_t *s = <const uint8_t *>PyBytes_AS_STRING(data)
    cdef const uint8_t *kp = <const uint8_t *>PyBytes_AS_STRING(key)
    cdef size_t key_len = PyBytes_GET_SIZE(key)
    cdef fbpe_status rc
    fbpe_jsonl_docs_init(&d)
    import numpy
    try:
        while True:
            with nogil:
                rc = fbpe_jsonl_extract(s, n, kp, key_len, &pos, &line_end, &line, &d)
            if rc == FBPE_OK:
                break
            if rc != FBPE_MORE:
                check(rc, "while reading JSON lines")
            doc = fallback(data[pos:line_end], line + 1, pos)
            if doc is not None:
                check(fbpe_jsonl_docs_add(&d, <const uint8_t *>PyBytes_AS_STRING(doc), PyBytes_GET_SIZE(doc),
                                          line + 1), "while reading JSON lines")
            line += 1
            pos = line_end
        text = PyBytes_FromStringAndSize(<const char *>d.text, d.len) if d.len else b""
        ends = numpy.empty(d.num, dtype=numpy.uint64)
        numbers = numpy.empty(d.num, dtype=numpy.uint64)
        if d.num:
            ends_view = <uint64_t[:d.num]>d.ends
            numbers_view = <uint64_t[:d.num]>d.lines
            ends[:] = ends_view
            numbers[:] = numbers_view
        return text, ends, numbers, line
    finally:
        fbpe_jsonl_docs_free(&d)


cdef extern from "lib/encode/file_encode.h":
    ctypedef struct fbpe_file_job:
        fbpe_bpe *b
        const fbpe_splitter *sp
        const fbpe_classes *cl
        const uint32_t *out_map
        const uint8_t *data
        size_t n
        size_t block
        const uint8_t *const *avoid
        const size_t *avoid_len
        size_t num_avoid
        const fbpe_needles *needles
        int width
        int with_eot
        uint32_t eot
        int fd
        int jsonl
        const uint8_t *key
        size_t key_len
        int index_fd
        uint64_t index_base
    ctypedef struct fbpe_file_result:
        fbpe_status status
        int holds_needle
        int too_wide
        int write_errno
        size_t ids
        size_t bytes
        size_t written_end
        int for_python
        int index_errno
        size_t docs
        uint64_t text_bytes
        uint64_t lines
    size_t fbpe_file_units(const fbpe_file_job *job) nogil
    void fbpe_file_jsonl_unit(const fbpe_file_job *job, size_t k, size_t *start, size_t *stop) nogil
    size_t fbpe_file_invalid(const uint8_t *data, size_t n, size_t piece, size_t threads) nogil
    void fbpe_file_encode(const fbpe_file_job *job, size_t first, size_t end, size_t threads,
                          fbpe_file_result *result) nogil


def file_pipeline_available():
    """Whether :class:`FileEncoding` runs on worker threads here (POSIX threads)."""
    return bool(fbpe_workers_available())


cdef class FileEncoding:
    """One text file (``data``: its bytes, a buffer such as a read-only mmap, kept until
    :meth:`release`) encoded into a token file on the worker threads
    (csrc/lib/encode/file_encode.h): :meth:`invalid` checks its UTF-8, then each call of
    :meth:`encode` encodes units ``first .. end - 1`` and writes their ids to the descriptor
    ``fd``, in order, with ``eot`` (when not negative) after the last. ``avoid``: the special
    tokens' UTF-8, never cut inside; ``needles``: those whose text is refused.

    With ``key`` (the field's UTF-8), the file is JSON Lines: each record's field is a
    document, followed by ``eot``, and where each starts goes to the descriptor ``index_fd``
    (when not negative); a unit the C reader is not sure of is handed back (:meth:`encode`)."""
    cdef fbpe_file_job job
    cdef fbpe_splitter split
    cdef BPE bpe
    cdef const uint8_t[::1] view
    cdef _Needles refused, avoided
    cdef size_t threads
    cdef bytes key
    # Of the last call of encode: (the first unit not written, documents, their text's
    # bytes, lines read), the last three for JSONL.
    cdef public tuple last

    def __cinit__(self, BPE bpe not None, data, str pattern not None, size_t block, int width, long long eot,
                  needles, avoid, int fd, size_t threads, bytes key=None, int index_fd=-1):
        if width != 2 and width != 4:
            raise ValueError(f"width must be 2 or 4, got {width}")
        if eot > 0xFFFFFFFF:
            raise OverflowError(f"eot {eot} is not a 32-bit id")
        if block < 1:
            raise ValueError("block must be at least 1 byte")
        self.bpe = bpe
        splitter_of(pattern, &self.split)
        memset(&self.job, 0, sizeof(self.job))
        self.job.b = bpe.b
        self.job.sp = &self.split
        self.job.cl = <const fbpe_classes *>PyCapsule_GetPointer(_scanner._classes_capsule(),
                                                                 b"functionalbpe._scanner.classes")
        self.job.out_map = bpe.out_map
        if len(data):
            self.view = data
            self.job.data = &self.view[0]
        self.job.n = len(data)
        if block > <size_t>-1 - self.job.n:
            raise OverflowError(f"block of {block} bytes")
        self.job.block = block
        self.avoided = _Needles(avoid)
        self.job.avoid = self.avoided.text
        self.job.avoid_len = self.avoided.lens
        self.job.num_avoid = len(self.avoided.owned)
        if needles:
            self.refused = _Needles(needles)
            self.job.needles = &self.refused.nd
        self.job.width = width
        self.job.with_eot = eot >= 0
        self.job.eot = <uint32_t>eot if eot >= 0 else 0
        self.job.fd = fd
        self.job.index_fd = index_fd
        if key is not None:
            self.key = key
            self.job.jsonl = 1
            self.job.key = <const uint8_t *>PyBytes_AS_STRING(key)
            self.job.key_len = PyBytes_GET_SIZE(key)
        self.threads = max(1, threads)

    @property
    def units(self):
        return fbpe_file_units(&self.job)

    def invalid(self, size_t piece=1 << 20):
        """The offset of the first byte that is not valid UTF-8, or None; the workers check
        pieces of about ``piece`` bytes."""
        cdef size_t bad
        with nogil:
            bad = fbpe_file_invalid(self.job.data, self.job.n, piece, self.threads)
        return None if bad == self.job.n else bad

    def jsonl_unit(self, size_t k):
        """Where unit ``k`` of a JSONL file starts and ends: ``(start, stop)``."""
        cdef size_t start, stop
        if self.job.n and self.job.data == NULL:
            raise ValueError("released")
        if k >= fbpe_file_units(&self.job):
            raise IndexError(k)
        fbpe_file_jsonl_unit(&self.job, k, &start, &stop)
        return start, stop

    def encode(self, size_t first, size_t end, uint64_t index_base=0):
        """Encode and write units ``first .. end - 1``: ``(ids, bytes, failure)``, the ids and
        bytes written and None, or on a failure (nothing written after the failing unit)
        ``"needle"`` (a unit holds refused text), ``"wide"`` (an id above 0xFFFF with width
        2), an ``OSError`` of the write (``("index", OSError)`` for the offsets), or the error
        of the encoder raised. For JSONL, ``index_base`` is added to each document's start,
        :attr:`last` says more, and the failure ``"python"`` is no error: unit ``last[0]`` is
        the caller's to read, every unit before it was written."""
        cdef fbpe_file_result res
        if self.job.n and self.job.data == NULL:
            raise ValueError("released")
        self.job.index_base = index_base
        with nogil:
            fbpe_file_encode(&self.job, first, end, self.threads, &res)
        self.last = (res.written_end, res.docs, res.text_bytes, res.lines)
        if res.for_python:
            failure = "python"
        elif res.holds_needle:
            failure = "needle"
        elif res.too_wide:
            failure = "wide"
        elif res.write_errno:
            failure = OSError(res.write_errno, os.strerror(res.write_errno))
        elif res.index_errno:
            failure = ("index", OSError(res.index_errno, os.strerror(res.index_errno)))
        else:
            check(res.status, "while encoding a file")
            failure = None
        return res.ids, res.bytes, failure

    def release(self):
        """Let go of the data (so that a mapping can be closed)."""
        self.view = None
        self.job.data = NULL
