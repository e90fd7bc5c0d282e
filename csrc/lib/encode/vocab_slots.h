/* The tables of byte strings by id: the encoder's whole tokens and pieces (encode.c) and the
 * ranks of a tiktoken file (ranks.c). Open addressing over fbpe_vocab_slot, string `id`
 * being bytes[off[id] .. off[id + 1]), keyed with fbpe_key_make (../common/hash.h); a large
 * vocabulary's whole tokens and the ranks are in compact slots (../common/compact_slots.h). */
#ifndef FBPE_VOCAB_SLOTS_H
#define FBPE_VOCAB_SLOTS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../common/hash.h"

/* A string in the table: its bytes inline when they are at most 16 (zero padded: the key of
 * hash.h), else w0 is their hash and the bytes are compared in the table's bytes. len 0:
 * empty. */
typedef struct {
    uint64_t w0, w1;
    uint32_t len, id;
} fbpe_vocab_slot;

/* No such token, pair or rank. */
#define FBPE_NO_RANK UINT32_MAX

static inline void fbpe_slot_insert(fbpe_vocab_slot *slots, size_t mask, const fbpe_key *k,
                                    uint32_t id) {
    size_t i = (size_t)k->hash & mask;
    while (slots[i].len) i = (i + 1) & mask;
    slots[i].w0 = k->len <= FBPE_INLINE_KEY ? k->w[0] : k->hash;
    slots[i].w1 = k->w[1];
    slots[i].len = (uint32_t)k->len;
    slots[i].id = id;
}

/* The id of a string of 2..FBPE_INLINE_KEY bytes whose key words are w0, w1 and hash h
 * (fbpe_key_hash_short), or FBPE_NO_RANK: fbpe_slot_find for a short key kept in registers
 * by a caller that has not made its fbpe_key. */
static inline uint32_t fbpe_slot_find_short(const fbpe_vocab_slot *slots, size_t mask, uint64_t w0,
                                            uint64_t w1, size_t n, uint64_t h) {
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        const fbpe_vocab_slot *e = &slots[i];
        if (e->w0 == w0 && e->w1 == w1 && e->len == n) return e->id;
        if (!e->len) return FBPE_NO_RANK;
    }
}

/* The id of the string k is the key of, or FBPE_NO_RANK. */
static inline uint32_t fbpe_slot_find(const fbpe_vocab_slot *slots, size_t mask,
                                      const uint8_t *bytes, const uint32_t *off,
                                      const fbpe_key *k) {
    size_t n = k->len, i = (size_t)k->hash & mask;
    for (;;) {
        const fbpe_vocab_slot *e = &slots[i];
        if (!e->len) return FBPE_NO_RANK;
        if (e->len == n) {
            if (n <= FBPE_INLINE_KEY) {
                if (e->w0 == k->w[0] && e->w1 == k->w[1]) return e->id;
            } else if (e->w0 == k->hash && memcmp(bytes + off[e->id], k->p, n) == 0) {
                return e->id;
            }
        }
        i = (i + 1) & mask;
    }
}

#endif
