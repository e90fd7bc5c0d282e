/* The hash functions of every table of the core: one for byte strings (pieces, tokens),
 * one for 64-bit integer keys (pairs of ids, trie edges, ranks).
 *
 * Byte strings are keyed *inline*: the first 16 bytes, zero-padded, as two words, with the
 * length and a hash of all the bytes. Nearly every piece and token has at most 16 bytes, so
 * a probe compares two words held in the slot it has already loaded, instead of following
 * a pointer to the bytes; a longer one compares the rest with memcmp. The piece counter
 * (piecetable.h), the encoder's table of whole tokens and its caches, and the reader of
 * tiktoken's ranks (bpe.c) all key their strings with fbpe_key_make.
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

/* A 64-bit key spread over all 64 bits: a multiply mixes the low bits upwards, the shift
 * brings the high ones back down, so that both a mask of the low bits and the top half are
 * usable (a pair key left << 32 | right differs in its high word from its neighbours). */
static inline uint64_t fbpe_hash_u64(uint64_t x) {
    x *= FBPE_MIX3;
    return x ^ (x >> 29);
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

/* `readable`: how many bytes from p may be read (at least len). With 16 or more the key is
 * two unaligned loads and a mask, without a branch on the length; else a byte copy. */
static inline void fbpe_key_make(fbpe_key *k, const uint8_t *p, size_t len, size_t readable) {
    size_t head = len < FBPE_INLINE_KEY ? len : FBPE_INLINE_KEY;
    uint64_t w[2] = {0, 0};
    k->p = p;
    k->len = len;
    if (readable >= FBPE_INLINE_KEY) {
        uint64_t m[2];
        memcpy(w, p, 16);
        memcpy(m, fbpe_keep_first + 16 - head, 16);
        w[0] &= m[0];
        w[1] &= m[1];
    } else {
        memcpy(w, p, head);
    }
    k->w[0] = w[0];
    k->w[1] = w[1];
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
