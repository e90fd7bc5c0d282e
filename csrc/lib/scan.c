/* Class tables, validation and safe cuts; the scanners are in scanners.h. See scan.h. */
#include "scanners.h"

#include <string.h>

FBPE_HIDDEN uint8_t fbpe_cls[FBPE_CODE_POINTS];
FBPE_HIDDEN char fbpe_ascii_fold[128];
FBPE_HIDDEN uint32_t fbpe_fold_cp[FBPE_MAX_FOLDS];
FBPE_HIDDEN char fbpe_fold_letter[FBPE_MAX_FOLDS];
FBPE_HIDDEN size_t fbpe_num_folds = 0;
static int installed = 0;

void fbpe_install_classes(const uint8_t *table, const uint32_t *fold_cps, const char *fold_letters,
                          size_t count) {
    memcpy(fbpe_cls, table, FBPE_CODE_POINTS);
    memset(fbpe_ascii_fold, 0, sizeof fbpe_ascii_fold);
    for (const char *c = "delmrstv"; *c; c++) {
        fbpe_ascii_fold[(unsigned char)*c] = *c;
        fbpe_ascii_fold[(unsigned char)(*c - 'a' + 'A')] = *c;
    }
    fbpe_num_folds = count < FBPE_MAX_FOLDS ? count : FBPE_MAX_FOLDS;
    for (size_t k = 0; k < fbpe_num_folds; k++) {
        fbpe_fold_cp[k] = fold_cps[k];
        fbpe_fold_letter[k] = fold_letters[k];
    }
    installed = 1;
}

int fbpe_classes_installed(void) { return installed; }

size_t fbpe_piece_end(fbpe_scanner which, const uint8_t *s, size_t i, size_t n) {
    switch (which) {
    case FBPE_GPT2:
        return fbpe_gpt2_end(s, i, n);
    case FBPE_GPT4:
        return fbpe_gpt4_end(s, i, n);
    case FBPE_O200K:
        return fbpe_o200k_end(s, i, n);
    default:
        return fbpe_functionalizer_end(s, i, n);
    }
}

/* ---- validation ---- */

size_t fbpe_utf8_invalid(const uint8_t *s, size_t n, int allow_surrogates, int *incomplete_tail) {
    size_t i = 0;
    *incomplete_tail = 0;
    while (i < n) {
        /* Eight ASCII bytes at a time: most text is mostly ASCII. */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= n) break;
        uint8_t b = s[i];
        if (b < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (b >= 0xC2 && b <= 0xDF) {
            need = 1;
        } else if (b >= 0xE0 && b <= 0xEF) {
            need = 2;
            if (b == 0xE0) lo = 0xA0;
            if (b == 0xED && !allow_surrogates) hi = 0x9F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            need = 3;
            if (b == 0xF0) lo = 0x90;
            if (b == 0xF4) hi = 0x8F;
        } else {
            return i;
        }
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= n) {
                *incomplete_tail = 1;
                return i;
            }
            uint8_t x = s[i + k];
            if (k == 1 ? (x < lo || x > hi) : (x < 0x80 || x > 0xBF)) return i;
        }
        i += need + 1;
    }
    return n;
}

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
 *    gpt4/o200k: \s*[\r\n]; Functionalizer: \n+).
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

size_t fbpe_safe_cut(const uint8_t *s, size_t n, size_t lo, size_t hi) {
    size_t len;
    if (n < 3) return 0;
    if (hi >= n) hi = n - 1; /* s[c] must exist */
    for (size_t c = hi; c > lo && c >= 2; c--) {
        uint8_t b = s[c];
        if ((b & 0xC0) == 0x80) continue; /* not a character boundary */
        if (s[c - 1] == '\n') {
            size_t before = char_start_before(s, c - 1);
            if (c - 1 > 0 && !(class_at(s, before, &len) & FBPE_SPACE) && b != '/' &&
                !(class_at(s, c, &len) & FBPE_SPACE))
                return c;
        } else if (cut_punctuation(b)) {
            if (class_at(s, char_start_before(s, c), &len) & FBPE_LETTER) return c;
        }
    }
    return 0;
}
