/* Compact open addressing: a table of up to 2^22 keys in 4 bytes a slot, for the tables that
 * make a large vocabulary large (the encoder's pairs and whole tokens, encode.c; the entries
 * of a tokenizer.json being read, bytelevel_read.c; the ranks of a rank file, ranks.c).
 *
 * A slot holds an index below 2^22 (a token's id, a merge's number, an entry) in its low 22
 * bits and 10 bits of the key's hash above them, never all zero, so that a slot of 0 is
 * empty. The key itself is not in the slot: where the tag matches (one probe in 1,023 of
 * those that meet another key), the caller compares the key where the index points. So a
 * probe that finds nothing never leaves the slot's cache line, and one that finds its key
 * reads the key once, as the wider tables read their id beside the key.
 *
 * Any number of slots, at most 3/5 full: the home slot is the hash's top 32 bits scaled to
 * the table (a multiply and a shift, not a mask), so a million keys take 1.67 million slots
 * (6.7 MB), where a power of two at most half full takes 2^21. At 3/5 linear probing meets
 * about 3.6 slots when the key is absent and 1.75 when it is there: all in one or two cache
 * lines of 16 slots.
 */
#ifndef FBPE_COMPACT_SLOTS_H
#define FBPE_COMPACT_SLOTS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FBPE_COMPACT_INDEX_BITS 22
#define FBPE_COMPACT_INDEX ((UINT32_C(1) << FBPE_COMPACT_INDEX_BITS) - 1)

/* The slots for n keys: at most 3/5 full. n is below 2^22, so this fits 32 bits. */
static inline size_t fbpe_compact_cap(size_t n) { return n + 2 * n / 3 + 16; }

/* The slot where the search for a key of hash h starts, in a table of cap slots. */
static inline size_t fbpe_compact_home(uint64_t h, size_t cap) {
    return (size_t)(((h >> 32) * (uint64_t)cap) >> 32);
}

/* The tag of hash h, in place above the index: 1..1023 (0 would read as an empty slot). */
static inline uint32_t fbpe_compact_tag(uint64_t h) {
    uint32_t t = (uint32_t)h & 0x3FF;
    return (t ? t : 1) << FBPE_COMPACT_INDEX_BITS;
}

/* The slot after slot i. */
static inline size_t fbpe_compact_next(size_t i, size_t cap) { return i + 1 == cap ? 0 : i + 1; }

/* File `index` (below 2^22) under hash h; the caller has made sure the key is absent. */
static inline void fbpe_compact_insert(uint32_t *slots, size_t cap, uint64_t h, uint32_t index) {
    size_t i = fbpe_compact_home(h, cap);
    while (slots[i]) i = fbpe_compact_next(i, cap);
    slots[i] = fbpe_compact_tag(h) | index;
}

/* No such key. */
#define FBPE_COMPACT_NONE UINT32_MAX

/* The index of the byte string s[0..len), hashed h, in a table whose string k is
 * bytes[off[k] .. off[k + 1]); FBPE_COMPACT_NONE when it is not there. */
static inline uint32_t fbpe_compact_find_bytes(const uint32_t *slots, size_t cap, uint64_t h,
                                               const uint8_t *bytes, const uint32_t *off,
                                               const uint8_t *s, size_t len) {
    uint32_t tag = fbpe_compact_tag(h);
    for (size_t i = fbpe_compact_home(h, cap); slots[i]; i = fbpe_compact_next(i, cap)) {
        uint32_t k = slots[i] & FBPE_COMPACT_INDEX;
        if ((slots[i] & ~FBPE_COMPACT_INDEX) == tag && off[k + 1] - off[k] == len &&
            memcmp(bytes + off[k], s, len) == 0)
            return k;
    }
    return FBPE_COMPACT_NONE;
}

/* A 64-bit key's hash for these tables (a pair of ids): every bit of the key reaches both
 * the top 32 bits (the home) and the low 10 (the tag). */
static inline uint64_t fbpe_compact_hash_u64(uint64_t key) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
    h *= 0x243F6A8885A308D3ull;
    return h ^ (h >> 29);
}

#endif
