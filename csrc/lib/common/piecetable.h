/* A hash table of pieces: UTF-8 bytes -> (count, first occurrence).
 *
 * One table per worker thread; the partial tables are merged at the end and the entries put
 * in order of first occurrence, so that the result is the same whatever the number of
 * workers (and in the same order as a Python Counter filled left to right).
 *
 * Layout (the one CPython's dict uses): a dense array of entries in insertion order, and a
 * sparse index of 8-byte slots (open addressing, linear probing, power-of-two size, at most
 * half full) holding an entry's number and 32 bits of its hash. Why:
 *   - frequent pieces occur early, so they sit together at the front of the entries, a few
 *     cache lines for most of the hits, instead of one line each scattered over megabytes;
 *   - the index is a quarter of the size a table of full entries would be, so more of it
 *     stays in cache for the long tail of rare pieces;
 *   - one worker inserts in order of first occurrence, so its entries need no sorting.
 * An entry holds the piece itself when it has at most 16 bytes (nearly all do), zero-padded,
 * so that a hit compares two words; longer pieces keep their first 8 bytes there and the rest
 * in a byte arena. First occurrences live in an array of their own, read only on insertion
 * and at the end. Counts are 64-bit.
 *
 * The hot functions are inline so that the counting loop (count.c) can hash a few pieces
 * and prefetch their index slots before it inserts them.
 */
#ifndef FBPE_PIECETABLE_H
#define FBPE_PIECETABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bounds.h"
#include "hash.h"

#define FBPE_MAX_ENTRIES 0xFFFFFFFEu /* entry numbers are 32-bit in the index */

typedef struct {
    uint64_t key[2]; /* len <= 16: the bytes, zero-padded; else first 8 bytes, arena offset */
    uint64_t count;
    uint64_t len;
} fbpe_entry;

typedef struct {
    uint64_t *index; /* slot: (hash >> 32) << 32 | (entry number + 1); 0 = empty */
    size_t capacity; /* index slots: a power of two, or 0 before the first insertion */
    fbpe_entry *entries;
    uint64_t *first; /* per entry: global byte offset of the first occurrence */
    size_t size, entries_cap;
    uint8_t *arena;
    size_t arena_len, arena_cap;
} fbpe_table;

void fbpe_table_init(fbpe_table *t);
void fbpe_table_free(fbpe_table *t);

/* Room for one more entry: FBPE_OK, or FBPE_ENOMEM (also at 2^32 - 2 entries). */
fbpe_status fbpe_table_reserve(fbpe_table *t);
/* Append a new entry and point index slot j at it (room is reserved). FBPE_OK or
 * FBPE_ENOMEM. */
fbpe_status fbpe_table_store(fbpe_table *t, size_t j, const fbpe_key *k, uint64_t count,
                             uint64_t first);

/* Merge tables whose entries are each in order of first occurrence (one worker's partition
 * each) into the empty table `out`, also in that order: a k-way merge by first occurrence, so
 * that nothing needs sorting. The inputs are freed once read. FBPE_OK or FBPE_ENOMEM. */
fbpe_status fbpe_merge_in_order(fbpe_table *out, fbpe_table *const *ins, size_t count);

/* The entries of `count` tables (each in order of first occurrence) in one order of first
 * occurrence: order[k] = table << 32 | entry, room for the sum of the sizes. FBPE_OK or
 * FBPE_ENOMEM. */
fbpe_status fbpe_order_tables(const fbpe_table *tables, size_t count, uint64_t *order);

/* Bytes held by the table: index, entries, first occurrences and arena. */
size_t fbpe_table_memory(const fbpe_table *t);

/* ---- inline: insertion, hashed by fbpe_key_make (hash.h) ---- */

static inline void fbpe_table_prefetch(const fbpe_table *t, const fbpe_key *k) {
#if defined(__GNUC__)
    if (t->capacity) __builtin_prefetch(&t->index[k->hash & (t->capacity - 1)]);
#else
    (void)t;
    (void)k;
#endif
}

/* Second stage: once the slot has arrived, prefetch the entry it points to (a dependent
 * load that would otherwise miss as well). Only a hint: a moved or colliding slot costs a
 * useless prefetch, nothing more. */
static inline void fbpe_table_prefetch_entry(const fbpe_table *t, const fbpe_key *k) {
#if defined(__GNUC__)
    if (!t->capacity) return;
    uint64_t slot = t->index[k->hash & (t->capacity - 1)];
    if (slot) __builtin_prefetch(&t->entries[(slot & 0xFFFFFFFFu) - 1]);
#else
    (void)t;
    (void)k;
#endif
}

/* Whether entry e holds the piece of key k. */
static inline int fbpe_entry_is(const fbpe_table *t, const fbpe_entry *e, const fbpe_key *k) {
    return e->len == k->len && e->key[0] == k->w[0] &&
           (k->len <= FBPE_INLINE_KEY ? e->key[1] == k->w[1]
                                      : memcmp(t->arena + e->key[1], k->p, k->len) == 0);
}

/* Add `count` occurrences of the piece, first seen at `first`. Returns FBPE_OK, or
 * FBPE_ENOMEM (the table is then unchanged and still valid). With `later`, the caller promises
 * that `first` is not before the piece's recorded first occurrence (true while one worker
 * counts text left to right), and the first occurrences are not read on a hit. */
/* Always inline: in a counting loop GCC's heuristics sometimes keep it out of line, which
 * costs o200k's compiled scan+count 2.1M instructions per MB of English (a call and the
 * key's fields spilled at each piece). */
static inline __attribute__((always_inline)) fbpe_status fbpe_table_add(fbpe_table *t, const fbpe_key *k, uint64_t count,
                                         uint64_t first, int later) {
    if (t->size + 1 > t->entries_cap || 2 * (t->size + 1) > t->capacity) {
        if (fbpe_table_reserve(t)) return FBPE_ENOMEM;
    }
    size_t mask = t->capacity - 1, j = k->hash & mask;
    uint64_t tag = k->hash >> 32;
    for (;;) {
        uint64_t slot = t->index[j];
        if (!slot) return fbpe_table_store(t, j, k, count, first);
        if ((slot >> 32) == tag) {
            size_t n = (size_t)(slot & 0xFFFFFFFFu) - 1;
            fbpe_entry *e = &t->entries[n];
            if (fbpe_entry_is(t, e, k)) {
                e->count += count;
                if (!later && first < t->first[n]) t->first[n] = first;
                return FBPE_OK;
            }
        }
        j = (j + 1) & mask;
    }
}

/* The entry holding the piece of key k, or NULL. */
static inline fbpe_entry *fbpe_table_find(const fbpe_table *t, const fbpe_key *k) {
    if (!t->capacity) return NULL;
    size_t mask = t->capacity - 1, j = k->hash & mask;
    uint64_t tag = k->hash >> 32;
    for (;;) {
        uint64_t slot = t->index[j];
        if (!slot) return NULL;
        if ((slot >> 32) == tag) {
            fbpe_entry *e = &t->entries[(size_t)(slot & 0xFFFFFFFFu) - 1];
            if (fbpe_entry_is(t, e, k)) return e;
        }
        j = (j + 1) & mask;
    }
}

/* The bytes of an entry's piece. */
static inline const uint8_t *fbpe_entry_bytes(const fbpe_table *t, const fbpe_entry *e) {
    return e->len <= FBPE_INLINE_KEY ? (const uint8_t *)e->key : t->arena + e->key[1];
}

#endif
