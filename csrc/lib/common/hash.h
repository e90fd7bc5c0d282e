/* The hash functions of every table of the core: one for byte strings (pieces, tokens),
 * one for 64-bit integer keys (pairs of ids, trie edges, ranks).
 *
 * Byte strings are keyed *inline*: the first 16 bytes, zero-padded, as two words, with the
 * length and a hash of all the bytes. Nearly every piece and token has at most 16 bytes, so
 * a probe compares two words held in the slot it has already loaded, instead of following
 * a pointer to the bytes; a longer one compares the rest with memcmp. The piece counter
 * (piecetable.h), the encoder's table of whole tokens and its caches, and the reader of
 * tiktoken's ranks (ranks.c) all key their strings with fbpe_key_make.
 */
#ifndef FBPE_HASH_H
#define FBPE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FBPE_INLINE_KEY 16 /* bytes of a string that its key holds */

/* Odd constants with well-spread bits (digits of pi, e and the golden ratio). */
#define FBPE_MIX1 0x243F6A8885A308D3ull
#define FBPE_MIX2 0xB7E151628AED2A6Bull
#define FBPE_MIX3 0x9E3779B97F4A7C15ull

static inline uint64_t fbpe_load64(const uint8_t *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* The home slot of a 64-bit key (a pair of ids left << 32 | right, a trie edge, a rank) in a
 * table of 2^(64 - shift) slots: Fibonacci hashing, the top bits of key x 2^64 / phi. The
 * multiply carries every bit of the key into the top ones, so keys that differ only in
 * their high word spread as well as any (a mask of the low bits would not see that word);
 * and it is one multiply and one shift a probe. */
static inline size_t fbpe_slot_u64(uint64_t key, unsigned shift) {
    return (size_t)((key * FBPE_MIX3) >> shift);
}

/* The slots of an open-addressing table that holds n keys: the power of two at least n, and
 * at least 16. */
static inline size_t fbpe_pow2_at_least(size_t n) {
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* The shift of a table of `cap` slots, a power of two from 2 on. */
static inline unsigned fbpe_slot_shift(size_t cap) {
    unsigned bits = 0;
    while (((size_t)1 << bits) < cap) bits++;
    return 64 - bits;
}

/* A byte string as a key: its first 16 bytes zero-padded, its length and its hash. */
typedef struct {
    const uint8_t *p;
    size_t len;
    uint64_t w[2];
    uint64_t hash;
} fbpe_key;

/* 16 bytes of 0xFF then 16 of 0: bytes 16-k .. 32-k are k 0xFF then zeros, in memory order,
 * whatever the byte order of the machine: the mask that keeps the first k bytes. */
static const uint8_t fbpe_keep_first[32] = {255, 255, 255, 255, 255, 255, 255, 255,
                                            255, 255, 255, 255, 255, 255, 255, 255};

/* The key's two words of p[0..len) when 16 bytes from p may be read: two unaligned loads and
 * a mask, without a branch on the length. Always inline: left to GCC, a larger encoding
 * loop called it instead, and the key went through memory (the plain encoder's count,
 * benchmarks/callgrind_superwords.py, 9.57M -> 9.84M). */
static inline __attribute__((always_inline)) void fbpe_key_words16(const uint8_t *p, size_t len, uint64_t w[2]) {
    size_t head = len < FBPE_INLINE_KEY ? len : FBPE_INLINE_KEY;
    uint64_t m[2];
    memcpy(w, p, 16);
    memcpy(m, fbpe_keep_first + 16 - head, 16);
    w[0] &= m[0];
    w[1] &= m[1];
}

/* The hash of a string of at most 16 bytes from its key's words (fbpe_key_make's, which
 * goes on from the first line for longer strings). Always inline: with the piece cache's
 * lookup inline too (piece_cache.h), GCC made it a call in the marker scheme's loop (8,192
 * ids, 300,000 fresh characters: 21.06M -> 21.25M instructions). */
static inline __attribute__((always_inline)) uint64_t fbpe_key_hash_short(uint64_t w0, uint64_t w1, size_t len) {
    uint64_t h = (w0 ^ FBPE_MIX1) * FBPE_MIX2 ^ (w1 + len) * FBPE_MIX3;
    h ^= h >> 32;
    h *= FBPE_MIX1;
    h ^= h >> 29;
    return h;
}

/* The key's two words of p[0..len); `readable`: how many bytes from p may be read (at least
 * len). With 16 or more, fbpe_key_words16; else a byte copy. */
static inline __attribute__((always_inline)) void fbpe_key_words(const uint8_t *p, size_t len,
                                                                size_t readable, uint64_t w[2]) {
    w[0] = w[1] = 0;
    if (readable >= FBPE_INLINE_KEY)
        fbpe_key_words16(p, len, w);
    else
        memcpy(w, p, len < FBPE_INLINE_KEY ? len : FBPE_INLINE_KEY);
}

static inline __attribute__((always_inline)) void fbpe_key_make(fbpe_key *k, const uint8_t *p, size_t len,
                                                                size_t readable) {
    uint64_t w[2];
    k->p = p;
    k->len = len;
    fbpe_key_words(p, len, readable, w);
    k->w[0] = w[0];
    k->w[1] = w[1];
    if (len <= FBPE_INLINE_KEY) {
        k->hash = fbpe_key_hash_short(w[0], w[1], len);
        return;
    }
    uint64_t h = (w[0] ^ FBPE_MIX1) * FBPE_MIX2 ^ (w[1] + len) * FBPE_MIX3;
    for (size_t i = FBPE_INLINE_KEY; i < len; i += 8) {
        uint64_t x = 0;
        if (i + 8 <= len)
            x = fbpe_load64(p + i);
        else
            memcpy(&x, p + i, len - i);
        h = (h ^ x) * FBPE_MIX2;
        h ^= h >> 31;
    }
    h ^= h >> 32;
    h *= FBPE_MIX1;
    h ^= h >> 29;
    k->hash = h;
}

/* The hash of the byte string s[0..n), as fbpe_key_make gives it. */
static inline uint64_t fbpe_hash_bytes(const uint8_t *s, size_t n) {
    fbpe_key k;
    fbpe_key_make(&k, s, n, n);
    return k.hash;
}

#endif
