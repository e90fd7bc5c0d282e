/* The boundary-marker scheme: its tables, case codes, and the pieces that are written out
 * (markers_scan.h hands them here). See markers.h. Each rule names the line of
 * functionalbpe/schemes/markers.py it follows. */
#include "markers_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The atoms' UTF-8: TITLE U+E301 and UPPER U+E302 (by case code), LITERAL U+E2FF. */
static const uint8_t SHIFT_UTF8[3][3] = {{0}, {0xEE, 0x8C, 0x81}, {0xEE, 0x8C, 0x82}};
static const uint8_t LITERAL_UTF8[3] = {0xEE, 0x8B, 0xBF};

static inline int32_t map_get(const fbpe_mk_map *map, uint32_t cp) {
    return map->blocks[(size_t)map->index[cp >> 8] * 256 + (cp & 255)];
}

/* ---- case codes (markers.case_code) ------------------------------------------------------ */

/* Python's final-sigma rule for the capital sigma at s[at..after) of the word s[0..n):
 * final when a cased character comes before it and none after it, case-ignorable ones
 * skipped (CPython's handle_capital_sigma, measured into the sigma map). */
static int final_sigma(const fbpe_markers *m, const uint8_t *s, size_t at, size_t after, size_t n) {
    size_t j = at, len;
    int32_t before = 0;
    while (j > 0) {
        do j--;
        while (j > 0 && (s[j] & 0xC0) == 0x80);
        before = map_get(&m->tables.sigma, fbpe_utf8_decode(s, j, &len));
        if (before != FBPE_MK_CASE_IGNORABLE) break;
    }
    if (before != FBPE_MK_CASED) return 0;
    for (j = after; j < n; j += len) {
        int32_t next = map_get(&m->tables.sigma, fbpe_utf8_decode(s, j, &len));
        if (next != FBPE_MK_CASE_IGNORABLE) return next != FBPE_MK_CASED;
    }
    return 1;
}

/* low = word.lower(), character by character; then the title test
 * low[:1].upper() + low[1:] == word and the upper test low.upper() == word, also character
 * by character: upper() maps each character on its own, and a character whose upper case
 * is several characters makes the result longer than the word, so unequal. */
int fbpe_mk_case_code(const fbpe_markers *m, const uint8_t *s, size_t n, uint8_t *out,
                      size_t *out_len) {
    int title = 1, upper = 1, changed = 0;
    size_t i = 0, o = 0, chars = 0, len;
    while (i < n) {
        uint32_t c = fbpe_utf8_decode(s, i, &len), low, up;
        if (c < 0x80) {
            low = c - 'A' < 26u ? c + 32 : c;
        } else if (c == 0x3A3) {
            low = final_sigma(m, s, i, i + len, n) ? 0x3C2 : 0x3C3;
        } else {
            int32_t d = map_get(&m->tables.lower, c);
            if (d == FBPE_MK_MULTI) return 0; /* len(low) != len(word): no code */
            low = (uint32_t)((int32_t)c + d);
        }
        if (low < 0x80) {
            up = low - 'a' < 26u ? low - 32 : low;
        } else {
            int32_t d = map_get(&m->tables.upper, low);
            up = d == FBPE_MK_MULTI ? UINT32_MAX : (uint32_t)((int32_t)low + d);
        }
        title &= chars == 0 ? up == c : low == c;
        upper &= up == c;
        changed |= low != c;
        o += fbpe_utf8_put(low, out + o);
        i += len;
        chars++;
    }
    if (!changed) return 0;
    *out_len = o;
    if (title) return 1;
    if (upper && chars >= 2) return 2;
    return 0;
}

/* ---- written pieces ------------------------------------------------------------------- */

static size_t write_word(const fbpe_markers *m, const uint8_t *u, size_t len, int coded,
                         uint8_t *out) {
    if (coded) { /* markers.BoundaryMarkers._word */
        size_t lowered;
        int code = fbpe_mk_case_code(m, u, len, out + 6, &lowered);
        if (code) {
            memcpy(out, SHIFT_UTF8[code], 3);
            memcpy(out + 3, FBPE_MK_BOUNDARY_UTF8, 3);
            memcpy(out + 6 + lowered, FBPE_MK_BOUNDARY_UTF8, 3);
            return lowered + 9;
        }
    }
    memcpy(out, FBPE_MK_BOUNDARY_UTF8, 3);
    memcpy(out + 3, u, len);
    memcpy(out + 3 + len, FBPE_MK_BOUNDARY_UTF8, 3);
    return len + 6;
}

/* markers.escape_private_use: U+E000..U+EFFF, the code points whose UTF-8 starts with 0xEE,
 * become LITERAL and three base-16 arguments. */
static size_t write_escaped(const uint8_t *u, size_t len, uint8_t *out) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (u[i] != 0xEE) {
            out[o++] = u[i++];
            continue;
        }
        unsigned offset = (unsigned)(u[i + 1] & 0x3F) << 6 | (u[i + 2] & 0x3F);
        memcpy(out + o, LITERAL_UTF8, 3);
        o += 3;
        for (int shift = 8; shift >= 0; shift -= 4) {
            out[o++] = 0xEE;
            out[o++] = 0x80;
            out[o++] = (uint8_t)(0x80 | ((offset >> shift) & 15));
        }
        i += 3;
    }
    return o;
}

/* A piece that is not the unit as it is: written into the writer's buffer (fbpe_markers.write). */
static fbpe_status write_piece(fbpe_mk_writer *w, const fbpe_mk_piece *p) {
    const uint8_t *u = w->s + p->start;
    size_t len = p->end - p->start;
    /* Room: a lower-cased character takes at most 1.5 times its bytes, an escaped one 4
     * times; three atoms; 16 readable bytes after the piece. */
    if (len > (SIZE_MAX - 32) / 4) return FBPE_ENOMEM;
    size_t need = (p->kind == FBPE_MK_U_OTHER ? 4 * len : 2 * len) + 9 + 16, m;
    uint8_t *out = w->small;
    size_t cap = FBPE_MK_SMALL_PIECE;
    if (need > FBPE_MK_SMALL_PIECE) {
        if (need > w->heap_cap) {
            uint8_t *grown = realloc(w->heap, need);
            if (!grown) return FBPE_ENOMEM;
            w->heap = grown;
            w->heap_cap = need;
        }
        out = w->heap;
        cap = w->heap_cap;
    }
    if (p->kind == FBPE_MK_U_WORD) {
        m = write_word(w->m, u, len, p->cased && (w->options & FBPE_MK_CASE), out);
    } else if (p->kind == FBPE_MK_U_OTHER) {
        m = write_escaped(u, len, out);
    } else {
        m = 0;
        if (p->left) {
            memcpy(out, FBPE_MK_BOUNDARY_UTF8, 3);
            m = 3;
        }
        memcpy(out + m, u, len);
        m += len;
        if (p->right) {
            memcpy(out + m, FBPE_MK_BOUNDARY_UTF8, 3);
            m += 3;
        }
    }
    return w->emit(w->ctx, out, m, cap, p->start);
}

static fbpe_markers markers;
static int installed = 0;

const fbpe_markers *fbpe_mk_install(const fbpe_mk_tables *t) {
    if (!installed) {
        markers.tables = *t;
        markers.write = write_piece;
        installed = 1;
    }
    return &markers;
}

fbpe_status fbpe_mk_pieces(const fbpe_markers *m, int options, const uint8_t *s, size_t n,
                           fbpe_mk_sink emit, void *ctx) {
    return fbpe_mk_pieces_inline(m, options, s, n, emit, ctx);
}
