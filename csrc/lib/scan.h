/* Hand-written scanners for the built-in pre-tokenization patterns.
 *
 * Each scanner answers one question: given UTF-8 text s[0..n) and a position i where a piece
 * starts, where does that piece end? It gives exactly the end that regex.findall would give
 * with the pattern of the same name in functionalbpe/patterns.py; the derivation of every
 * rule from the pattern is written next to the code in scan.c. Each scanner reads forward
 * only, never backtracks over what it has read more than once, and so runs in linear time on
 * any input.
 *
 * The character classes are not compiled in: they are measured from the installed regex
 * module (functionalbpe/charclasses.py) and installed once with fbpe_install_classes.
 */
#ifndef FBPE_SCAN_H
#define FBPE_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Class bits, the same values as functionalbpe/charclasses.py. */
#define FBPE_LETTER 1u   /* \p{L} */
#define FBPE_NUMBER 2u   /* \p{N} */
#define FBPE_SPACE 4u    /* \s (Unicode White_Space) */
#define FBPE_UPPERISH 8u /* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
#define FBPE_LOWERISH 16u /* [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
#define FBPE_MARK 32u    /* \p{M} */

#define FBPE_CODE_POINTS 0x110000u

typedef enum {
    FBPE_GPT2 = 0,
    FBPE_GPT4 = 1, /* also llama3: the two patterns cut every text identically (scan.c) */
    FBPE_O200K = 2,
    FBPE_FUNCTIONALIZER = 3,
    FBPE_NUM_SCANNERS = 4
} fbpe_scanner;

/* table: FBPE_CODE_POINTS bytes of class bits. folds: pairs (code point, ASCII letter) of
 * the non-ASCII code points that (?i) matches to a contraction letter. */
void fbpe_install_classes(const uint8_t *table, const uint32_t *fold_cps, const char *fold_letters,
                          size_t num_folds);
int fbpe_classes_installed(void);

/* The end of the piece that starts at byte i of s[0..n) (i < n; the result is > i).
 * s must be valid UTF-8, lone surrogates allowed (Python strings may hold them). */
size_t fbpe_piece_end(fbpe_scanner which, const uint8_t *s, size_t i, size_t n);

/* The offset of the first byte that is not valid UTF-8 in s[0..n), or n when all of it is.
 * With allow_surrogates, the three-byte encodings of U+D800..U+DFFF are accepted (what
 * Python's "surrogatepass" writes). An incomplete sequence at the very end counts as
 * invalid; *incomplete_tail is set to 1 in that case, so that a reader of a file in blocks
 * can tell "cut in the middle of a character" from "bad byte". */
size_t fbpe_utf8_invalid(const uint8_t *s, size_t n, int allow_surrogates, int *incomplete_tail);

/* The largest byte offset c in (lo, hi] of s[0..n) at which the text can be cut so that the
 * pieces of s[0..c) followed by the pieces of s[c..n) are exactly the pieces of s[0..n), for
 * every built-in pattern; 0 if there is none. s[0..n) must be valid UTF-8. See scan.c for
 * the two rules and why they are safe. */
size_t fbpe_safe_cut(const uint8_t *s, size_t n, size_t lo, size_t hi);

#endif
