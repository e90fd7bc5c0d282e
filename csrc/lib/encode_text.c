/* Encoding whole texts; see encode_text.h. */
#include "encode_text.h"

/* The scanner is compiled into this file (one translation unit), so that each pattern's
 * scanner is inlined into its loop below. */
#include "scan.c"
#include "markers.c"

#include "take_next.h"

void fbpe_text_install_classes(const uint8_t *table, const uint32_t *fold_cps, const char *fold_letters,
                               size_t num_folds) {
    fbpe_install_classes(table, fold_cps, fold_letters, num_folds);
}

/* One loop per pattern, so that the compiler inlines that pattern's scanner into it. */
#define ENCODE_LOOP(END_FN)                                                                    \
    while (i < n) {                                                                            \
        size_t e = END_FN(s, i, n);                                                            \
        if (fbpe_encode_piece(b, cache, s + i, e - i, n - i, out)) return -1;                  \
        i = e;                                                                                 \
    }

/* The boundary-marker scheme: its pieces are written by fbpe_mk_pieces, then encoded. */
typedef struct {
    const fbpe_bpe *b;
    fbpe_cache *cache;
    fbpe_ids *out;
} marker_encoder;

FBPE_MK_INLINE int encode_marker_piece(void *ctx, const uint8_t *p, size_t len, size_t readable, size_t at) {
    marker_encoder *e = (marker_encoder *)ctx;
    (void)at;
    return fbpe_encode_piece(e->b, e->cache, p, len, readable, e->out) ? -1 : 0;
}

int fbpe_encode_text(const fbpe_bpe *b, fbpe_cache *cache, int which, const uint8_t *s, size_t n,
                     fbpe_ids *out) {
    size_t i = 0;
    /* Real text has about one token per four bytes; growing from there is rare. */
    if (fbpe_ids_reserve(out, n / 4 + 16)) return -1;
    if (which >= FBPE_TEXT_MARKERS) {
        marker_encoder e = {b, cache, out};
        return mk_pieces(which - FBPE_TEXT_MARKERS, s, n, encode_marker_piece, &e) ? -1 : 0;
    }
    switch (which) {
    case FBPE_TEXT_GPT2:
        ENCODE_LOOP(fbpe_gpt2_end)
        break;
    case FBPE_TEXT_GPT4:
        ENCODE_LOOP(fbpe_gpt4_end)
        break;
    case FBPE_TEXT_O200K:
        ENCODE_LOOP(fbpe_o200k_end)
        break;
    default:
        ENCODE_LOOP(fbpe_functionalizer_end)
        break;
    }
    return 0;
}


#define CACHED_LOOP(END_FN)                                                                    \
    while (i < n) {                                                                            \
        size_t e = END_FN(s, i, n), m;                                                         \
        const uint32_t *hit = fbpe_cache_lookup(raw, s + i, e - i, &m);                        \
        if (!hit) {                                                                            \
            *pos = i;                                                                          \
            *end = e;                                                                          \
            return 1;                                                                          \
        }                                                                                      \
        if (fbpe_ids_reserve(out, m)) return -1;                                               \
        memcpy(out->ids + out->len, hit, m * sizeof(uint32_t));                                \
        out->len += m;                                                                         \
        i = e;                                                                                 \
    }

int fbpe_encode_cached(const fbpe_cache *raw, int which, const uint8_t *s, size_t n, size_t *pos,
                       size_t *end, fbpe_ids *out) {
    size_t i = *pos;
    switch (which) {
    case FBPE_TEXT_GPT2:
        CACHED_LOOP(fbpe_gpt2_end)
        break;
    case FBPE_TEXT_GPT4:
        CACHED_LOOP(fbpe_gpt4_end)
        break;
    case FBPE_TEXT_O200K:
        CACHED_LOOP(fbpe_o200k_end)
        break;
    case FBPE_TEXT_FUNCTIONALIZER:
        CACHED_LOOP(fbpe_functionalizer_end)
        break;
    default:
        return -1;
    }
    *pos = n;
    return 0;
}

void fbpe_encode_batch(fbpe_bpe *b, int which, fbpe_text_batch *batch) {
    fbpe_cache *cache = fbpe_cache_take(b);
    for (;;) {
        size_t k = fbpe_take_next(&batch->next);
        if (k >= batch->num_units) break;
        fbpe_text_unit *u = &batch->units[k];
        fbpe_ids_init(&u->out);
        u->failed = fbpe_encode_text(b, cache, which, u->data, u->len, &u->out);
    }
    fbpe_cache_give(b, cache);
}
