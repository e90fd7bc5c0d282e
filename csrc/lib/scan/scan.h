/* Hand-written scanners for the built-in pre-tokenization patterns.
 *
 * Each scanner answers one question: given UTF-8 text s[0..n) and a position i where a piece
 * starts, where does that piece end? It gives exactly the end that regex.findall would give
 * with the pattern of the same name in functionalbpe/text/patterns.py; the derivation of every
 * rule from the pattern is written next to the code in scanners.h. Each scanner reads forward
 * only, never backtracks over what it has read more than once, and so runs in linear time on
 * any input.
 *
 * The character classes are not compiled in: they are measured from the installed regex
 * module (functionalbpe/unicode/charclasses.py) and installed once with fbpe_install_classes by the
 * module that owns the scanner (_scanner), which lends the table to the encoder.
 */
#ifndef FBPE_SCAN_H
#define FBPE_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Class bits, the same values as functionalbpe/unicode/charclasses.py. */
#define FBPE_LETTER 1u   /* \p{L} */
#define FBPE_NUMBER 2u   /* \p{N} */
#define FBPE_SPACE 4u    /* \s (Unicode White_Space) */
#define FBPE_UPPERISH 8u /* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
#define FBPE_LOWERISH 16u /* [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
#define FBPE_MARK 32u    /* \p{M} */

#define FBPE_CODE_POINTS 0x110000u

typedef enum {
    FBPE_GPT2 = 0,
    FBPE_GPT4 = 1, /* also llama3: the two patterns cut every text identically (scanners.h) */
    FBPE_O200K = 2,
    FBPE_FUNCTIONALIZER = 3,      /* the paper's split: every space a piece of its own */
    FBPE_FUNCTIONALIZER_RUNS = 4, /* a run of spaces (or of U+2581) is one piece */
    FBPE_LLAMA_DIGITS = 5,        /* functionalizer-llama: gpt4 with single digits */
    FBPE_CL100K = 6,              /* cl100k as tiktoken ships it: gpt4 and \s++$ */
    FBPE_NUM_SCANNERS = 7,
    /* A flag on any of the above: runs of >= 3 identical pieces joined, as the Functionalizer
     * joins them with repeat on (scanners.h). */
    FBPE_JOIN_RUNS = 8
} fbpe_scanner;

#define FBPE_MAX_FOLDS 64

/* What the scanners read: one byte of class bits per code point, and the contraction
 * letters. */
typedef struct {
    uint8_t cls[FBPE_CODE_POINTS];
    /* (?i) contraction letters: ASCII letter -> its lower case for d e l m r s t v, else 0;
     * plus the few non-ASCII code points regex folds to one of them (U+017F long s). */
    char ascii_fold[128];
    uint32_t fold_cp[FBPE_MAX_FOLDS];
    char fold_letter[FBPE_MAX_FOLDS];
    size_t num_folds;
} fbpe_classes;

/* Install the classes, once per process, in the module that owns the scanner; every later
 * call returns the same table unchanged. table: FBPE_CODE_POINTS bytes of class bits.
 * folds: pairs (code point, ASCII letter) of the non-ASCII code points that (?i) matches to
 * a contraction letter (at most FBPE_MAX_FOLDS). */
const fbpe_classes *fbpe_install_classes(const uint8_t *table, const uint32_t *fold_cps,
                                         const char *fold_letters, size_t num_folds);

/* The end of the piece that starts at byte i of s[0..n) (i < n; the result is > i).
 * s must be valid UTF-8, lone surrogates allowed (Python strings may hold them). */
size_t fbpe_piece_end(const fbpe_classes *cl, fbpe_scanner which, const uint8_t *s, size_t i,
                      size_t n);

/* The largest byte offset c in (lo, hi] of s[0..n) at which the text can be cut so that the
 * pieces of s[0..c) followed by the pieces of s[c..n) are exactly the pieces of s[0..n), for
 * every built-in pattern; 0 if there is none. s[0..n) must be valid UTF-8. See scan.c for
 * the two rules and why they are safe. */
size_t fbpe_safe_cut(const fbpe_classes *cl, const uint8_t *s, size_t n, size_t lo, size_t hi);
/* fbpe_safe_cut on a Python str's buffer, n code units of width kind (1, 2 or 4): the
 * largest code-unit offset in (lo, hi] where the UTF-8 of the text could be cut (the same
 * rules), never beside a surrogate; 0 if there is none. */
size_t fbpe_ucs_safe_cut(const fbpe_classes *cl, const void *s, int kind, size_t n, size_t lo,
                         size_t hi);

#endif
