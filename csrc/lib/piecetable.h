/* A hash table of pieces: UTF-8 bytes -> (count, first occurrence).
 *
 * One table per worker thread; the partial tables are merged at the end, and the merged
 * entries are put in order of first occurrence, so that the result is the same whatever the
 * number of workers (and in the same order as a Python Counter filled left to right).
 *
 * Layout: open addressing with linear probing, power-of-two capacity, at most half full.
 * A slot is 32 bytes (two per cache line): the piece itself when it has at most 16 bytes
 * (nearly all do), zero-padded, so that a probe compares words and touches one line; the
 * count; and one word holding the length and 16 bits of the hash, so that one comparison
 * rejects nearly every other piece. Longer pieces keep their first 8 bytes in the slot and
 * the rest in a byte arena. The first occurrences, read only on insertion and at the end,
 * live in an array of their own, out of the probing path. Counts are 64-bit.
 *
 * The hot functions are inline so that the counting loop can hash a piece, prefetch its
 * slot, scan the next piece while the line arrives, and only then insert (count.c).
 */
#ifndef FBPE_PIECETABLE_H
#define FBPE_PIECETABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FBPE_INLINE_KEY 16

typedef struct {
    uint64_t key[2]; /* len <= 16: the bytes, zero-padded; else first 8 bytes, arena offset */
    uint64_t count;  /* 0: empty slot */
    uint64_t meta;   /* len << 16 | the top 16 bits of the hash */
} fbpe_entry;

typedef struct {
    fbpe_entry *slots;
    uint64_t *first; /* global byte offset of each slot's first occurrence */
    size_t capacity; /* a power of two, or 0 before the first insertion */
    size_t size;
    uint8_t *arena;
    size_t arena_len, arena_cap;
} fbpe_table;

/* A piece ready to insert: its first 16 bytes, zero-padded, and its hash. */
typedef struct {
    const uint8_t *p;
    size_t len;
    uint64_t w[2];
    uint64_t hash;
} fbpe_key;

void fbpe_table_init(fbpe_table *t);
void fbpe_table_free(fbpe_table *t);

/* Room for one more entry (grows at half full). Returns 0, or -1 when out of memory. */
int fbpe_table_reserve(fbpe_table *t);
/* Store a new entry in the empty slot j. Returns 0, or -1 when out of memory. */
int fbpe_table_store(fbpe_table *t, size_t j, const fbpe_key *k, uint64_t count, uint64_t first);

/* Add every entry of src into dst. Returns 0 or -1 (out of memory). */
int fbpe_table_merge(fbpe_table *dst, const fbpe_table *src);

/* The slots in order of first occurrence (malloc'd array of t->size slot indexes; the
 * caller frees it), or NULL when out of memory. */
size_t *fbpe_table_in_order(const fbpe_table *t);

/* Bytes held by the table: slots, first occurrences and arena. */
size_t fbpe_table_memory(const fbpe_table *t);

/* ---- inline: hashing and insertion ---- */

static inline uint64_t fbpe_load64(const uint8_t *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline int fbpe_little_endian(void) {
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* Odd constants with well-spread bits (digits of pi, e and the golden ratio). */
#define FBPE_MIX1 0x243F6A8885A308D3ull
#define FBPE_MIX2 0xB7E151628AED2A6Bull
#define FBPE_MIX3 0x9E3779B97F4A7C15ull

/* `readable`: how many bytes from p may be read (at least len). With 16 or more the key is
 * two unaligned loads and a mask instead of a byte copy. */
static inline void fbpe_key_make(fbpe_key *k, const uint8_t *p, size_t len, size_t readable) {
    k->p = p;
    k->len = len;
    if (readable >= 16 && fbpe_little_endian()) {
        uint64_t a = fbpe_load64(p), b = fbpe_load64(p + 8);
        /* Keep the first len bytes (little-endian: the low ones). */
        if (len < 8) {
            a &= len ? (~0ull >> (64 - 8 * len)) : 0;
            b = 0;
        } else if (len < 16) {
            b &= len > 8 ? (~0ull >> (64 - 8 * (len - 8))) : 0;
        }
        k->w[0] = a;
        k->w[1] = b;
    } else {
        uint8_t buf[16] = {0};
        memcpy(buf, p, len < 16 ? len : 16);
        k->w[0] = fbpe_load64(buf);
        k->w[1] = fbpe_load64(buf + 8);
    }
    uint64_t h = (k->w[0] ^ FBPE_MIX1) * FBPE_MIX2 ^ (k->w[1] + len) * FBPE_MIX3;
    for (size_t i = 16; i < len; i += 8) {
        uint64_t x;
        if (i + 8 <= len) {
            x = fbpe_load64(p + i);
        } else {
            uint8_t buf[8] = {0};
            memcpy(buf, p + i, len - i);
            x = fbpe_load64(buf);
        }
        h = (h ^ x) * FBPE_MIX2;
        h ^= h >> 31;
    }
    h ^= h >> 32;
    h *= FBPE_MIX1;
    h ^= h >> 29;
    k->hash = h;
}

static inline uint64_t fbpe_key_meta(const fbpe_key *k) { return ((uint64_t)k->len << 16) | (k->hash >> 48); }

static inline void fbpe_table_prefetch(const fbpe_table *t, const fbpe_key *k) {
#if defined(__GNUC__)
    if (t->capacity) __builtin_prefetch(&t->slots[k->hash & (t->capacity - 1)]);
#else
    (void)t;
    (void)k;
#endif
}

/* Add `count` occurrences of the piece, first seen at `first`. Returns 0, or -1 when out of
 * memory (the table is then unchanged and still valid). With `later`, the caller promises
 * that `first` is not before the piece's recorded first occurrence (true while one worker
 * counts text left to right); the array of first occurrences is then not read on a hit. */
static inline int fbpe_table_add(fbpe_table *t, const fbpe_key *k, uint64_t count, uint64_t first,
                                 int later) {
    if (2 * (t->size + 1) > t->capacity && fbpe_table_reserve(t) < 0) return -1;
    size_t mask = t->capacity - 1, j = k->hash & mask;
    uint64_t meta = fbpe_key_meta(k);
    for (;;) {
        fbpe_entry *e = &t->slots[j];
        if (!e->count) return fbpe_table_store(t, j, k, count, first);
        if (e->meta == meta && e->key[0] == k->w[0] &&
            (k->len <= FBPE_INLINE_KEY ? e->key[1] == k->w[1]
                                       : memcmp(t->arena + e->key[1], k->p, k->len) == 0)) {
            e->count += count;
            if (!later && first < t->first[j]) t->first[j] = first;
            return 0;
        }
        j = (j + 1) & mask;
    }
}

static inline size_t fbpe_entry_len(const fbpe_entry *e) { return (size_t)(e->meta >> 16); }

/* The bytes of an entry's piece. */
static inline const uint8_t *fbpe_entry_bytes(const fbpe_table *t, const fbpe_entry *e) {
    return fbpe_entry_len(e) <= FBPE_INLINE_KEY ? (const uint8_t *)e->key : t->arena + e->key[1];
}

#endif
