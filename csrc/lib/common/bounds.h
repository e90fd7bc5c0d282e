/* The limits every tokenizer keeps, and the status codes of the whole core.
 *
 * A tokenizer file is untrusted input. functionalbpe/core/limits.py checks it against these
 * same limits before anything is built (and says why they are what they are); the C entry
 * points check them again, so that no caller gets past them: a table that breaks one is
 * refused with FBPE_EINVALID, never built. tests/formats/test_hostile_files.py compares the numbers
 * here with the Python ones.
 */
#ifndef FBPE_BOUNDS_H
#define FBPE_BOUNDS_H

#include <stddef.h>
#include <stdint.h>

#define FBPE_MAX_VOCAB_SIZE ((size_t)1 << 22)        /* every id is below this */
#define FBPE_MAX_TOKEN_BYTES ((size_t)1 << 20)       /* the bytes of one token */
#define FBPE_MAX_TOTAL_TOKEN_BYTES ((size_t)1 << 26) /* the bytes of all tokens together */
#define FBPE_MAX_THREADS 1024                        /* threads one call may use */

/* What a function of the core that can fail returns. Zero is success, a negative value
 * the error; FBPE_MORE says that the work stopped before its end, as it was meant to: the
 * trainer's time slice is used up, the encoder met a piece that its caller must supply, a
 * sink wants no more. What a function computes comes back through its pointer arguments,
 * except that a function whose only failure is running out of memory returns what it
 * makes, or NULL, as malloc does. Every compiled module turns these into Python exceptions
 * in one place (csrc/status.pxd). */
typedef enum {
    FBPE_OK = 0,
    FBPE_MORE = 1,
    FBPE_ENOMEM = -1,
    FBPE_EOVERFLOW = -2, /* a count, or the sum of count x pairs, needs more than 63 bits */
    FBPE_ETOOLONG = -3,  /* a piece of 2**32 symbols or more, or 2**32 pieces */
    FBPE_EIDS = -4,      /* the merges would need ids of 2**32 - 1 and above */
    FBPE_EINTERNAL = -5, /* a broken invariant: a bug, never bad input */
    FBPE_EINVALID = -6,  /* input that breaks a rule or a limit above */
    FBPE_EUTF8 = -7,     /* bytes that are not valid UTF-8 */
    FBPE_EPATTERN = -8   /* a compiled pattern gave up on a text (regex_vm.h): the caller runs regex */
} fbpe_status;

/* The capacity an array grows to: `cap` (or `start` when it is 0) doubled until it holds
 * `want` elements of `size` bytes, or 0 when that many bytes do not fit in size_t (the
 * caller reports no memory). Every growing array of the core grows through this. */
static inline size_t fbpe_grow_to(size_t cap, size_t start, size_t want, size_t size) {
    size_t n = cap ? cap : start;
    if (!size || want > SIZE_MAX / size) return 0;
    while (n < want) n = n <= SIZE_MAX / 2 ? 2 * n : want;
    return n;
}

/* n elements of `size` bytes, or SIZE_MAX when that overflows (malloc then fails). */
static inline size_t fbpe_array_bytes(size_t n, size_t size) {
    return size && n > SIZE_MAX / size ? SIZE_MAX : n * size;
}

#endif
