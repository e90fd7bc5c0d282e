/* Encoding whole texts; see encode_text.h. The scanners are inline (scanners.h,
 * markers_scan.h), so that each pattern's scanner is inlined into its loop below; their
 * tables are the ones the scanner's module installed (splitter.h). */
#include "encode_text.h"

#include <stdlib.h>

#include "utf8.h"
#include "markers_scan.h"
#include "scanners.h"
#include "take_next.h"

/* One loop per pattern, so that the compiler inlines that pattern's scanner into it. */
#define ENCODE_LOOP(END_FN)                                                                    \
    while (i < n) {                                                                            \
        size_t e = END_FN(cl, s, i, n);                                                        \
        if (fbpe_encode_piece(b, cache, s + i, e - i, n - i, out)) return FBPE_ENOMEM;         \
        i = e;                                                                                 \
    }

/* The boundary-marker scheme: its pieces are written by the piece loop, then encoded. */
typedef struct {
    const fbpe_bpe *b;
    fbpe_cache *cache;
    fbpe_ids *out;
} marker_encoder;

FBPE_MK_INLINE fbpe_status encode_marker_piece(void *ctx, const uint8_t *p, size_t len,
                                               size_t readable, size_t at) {
    marker_encoder *e = (marker_encoder *)ctx;
    (void)at;
    return fbpe_encode_piece(e->b, e->cache, p, len, readable, e->out);
}

/* A compiled pattern's pieces (regex_vm.h), encoded; FBPE_EPATTERN when its matcher gives
 * up, and then the caller encodes the text with regex. */
static fbpe_status encode_program(const fbpe_bpe *b, fbpe_cache *cache, const fbpe_rx *prog,
                                  const uint8_t *s, size_t n, fbpe_ids *out) {
    fbpe_rx_vm vm;
    fbpe_status rc = FBPE_OK;
    size_t i = 0;
    fbpe_rx_vm_init(&vm, n);
    while (i < n) {
        size_t e = fbpe_rx_piece_end(prog, &vm, s, i, n);
        if (e == i) {
            rc = vm.status;
            break;
        }
        if (fbpe_encode_piece(b, cache, s + i, e - i, n - i, out)) {
            rc = FBPE_ENOMEM;
            break;
        }
        i = e;
    }
    fbpe_rx_vm_free(&vm);
    return rc;
}

fbpe_status fbpe_encode_text(const fbpe_bpe *b, fbpe_cache *cache, const fbpe_splitter *sp,
                             const uint8_t *s, size_t n, fbpe_ids *out) {
    size_t i = 0;
    const fbpe_classes *cl = sp->classes;
    /* Real text has about one token per four bytes; growing from there is rare. */
    if (fbpe_ids_reserve(out, n / 4 + 16)) return FBPE_ENOMEM;
    if (sp->markers) {
        marker_encoder e = {b, cache, out};
        return fbpe_mk_pieces_inline(sp->markers, sp->options, s, n, encode_marker_piece, &e);
    }
    if (sp->prog) return encode_program(b, cache, sp->prog, s, n, out);
#define ENCODE_CASE(WHICH, END_FN)                                                             \
    case WHICH:                                                                                \
        ENCODE_LOOP(END_FN)                                                                    \
        break;
    switch ((int)sp->which) {
        FBPE_FOR_EACH_SCANNER(ENCODE_CASE)
    default:
        return FBPE_EINVALID;
    }
#undef ENCODE_CASE
    return FBPE_OK;
}

#define CACHED_LOOP(END_FN)                                                                    \
    while (i < n) {                                                                            \
        size_t e = END_FN(cl, s, i, n), m;                                                     \
        const uint32_t *hit = fbpe_cache_lookup(raw, s + i, e - i, &m);                        \
        if (!hit) {                                                                            \
            *pos = i;                                                                          \
            *end = e;                                                                          \
            return FBPE_MORE;                                                                  \
        }                                                                                      \
        if (fbpe_ids_reserve(out, m)) return FBPE_ENOMEM;                                      \
        memcpy(out->ids + out->len, hit, m * sizeof(uint32_t));                                \
        out->len += m;                                                                         \
        i = e;                                                                                 \
    }

fbpe_status fbpe_encode_cached(const fbpe_cache *raw, const fbpe_splitter *sp, const uint8_t *s,
                               size_t n, size_t *pos, size_t *end, fbpe_ids *out) {
    size_t i = *pos;
    const fbpe_classes *cl = sp->classes;
    if (sp->markers) return FBPE_EINVALID;
    if (sp->prog) {
        /* A compiled pattern: the same loop with its matcher. A piece not in the cache ends
         * the call (FBPE_MORE), so each call scans from *pos with a budget of its own. */
        fbpe_rx_vm vm;
        fbpe_status rc = FBPE_OK;
        fbpe_rx_vm_init(&vm, n - i);
        while (i < n) {
            size_t e = fbpe_rx_piece_end(sp->prog, &vm, s, i, n), m;
            if (e == i) {
                rc = vm.status;
                break;
            }
            const uint32_t *hit = fbpe_cache_lookup(raw, s + i, e - i, &m);
            if (!hit) {
                *pos = i;
                *end = e;
                rc = FBPE_MORE;
                break;
            }
            if (fbpe_ids_reserve(out, m)) {
                rc = FBPE_ENOMEM;
                break;
            }
            memcpy(out->ids + out->len, hit, m * sizeof(uint32_t));
            out->len += m;
            i = e;
        }
        fbpe_rx_vm_free(&vm);
        if (rc == FBPE_OK) *pos = n;
        return rc;
    }
#define CACHED_CASE(WHICH, END_FN)                                                             \
    case WHICH:                                                                                \
        CACHED_LOOP(END_FN)                                                                    \
        break;
    switch ((int)sp->which) {
        FBPE_FOR_EACH_SCANNER(CACHED_CASE)
    default:
        return FBPE_EINVALID;
    }
#undef CACHED_CASE
    *pos = n;
    return FBPE_OK;
}

static inline uint32_t ucs_at(const void *s, int kind, size_t i) {
    if (kind == 1) return ((const uint8_t *)s)[i];
    if (kind == 2) return ((const uint16_t *)s)[i];
    return ((const uint32_t *)s)[i];
}

/* The UTF-8 of n code units of width kind into *buf (grown as needed); its length in *len. */
static fbpe_status ucs_to_utf8(const void *s, int kind, size_t n, uint8_t **buf, size_t *cap,
                               size_t *len) {
    if (n > SIZE_MAX / 4) return FBPE_ENOMEM;
    size_t want = 4 * n + 1;
    if (want > *cap) {
        size_t grown_cap = fbpe_grow_to(*cap, 4096, want, 1);
        uint8_t *grown = grown_cap ? (uint8_t *)realloc(*buf, grown_cap) : NULL;
        if (!grown) return FBPE_ENOMEM;
        *buf = grown;
        *cap = grown_cap;
    }
    uint8_t *dst = *buf;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = ucs_at(s, kind, i);
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            uint32_t low = i + 1 < n ? ucs_at(s, kind, i + 1) : 0;
            if (cp <= 0xDBFF && low >= 0xDC00 && low <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                i++;
            } else {
                cp = 0xFFFD;
            }
        }
        dst += fbpe_utf8_put(cp, dst);
    }
    *len = (size_t)(dst - *buf);
    return FBPE_OK;
}

void fbpe_encode_batch(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch) {
    size_t w = fbpe_take_next(&batch->next_worker);
    if (w >= batch->num_workers) return;
    fbpe_ids *out = &batch->outs[w];
    fbpe_cache *cache = fbpe_cache_take(b);
    uint8_t *scratch = NULL; /* this worker's UTF-8 of the texts given as code units */
    size_t scratch_cap = 0;
    for (;;) {
        size_t k = fbpe_take_next(&batch->next);
        if (k >= batch->num_units) break;
        fbpe_text_unit *u = &batch->units[k];
        u->worker = w;
        u->off = out->len;
        if (u->ucs_kind) {
            size_t n = 0;
            u->status = ucs_to_utf8(u->ucs, u->ucs_kind, u->ucs_len, &scratch, &scratch_cap, &n);
            if (u->status == FBPE_OK) u->status = fbpe_encode_text(b, cache, sp, scratch, n, out);
        } else {
            u->status = fbpe_encode_text(b, cache, sp, u->data, u->len, out);
        }
        u->count = out->len - u->off;
    }
    free(scratch);
    fbpe_cache_give(b, cache);
}
