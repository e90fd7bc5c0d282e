/* Counting pieces into a table; see count.h. */
#include "count.h"
#include "../scan/markers_scan.h"
#include "../scan/scanners.h"
#include "../common/take_next.h"
#include "../common/utf8.h"

#include <stdlib.h>
#include <string.h>

/* The table outgrows the fastest caches on real text (a long tail of rare pieces), and an
 * insertion that waits for its index slot, then for its entry, to come from memory costs as
 * much as scanning several pieces. So the counting loop runs ahead: a piece is scanned,
 * hashed and its index slot prefetched; half the lead later the slot is read and the entry
 * it names prefetched; the piece is inserted PREFETCH_DEPTH pieces after it was scanned.
 * Measured on the standard library with gpt4 keys alone: 18 ns per insertion without
 * prefetching, 12 to 14 with the slot prefetched 16 to 32 pieces ahead, 7 when every piece
 * is hot; the entry prefetch adds about 5% to the whole count. */
#ifndef PREFETCH_DEPTH
#define PREFETCH_DEPTH 32 /* a power of two */
#endif

/* count_<pattern>(cl, w, s, n, end, base): the pieces of s[0..n), a text free of special
 * tokens, into w's tables; `end` bounds what may be read past s + n. One function per
 * pattern, so that each gets the scanner inlined and the registers to itself. */
#define DEFINE_COUNT_LOOP(NAME, END_FN)                                                        \
    static fbpe_status NAME(const fbpe_classes *cl, const fbpe_parts *w, fbpe_singles *one,    \
                            const uint8_t *s, size_t n, const uint8_t *end, uint64_t base) {   \
        fbpe_key keys[PREFETCH_DEPTH];                                                         \
        fbpe_table *tables[PREFETCH_DEPTH];                                                    \
        uint64_t firsts[PREFETCH_DEPTH];                                                       \
        size_t i = 0, ahead = 0, done = 0; /* pieces scanned, pieces inserted */             \
        while (i < n) {                                                                        \
            size_t e = END_FN(cl, s, i, n), r = ahead % PREFETCH_DEPTH;                        \
            if (fbpe_single_counted(one, s, i, e)) {                                           \
                i = e;                                                                         \
                continue;                                                                      \
            }                                                                                  \
            fbpe_key_make(&keys[r], s + i, e - i, (size_t)(end - (s + i)));                    \
            tables[r] = fbpe_part_of(w, keys[r].hash);                                         \
            fbpe_table_prefetch(tables[r], &keys[r]);                                          \
            firsts[r] = base + i;                                                              \
            ahead++;                                                                           \
            i = e;                                                                             \
            if (ahead - done > PREFETCH_DEPTH / 2) {                                           \
                size_t h = (ahead - 1 - PREFETCH_DEPTH / 2) % PREFETCH_DEPTH;                  \
                fbpe_table_prefetch_entry(tables[h], &keys[h]);                                \
            }                                                                                  \
            if (ahead - done == PREFETCH_DEPTH) {                                              \
                r = done++ % PREFETCH_DEPTH;                                                   \
                if (fbpe_table_add(tables[r], &keys[r], 1, firsts[r], 1)) return FBPE_ENOMEM;  \
            }                                                                                  \
        }                                                                                      \
        for (; done < ahead; done++) {                                                         \
            size_t r = done % PREFETCH_DEPTH;                                                  \
            if (fbpe_table_add(tables[r], &keys[r], 1, firsts[r], 1)) return FBPE_ENOMEM;         \
        }                                                                                      \
        return FBPE_OK;                                                                        \
    }

#define DEFINE_COUNT_OF(WHICH, END_FN) DEFINE_COUNT_LOOP(count_##END_FN, END_FN)
FBPE_FOR_EACH_SCANNER(DEFINE_COUNT_OF)

/* The boundary-marker scheme's pieces are not byte ranges of the text (they carry markers,
 * shift codes, escapes), so they come from fbpe_mk_pieces one at a time, and the same
 * running ahead happens in its sink: the piece is keyed and its slot prefetched when it
 * arrives and inserted PREFETCH_DEPTH pieces later. A key holds up to 16 bytes; a longer
 * piece is copied into the ring, and one longer than a ring slot is inserted at once, after
 * those before it (the table's entries must stay in order of first occurrence). */
#define MARKER_SLOT 64

typedef struct {
    const fbpe_parts *w;
    uint64_t base;
    size_t ahead, done;
    fbpe_key keys[PREFETCH_DEPTH];
    fbpe_table *tables[PREFETCH_DEPTH];
    uint64_t firsts[PREFETCH_DEPTH];
    uint8_t bytes[PREFETCH_DEPTH][MARKER_SLOT];
} marker_counter;

static inline fbpe_status insert_oldest(marker_counter *c) {
    size_t r = c->done++ % PREFETCH_DEPTH;
    return fbpe_table_add(c->tables[r], &c->keys[r], 1, c->firsts[r], 1);
}

FBPE_MK_INLINE fbpe_status count_marker_piece(void *ctx, const uint8_t *p, size_t len,
                                              size_t readable, size_t at) {
    marker_counter *c = (marker_counter *)ctx;
    if (len > MARKER_SLOT) {
        while (c->done < c->ahead)
            if (insert_oldest(c)) return FBPE_ENOMEM;
        fbpe_key key;
        fbpe_key_make(&key, p, len, readable);
        return fbpe_table_add(fbpe_part_of(c->w, key.hash), &key, 1, c->base + at, 1);
    }
    size_t r = c->ahead % PREFETCH_DEPTH;
    if (len > FBPE_INLINE_KEY) { /* the table reads these bytes again on insertion */
        memcpy(c->bytes[r], p, len);
        p = c->bytes[r];
        readable = MARKER_SLOT;
    }
    fbpe_key_make(&c->keys[r], p, len, readable);
    c->tables[r] = fbpe_part_of(c->w, c->keys[r].hash);
    fbpe_table_prefetch(c->tables[r], &c->keys[r]);
    c->firsts[r] = c->base + at;
    c->ahead++;
    if (c->ahead - c->done > PREFETCH_DEPTH / 2) {
        size_t h = (c->ahead - 1 - PREFETCH_DEPTH / 2) % PREFETCH_DEPTH;
        fbpe_table_prefetch_entry(c->tables[h], &c->keys[h]);
    }
    if (c->ahead - c->done == PREFETCH_DEPTH) return insert_oldest(c);
    return FBPE_OK;
}

static fbpe_status count_markers(const fbpe_markers *m, int options, const fbpe_parts *w,
                                 const uint8_t *s, size_t n, uint64_t base) {
    marker_counter c;
    c.w = w;
    c.base = base;
    c.ahead = c.done = 0;
    if (fbpe_mk_pieces_inline(m, options, s, n, count_marker_piece, &c)) return FBPE_ENOMEM;
    while (c.done < c.ahead)
        if (insert_oldest(&c)) return FBPE_ENOMEM;
    return FBPE_OK;
}

/* The same loop as DEFINE_COUNT_LOOP, with a compiled pattern's matcher (regex_vm.h) for
 * the scanner: it may give up (FBPE_EPATTERN), and then the caller counts with regex. */
static fbpe_status count_program(const fbpe_rx *prog, const fbpe_parts *w, fbpe_singles *one,
                                 const uint8_t *s, size_t n, const uint8_t *end, uint64_t base) {
    fbpe_key keys[PREFETCH_DEPTH];
    fbpe_table *tables[PREFETCH_DEPTH];
    uint64_t firsts[PREFETCH_DEPTH];
    fbpe_rx_vm vm;
    fbpe_status rc = FBPE_OK;
    size_t i = 0, ahead = 0, done = 0;
    fbpe_rx_vm_init(&vm, n);
    while (i < n) {
        size_t e = fbpe_rx_piece_end(prog, &vm, s, i, n), r = ahead % PREFETCH_DEPTH;
        if (e == i) {
            rc = vm.status;
            break;
        }
        if (fbpe_single_counted(one, s, i, e)) {
            i = e;
            continue;
        }
        fbpe_key_make(&keys[r], s + i, e - i, (size_t)(end - (s + i)));
        tables[r] = fbpe_part_of(w, keys[r].hash);
        fbpe_table_prefetch(tables[r], &keys[r]);
        firsts[r] = base + i;
        ahead++;
        i = e;
        if (ahead - done > PREFETCH_DEPTH / 2) {
            size_t h = (ahead - 1 - PREFETCH_DEPTH / 2) % PREFETCH_DEPTH;
            fbpe_table_prefetch_entry(tables[h], &keys[h]);
        }
        if (ahead - done == PREFETCH_DEPTH) {
            r = done++ % PREFETCH_DEPTH;
            if (fbpe_table_add(tables[r], &keys[r], 1, firsts[r], 1)) {
                rc = FBPE_ENOMEM;
                break;
            }
        }
    }
    /* What was scanned is counted even when the matcher gave up: the caller throws the
     * whole count away then. */
    for (; rc == FBPE_OK && done < ahead; done++) {
        size_t r = done % PREFETCH_DEPTH;
        if (fbpe_table_add(tables[r], &keys[r], 1, firsts[r], 1)) rc = FBPE_ENOMEM;
    }
    fbpe_rx_vm_free(&vm);
    return rc;
}

static fbpe_status count_segment(const fbpe_count_config *cfg, const fbpe_parts *w,
                                 fbpe_singles *one, const uint8_t *s, size_t n, const uint8_t *end,
                                 uint64_t base) {
    const fbpe_splitter *sp = &cfg->split;
    if (sp->markers) return count_markers(sp->markers, sp->options, w, s, n, base);
    if (sp->prog) return count_program(sp->prog, w, one, s, n, end, base);
#define COUNT_CASE(WHICH, END_FN)                                                              \
    case WHICH:                                                                                \
        return count_##END_FN(sp->classes, w, one, s, n, end, base);
    switch ((int)sp->which) {
        FBPE_FOR_EACH_SCANNER(COUNT_CASE)
    default:
        return FBPE_EINVALID;
    }
#undef COUNT_CASE
}

/* Where the special tokens are cut out (fbpe_specials_cut), the text before each is counted. */
typedef struct {
    const fbpe_count_config *cfg;
    const fbpe_parts *t;
    fbpe_singles *one;
    const uint8_t *s, *end;
    uint64_t base;
    size_t start; /* the first byte not yet counted or cut out */
} count_between;

static fbpe_status count_before(void *ctx, size_t at, size_t len) {
    count_between *c = ctx;
    if (at > c->start) {
        fbpe_status rc =
            count_segment(c->cfg, c->t, c->one, c->s + c->start, at - c->start, c->end, c->base + c->start);
        if (rc) return rc;
    }
    c->start = at + len;
    return FBPE_OK;
}

fbpe_status fbpe_count_text(const fbpe_count_config *cfg, const fbpe_parts *t, fbpe_singles *one,
                            const uint8_t *s, size_t n, uint64_t base) {
    const uint8_t *end = s + n;
    if (!cfg->specials) return count_segment(cfg, t, one, s, n, end, base);
    /* Most texts with special tokens are documents of a few KB: their scratch is on the stack. */
    uint32_t small[4096];
    size_t window = fbpe_specials_window(cfg->specials, n);
    uint32_t *scratch = window <= 4096 ? small : malloc(window * sizeof *scratch);
    if (!scratch) return FBPE_ENOMEM;
    count_between c = {cfg, t, one, s, end, base, 0};
    fbpe_status rc = fbpe_specials_cut(cfg->specials, s, n, scratch, count_before, &c);
    if (!rc && n > c.start) rc = count_segment(cfg, t, one, s + c.start, n - c.start, end, base + c.start);
    if (scratch != small) free(scratch);
    return rc;
}

/* Unit k counted by a worker; 1 where the worker must stop (err says why), else 0. Invalid
 * UTF-8 is recorded, the lowest offset kept, and the worker goes on. */
static int count_unit(const fbpe_count_config *cfg, const fbpe_parts *t, fbpe_singles *one,
                      const fbpe_unit *u, size_t k, fbpe_count_error *err) {
    if (u->validate) {
        int incomplete;
        size_t bad = fbpe_utf8_invalid(u->data, u->len, 0, &incomplete);
        if (bad < u->len) {
            if (err->status != FBPE_EUTF8 || u->base + bad < err->offset) {
                err->status = FBPE_EUTF8;
                err->offset = u->base + bad;
                err->unit = k;
            }
            return 0;
        }
    }
    fbpe_status rc = fbpe_count_text(cfg, t, one, u->data, u->len, u->base);
    if (rc) { /* FBPE_ENOMEM, or FBPE_EPATTERN from a compiled pattern */
        err->status = rc == FBPE_EPATTERN ? FBPE_EPATTERN : FBPE_ENOMEM;
        err->offset = u->base;
        err->unit = k;
        return 1;
    }
    return 0;
}

/* The pieces of one byte counted in `one` added to their entries, which their first
 * occurrences made (fbpe_single_counted). */
static fbpe_status add_singles(const fbpe_parts *t, const fbpe_singles *one) {
    for (unsigned c = 0; c < 128; c++) {
        if (!one->count[c]) continue;
        uint8_t byte = (uint8_t)c;
        fbpe_key k;
        fbpe_key_make(&k, &byte, 1, 1);
        /* A hit, so `first` is not read (later = 1). */
        if (fbpe_table_add(fbpe_part_of(t, k.hash), &k, one->count[c], 0, 1)) return FBPE_ENOMEM;
    }
    return FBPE_OK;
}

void fbpe_count_batch(const fbpe_count_config *cfg, const fbpe_parts *t, fbpe_batch *batch,
                      fbpe_count_error *err) {
    fbpe_singles one;
    memset(&one, 0, sizeof one);
    size_t first, last;
    while (fbpe_take_range(&batch->next, batch->take ? batch->take : 1, batch->num_units, &first, &last))
        for (size_t k = first; k < last; k++)
            if (count_unit(cfg, t, &one, &batch->units[k], k, err)) return;
    if (add_singles(t, &one)) {
        err->status = FBPE_ENOMEM;
        err->offset = 0;
        err->unit = 0;
    }
}
