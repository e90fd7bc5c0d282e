/* JSON tables of ids (id_rows.h). */
#include "id_rows.h"
#include "json_text.h"

#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define ROWS_INLINE static inline __attribute__((always_inline))
#else
#define ROWS_INLINE static inline
#endif

ROWS_INLINE int read_rows(const void *t, int kind, size_t n, size_t pos, size_t width, uint32_t *out,
                          size_t *rows, size_t *end) {
    size_t i = fbpe_json_skip_ws(t, kind, n, pos), count = 0;
    if (i >= n || fbpe_json_char(t, kind, i) != '[') return 0;
    i = fbpe_json_skip_ws(t, kind, n, i + 1);
    if (i < n && fbpe_json_char(t, kind, i) == ']') {
        *rows = 0;
        *end = i + 1;
        return 1;
    }
    for (;;) {
        if (i >= n || fbpe_json_char(t, kind, i) != '[') return 0;
        i++;
        for (size_t j = 0; j < width; j++) {
            uint32_t v;
            i = fbpe_json_skip_ws(t, kind, n, i);
            if (!fbpe_json_id(t, kind, n, &i, &v)) return 0;
            if (out) out[count * width + j] = v;
            i = fbpe_json_skip_ws(t, kind, n, i);
            if (i >= n || fbpe_json_char(t, kind, i) != (j + 1 < width ? ',' : ']')) return 0;
            i++;
        }
        count++;
        i = fbpe_json_skip_ws(t, kind, n, i);
        if (i >= n) return 0;
        uint32_t c = fbpe_json_char(t, kind, i);
        if (c == ']') break;
        if (c != ',') return 0;
        i = fbpe_json_skip_ws(t, kind, n, i + 1);
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
