/* Encoding whole texts; see encode_text.h. The scanners are inline (scanners.h,
 * markers_scan.h), so that each pattern's scanner is inlined into its loop below; their
 * tables are the ones the scanner's module installed (splitter.h). */
#include "encode_text.h"

#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/utf8.h"
#include "../scan/markers_scan.h"
#include "../scan/scanners.h"
#include "../common/take_next.h"
#include "../common/workers.h"
#include "piece_cache.h"
#include "ucs_utf8.h"

/* One loop per pattern, so that the compiler inlines that pattern's scanner into it. */
#define ENCODE_LOOP(END_FN)                                                                    \
    while (i < n) {                                                                            \
        size_t e = END_FN(cl, s, i, n);                                                        \
        if (fbpe_encode_piece_inline(b, vslots, vmask, cache, s + i, e - i, n - i, out))       \
            return FBPE_ENOMEM;                                                                \
        i = e;                                                                                 \
    }

/* The boundary-marker scheme: its pieces are written by the piece loop, then encoded, with
 * the inline lookup of the loops above (8,192 ids trained on English, 300,000 fresh
 * characters, one thread: 23.36M -> 21.05M instructions in the whole call, callgrind). */
typedef struct {
    const fbpe_bpe *b;
    fbpe_cache *cache;
    fbpe_ids *out;
} marker_encoder;

FBPE_MK_INLINE fbpe_status encode_marker_piece(void *ctx, const uint8_t *p, size_t len,
                                               size_t readable, size_t at) {
    marker_encoder *e = (marker_encoder *)ctx;
    (void)at;
    return fbpe_encode_piece_inline(e->b, e->b->vocab_slots, e->b->vocab_mask, e->cache, p, len,
                                    readable, e->out);
}

/* A compiled pattern's pieces (regex_vm.h), encoded; FBPE_EPATTERN when its matcher gives
 * up, and then the caller encodes the text with regex. The pieces take the inline lookup of
 * the loops above, not a call of fbpe_encode_piece each: Mistral's tekken pattern with
 * o200k's ranks, 500 KB of fresh English, one thread, 31.69M -> 26.35M instructions in the
 * whole call (callgrind). */
static fbpe_status encode_program(const fbpe_bpe *b, fbpe_cache *cache, const fbpe_rx *prog,
                                  const uint8_t *s, size_t n, fbpe_ids *out) {
    const fbpe_vocab_slot *vslots = b->vocab_slots;
    size_t vmask = b->vocab_mask;
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
        if (fbpe_encode_piece_inline(b, vslots, vmask, cache, s + i, e - i, n - i, out)) {
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
    const fbpe_vocab_slot *vslots = b->vocab_slots; /* fbpe_encode_piece_inline */
    size_t vmask = b->vocab_mask;
    /* Room for one token per three bytes: prose has about one per four, but JavaScript
     * (0.29 a byte with cl100k or o200k) and Chinese or Japanese with cl100k (0.32) passed a
     * quarter, and the ids were copied once more as the array doubled (500 KB of them for
     * 500 KB of JavaScript: 2.5% of the call's instructions, callgrind). Room not written is
     * not touched. */
    if (fbpe_ids_reserve(out, n / 3 + 16)) return FBPE_ENOMEM;
    if (sp->markers) {
        marker_encoder e = {b, cache, out};
        return fbpe_mk_pieces_inline(sp->markers, sp->options, s, n, encode_marker_piece, &e);
    }
    if (sp->whole) return n ? fbpe_encode_table_piece(b, cache, s, n, out) : FBPE_OK;
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

/* The ids of a cached piece appended: most are one to three, stored here rather than
 * through a call of memcpy (a Functionalizer tokenizer of 8,192 ids, 300,000 fresh
 * characters of English, one thread: 69.54M -> 68.45M instructions in the whole call,
 * callgrind). The caller has made room. Always inline: beside the cache's lookup, inline
 * too (piece_cache.h), GCC called it once a piece. */
static inline __attribute__((always_inline)) void append_ids(fbpe_ids *out, const uint32_t *ids, size_t m) {
    uint32_t *to = out->ids + out->len;
    out->len += m;
    switch (m) {
    case 3:
        to[2] = ids[2];
        /* fall through */
    case 2:
        to[1] = ids[1];
        /* fall through */
    case 1:
        to[0] = ids[0];
        /* fall through */
    case 0:
        return;
    default:
        memcpy(to, ids, m * sizeof(uint32_t));
    }
}

#define CACHED_LOOP(END_FN)                                                                    \
    while (i < n) {                                                                            \
        size_t e = END_FN(cl, s, i, n), m;                                                     \
        const uint32_t *hit = fbpe_cache_lookup(raw, s + i, e - i, n - i, &m);                 \
        if (!hit) {                                                                            \
            *pos = i;                                                                          \
            *end = e;                                                                          \
            return FBPE_MORE;                                                                  \
        }                                                                                      \
        if (m > out->cap - out->len && fbpe_ids_reserve(out, m)) return FBPE_ENOMEM;           \
        append_ids(out, hit, m);                                                               \
        i = e;                                                                                 \
    }

fbpe_status fbpe_encode_cached(const fbpe_cache *raw, const fbpe_splitter *sp, const uint8_t *s,
                               size_t n, size_t *pos, size_t *end, fbpe_ids *out) {
    size_t i = *pos;
    const fbpe_classes *cl = sp->classes;
    if (sp->markers || sp->whole) return FBPE_EINVALID;
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
            const uint32_t *hit = fbpe_cache_lookup(raw, s + i, e - i, n - i, &m);
            if (!hit) {
                *pos = i;
                *end = e;
                rc = FBPE_MORE;
                break;
            }
            if (m > out->cap - out->len && fbpe_ids_reserve(out, m)) {
                rc = FBPE_ENOMEM;
                break;
            }
            append_ids(out, hit, m);
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


void fbpe_needles_init(fbpe_needles *nd, const uint8_t *const *text, const size_t *len, size_t num) {
    memset(nd, 0, sizeof *nd);
    nd->text = text;
    nd->len = len;
    nd->num = num;
    nd->one_first = num > 0;
    for (size_t k = 0; k < num; k++) {
        uint8_t a = text[k][0];
        if (a != text[0][0]) nd->one_first = 0;
        nd->first[a] |= len[k] == 1 ? 2 : 1;
        if (len[k] >= 2) {
            unsigned bit = (unsigned)a << 8 | text[k][1];
            nd->second[bit >> 6] |= (uint64_t)1 << (bit & 63);
        }
    }
    nd->first_byte = num ? text[0][0] : 0;
}

int fbpe_needles_in(const fbpe_needles *nd, const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (nd->one_first) {
            const uint8_t *at = (const uint8_t *)memchr(s + i, nd->first_byte, n - i);
            if (!at) return 0;
            i = (size_t)(at - s);
        } else if (!nd->first[s[i]]) {
            continue;
        }
        uint8_t a = s[i];
        if (nd->first[a] & 2) return 1;
        if (i + 1 == n) return 0;
        unsigned bit = (unsigned)a << 8 | s[i + 1];
        if (!(nd->second[bit >> 6] >> (bit & 63) & 1)) continue;
        for (size_t k = 0; k < nd->num; k++)
            if (nd->len[k] <= n - i && nd->text[k][0] == a && memcmp(nd->text[k], s + i, nd->len[k]) == 0)
                return 1;
    }
    return 0;
}

/* Unit u encoded by worker w, its ids appended to out; scratch holds the UTF-8 of a text
 * given as code units. */
static inline void encode_unit(fbpe_bpe *b, fbpe_cache *cache, const fbpe_splitter *sp,
                               const fbpe_needles *needles, fbpe_text_unit *u, size_t w,
                               fbpe_ids *out, uint8_t **scratch, size_t *scratch_cap) {
    u->worker = w;
    u->off = out->len;
    const uint8_t *s = u->data;
    size_t n = u->len;
    u->status = FBPE_OK;
    if (u->ucs_kind) {
        u->status = fbpe_ucs_to_utf8_grown(u->ucs, u->ucs_kind, u->ucs_len, scratch, scratch_cap, &n);
        s = *scratch;
    }
    if (u->status == FBPE_OK) {
        if (needles && fbpe_needles_in(needles, s, n))
            u->holds_needle = 1; /* refused by the caller: no ids */
        else
            u->status = fbpe_encode_text(b, cache, sp, s, n, out);
    }
    u->count = out->len - u->off;
}

void fbpe_encode_batch(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch) {
    size_t w = fbpe_take_next(&batch->next_worker);
    if (w >= batch->num_workers) return;
    /* The worker's array of ids is filled through a copy on its own stack, put back at the
     * end: the workers' arrays lie side by side (batch->outs), so their lengths shared a
     * cache line, written at every piece by each worker, and the line went from core to
     * core. Two threads then did the work of one thread in more CPU time than it took it:
     * o200k, a text encoded again, English 180 MB/s a CPU-second on one thread, 113 on two;
     * Python source 135 and 74. */
    fbpe_ids own = batch->outs[w], *out = &own;
    fbpe_cache *cache = fbpe_cache_take_in(b, batch->shared);
    uint8_t *scratch = NULL;
    size_t scratch_cap = 0;
    size_t first, last;
    while (fbpe_take_range(&batch->next, batch->take ? batch->take : 1, batch->num_units, &first, &last))
        for (size_t k = first; k < last; k++)
            encode_unit(b, cache, sp, batch->needles, &batch->units[k], w, out, &scratch, &scratch_cap);
    batch->outs[w] = own;
    free(scratch);
    fbpe_cache_give(b, cache);
}

typedef struct {
    fbpe_bpe *b;
    const fbpe_splitter *sp;
    fbpe_text_batch *batch;
} batch_job;

static void run_batch_job(void *arg) {
    batch_job *job = (batch_job *)arg;
    fbpe_encode_batch(job->b, job->sp, job->batch);
}

void fbpe_encode_batch_on(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch,
                          size_t threads) {
    batch_job job = {b, sp, batch};
    if (threads > batch->num_workers) threads = batch->num_workers;
    batch->take = fbpe_take_size(batch->num_units, batch->bytes, threads);
    batch->shared = threads > 1 ? fbpe_cache_share(b, batch->bytes) : NULL;
    fbpe_workers_run(threads, run_batch_job, &job);
    fbpe_cache_unshare(b, batch->shared);
    batch->shared = NULL;
}
