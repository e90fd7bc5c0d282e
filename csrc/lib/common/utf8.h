/* UTF-8: the one validator, and reading and writing one code point.
 *
 * Text reaches the core as UTF-8 that Python wrote (always valid, perhaps with lone
 * surrogates: "surrogatepass") or as bytes read from a file (checked here first). Every
 * module that decodes does it with these functions, so that all of them accept the same
 * byte strings: the shortest form of each code point up to U+10FFFF, and U+D800..U+DFFF
 * only where the caller allows surrogates.
 */
#ifndef FBPE_UTF8_H
#define FBPE_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* THE RULE: the length (1 to 4) of the valid character at s[i] (i < n), its code point in
 * *cp; or 0 when s[i..n) does not start with one, and then *incomplete is 1 if it starts
 * one that n cuts short. Valid is the shortest form of a code point up to U+10FFFF, the
 * surrogates U+D800..U+DFFF only with allow_surrogates. */
static inline size_t fbpe_utf8_char(const uint8_t *s, size_t i, size_t n, int allow_surrogates,
                                    uint32_t *cp, int *incomplete) {
    uint8_t b = s[i];
    *incomplete = 0;
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) {
        need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
        need = 2;
        if (b == 0xE0) lo = 0xA0;                      /* no overlong forms */
        if (b == 0xED && !allow_surrogates) hi = 0x9F; /* no surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 3;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    uint32_t c = b & (0x3F >> need);
    for (size_t k = 1; k <= need; k++) {
        if (i + k >= n) {
            *incomplete = 1;
            return 0;
        }
        uint8_t x = s[i + k];
        if (k == 1 ? (x < lo || x > hi) : (x < 0x80 || x > 0xBF)) return 0;
        c = c << 6 | (x & 0x3F);
    }
    *cp = c;
    return need + 1;
}

/* The offset of the first byte that is not valid UTF-8 in s[0..n), or n when all of it is;
 * *incomplete_tail is 1 when that byte starts a character cut short by the end, so that a
 * reader of a file in blocks can tell "cut in the middle of a character" from "bad byte". */
static inline size_t fbpe_utf8_invalid(const uint8_t *s, size_t n, int allow_surrogates,
                                       int *incomplete_tail) {
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
        /* Then characters of two or three bytes whose second byte may be any continuation
         * (not E0's overlong forms, not ED's surrogates) one after another, checked without
         * their code point: the letters of Cyrillic, Greek, Arabic and CJK text. The 22
         * languages of the shared corpora (59 MB), best of 7 in one process, three runs each
         * alternating: 741-803 MB/s through fbpe_utf8_char for each, 920-946 MB/s this way; a
         * process that reads them and checks them 15 times, 1.24x [1.16-1.30] as fast (the
         * median of 9 back-to-back pairs). */
        while (i + 2 < n) {
            unsigned b = s[i], x = s[i + 1], y = s[i + 2];
            if (b >= 0xC2 && b <= 0xDF && (x & 0xC0) == 0x80) {
                i += 2;
            } else if (b >= 0xE1 && b <= 0xEF && b != 0xED && (x & 0xC0) == 0x80 &&
                       (y & 0xC0) == 0x80) {
                i += 3;
            } else {
                break;
            }
        }
        if (i >= n) break;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t len = fbpe_utf8_char(s, i, n, allow_surrogates, &cp, incomplete_tail);
        if (!len) return i;
        i += len;
    }
    return n;
}

/* The code point at s[i] of UTF-8 known to be valid (surrogates allowed); its length in
 * *len. The scanners read text this way: Python wrote it, or it was checked first. */
static inline uint32_t fbpe_utf8_decode(const uint8_t *s, size_t i, size_t *len) {
    uint32_t b = s[i];
    if (b < 0x80) {
        *len = 1;
        return b;
    }
    if (b < 0xE0) {
        *len = 2;
        return ((b & 0x1F) << 6) | (s[i + 1] & 0x3F);
    }
    if (b < 0xF0) {
        *len = 3;
        return ((b & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    }
    *len = 4;
    return ((b & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
           ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
}

/* Write code point cp (at most U+10FFFF) to out; returns its length, 1 to 4. */
static inline size_t fbpe_utf8_put(uint32_t cp, uint8_t *out) {
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* The atoms of the text forms are private-use characters U+E000..U+EFFF, whose UTF-8 is
 * EE 80..BF 80..BF. Their offset from U+E000 (0..0xFFF) when s[i..n) starts with one, else
 * -1. */
static inline int32_t fbpe_utf8_private_use(const uint8_t *s, size_t i, size_t n) {
    if (s[i] != 0xEE || i + 2 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80)
        return -1;
    return (int32_t)(((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F));
}

#endif
