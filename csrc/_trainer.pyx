# cython: language_level=3
# distutils: sources = csrc/lib/train/train.c csrc/lib/train/train_parity.c csrc/lib/train/merge_table.c
# distutils: depends = csrc/lib/common/bounds.h csrc/lib/common/hash.h csrc/lib/common/utf8.h csrc/lib/train/train.h csrc/lib/train/train_parity.h csrc/lib/train/counted.h csrc/lib/train/pair_heap.h csrc/lib/train/merge_policy.h csrc/lib/train/merge_table.h csrc/lib/common/take_next.h csrc/lib/common/huge_pages.h csrc/status.pxd csrc/utf8.pxd
"""The fast BPE trainer: counted pieces into flat C arrays, then the C merge loop.

Use it through :mod:`functionalbpe.core.trainer`, which has the lesson's arguments and falls
back to the Python heap when this module is not built. The merge loop itself, its data layout and
its measured costs are in ``csrc/lib/train/train.c``; this file only moves data in and out
and keeps Python's promises: the loop runs without the GIL in time slices, and between
slices the progress bar is drawn and Ctrl-C is honoured, with every C block freed.

    >>> train_merges({tuple(b"aaabdaaabac"): 1}, 3, 256, [1] * 256, 1, 1, False)
    [(97, 97, 4), (97, 98, 2), (256, 257, 2)]
"""
from cpython.exc cimport PyErr_CheckSignals
from cpython.long cimport PyLong_AsLongLong
from cpython.ref cimport PyObject
from cpython.sequence cimport PySequence_Fast, PySequence_Fast_GET_SIZE, PySequence_Fast_ITEMS
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.string cimport memcpy

import threading
from array import array

from .util.progress import Progress

cdef extern from "lib/train/merge_policy.h":
    uint32_t FBPE_TEXT, FBPE_OPERATOR, FBPE_BOUNDARY, FBPE_SHIFT, FBPE_KIND_MASK
    uint32_t FBPE_STARTS_WITH_BOUNDARY, FBPE_ENDS_WITH_BOUNDARY, FBPE_SHIFT_MERGES
    int FBPE_POLICY_ATOMIC, FBPE_POLICY_PREFIX, FBPE_POLICY_FREE
    uint32_t fbpe_merged_flags(uint32_t left, uint32_t right) nogil
    int fbpe_can_merge(int policy, uint32_t left, uint32_t right) nogil

from status cimport FBPE_ENOMEM, FBPE_MAX_TOKEN_BYTES, FBPE_OK, check, fbpe_status

from utf8 cimport fbpe_utf8_invalid

cdef extern from "lib/train/train.h":
    ctypedef struct fbpe_pieces:
        pass
    ctypedef struct fbpe_trainer:
        pass
    ctypedef struct fbpe_trained_merge:
        uint32_t left
        uint32_t right
        int64_t count
    fbpe_pieces *fbpe_pieces_new() nogil
    void fbpe_pieces_free(fbpe_pieces *counted) nogil
    uint32_t *fbpe_pieces_reserve(fbpe_pieces *counted, size_t n) nogil
    fbpe_status fbpe_pieces_commit(fbpe_pieces *counted, size_t n, int64_t count) nogil
    fbpe_status fbpe_pieces_add_utf8(fbpe_pieces *counted, const uint8_t *text, size_t n,
                                     int64_t count, const int32_t *atom_ids) nogil
    fbpe_status fbpe_trainer_new(fbpe_pieces *counted, uint32_t first_id, const uint32_t *flags,
                                 const uint32_t *lengths, int policy, int64_t max_merges,
                                 int64_t min_frequency, size_t max_token_bytes, const uint32_t *shapes,
                                 uint32_t max_words, int colon_space, size_t threads,
                                 size_t shard_min_pairs, size_t range_min_pieces, fbpe_trainer **out) nogil
    size_t fbpe_trainer_shards(const fbpe_trainer *trainer) nogil
    void fbpe_trainer_count(fbpe_trainer *trainer) nogil
    fbpe_status fbpe_trainer_counted(fbpe_trainer *trainer) nogil
    fbpe_status fbpe_trainer_run(fbpe_trainer *trainer, double seconds) nogil
    size_t fbpe_trainer_num_merges(const fbpe_trainer *trainer) nogil
    const fbpe_trained_merge *fbpe_trainer_merges(const fbpe_trainer *trainer) nogil
    void fbpe_trainer_free(fbpe_trainer *trainer) nogil
    void fbpe_trainer_keep_runner_ups(fbpe_trainer *trainer) nogil
    const fbpe_trained_merge *fbpe_trainer_runner_ups(const fbpe_trainer *trainer) nogil
    long fbpe_live_blocks() nogil

# How long the merge loop runs without the GIL before it looks at Ctrl-C and the progress
# bar. Tests set it to 0 (look after every few merges); the result never depends on it.
slice_seconds = 0.05
# Below about this many distinct pairs, the first pairs are counted on one thread: they stay
# in the caches, and more threads would only read the pieces again (csrc/lib/train/train.c,
# fbpe_trainer_new). Tests set it to 0 (every table split); the merges never depend on it.
shard_min_pairs = 1 << 18
# Below that, from about this many pieces, each thread counts the pairs of a run of the
# pieces. Tests set it to 0 (always); the merges never depend on it.
range_min_pieces = 1 << 16

# The C constants, for the tests to compare with functionalbpe.core.alphabet.
FLAGS = {
    "TEXT": FBPE_TEXT, "OPERATOR": FBPE_OPERATOR, "BOUNDARY": FBPE_BOUNDARY,
    "SHIFT": FBPE_SHIFT, "KIND_MASK": FBPE_KIND_MASK,
    "STARTS_WITH_BOUNDARY": FBPE_STARTS_WITH_BOUNDARY,
    "ENDS_WITH_BOUNDARY": FBPE_ENDS_WITH_BOUNDARY, "SHIFT_MERGES": FBPE_SHIFT_MERGES,
}
POLICY_CODES = {"atomic": FBPE_POLICY_ATOMIC, "prefix": FBPE_POLICY_PREFIX, "free": FBPE_POLICY_FREE}


cdef extern from "lib/train/merge_table.h":
    fbpe_status fbpe_check_merges(const uint32_t *merges, size_t num_merges, size_t first_merge,
                                  size_t special_bytes) nogil


def merge_table_keeps_the_rules(list merges, size_t first_merge, size_t special_bytes):
    """True when ``merges`` (a list of pairs of ints) keeps every rule that
    ``core.limits.check_merges`` checks, in one C pass; False when it breaks one or holds
    something that is not a pair of ids (that check then says which and why).

        >>> merge_table_keeps_the_rules([(97, 97), (256, 256)], 256, 0)
        True
        >>> merge_table_keeps_the_rules([(97, 97), (97, 97)], 256, 0)
        False
    """
    cdef size_t n = len(merges), k
    cdef object pair
    cdef long long a, b
    cdef fbpe_status rc
    table = array("I", bytes(8 * n)) if n else array("I")
    cdef uint32_t[::1] ids = table
    try:
        for k in range(n):
            pair = merges[k]
            if type(pair) is not tuple or len(<tuple>pair) != 2:
                return False
            if type((<tuple>pair)[0]) is not int or type((<tuple>pair)[1]) is not int:
                return False
            a = PyLong_AsLongLong((<tuple>pair)[0])
            b = PyLong_AsLongLong((<tuple>pair)[1])
            if a < 0 or b < 0 or a >= 1 << 32 or b >= 1 << 32:
                return False
            ids[2 * k] = <uint32_t>a
            ids[2 * k + 1] = <uint32_t>b
    except OverflowError:  # an id past 64 bits
        return False
    return pair_ids_keep_the_rules(ids, first_merge, special_bytes)


def pair_ids_keep_the_rules(const uint32_t[::1] ids, size_t first_merge, size_t special_bytes):
    """:func:`merge_table_keeps_the_rules` of merges laid out as ids, left and right of each
    merge in turn (``Pairs.ids``): no Python object is read.

        >>> pair_ids_keep_the_rules(array("I", [97, 97, 256, 256]), 256, 0)
        True
    """
    cdef size_t n = <size_t>ids.shape[0] // 2
    cdef fbpe_status rc
    if ids.shape[0] % 2:
        raise ValueError(f"{ids.shape[0]} ids are not pairs")
    with nogil:
        rc = fbpe_check_merges(&ids[0] if n else NULL, n, first_merge, special_bytes)
    if rc == FBPE_ENOMEM:
        raise MemoryError()
    return rc == FBPE_OK


def can_merge(int policy, uint32_t left, uint32_t right):
    """The C merge policy (merge_policy.h), for comparison with alphabet.can_merge."""
    return bool(fbpe_can_merge(policy, left, right))


def merged_flags(uint32_t left, uint32_t right):
    """The C merged flags (merge_policy.h), for comparison with alphabet.merged_flags."""
    return fbpe_merged_flags(left, right)


def live_blocks():
    """C blocks held by all trainers now; the same before and after every training."""
    return fbpe_live_blocks()


cdef int64_t piece_count(object count) except -1:
    """A piece's count as the C loop holds it (64 bits), or 0 for a piece to drop."""
    if not count > 0:
        return 0
    try:
        return PyLong_AsLongLong(int(count))
    except OverflowError:
        raise OverflowError(
            f"a piece count of {count} is above 2**63 - 1, the largest count the fast "
            f"trainer holds; divide the counts by a common factor"
        ) from None


cdef int add_symbols(fbpe_pieces *counted, object symbols, int64_t count,
                     uint32_t first_id) except -1:
    """Append one piece given as a sequence of symbol ids."""
    cdef Py_ssize_t n, i
    cdef long long v
    cdef uint32_t *out
    cdef PyObject **items
    seq = PySequence_Fast(symbols, b"a piece must be a sequence of symbol ids")
    n = PySequence_Fast_GET_SIZE(seq)
    if n < 2:
        return 0
    out = fbpe_pieces_reserve(counted, <size_t>n)
    if out == NULL:
        check(FBPE_ENOMEM, "while training")
    items = PySequence_Fast_ITEMS(seq)
    for i in range(n):
        v = PyLong_AsLongLong(<object>items[i])
        if v < 0 or v >= first_id:
            raise ValueError(
                f"symbol id {v} in piece {tuple(seq)!r} is outside 0..{first_id - 1} "
                f"(first_id is {first_id})"
            )
        out[i] = <uint32_t>v
    return check(fbpe_pieces_commit(counted, <size_t>n, count), "while training")


cdef object atom_table(object atom_ids, uint32_t first_id):
    """{atom character: id} as the 4096-entry table over U+E000..U+EFFF the C side reads."""
    if first_id < 256:
        raise ValueError(f"text-form pieces hold bytes, so first_id must be at least 256, got {first_id}")
    table = array("i", [-1]) * 4096
    for char, ident in atom_ids.items():
        if not (isinstance(char, str) and len(char) == 1 and "\ue000" <= char <= "\uefff"):
            raise ValueError(f"atom {char!r} is not one character of U+E000..U+EFFF")
        if not 256 <= ident < first_id:
            raise ValueError(f"atom {char!r} has id {ident}, outside 256..{first_id - 1}")
        table[ord(char) - 0xE000] = ident
    return table


cdef object int64_view(object buffer, str name):
    """A buffer of 64-bit signed integers (array 'q', numpy int64) as a memoryview."""
    view = memoryview(buffer)
    if view.itemsize != 8 or view.format.lstrip("@=<>!") not in ("q", "l"):
        raise TypeError(f"{name} must be a buffer of int64 (array('q') or numpy int64), "
                        f"got format {view.format!r}")
    return view.cast("B").cast("q")


cdef class Pieces:
    """The pieces as the C side holds them; freed with this object, on every path."""
    cdef fbpe_pieces *ptr

    def __cinit__(self):
        self.ptr = fbpe_pieces_new()
        if self.ptr == NULL:
            check(FBPE_ENOMEM, "while training")

    def __dealloc__(self):
        fbpe_pieces_free(self.ptr)


cdef object report_merges(fbpe_trainer *trainer, size_t done, size_t n, object on_merge):
    """Hand merges done..n-1 to ``on_merge(merge, runner_up or None)``, as the Python
    trainer does after each merge (here after each time slice)."""
    cdef const fbpe_trained_merge *merges = fbpe_trainer_merges(trainer)
    cdef const fbpe_trained_merge *runner_ups = fbpe_trainer_runner_ups(trainer)
    cdef size_t k
    for k in range(done, n):
        second = None
        if runner_ups[k].count > 0:
            second = (runner_ups[k].left, runner_ups[k].right, runner_ups[k].count)
        on_merge((merges[k].left, merges[k].right, merges[k].count), second)


cdef class _PairCounting:
    """The first pair counts of one trainer, taken part by part on each thread that calls
    :meth:`count` (csrc/lib/train/train.c, fbpe_trainer_count)."""
    cdef fbpe_trainer *trainer

    def count(self):
        with nogil:
            fbpe_trainer_count(self.trainer)


cdef int count_first_pairs(fbpe_trainer *trainer) except -1:
    """Count the trainer's first pairs on as many threads as it has parts, this one among
    them: Python threads, as the counter's (csrc/_scanner.pyx), each in C without the GIL.
    Every one is joined before this returns, Ctrl-C or not: the caller frees the trainer."""
    cdef _PairCounting job = _PairCounting()
    cdef fbpe_status rc
    job.trainer = trainer
    helpers = []
    interrupted = None
    try:
        for _ in range(1, fbpe_trainer_shards(trainer)):
            helper = threading.Thread(target=job.count, name="functionalbpe-pairs", daemon=True)
            try:
                helper.start()
            except RuntimeError:  # no thread to be had: the calls that run take its part
                break
            helpers.append(helper)
        job.count()
    finally:
        for helper in helpers:
            while True:
                try:
                    helper.join()
                    break
                except KeyboardInterrupt as exc:  # still wait: the thread reads the trainer
                    interrupted = exc
    if interrupted is not None:
        raise interrupted
    with nogil:
        rc = fbpe_trainer_counted(trainer)
    return check(rc, "while training")


cdef list run_merges(Pieces counted, uint32_t first_id, object flags, int policy,
                     object num_merges, int64_t min_frequency, object progress,
                     size_t max_token_bytes=FBPE_MAX_TOKEN_BYTES, object on_merge=None, object lengths=None,
                     object shapes=None, uint32_t max_words=0, bint colon_space=True, size_t threads=1):
    """Train on filled counted pieces (``flags``: one per id below ``first_id``; ``lengths``,
    their text-form bytes, where some are not single bytes or atoms); ``on_merge``, if given,
    is called with each merge and the pair that came second (a trace). ``shapes``, one per
    id, turn on the token rules (``max_words``, 0 for any; ``colon_space``). ``threads`` count the
    first pairs (the merges are the same for any number)."""
    if len(flags) != first_id:
        raise ValueError(f"flags gives {len(flags)} entries for {first_id} symbols")
    if lengths is not None and len(lengths) != first_id:
        raise ValueError(f"lengths gives {len(lengths)} entries for {first_id} symbols")
    cdef const uint32_t[::1] clengths = array("I", [min(int(n), 0xFFFFFFFF) for n in lengths] if lengths else [0])
    if shapes is not None and len(shapes) != first_id:
        raise ValueError(f"shapes gives {len(shapes)} entries for {first_id} symbols")
    cdef const uint32_t[::1] cshapes = array("I", [int(n) & 0xFFFFFFFF for n in shapes] if shapes else [0])
    if not 1 <= max_token_bytes <= FBPE_MAX_TOKEN_BYTES:
        raise ValueError(f"max_token_bytes must be in 1..{FBPE_MAX_TOKEN_BYTES}, got {max_token_bytes}")
    cdef const uint32_t[::1] cflags = array("I", [int(f) & 0xFFFFFFFF for f in flags] or [0])
    cdef int64_t max_merges = -1 if num_merges is None else max(int(num_merges), 0)
    cdef double seconds = slice_seconds
    cdef fbpe_status rc
    cdef fbpe_trainer *trainer = NULL
    cdef const fbpe_trained_merge *merges
    cdef size_t n, k, reported = 0
    cdef size_t min_pairs = shard_min_pairs, min_pieces = range_min_pieces
    with nogil:
        rc = fbpe_trainer_new(counted.ptr, first_id, &cflags[0], &clengths[0] if lengths is not None else NULL,
                              policy, max_merges, min_frequency, max_token_bytes,
                              &cshapes[0] if shapes is not None else NULL, max_words, colon_space, threads,
                              min_pairs, min_pieces, &trainer)
    check(rc, "while training")
    try:
        count_first_pairs(trainer)
        if on_merge is not None:
            fbpe_trainer_keep_runner_ups(trainer)
        bar = Progress(progress, "merging", total=num_merges)
        while True:
            with nogil:
                rc = fbpe_trainer_run(trainer, seconds)
            check(rc, "while training")
            PyErr_CheckSignals()  # raises KeyboardInterrupt after Ctrl-C; finally frees
            n = fbpe_trainer_num_merges(trainer)
            if on_merge is not None and n > reported:
                report_merges(trainer, reported, n, on_merge)
                reported = n
            if n:
                bar.update(n, f"best count {fbpe_trainer_merges(trainer)[n - 1].count}")
            if rc == FBPE_OK:  # no merge left to make
                break
        bar.close()
        merges = fbpe_trainer_merges(trainer)
        return [(merges[k].left, merges[k].right, merges[k].count) for k in range(n)]
    finally:
        fbpe_trainer_free(trainer)


def train_merges(pieces, num_merges, uint32_t first_id, flags, int policy,
                 int64_t min_frequency, progress, size_t max_token_bytes=FBPE_MAX_TOKEN_BYTES,
                 on_merge=None, lengths=None, shapes=None, uint32_t max_words=0, bint colon_space=True,
                 size_t threads=1):
    """trainer.learn_merges_from_symbols over {symbol sequence: count}, arguments already checked."""
    counted = Pieces()
    cdef int64_t count
    for symbols, raw_count in pieces.items():
        count = piece_count(raw_count)
        if count > 0:
            add_symbols(counted.ptr, symbols, count, first_id)
    return run_merges(counted, first_id, flags, policy, num_merges, min_frequency, progress, max_token_bytes,
                      on_merge, lengths, shapes, max_words, colon_space, threads)


def train_merges_flat(const uint32_t[::1] ids, const int64_t[::1] ends, counts, num_merges, uint32_t first_id,
                      flags, int policy, int64_t min_frequency, progress, size_t max_token_bytes=FBPE_MAX_TOKEN_BYTES,
                      on_merge=None, lengths=None, shapes=None, uint32_t max_words=0, bint colon_space=True,
                      size_t threads=1):
    """:func:`train_merges` over pieces laid out flat: piece k is the symbol ids
    ``ids[ends[k - 1]:ends[k]]``, occurring ``counts[k]`` times (int64), every id below
    ``first_id`` (a count of 0 or less drops its piece, as there); read without the GIL,
    no Python object per piece."""
    cdef const int64_t[::1] cnts = int64_view(counts, "counts")
    cdef Py_ssize_t n = cnts.shape[0], k
    cdef int64_t start = 0, size = ids.shape[0]
    cdef size_t j, m
    cdef uint32_t *out
    cdef fbpe_status rc = FBPE_OK
    if ends.shape[0] != n:
        raise ValueError(f"{n} counts need {n} ends, got {ends.shape[0]}")
    for k in range(n):
        if not start <= ends[k] <= size:
            raise ValueError(f"ends[{k}] = {ends[k]} is not inside the {size} ids after {start}")
        start = ends[k]
    for j in range(<size_t>size):
        if ids[j] >= first_id:
            raise ValueError(f"symbol id {ids[j]} at {j} is outside 0..{first_id - 1} (first_id is {first_id})")
    counted = Pieces()
    start = 0
    with nogil:
        for k in range(n):
            m = <size_t>(ends[k] - start)
            if m >= 2 and cnts[k] > 0:
                out = fbpe_pieces_reserve(counted.ptr, m)
                if out == NULL:
                    rc = FBPE_ENOMEM
                    break
                memcpy(out, &ids[start], m * sizeof(uint32_t))
                rc = fbpe_pieces_commit(counted.ptr, m, cnts[k])
                if rc != FBPE_OK:
                    break
            start = ends[k]
    check(rc, "while training")
    return run_merges(counted, first_id, flags, policy, num_merges, min_frequency, progress, max_token_bytes,
                      on_merge, lengths, shapes, max_words, colon_space, threads)


cdef int check_ranges(const int64_t[::1] offs, Py_ssize_t n, Py_ssize_t size) except -1:
    """Offsets of a flat table: n + 1 of them, each piece a range inside the data."""
    cdef Py_ssize_t i
    if offs.shape[0] != n + 1:
        raise ValueError(f"{n} counts need {n + 1} offsets, got {offs.shape[0]}")
    for i in range(n):
        if not 0 <= offs[i] <= offs[i + 1] <= size:
            raise ValueError(
                f"offsets[{i}:{i + 2}] = {offs[i]}, {offs[i + 1]} is not a range inside the "
                f"{size} bytes of data"
            )
    return 0


ctypedef fbpe_status (*add_piece_fn)(void *target, const uint8_t *text, size_t n, int64_t count,
                                     const int32_t *atoms) noexcept nogil


cdef fbpe_status counted_piece(void *target, const uint8_t *text, size_t n, int64_t count,
                              const int32_t *atoms) noexcept nogil:
    return fbpe_pieces_add_utf8(<fbpe_pieces *>target, text, n, count, atoms)


cdef int add_flat_table(add_piece_fn add, void *target, const uint8_t[::1] data, offsets, counts,
                        const int32_t *atoms, str where) except -1:
    """Hand the pieces of a flat table (piece i is data[offsets[i]:offsets[i+1]], occurring
    counts[i] times) to ``add``, each checked as UTF-8 first, without the GIL."""
    cdef const int64_t[::1] offs = int64_view(offsets, "offsets")
    cdef const int64_t[::1] cnts = int64_view(counts, "counts")
    cdef Py_ssize_t n = cnts.shape[0], i = 0
    check_ranges(offs, n, data.shape[0])
    cdef const uint8_t *base = &data[0] if data.shape[0] else NULL
    cdef fbpe_status rc = FBPE_OK
    cdef size_t size = 0, bad = 0
    cdef int incomplete
    with nogil:
        for i in range(n):
            size = <size_t>(offs[i + 1] - offs[i])
            bad = fbpe_utf8_invalid(base + offs[i], size, 0, &incomplete)
            if bad < size:
                break
            rc = add(target, base + offs[i], size, cnts[i], atoms)
            if rc < 0:
                break
    if bad < size:
        raise ValueError(
            f"piece {i}{where} is not valid UTF-8: byte {offs[i] + bad} of the data "
            f"({bytes(data[offs[i]:offs[i + 1]])!r})"
        )
    return check(rc, "while training")


def train_merges_utf8(const uint8_t[::1] data, offsets, counts, num_merges, uint32_t first_id,
                      atom_ids, flags, int policy, int64_t min_frequency, progress, on_merge=None,
                      size_t threads=1):
    """Training on pieces laid out flat: piece i is data[offsets[i]:offsets[i+1]] (UTF-8 text
    form), occurring counts[i] times. offsets and counts: int64 buffers (array 'q', numpy)."""
    cdef const int32_t[::1] table = atom_table(atom_ids, first_id)
    counted = Pieces()
    add_flat_table(counted_piece, counted.ptr, data, offsets, counts, &table[0] if atom_ids else NULL, "")
    return run_merges(counted, first_id, flags, policy, num_merges, min_frequency, progress,
                      FBPE_MAX_TOKEN_BYTES, on_merge, None, None, 0, True, threads)


# ---- parity-aware training (csrc/lib/train/train_parity.c; the lesson: functionalbpe/core/parity.py) ----

cdef extern from "lib/train/train_parity.h":
    ctypedef struct fbpe_parity:
        pass
    ctypedef struct fbpe_parity_options:
        uint32_t first_id
        const uint32_t *flags
        int policy
        size_t max_token_bytes
        int64_t max_merges
        int64_t min_frequency
        uint32_t n_langs
        int use_dev
        const double *ratios
        int window
        uint32_t window_size
        double alpha
        int64_t global_merges
    ctypedef struct fbpe_parity_merge:
        uint32_t left
        uint32_t right
        int64_t count
        int32_t lang
    fbpe_status fbpe_parity_new(const fbpe_parity_options *options, fbpe_parity **out) nogil
    fbpe_status fbpe_parity_add_utf8(fbpe_parity *p, uint32_t column, const uint8_t *text, size_t n,
                                     int64_t count, const int32_t *atom_ids) nogil
    fbpe_status fbpe_parity_run(fbpe_parity *p, double seconds) nogil
    size_t fbpe_parity_num_merges(const fbpe_parity *p) nogil
    const fbpe_parity_merge *fbpe_parity_merges(const fbpe_parity *p) nogil
    void fbpe_parity_free(fbpe_parity *p) nogil
    long fbpe_parity_live_blocks() nogil


def parity_live_blocks():
    """C blocks held by all parity trainers now; the same before and after every training."""
    return fbpe_parity_live_blocks()


cdef class Parity:
    """A parity trainer as the C side holds it; freed with this object, on every path."""
    cdef fbpe_parity *ptr

    def __dealloc__(self):
        fbpe_parity_free(self.ptr)


cdef struct parity_column:
    fbpe_parity *trainer
    uint32_t column


cdef fbpe_status parity_piece(void *target, const uint8_t *text, size_t n, int64_t count,
                              const int32_t *atoms) noexcept nogil:
    cdef parity_column *c = <parity_column *>target
    return fbpe_parity_add_utf8(c.trainer, c.column, text, n, count, atoms)


cdef int add_parity_table(fbpe_parity *p, uint32_t column, object table,
                          const int32_t *atoms) except -1:
    """Append the pieces of one flat table (data, offsets, counts) to a column."""
    data, offsets, counts = table
    cdef parity_column target
    target.trainer = p
    target.column = column
    return add_flat_table(parity_piece, &target, data, offsets, counts, atoms, f" of column {column}")


def train_parity_utf8(tables, dev_tables, ratios, num_merges, uint32_t first_id, atom_ids, flags,
                      int policy, int64_t min_frequency, bint window, uint32_t window_size,
                      double alpha, int64_t global_merges, progress,
                      size_t max_token_bytes=FBPE_MAX_TOKEN_BYTES):
    """Parity-aware training (functionalbpe.core.parity.learn_parity_merges) on flat text-form
    tables, one (data, offsets, counts) per language; dev_tables (one per language) or ratios
    (one float per language), the other None. Returns (left, right, global count, language or -1)."""
    cdef uint32_t n_langs = len(tables)
    if len(flags) != first_id:
        raise ValueError(f"flags gives {len(flags)} entries for {first_id} symbols")
    if (dev_tables is None) == (ratios is None):
        raise ValueError("give dev_tables or ratios")
    cdef const uint32_t[::1] cflags = array("I", [int(f) & 0xFFFFFFFF for f in flags] or [0])
    cdef double[::1] cratios = array("d", ratios if ratios is not None else [1.0])
    if ratios is not None and len(ratios) != n_langs:
        raise ValueError(f"{len(ratios)} ratios for {n_langs} languages")
    if dev_tables is not None and len(dev_tables) != n_langs:
        raise ValueError(f"{len(dev_tables)} dev tables for {n_langs} languages")
    cdef const int32_t[::1] atom_ids_table = atom_table(atom_ids, first_id)
    cdef const int32_t *atoms = &atom_ids_table[0] if atom_ids else NULL
    cdef fbpe_parity_options o
    o.first_id = first_id
    o.flags = &cflags[0]
    o.policy = policy
    o.max_token_bytes = max_token_bytes
    o.max_merges = -1 if num_merges is None else max(int(num_merges), 0)
    o.min_frequency = min_frequency
    o.n_langs = n_langs
    o.use_dev = dev_tables is not None
    o.ratios = NULL if ratios is None else &cratios[0]
    o.window = window
    o.window_size = window_size
    o.alpha = alpha
    o.global_merges = global_merges
    trainer = Parity()
    check(fbpe_parity_new(&o, &trainer.ptr), "while training",
          "bad parity options: no language, a first_id outside 256..2**31, or a window of 0")
    cdef uint32_t column
    for column in range(n_langs):
        add_parity_table(trainer.ptr, column, tables[column], atoms)
    if dev_tables is not None:
        for column in range(n_langs):
            add_parity_table(trainer.ptr, n_langs + column, dev_tables[column], atoms)
    cdef double seconds = slice_seconds
    cdef fbpe_status rc
    cdef size_t n = 0, k
    cdef const fbpe_parity_merge *merges
    bar = Progress(progress, "merging (parity)", total=num_merges)
    while True:
        with nogil:
            rc = fbpe_parity_run(trainer.ptr, seconds)
        check(rc, "while training")
        PyErr_CheckSignals()
        n = fbpe_parity_num_merges(trainer.ptr)
        if n:
            bar.update(n, f"best count {fbpe_parity_merges(trainer.ptr)[n - 1].count}")
        if rc == FBPE_OK:
            break
    bar.close()
    merges = fbpe_parity_merges(trainer.ptr)
    return [(merges[k].left, merges[k].right, merges[k].count, merges[k].lang) for k in range(n)]
