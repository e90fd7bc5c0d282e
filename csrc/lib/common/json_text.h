/* The small pieces of reading JSON from a str's buffer that the compiled readers share
 * (id_rows.c, bytelevel_read.c): a character of a buffer of `kind` bytes a character, white
 * space, and an id. Always inlined, so that each reader's loops see `kind` as the constant
 * their caller made it. */
#ifndef FBPE_JSON_TEXT_H
#define FBPE_JSON_TEXT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define FBPE_JSON_INLINE static inline __attribute__((always_inline))
#else
#define FBPE_JSON_INLINE static inline
#endif

/* `kind` of UTF-8 bytes (a file read as bytes, not a str): fbpe_json_char gives byte i, which
 * is the character wherever JSON's syntax is ASCII (everything outside strings); a reader
 * decodes the characters of a string itself (bytelevel_read.c, read_string). */
#define FBPE_JSON_UTF8 0

/* Character i of a str's buffer of `kind` (1, 2 or 4) bytes a character, or byte i of UTF-8. */
FBPE_JSON_INLINE uint32_t fbpe_json_char(const void *t, int kind, size_t i) {
    return kind <= 1 ? ((const uint8_t *)t)[i] : kind == 2 ? ((const uint16_t *)t)[i] : ((const uint32_t *)t)[i];
}

/* The first character at or after i that is not JSON white space, or n. */
FBPE_JSON_INLINE size_t fbpe_json_skip_ws(const void *t, int kind, size_t n, size_t i) {
    while (i < n) {
        uint32_t c = fbpe_json_char(t, kind, i);
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
        i++;
    }
    return i;
}

/* One JSON integer at t[*i..n) that is a uint32: no sign, no leading zero, no fraction or
 * exponent (what follows must be a delimiter, checked by the caller). 1 with *i past it,
 * else 0. */
FBPE_JSON_INLINE int fbpe_json_id(const void *t, int kind, size_t n, size_t *i, uint32_t *value) {
    size_t k = *i;
    if (k >= n) return 0;
    uint32_t c = fbpe_json_char(t, kind, k);
    if (c < '0' || c > '9') return 0;
    uint64_t v = c - '0';
    k++;
    if (v == 0) { /* "0" alone: "01" is not JSON */
        if (k < n && (c = fbpe_json_char(t, kind, k)) >= '0' && c <= '9') return 0;
    } else {
        while (k < n && (c = fbpe_json_char(t, kind, k)) >= '0' && c <= '9') {
            v = v * 10 + (c - '0');
            if (v > UINT32_MAX) return 0;
            k++;
        }
    }
    *i = k;
    *value = (uint32_t)v;
    return 1;
}

#endif
