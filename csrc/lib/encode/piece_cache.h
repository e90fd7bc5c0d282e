/* The piece cache: a piece's bytes -> its ids, the one a call takes (fbpe_cache_take; its
 * threads share it, fbpe_cache_share) or one the caller fills (fbpe_cache_new: the
 * Functionalizer's raw pieces -> the ids of their text forms). encode.c adds to it; the lookup
 * is here, inline, because the loops that make one per piece are in encode_text.c too
 * (fbpe_encode_cached).
 *
 * A slot holds a piece's key as hash.h makes it: its first 16 bytes as two words, compared
 * in the slot; only the bytes after them, of a longer piece, are in `keys` (memcmp). With
 * every key in `keys` behind memcmp, and the lookup a call from encode_text.c, a
 * Functionalizer's encoding of 300,000 fresh characters of English (8,192 ids, callgrind)
 * took 45.01M instructions; now 41.45M (a markers tokenizer's 21.06M -> 20.77M, the plain
 * one of benchmarks/callgrind_superwords.py 9.61M -> 9.54M). A slot is 32 bytes, not 24:
 * calloc zeroes more as the cache grows (0.26M of the superword tokenizer's 19.42M). */
#ifndef FBPE_PIECE_CACHE_H
#define FBPE_PIECE_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../common/hash.h"
#include "encode.h"

/* Longer pieces are not cached: they are rare, and each would cost its length in memory. */
#define FBPE_CACHE_MAX_PIECE 256

typedef struct {
    uint64_t w[2];    /* the key's words (fbpe_key.w) */
    uint32_t hash;    /* the low half of its hash in this cache, which finds its slot */
    uint32_t key_off; /* in `keys`: its bytes after the sixteenth */
    uint32_t ids_off; /* in `vals` */
    uint16_t key_len; /* 0: empty; at most FBPE_CACHE_MAX_PIECE */
    uint16_t ids_len;
} fbpe_cache_slot;

/* Each worker writes its cache's counts as it adds pieces: a cache line of space before and
 * after them, so that two workers' caches, allocated one after the other, never share a line
 * (see fbpe_encode_batch, whose arrays of ids did). */
#define FBPE_CACHE_LINE 64
struct fbpe_cache {
    unsigned char line_before[FBPE_CACHE_LINE];
    fbpe_cache_slot *slots;
    size_t mask;
    uint8_t *keys;
    size_t keys_cap;
    uint32_t *vals;
    size_t vals_cap;
    size_t limit; /* emptied when it holds this many pieces; 0: CACHE_MAX_ENTRIES (encode.c) */
    /* Set while the threads of one call share it (fbpe_cache_share): a piece is then added
     * where nothing moves, up to these lengths of keys and vals, and a slot is published by
     * its key_len, written last (FBPE_CACHE_BUSY while it is being filled). */
    int shared;
    size_t keys_room, vals_room;
    /* The last shared call: its bytes, and the pieces it added or found no room for (they
     * size the next). */
    size_t shared_bytes, shared_from, shared_added;
    /* What adding a piece writes, on a line of its own: shared, every thread adds to these,
     * and the fields above are read at every lookup. */
    unsigned char line_between[FBPE_CACHE_LINE];
    size_t size, keys_len, vals_len, refused;
    unsigned char line_after[FBPE_CACHE_LINE];
};

/* The key_len of a slot that a thread has claimed and not yet filled: longer than any piece
 * kept, so no lookup takes it for its own, and not 0, so a probe goes on past it. */
#define FBPE_CACHE_BUSY UINT16_MAX

/* A slot's key_len, read before the rest of the slot: with another thread adding pieces, the
 * fields it wrote before publishing key_len are then seen whole. On x86-64 a plain load. */
static inline uint16_t fbpe_cache_key_len(const fbpe_cache_slot *e) {
#if defined(_MSC_VER)
    return *(volatile const uint16_t *)&e->key_len; /* volatile reads acquire under MSVC */
#else
    return __atomic_load_n(&e->key_len, __ATOMIC_ACQUIRE);
#endif
}

/* The ids cached for the piece of key k, whose hash in this cache is h (their number in
 * *len), or NULL. */
static inline __attribute__((always_inline)) const uint32_t *
fbpe_cache_get(const fbpe_cache *c, const fbpe_key *k, uint64_t h, size_t *len) {
    if (!c->slots) return NULL;
    size_t i = (size_t)h & c->mask;
    for (;;) {
        const fbpe_cache_slot *e = &c->slots[i];
        uint16_t key_len = fbpe_cache_key_len(e);
        if (!key_len) return NULL;
        if (key_len == k->len && e->hash == (uint32_t)h && e->w[0] == k->w[0] &&
            e->w[1] == k->w[1] &&
            (k->len <= FBPE_INLINE_KEY ||
             memcmp(c->keys + e->key_off, k->p + FBPE_INLINE_KEY, k->len - FBPE_INLINE_KEY) == 0)) {
            *len = e->ids_len;
            return c->vals + e->ids_off;
        }
        i = (i + 1) & c->mask;
    }
}

/* The ids cached for s[0..n) (their number in *m), or NULL. readable: how many bytes from s
 * may be read (at least n), as in fbpe_encode_piece. */
static inline __attribute__((always_inline)) const uint32_t *
fbpe_cache_lookup(const fbpe_cache *c, const uint8_t *s, size_t n, size_t readable, size_t *m) {
    if (n > FBPE_CACHE_MAX_PIECE) return NULL;
    fbpe_key key;
    if (n <= FBPE_INLINE_KEY && readable >= FBPE_INLINE_KEY) {
        /* fbpe_key_make's short path written out: GCC calls fbpe_key_make here */
        key.p = s;
        key.len = n;
        fbpe_key_words16(s, n, key.w);
        key.hash = fbpe_key_hash_short(key.w[0], key.w[1], n);
    } else {
        fbpe_key_make(&key, s, n, readable);
    }
    return fbpe_cache_get(c, &key, key.hash, m);
}

#endif
