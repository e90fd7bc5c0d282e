/* Rank tables: tiktoken's procedure, to read a .tiktoken file (ranks.h). The rest of the
 * encoder never sees a rank table: what this finds becomes merges in Python
 * (functionalbpe/formats/tiktoken.py), and the merges build the encoder. */
#include "ranks.h"
#include "vocab_slots.h"
#include "../common/compact_slots.h"
#include "../common/hash.h"
#include "../common/key_heap.h"

#include <stdlib.h>
#include <string.h>

struct fbpe_ranks {
    uint32_t *slots; /* the ranks by their bytes, compact (../common/compact_slots.h) */
    size_t cap;
    const uint8_t *arena;
    const uint32_t *off;
    uint32_t num;
    /* longest_below[r]: the longest token of rank below r. Two parts can only join into a
     * token of rank below r if they are at most that long together: longer joins are
     * answered without hashing their bytes. */
    size_t *longest_below;
    /* A second index of the same tokens by a polynomial hash of their bytes (mod 2^61 - 1),
     * so that the procedure hashes the join of two parts in O(1) from the prefix hashes of
     * the token it reads, instead of reading the joined bytes again: a chain of tokens each
     * one byte longer than the last (every prefix of one string a token) cost n^3 that way
     * (8,000 ranks: 86 s). A hash that matches is confirmed without reading the bytes when
     * the candidate's own two parts are the two parts being joined (its split, recorded
     * when its rank was read), else by comparing the bytes. */
    uint64_t *poly;       /* poly[r]: the hash of token r */
    uint32_t *poly_slots; /* rank + 1 per slot, 0: empty */
    size_t poly_mask;
    uint32_t *split_left, *split_right; /* token r's two parts, FBPE_NO_RANK: not known */
};

#define POLY_P ((1ull << 61) - 1)
#define POLY_BASE 0x5DEECE66Dull

static inline uint64_t poly_mulmod(uint64_t a, uint64_t b) {
    __uint128_t x = (__uint128_t)a * b;
    uint64_t lo = (uint64_t)(x & POLY_P), hi = (uint64_t)(x >> 61);
    uint64_t r = lo + hi;
    return r >= POLY_P ? r - POLY_P : r;
}

static inline uint64_t poly_step(uint64_t h, uint8_t c) {
    uint64_t r = poly_mulmod(h, POLY_BASE) + (uint64_t)c + 1;
    return r >= POLY_P ? r - POLY_P : r;
}

static inline size_t poly_home(uint64_t h, size_t len, size_t mask) {
    return (size_t)(((h ^ (uint64_t)len * FBPE_MIX1) * FBPE_MIX3) >> 17) & mask;
}

/* The rank of the bytes s[0..n), or FBPE_NO_RANK. */
static uint32_t rank_of_bytes(const fbpe_ranks *t, const uint8_t *s, size_t n) {
    fbpe_key k;
    fbpe_key_make(&k, s, n, n);
    return fbpe_compact_find_bytes(t->slots, t->cap, k.hash, t->arena, t->off, s, n);
}

fbpe_status fbpe_ranks_new(const uint8_t *arena, const uint32_t *off, uint32_t num,
                           fbpe_ranks **out) {
    *out = NULL;
    if (num > FBPE_MAX_VOCAB_SIZE || off[0] != 0) return FBPE_EINVALID;
    for (uint32_t r = 0; r < num; r++)
        if (off[r + 1] <= off[r] || off[r + 1] - off[r] > FBPE_MAX_TOKEN_BYTES)
            return FBPE_EINVALID;
    fbpe_ranks *t = (fbpe_ranks *)calloc(1, sizeof(fbpe_ranks));
    if (!t) return FBPE_ENOMEM;
    size_t cap = fbpe_pow2_at_least(2 * (size_t)num + 2);
    t->cap = fbpe_compact_cap(num);
    t->slots = (uint32_t *)calloc(t->cap, sizeof(uint32_t));
    t->longest_below = (size_t *)malloc(((size_t)num + 1) * sizeof(size_t));
    t->poly = (uint64_t *)malloc(((size_t)num + 1) * sizeof(uint64_t));
    t->poly_slots = (uint32_t *)calloc(cap, sizeof(uint32_t));
    t->split_left = (uint32_t *)malloc(((size_t)num + 1) * sizeof(uint32_t));
    t->split_right = (uint32_t *)malloc(((size_t)num + 1) * sizeof(uint32_t));
    if (!t->slots || !t->longest_below || !t->poly || !t->poly_slots || !t->split_left ||
        !t->split_right) {
        fbpe_ranks_free(t);
        return FBPE_ENOMEM;
    }
    t->poly_mask = cap - 1;
    t->arena = arena;
    t->off = off;
    t->num = num;
    t->longest_below[0] = 0;
    for (uint32_t r = 0; r < num; r++) {
        const uint8_t *s = arena + off[r];
        size_t n = (size_t)(off[r + 1] - off[r]);
        t->longest_below[r + 1] = n > t->longest_below[r] ? n : t->longest_below[r];
        fbpe_key k;
        fbpe_key_make(&k, s, n, n);
        fbpe_compact_insert(t->slots, t->cap, k.hash, r);
        uint64_t h = 0;
        for (size_t i = 0; i < n; i++) h = poly_step(h, s[i]);
        t->poly[r] = h;
        size_t at = poly_home(h, n, t->poly_mask);
        while (t->poly_slots[at]) at = (at + 1) & t->poly_mask;
        t->poly_slots[at] = r + 1;
        t->split_left[r] = t->split_right[r] = FBPE_NO_RANK;
    }
    *out = t;
    return FBPE_OK;
}

void fbpe_ranks_free(fbpe_ranks *t) {
    if (!t) return;
    free(t->slots);
    free(t->longest_below);
    free(t->poly);
    free(t->poly_slots);
    free(t->split_left);
    free(t->split_right);
    free(t);
}

/* The rank of s[i..j) of the token being read, whose prefix hashes are pre (pre[k]: of
 * s[0..k)) and powers pw, given that it is the join of the tokens of ranks a and b; or
 * FBPE_NO_RANK. */
static uint32_t rank_of_join(const fbpe_ranks *t, const uint8_t *s, const uint64_t *pre,
                             const uint64_t *pw, size_t i, size_t j, uint32_t a, uint32_t b) {
    size_t n = j - i;
    uint64_t h = pre[j] + POLY_P - poly_mulmod(pre[i], pw[n]);
    if (h >= POLY_P) h -= POLY_P;
    for (size_t at = poly_home(h, n, t->poly_mask); t->poly_slots[at]; at = (at + 1) & t->poly_mask) {
        uint32_t x = t->poly_slots[at] - 1;
        if (t->poly[x] != h || t->off[x + 1] - t->off[x] != n) continue;
        if ((a != FBPE_NO_RANK && t->split_left[x] == a && t->split_right[x] == b) ||
            memcmp(t->arena + t->off[x], s + i, n) == 0)
            return x;
    }
    return FBPE_NO_RANK;
}

/* tiktoken's procedure on token r with the ranks below r. The parts form a linked list over
 * their start positions; every adjacent pair that joins into a token of rank below r waits
 * in a heap under (rank, position), and a popped entry whose pair has changed since is
 * skipped: O(n log n) for a token of n bytes, each join looked up in O(1) (rank_of_join).
 * (The plain rescan tiktoken does is O(n^2).) Called for the ranks in order, it records each
 * token's split, which the lookups of longer tokens use. */
fbpe_status fbpe_tiktoken_parts(const fbpe_ranks *t, uint32_t r, size_t *parts, size_t *cut,
                                uint32_t *left, uint32_t *right) {
    const uint8_t *s = t->arena + t->off[r];
    size_t n = (size_t)(t->off[r + 1] - t->off[r]), m = n, heap_len = 0;
    size_t longest = t->longest_below[r];
    fbpe_status rc = FBPE_ENOMEM;
    *cut = *parts = n;
    *left = *right = FBPE_NO_RANK;
    if (n < 2) return FBPE_OK;
    /* Part i starts at byte i and ends where part next[i] starts (n: the end). */
    uint32_t *next = (uint32_t *)malloc(n * sizeof(uint32_t));
    uint32_t *prev = (uint32_t *)malloc(n * sizeof(uint32_t));
    uint32_t *pair_rank = (uint32_t *)malloc(n * sizeof(uint32_t));
    uint32_t *part_rank = (uint32_t *)malloc(n * sizeof(uint32_t));
    uint64_t *heap = (uint64_t *)malloc(3 * n * sizeof(uint64_t));
    uint64_t *pre = (uint64_t *)malloc((n + 1) * sizeof(uint64_t));
    uint64_t *pw = (uint64_t *)malloc((n + 1) * sizeof(uint64_t));
    if (!next || !prev || !pair_rank || !part_rank || !heap || !pre || !pw) goto done;
    pre[0] = 0;
    pw[0] = 1;
    for (size_t i = 0; i < n; i++) {
        pre[i + 1] = poly_step(pre[i], s[i]);
        pw[i + 1] = poly_mulmod(pw[i], POLY_BASE);
    }
#define END_OF(i) (next[i] < n ? next[i] : n)
#define JOINED(i)                                                                             \
    (next[i] < n && END_OF(next[i]) - (i) <= longest                                         \
         ? rank_of_join(t, s, pre, pw, (i), END_OF(next[i]), part_rank[i], part_rank[next[i]]) \
         : FBPE_NO_RANK)
#define BELOW(x) ((x) < r ? (x) : FBPE_NO_RANK)
    for (size_t i = 0; i < n; i++) {
        next[i] = (uint32_t)(i + 1); /* n when i is the last part: no part starts there */
        prev[i] = (uint32_t)(i ? i - 1 : n);
        part_rank[i] = rank_of_bytes(t, s + i, 1);
    }
    for (size_t i = 0; i < n; i++) {
        pair_rank[i] = BELOW(JOINED(i));
        if (pair_rank[i] != FBPE_NO_RANK)
            fbpe_key_push(heap, &heap_len, (uint64_t)pair_rank[i] << 32 | i);
    }
    while (heap_len) {
        uint64_t key = fbpe_key_pop(heap, &heap_len);
        uint32_t rank = (uint32_t)(key >> 32), at = (uint32_t)key;
        if (pair_rank[at] != rank) continue; /* stale: the pair at `at` is not this one now */
        /* Part `at` takes in the part after it. */
        uint32_t gone = next[at];
        next[at] = next[gone];
        if (next[gone] < n) prev[next[gone]] = at;
        pair_rank[gone] = FBPE_NO_RANK;
        part_rank[at] = rank;
        m--;
        pair_rank[at] = BELOW(JOINED(at));
        if (pair_rank[at] != FBPE_NO_RANK)
            fbpe_key_push(heap, &heap_len, (uint64_t)pair_rank[at] << 32 | at);
        if (prev[at] < n) {
            uint32_t p = prev[at];
            pair_rank[p] = BELOW(JOINED(p));
            if (pair_rank[p] != FBPE_NO_RANK)
                fbpe_key_push(heap, &heap_len, (uint64_t)pair_rank[p] << 32 | p);
        }
    }
#undef JOINED
#undef BELOW
#undef END_OF
    *cut = m > 1 ? next[0] : n;
    *parts = m;
    if (m == 2) { /* the split that longer tokens' lookups compare with */
        t->split_left[r] = *left = part_rank[0];
        t->split_right[r] = *right = part_rank[next[0]];
    }
    rc = FBPE_OK;
done:
    free(next);
    free(prev);
    free(pair_rank);
    free(part_rank);
    free(heap);
    free(pre);
    free(pw);
    return rc;
}
