/* Counting pieces into a table; see count.h. */
#include "count.h"
#include "scanners.h"

#include <string.h>

#if defined(_MSC_VER)
#include <windows.h>
static size_t take_next(size_t *next) {
    return (size_t)InterlockedIncrement64((volatile LONG64 *)next) - 1;
}
#else
static size_t take_next(size_t *next) { return __atomic_fetch_add(next, 1, __ATOMIC_RELAXED); }
#endif

/* One scanner loop per pattern, so that the compiler inlines the scanner into it. The loop
 * scans a few pieces, hashing each and prefetching its slot, then inserts them: the table
 * outgrows the fastest caches on real text (a long tail of rare pieces), and this lets the
 * cache misses of several insertions overlap instead of waiting for each in turn. */
#ifndef PREFETCH_DEPTH
#define PREFETCH_DEPTH 16
#endif

/* count_<pattern>(w, s, n, end, base): the pieces of s[0..n), a text free of special tokens,
 * into w's tables; `end` bounds what may be read past s + n. One function per pattern, so that each
 * gets the scanner inlined and the registers to itself. */
#define DEFINE_COUNT_LOOP(NAME, END_FN)                                                        \
    static int NAME(const fbpe_parts *w, const uint8_t *s, size_t n, const uint8_t *end, uint64_t base) { \
        fbpe_table *tables[PREFETCH_DEPTH];                                                    \
        fbpe_key keys[PREFETCH_DEPTH];                                                         \
        uint64_t firsts[PREFETCH_DEPTH];                                                       \
        size_t i = 0;                                                                          \
        while (i < n) {                                                                        \
            int m = 0;                                                                         \
            for (; m < PREFETCH_DEPTH && i < n; m++) {                                         \
                size_t e = END_FN(s, i, n);                                                    \
                fbpe_key_make(&keys[m], s + i, e - i, (size_t)(end - (s + i)));                \
                tables[m] = fbpe_part_of(w, keys[m].hash);                                     \
                fbpe_table_prefetch(tables[m], &keys[m]);                                      \
                firsts[m] = base + i;                                                          \
                i = e;                                                                         \
            }                                                                                  \
            for (int q = 0; q < m; q++)                                                        \
                if (fbpe_table_add(tables[q], &keys[q], 1, firsts[q], 1) < 0) return FBPE_NO_MEMORY; \
        }                                                                                      \
        return 0;                                                                              \
    }

DEFINE_COUNT_LOOP(count_gpt2, fbpe_gpt2_end)
DEFINE_COUNT_LOOP(count_gpt4, fbpe_gpt4_end)
DEFINE_COUNT_LOOP(count_o200k, fbpe_o200k_end)
DEFINE_COUNT_LOOP(count_functionalizer, fbpe_functionalizer_end)

static int count_segment(fbpe_scanner which, const fbpe_parts *w, const uint8_t *s, size_t n,
                         const uint8_t *end, uint64_t base) {
    switch (which) {
    case FBPE_GPT2:
        return count_gpt2(w, s, n, end, base);
    case FBPE_GPT4:
        return count_gpt4(w, s, n, end, base);
    case FBPE_O200K:
        return count_o200k(w, s, n, end, base);
    default:
        return count_functionalizer(w, s, n, end, base);
    }
}

/* The length of the special token that starts at s[i], or 0. Longest first, as
 * patterns.split_special's alternation (sorted longest first) tries them. */
static inline size_t special_at(const fbpe_count_config *cfg, const uint8_t *s, size_t i, size_t n) {
    for (size_t k = 0; k < cfg->num_specials; k++) {
        size_t len = cfg->special_lens[k];
        if (len <= n - i && memcmp(s + i, cfg->specials[k], len) == 0) return len;
    }
    return 0;
}

int fbpe_count_text(const fbpe_count_config *cfg, const fbpe_parts *t, const uint8_t *s, size_t n,
                    uint64_t base) {
    const uint8_t *end = s + n;
    if (!cfg->num_specials) return count_segment(cfg->which, t, s, n, end, base);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (!cfg->special_first[s[i]]) continue;
        size_t len = special_at(cfg, s, i, n);
        if (!len) continue;
        if (i > start && count_segment(cfg->which, t, s + start, i - start, end, base + start))
            return FBPE_NO_MEMORY;
        start = i + len;
        i = start - 1;
    }
    if (n > start) return count_segment(cfg->which, t, s + start, n - start, end, base + start);
    return 0;
}

void fbpe_count_batch(const fbpe_count_config *cfg, const fbpe_parts *t, fbpe_batch *batch,
                      fbpe_count_error *err) {
    for (;;) {
        size_t k = take_next(&batch->next);
        if (k >= batch->num_units) return;
        const fbpe_unit *u = &batch->units[k];
        if (u->validate) {
            int incomplete;
            size_t bad = fbpe_utf8_invalid(u->data, u->len, 0, &incomplete);
            if (bad < u->len) {
                if (err->code != FBPE_BAD_UTF8 || u->base + bad < err->offset) {
                    err->code = FBPE_BAD_UTF8;
                    err->offset = u->base + bad;
                    err->unit = k;
                }
                continue;
            }
        }
        if (fbpe_count_text(cfg, t, u->data, u->len, u->base)) {
            err->code = FBPE_NO_MEMORY;
            return;
        }
    }
}
