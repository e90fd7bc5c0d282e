# cython: language_level=3
# distutils: sources = csrc/lib/bpe.c
"""The compiled encoder and decoder: merge tables applied at memory speed.

Performance notes (what was tried, and why it is like this):

* Merges live in a C hash table keyed by the pair of ids (one 64-bit key, linear probing,
  at most half full): one multiply and usually one cache line per lookup. The merged id is
  the rank, so no separate rank table is needed.
* The vocabulary is the first cache, as in tiktoken: most pieces of real text are tokens
  already, and a piece that is a token needs no merging. A token is only taken whole if its
  own bytes encode to it (checked once, when the table is built): true of every token a
  trainer makes, not of every merge table, and the shortcut must never change a result.
* The second cache remembers pieces that are not tokens (``" reconfiguration"`` as three
  ids). Each thread takes its own cache from a small pool in the encoder and gives it back
  after the call, so caches are never shared while in use and need no locks, yet survive
  from one call to the next. A cache that reaches 65,536 pieces starts again from empty.
* Short pieces (≤ 64 symbols) merge by scanning an array on the stack for the lowest rank:
  quadratic in theory, and the fastest thing there is for the 2-20 symbols of a real piece.
  Longer pieces (a megabyte of spaces, a minified file) are merged by a sweep over buckets
  of positions, one rank at a time, lowest first (csrc/lib/bpe.c), which is O(n log n) at
  worst and a handful of linear passes for a run of one repeated character. A binary heap of
  (rank, position) was tried first; the sweep does the same merges with a fraction of the
  heap traffic.
* Pieces still come from Python (``regex``) for custom patterns and the schemes; the work per
  piece here is one UTF-8 pointer read and one hash probe, and the GIL is released for long
  pieces. The built-in patterns can skip Python altogether once the C scanner is linked in.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL


cdef extern from "lib/bpe.h":
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
    uint32_t FBPE_NO_RANK
    void fbpe_ids_init(fbpe_ids *v) nogil
    void fbpe_ids_free(fbpe_ids *v) nogil
    int fbpe_ids_reserve(fbpe_ids *v, size_t extra) nogil
    fbpe_bpe *fbpe_bpe_new(const uint32_t *atom_cps, size_t num_atoms, const uint32_t *merges,
                           size_t num_merges, const uint8_t *const *specials,
                           const size_t *special_lens, size_t num_specials) nogil
    void fbpe_bpe_free(fbpe_bpe *b) nogil
    uint32_t fbpe_rank(const fbpe_bpe *b, uint32_t left, uint32_t right) nogil
    size_t fbpe_merge(const fbpe_bpe *b, uint32_t *ids, size_t n, int method) nogil
    int fbpe_encode_piece(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s, size_t n,
                          fbpe_ids *out) nogil
    uint32_t fbpe_whole_token(const fbpe_bpe *b, const uint8_t *s, size_t n) nogil
    fbpe_cache *fbpe_cache_take(fbpe_bpe *b) nogil
    void fbpe_cache_give(fbpe_bpe *b, fbpe_cache *c) nogil
    size_t fbpe_decoded_size(const fbpe_bpe *b, const uint32_t *ids, size_t n) nogil
    void fbpe_decode(const fbpe_bpe *b, const uint32_t *ids, size_t n, uint8_t *out) nogil


# A piece this long is merged with the GIL released: long enough that other threads gain.
cdef size_t NOGIL_PIECE = 4096


cdef list ids_to_list(const uint32_t *ids, size_t n):
    return [ids[k] for k in range(n)]


cdef class BPE:
    """A merge table compiled for encoding and decoding.

    ``atoms`` are the code points of the scheme's atoms (ids 256 on), ``merges`` the
    ``(left, right)`` pairs in order, ``specials`` the special tokens' texts.

    >>> bpe = BPE([], [(104, 105)], ["<|e|>"])
    >>> bpe.encode_pieces(["hi", "hii"]), bpe.decode_bytes([256, 257])
    ([256, 256, 105], b'hi<|e|>')
    """
    cdef fbpe_bpe *b

    def __cinit__(self, atoms, merges, specials=()):
        cdef size_t num_atoms = len(atoms), num_merges = len(merges), num_specials = len(specials)
        cdef uint32_t *atom_cps = <uint32_t *>malloc((num_atoms + 1) * sizeof(uint32_t))
        cdef uint32_t *pairs = <uint32_t *>malloc((2 * num_merges + 1) * sizeof(uint32_t))
        cdef const uint8_t **special_ptrs = <const uint8_t **>malloc((num_specials + 1) * sizeof(uint8_t *))
        cdef size_t *special_lens = <size_t *>malloc((num_specials + 1) * sizeof(size_t))
        cdef size_t k
        encoded = [s.encode("utf-8") for s in specials]
        try:
            if not atom_cps or not pairs or not special_ptrs or not special_lens:
                raise MemoryError()
            for k in range(num_atoms):
                atom_cps[k] = atoms[k]
            for k in range(num_merges):
                pairs[2 * k] = merges[k][0]
                pairs[2 * k + 1] = merges[k][1]
            for k in range(num_specials):
                special_ptrs[k] = <const uint8_t *>PyBytes_AS_STRING(encoded[k])
                special_lens[k] = PyBytes_GET_SIZE(encoded[k])
            with nogil:
                self.b = fbpe_bpe_new(atom_cps, num_atoms, pairs, num_merges, special_ptrs,
                                      special_lens, num_specials)
            if not self.b:
                raise ValueError("the merge table is inconsistent (or there is no memory for it)")
        finally:
            free(atom_cps)
            free(pairs)
            free(special_ptrs)
            free(special_lens)

    def __dealloc__(self):
        fbpe_bpe_free(self.b)

    @property
    def num_ids(self):
        return self.b.num_ids

    @property
    def num_self_encoding(self):
        """How many tokens (atoms and merges) encode to themselves from their own bytes."""
        return self.b.num_self_encoding

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

    def merge_symbols(self, symbols, int method=0):
        """Merge a sequence of symbol ids (method 1: the short scan, 2: the long sweep)."""
        cdef size_t n = len(symbols), k, m
        cdef uint32_t *ids = <uint32_t *>malloc((n + 1) * sizeof(uint32_t))
        if not ids:
            raise MemoryError()
        try:
            for k in range(n):
                ids[k] = symbols[k]
                if ids[k] >= self.b.num_tokens:
                    raise ValueError(f"symbol {ids[k]} at position {k} is not a token")
            with nogil:
                m = fbpe_merge(self.b, ids, n, method)
            if m == <size_t>-1:
                if method == 1:
                    raise ValueError("the short scan takes at most 64 symbols")
                raise MemoryError()
            return ids_to_list(ids, m)
        finally:
            free(ids)

    def encode_pieces(self, pieces):
        """The ids of text-form pieces (str), one after the other."""
        cdef fbpe_ids out
        cdef fbpe_cache *cache = fbpe_cache_take(self.b)
        cdef Py_ssize_t size
        cdef const char *data
        cdef int rc = 0
        fbpe_ids_init(&out)
        if not cache:
            raise MemoryError()
        try:
            for piece in pieces:
                data = PyUnicode_AsUTF8AndSize(piece, &size)
                if <size_t>size >= NOGIL_PIECE:
                    with nogil:
                        rc = fbpe_encode_piece(self.b, cache, <const uint8_t *>data, size, &out)
                else:
                    rc = fbpe_encode_piece(self.b, cache, <const uint8_t *>data, size, &out)
                if rc:
                    raise MemoryError()
            return ids_to_list(out.ids, out.len)
        finally:
            fbpe_cache_give(self.b, cache)
            fbpe_ids_free(&out)

    def encode_piece(self, str piece):
        return self.encode_pieces((piece,))

    def decode_bytes(self, ids):
        """The bytes of ``ids`` joined, or None when one of them is not an id of this table."""
        cdef size_t n = len(ids), k, size
        cdef uint32_t *buf = <uint32_t *>malloc((n + 1) * sizeof(uint32_t))
        cdef long long value
        cdef uint8_t *dst
        if not buf:
            raise MemoryError()
        try:
            k = 0
            for token in ids:
                if type(token) is not int and not isinstance(token, int):
                    return None
                value = token if -1 <= token <= 0xFFFFFFFF else -1
                if value < 0 or value >= self.b.num_ids:
                    return None
                buf[k] = <uint32_t>value
                k += 1
            with nogil:
                size = fbpe_decoded_size(self.b, buf, n)
            out = PyBytes_FromStringAndSize(NULL, size)
            dst = <uint8_t *>PyBytes_AS_STRING(out)
            with nogil:
                fbpe_decode(self.b, buf, n, dst)
            return out
        finally:
            free(buf)
