/* Safe cuts (scan.h): apart from the scanners, so that the encoder's file pipeline
 * (file_encode.c) links them without the class table's owner. */
#include "scanners.h"

/* ---- safe cuts ----
 * A cut at c is safe when (a) some piece of the whole text ends at c, and (b) every piece
 * before c was decided without looking at s[c..) or, where it looked, what it saw there
 * leads to the same decision as the end of the text would. Pieces after c are then those of
 * s[c..) alone, since a match depends only on the text from where it starts. Two rules:
 *
 * 1. s[c-1] is \n, the character before it is not white space, and s[c] is neither white
 *    space nor '/'. The character before the \n ends every run it is in, except that of
 *    "other" characters, which gpt4, llama3 and o200k continue over [\r\n]* (o200k:
 *    [\r\n/]*); that continuation stops at s[c] as it would at the end. Otherwise the \n
 *    is a piece by itself in every pattern: white-space run of one followed by a
 *    non-space (or by the end) gives the same piece either way (gpt2: \s+ or \s+(?!\S);
 *    gpt4/o200k: \s*[\r\n]; Functionalizer: \n+). Joined runs: a run of identical
 *    pieces never spans such a cut in the Functionalizer's splits, whose only pieces that
 *    can repeat in a row are single spaces; for the other patterns a joined scanner is
 *    not cut (the scheme declares it, Scheme.compiled).
 *    cl100k as tiktoken ships it (fbpe_cl100k_end) differs from gpt4 only where a white-space
 *    run reaches the end of the text: the \n before c is then one piece either way (at the
 *    end of the part, \s++$; in the whole text, \s*[\r\n]).
 * 2. The character before c is a letter and s[c] is ASCII punctuation other than ' / _.
 *    Every pattern ends a letter run at a non-letter; s[c] is not an apostrophe, so no
 *    contraction follows; it is not a mark, a word character or white space, so no class
 *    that continues a letter run (o200k's U and W, the Functionalizer's word) contains it.
 */
static inline size_t char_start_before(const uint8_t *s, size_t c) {
    size_t k = c - 1;
    while (k > 0 && (s[k] & 0xC0) == 0x80) k--;
    return k;
}

static inline int cut_punctuation(uint8_t b) {
    return b >= 0x21 && b <= 0x7E && !((b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') ||
                                       (b >= 'A' && b <= 'Z') || b == '\'' || b == '/' || b == '_');
}

size_t fbpe_safe_cut(const fbpe_classes *cl, const uint8_t *s, size_t n, size_t lo, size_t hi) {
    size_t len;
    if (n < 3) return 0;
    if (hi >= n) hi = n - 1; /* s[c] must exist */
    for (size_t c = hi; c > lo && c >= 2; c--) {
        uint8_t b = s[c];
        if ((b & 0xC0) == 0x80) continue; /* not a character boundary */
        if (s[c - 1] == '\n') {
            size_t before = char_start_before(s, c - 1);
            if (c - 1 > 0 && !(fbpe_class_at(cl, s, before, &len) & FBPE_SPACE) && b != '/' &&
                !(fbpe_class_at(cl, s, c, &len) & FBPE_SPACE))
                return c;
        } else if (cut_punctuation(b)) {
            if (fbpe_class_at(cl, s, char_start_before(s, c), &len) & FBPE_LETTER) return c;
        }
    }
    return 0;
}

/* The same two rules on a str's own buffer (n code units of width kind), so that a long
 * non-ASCII text is cut before its UTF-8 exists and each worker writes the UTF-8 of its own
 * part: written on the calling thread, the UTF-8 of 2 MB of Russian was a sixth of the
 * instructions of encoding it, all of them before the workers began. A cut is never taken
 * beside a surrogate (c - 1, c, or c - 2 before a \n): the two halves of a pair stay in one
 * part, and the class of the U+FFFD that a lone one becomes is never needed. */
static inline uint32_t ucs_at(const void *s, int kind, size_t i) {
    return kind == 1 ? ((const uint8_t *)s)[i]
           : kind == 2 ? ((const uint16_t *)s)[i] : ((const uint32_t *)s)[i];
}

static inline int is_surrogate(uint32_t cp) { return cp - 0xD800 < 0x800; }

size_t fbpe_ucs_safe_cut(const fbpe_classes *cl, const void *s, int kind, size_t n, size_t lo,
                         size_t hi) {
    if (n < 3) return 0;
    if (hi >= n) hi = n - 1; /* s[c] must exist */
    for (size_t c = hi; c > lo && c >= 2; c--) {
        uint32_t cp = ucs_at(s, kind, c), prev = ucs_at(s, kind, c - 1);
        if (cp > 0x10FFFF || prev > 0x10FFFF || is_surrogate(cp) || is_surrogate(prev)) continue;
        if (prev == '\n') {
            uint32_t before = ucs_at(s, kind, c - 2);
            if (before <= 0x10FFFF && !is_surrogate(before) && !(cl->cls[before] & FBPE_SPACE) &&
                cp != '/' && !(cl->cls[cp] & FBPE_SPACE))
                return c;
        } else if (cp < 0x80 && cut_punctuation((uint8_t)cp)) {
            if (cl->cls[prev] & FBPE_LETTER) return c;
        }
    }
    return 0;
}
