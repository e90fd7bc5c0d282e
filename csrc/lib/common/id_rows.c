/* JSON tables of ids (id_rows.h). */
#include "id_rows.h"

#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define ROWS_INLINE static inline __attribute__((always_inline))
#else
#define ROWS_INLINE static inline
#endif

/* Character i of a str's buffer of `kind` bytes a character: one function per kind below,
 * the kind a constant in each. */
ROWS_INLINE uint32_t char_at(const void *t, int kind, size_t i) {
    return kind == 1 ? ((const uint8_t *)t)[i] : kind == 2 ? ((const uint16_t *)t)[i] : ((const uint32_t *)t)[i];
}

ROWS_INLINE size_t skip_ws(const void *t, int kind, size_t n, size_t i) {
    while (i < n) {
        uint32_t c = char_at(t, kind, i);
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
        i++;
    }
    return i;
}

/* One JSON integer at t[*i..n) that is a uint32: no sign, no leading zero, no fraction or
 * exponent (what follows must be a delimiter, checked by the caller). */
ROWS_INLINE int read_id(const void *t, int kind, size_t n, size_t *i, uint32_t *value) {
    size_t k = *i;
    if (k >= n) return 0;
    uint32_t c = char_at(t, kind, k);
    if (c < '0' || c > '9') return 0;
    uint64_t v = c - '0';
    k++;
    if (v == 0) { /* "0" alone: "01" is not JSON */
        if (k < n && (c = char_at(t, kind, k)) >= '0' && c <= '9') return 0;
    } else {
        while (k < n && (c = char_at(t, kind, k)) >= '0' && c <= '9') {
            v = v * 10 + (c - '0');
            if (v > UINT32_MAX) return 0;
            k++;
        }
    }
    *i = k;
    *value = (uint32_t)v;
    return 1;
}

ROWS_INLINE int read_rows(const void *t, int kind, size_t n, size_t pos, size_t width, uint32_t *out,
                          size_t *rows, size_t *end) {
    size_t i = skip_ws(t, kind, n, pos), count = 0;
    if (i >= n || char_at(t, kind, i) != '[') return 0;
    i = skip_ws(t, kind, n, i + 1);
    if (i < n && char_at(t, kind, i) == ']') {
        *rows = 0;
        *end = i + 1;
        return 1;
    }
    for (;;) {
        if (i >= n || char_at(t, kind, i) != '[') return 0;
        i++;
        for (size_t j = 0; j < width; j++) {
            uint32_t v;
            i = skip_ws(t, kind, n, i);
            if (!read_id(t, kind, n, &i, &v)) return 0;
            if (out) out[count * width + j] = v;
            i = skip_ws(t, kind, n, i);
            if (i >= n || char_at(t, kind, i) != (j + 1 < width ? ',' : ']')) return 0;
            i++;
        }
        count++;
        i = skip_ws(t, kind, n, i);
        if (i >= n) return 0;
        uint32_t c = char_at(t, kind, i);
        if (c == ']') break;
        if (c != ',') return 0;
        i = skip_ws(t, kind, n, i + 1);
    }
    *rows = count;
    *end = i + 1;
    return 1;
}

int fbpe_id_rows_read(const void *text, int kind, size_t n, size_t pos, size_t width, uint32_t *out,
                      size_t *rows, size_t *end) {
    if (width < 1 || width > 16) return 0;
    switch (kind) {
    case 1: return read_rows(text, 1, n, pos, width, out, rows, end);
    case 2: return read_rows(text, 2, n, pos, width, out, rows, end);
    case 4: return read_rows(text, 4, n, pos, width, out, rows, end);
    default: return 0;
    }
}

/* A row: '[', width ids of at most 10 digits, width - 1 commas, ']'. */
size_t fbpe_id_rows_room(size_t num, size_t width, size_t sep_len) {
    if (width > (SIZE_MAX - 2) / 11) return SIZE_MAX;
    size_t row = 2 + 11 * width;
    if (sep_len > SIZE_MAX - row) return SIZE_MAX;
    row += sep_len;
    if (num && row > SIZE_MAX / num) return SIZE_MAX;
    return num * row;
}

static size_t write_id(uint32_t v, uint8_t *out) {
    uint8_t digits[10];
    size_t k = 0;
    do {
        digits[k++] = (uint8_t)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t j = 0; j < k; j++) out[j] = digits[k - 1 - j];
    return k;
}

size_t fbpe_id_rows_write(const uint32_t *ids, size_t num, size_t width, const uint8_t *sep,
                          size_t sep_len, uint8_t *out) {
    uint8_t *p = out;
    for (size_t r = 0; r < num; r++) {
        if (r) {
            memcpy(p, sep, sep_len);
            p += sep_len;
        }
        *p++ = '[';
        for (size_t j = 0; j < width; j++) {
            if (j) *p++ = ',';
            p += write_id(ids[r * width + j], p);
        }
        *p++ = ']';
    }
    return (size_t)(p - out);
}
