/* The BPE encoder core; see encode.h for what it does and csrc/_encoder.pyx for why it is
 * built this way. */
#include "encode.h"
#include "../common/compact_slots.h"
#include "../common/hash.h"
#include "../common/huge_pages.h"
#include "../common/key_heap.h"
#include "piece_cache.h"
#include "vocab_slots.h"
#include "../common/utf8.h"

#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#define FBPE_WORDS_SSE2 1 /* merge_words reads a word's 16 bytes at once (64-bit moves) */
/* merge_words' loop of tokens takes most words: the others out of line */
#define STAGE_ONE_REST NOINLINE
#else
/* without that loop, every word: inline (out of line, superword English 28.89 M instructions
 * in fbpe_encode_text against 27.26 M) */
#define STAGE_ONE_REST ALWAYS_INLINE
#endif

/* Pieces up to this many symbols are merged by a plain scan over an array on the stack:
 * O(n^2) but with nothing to allocate, and faster than any heap below a few dozen symbols;
 * where the backtracking encoder has been built, it takes these pieces instead
 * (merge_piece). */
#define SHORT_PIECE 64
/* Nor are pieces of 3 bytes or fewer: merging them costs less than a lookup and an insert,
 * and in base64 or cut CJK they are most pieces (callgrind, 400 KB of base64: caching
 * them cost 19% more instructions than merging them each time). */
#define CACHE_MIN_PIECE 4
/* A cache holds at most this many pieces, and of their bytes after the first 16 and their
 * ids at most CACHE_MAX_BYTES; when full it starts again from empty, so that a stream of
 * unique strings cannot make it grow without bound (a cache: 2^19 slots of 32 bytes,
 * 16 MB, and at most 16 MB more; about 20 MB in all on the text below). Text in
 * many languages needs room for the pieces of all of them: o200k on 500 KB of the 22
 * languages not seen before, after their first quarters (benchmarks/callgrind_encode.py),
 * took 37.6 M instructions with 2^16 or 2^17 pieces, each time starting from empty, and
 * 28.7 M with 2^18 (one thread; two threads 39.5 M and 30.7 M); one language alone, the
 * same within 0.2% (en, Python, ru, zh-CN). */
#define CACHE_MAX_ENTRIES (1u << 18)
#define CACHE_MAX_BYTES ((size_t)1 << 24)

#define DEAD UINT32_MAX
#define NONE UINT32_MAX

/* For the hot loops: a copy of a function made for one constant argument, and a rare path
 * kept out of its caller's registers. */
#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define ALWAYS_INLINE __forceinline
#define NOINLINE __declspec(noinline)
#else
#define ALWAYS_INLINE inline
#define NOINLINE
#endif

/* ---- small helpers -------------------------------------------------------------------- */

/* A tiny lock: taken if it was free (try_hold), or waited for (spin_lock). */
#if defined(_MSC_VER)
#include <intrin.h>
static int try_hold(int *l) { return !_InterlockedExchange((volatile long *)l, 1); }
static void spin_unlock(int *l) { _InterlockedExchange((volatile long *)l, 0); }
#else
static int try_hold(int *l) { return !__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE); }
static void spin_unlock(int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }
#endif
static void spin_lock(int *l) {
    while (!try_hold(l)) {
    }
}

/* A zeroed table of `bytes` for the encoder's large read-only tables (whole tokens, pairs,
 * token bytes, join bits), freed with free(), on huge pages (../common/huge_pages.h): nearly
 * every piece probes the whole-token table at a random place (o200k: 12.6 MB; its pair table
 * 6 MB more), and with 4 KB pages each probe was also a TLB miss, which callgrind does not
 * count (its instructions and simulated cache misses were the same for o200k and cl100k, yet
 * o200k ran 12-24% slower). Paired on fresh 60,000-character chunks in one process, huge
 * pages against none, medians of 21 pairs (load 2.6-2.9): o200k en 1.09x, zh-CN 1.06x, ru
 * 1.01x, Python 1.08x; cl100k en 1.07x, Python 1.10x. */
static void *table_alloc(size_t bytes) { return fbpe_huge_calloc(bytes); }

void fbpe_ids_init(fbpe_ids *v) {
    v->ids = NULL;
    v->len = v->cap = 0;
}

void fbpe_ids_free(fbpe_ids *v) {
    free(v->ids);
    fbpe_ids_init(v);
}

fbpe_status fbpe_ids_reserve(fbpe_ids *v, size_t extra) {
    if (extra <= v->cap - v->len) return FBPE_OK;
    if (extra > SIZE_MAX - v->len) return FBPE_ENOMEM;
    size_t cap = fbpe_grow_to(v->cap, 64, v->len + extra, sizeof(uint32_t));
    if (!cap) return FBPE_ENOMEM;
    uint32_t *grown = (uint32_t *)realloc(v->ids, cap * sizeof(uint32_t));
    if (!grown) return FBPE_ENOMEM;
    v->ids = grown;
    v->cap = cap;
    return FBPE_OK;
}

/* fbpe_ids_reserve with the common case, room already there, inline: a call per piece
 * was 3-5% of encoding base64 or CJK. */
static inline fbpe_status reserve(fbpe_ids *v, size_t extra) {
    return extra <= v->cap - v->len ? FBPE_OK : fbpe_ids_reserve(v, extra);
}

static inline fbpe_status push_ids(fbpe_ids *out, const uint32_t *ids, size_t n) {
    if (reserve(out, n)) return FBPE_ENOMEM;
    memcpy(out->ids + out->len, ids, n * sizeof(uint32_t));
    out->len += n;
    return FBPE_OK;
}

/* ---- the merge table ------------------------------------------------------------------ */

/* Compact tables. The wide layout spends 12 bytes a pair and 24 a whole token, in a power of
 * two of slots at most half full: 72-144 bytes a merge, 75 MB of a vocabulary of a million
 * merges whose file is 17 MB, for a probe that never leaves its slot (the whole-token slot
 * holds a token of up to 16 bytes inline). From FBPE_COMPACT_FROM tokens on, more than any
 * published vocabulary, both tables hold 4-byte slots at most 3/5 full
 * (../common/compact_slots.h): 13 bytes a merge, and Tokenizer.load of a million merges
 * peaks at 43 MB instead of 105 (benchmarks/bench_load.py). A whole token found there costs
 * its bytes' cache line besides the slot's. Below the threshold the wide tables stay:
 * the tests for the layout are 0.4% of the instructions of an encode of English with cl100k
 * or o200k (callgrind).
 *
 * A compact table's (left, right): merge k's key is in merges, compared where the tag
 * matches. */
static NOINLINE uint32_t rank_of_compact(const fbpe_bpe *b, uint32_t left, uint32_t right) {
    uint64_t h = fbpe_compact_hash_u64(((uint64_t)left << 32) | right);
    uint32_t tag = fbpe_compact_tag(h);
    for (size_t i = fbpe_compact_home(h, b->pair_cap);; i = fbpe_compact_next(i, b->pair_cap)) {
        uint32_t slot = b->pair_compact[i], k = slot & FBPE_COMPACT_INDEX;
        if (!slot) return FBPE_NO_RANK;
        if ((slot & ~FBPE_COMPACT_INDEX) == tag && b->merges[2 * (size_t)k] == left &&
            b->merges[2 * (size_t)k + 1] == right)
            return b->num_fixed + k;
    }
}

static inline uint32_t rank_of(const fbpe_bpe *b, uint32_t left, uint32_t right) {
    if (!b->pair_keys) return rank_of_compact(b, left, right);
    uint64_t key = ((uint64_t)left << 32) | right;
    size_t i = fbpe_slot_u64(key, b->pair_shift);
    for (;;) {
        uint64_t k = b->pair_keys[i];
        if (k == key) return b->pair_ids[i];
        if (k == UINT64_MAX) return FBPE_NO_RANK;
        i = (i + 1) & b->pair_mask;
    }
}

uint32_t fbpe_rank(const fbpe_bpe *b, uint32_t left, uint32_t right) {
    return rank_of(b, left, right);
}

/* The two parts of merge k (id num_fixed + k). */
static inline uint32_t merge_left(const fbpe_bpe *b, size_t k) { return b->merges[2 * k]; }
static inline uint32_t merge_right(const fbpe_bpe *b, size_t k) { return b->merges[2 * k + 1]; }

static inline const uint8_t *token_bytes(const fbpe_bpe *b, uint32_t id, size_t *len) {
    *len = (size_t)(b->tok_off[id + 1] - b->tok_off[id]);
    return b->tok_bytes + b->tok_off[id];
}

/* ---- long tokens ----------------------------------------------------------------------
 *
 * A Chinese or Japanese piece under the gpt4 or o200k pattern is a clause of 20-60 bytes,
 * nearly never a token, and its probe of the whole-token table (12 MB of slots for o200k, 6
 * for cl100k) before it is cut missed the last-level cache nearly every time: 9.8 K of the
 * 56.7 K misses of a one-thread call on 500 KB of fresh Japanese with o200k (callgrind,
 * --cache-sim=yes --LL=8388608,16,64), for 178 K of its 33.0 M instructions. A bit table of
 * the tokens longer than a key's inline bytes, 16 bits a token (o200k has 3,987 of them: 8
 * KB; cl100k 805: 2 KB), answers first; a clear bit means no such token, so the answer is
 * exact, and a set bit is a probe as before. The call's misses: o200k Japanese 56.7 K -> 46.5
 * K, cl100k Japanese 45.8 K -> 37.1 K, Chinese 62.5 K -> 52.8 K. */
/* A bit table keyed by a 64-bit key (a hash, a join's bytes): its bit at fbpe_slot_u64. */
static inline int key_bit(const uint64_t *bits, unsigned shift, uint64_t key) {
    size_t bit = fbpe_slot_u64(key, shift);
    return (int)(bits[bit >> 6] >> (bit & 63)) & 1;
}

static inline void set_key_bit(uint64_t *bits, unsigned shift, uint64_t key) {
    size_t bit = fbpe_slot_u64(key, shift);
    bits[bit >> 6] |= (uint64_t)1 << (bit & 63);
}

static fbpe_status build_long_bits(fbpe_bpe *b) {
    size_t num_long = 0, bits = 512;
    for (uint32_t id = 256; id < b->num_tokens; id++)
        num_long += b->tok_off[id + 1] - b->tok_off[id] > FBPE_INLINE_KEY;
    while (bits < 16 * num_long) bits *= 2; /* num_long < 2^32: no overflow */
    b->long_bits = (uint64_t *)calloc(bits / 64, sizeof(uint64_t));
    if (!b->long_bits) return FBPE_ENOMEM;
    b->long_shift = fbpe_slot_shift(bits);
    for (uint32_t id = 256; id < b->num_tokens; id++) {
        size_t len = b->tok_off[id + 1] - b->tok_off[id];
        if (len <= FBPE_INLINE_KEY) continue;
        fbpe_key k;
        fbpe_key_make(&k, b->tok_bytes + b->tok_off[id], len, len);
        set_key_bit(b->long_bits, b->long_shift, k.hash);
    }
    return FBPE_OK;
}

static inline uint32_t whole_token(const fbpe_bpe *b, const fbpe_key *k) {
    if (k->len > FBPE_INLINE_KEY && !key_bit(b->long_bits, b->long_shift, k->hash)) return FBPE_NO_RANK;
    if (b->vocab_compact)
        return fbpe_compact_find_bytes(b->vocab_compact, b->vocab_cap, k->hash, b->tok_bytes,
                                       b->tok_off, k->p, k->len);
    return fbpe_slot_find(b->vocab_slots, b->vocab_mask, b->tok_bytes, b->tok_off, k);
}

uint32_t fbpe_whole_token(const fbpe_bpe *b, const uint8_t *s, size_t n) {
    fbpe_key k;
    if (!n) return FBPE_NO_RANK;
    fbpe_key_make(&k, s, n, n);
    return whole_token(b, &k);
}

/* ---- characters taken whole ----------------------------------------------------------
 *
 * A character of two or three UTF-8 bytes is most of the symbols of Cyrillic, Greek, Arabic
 * or CJK text, and its bytes nearly always merge into one token before anything else joins
 * them. Where that is certain, the merge loop starts from that token instead of the bytes:
 * a Russian word of 7 letters is 7 symbols, not 14, and the short scan, which costs the
 * square of its symbols, does a quarter of the work. On the distinct pieces of 60,000
 * characters, o200k: ru 37,398 symbols and 32,702 merges -> 22,319 and 17,623; zh-CN
 * 100,433 and 76,399 -> 43,849 and 19,815 (scripts in s48: every piece gave the same ids).
 *
 * Why it is exact. Merging by rank applies a piece's pairs lowest id first, and a merge
 * always has a higher id than its parts. Alone, a character's bytes merge into token t by
 * merges that end each of its edge elements (the byte or the part at either end) at known
 * ids. Where it stands, its bytes merge the same way unless a neighbour joins an edge element
 * first: a merge (x, e), x ending with the byte before, made below the id that ends e, or
 * (e, y) likewise after. Where no such merge exists, nothing outside ever meets a part of
 * the character, and nothing meets t before t exists, since every merge that uses t has a
 * higher id than t. So starting from t makes the same merges in the same order. An edge
 * element that is a byte is checked against the byte beside it (cross_before, cross_after);
 * one that is a part of a three-byte character, against every merge that uses it, when the
 * table is built. Atoms and joins (where a merge may rank below its parts) are left out. */

typedef struct fbpe_char_token {
    uint32_t token;     /* 0: none */
    uint32_t first_end; /* the id of the merge that joins the first byte to its neighbour */
    uint32_t last_end;  /* and the last byte */
} fbpe_char_token;

/* The length of the character of two or three bytes at s[i] (i < n) and its code point, or
 * 0 where none starts there. Not utf8.h's fbpe_utf8_char, which also reads four-byte forms
 * and tests each range: through it, o200k ru took 48.6 M -> 49.2 M instructions in
 * fbpe_encode_text and zh-CN 90.6 M -> 91.2 M. The table has an entry for every code point
 * of two or three bytes, surrogates too, so only the shortest form needs a test here. */
static inline size_t char_at(const uint8_t *s, size_t i, size_t n, uint32_t *cp) {
    uint8_t c = s[i];
    if (c < 0xC2) return 0; /* ASCII, a continuation byte, an overlong lead */
    if (c < 0xE0) {
        if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
        *cp = ((uint32_t)(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
        return 2;
    }
    if (c >= 0xF0 || i + 2 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80)
        return 0;
    *cp = ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    return *cp < 0x800 ? 0 : 3; /* an overlong form is bytes */
}

/* The symbols of s[0..n) with the characters taken whole where their neighbours allow and
 * their token is made before `limit` (FBPE_NO_RANK: every token; a table of two stages, the
 * first stage's: the merges below a token's id are all the ones that make it, so the
 * argument above holds for them alone). `restrict` and the tables in locals: a store of an id
 * may otherwise alias the text and the tables' pointers, which gcc then reads again for every
 * character. */
static ALWAYS_INLINE size_t piece_chars_below(const fbpe_bpe *b, const uint8_t *restrict s, size_t n,
                                              uint32_t *restrict out, uint32_t limit) {
    const fbpe_char_token *chars = b->char_tokens;
    const uint32_t *before = b->cross_before, *after = b->cross_after;
    size_t m = 0, i = 0, len;
    uint32_t cp = 0;
    if (s[0] == ' ' && n > 1 && (len = char_at(s, 1, n, &cp))) {
        const fbpe_char_token e = b->space_tokens[cp];
        if (e.token && e.token < limit &&
            (1 + len == n || after[(size_t)s[len] << 8 | s[1 + len]] > e.last_end)) {
            out[m++] = e.token;
            i = 1 + len;
        }
    }
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0xC2) { /* ASCII, a stray continuation byte */
            out[m++] = c;
            i++;
            continue;
        }
        if ((len = char_at(s, i, n, &cp))) {
            const fbpe_char_token e = chars[cp];
            if (e.token && e.token < limit && (i == 0 || before[(size_t)c << 8 | s[i - 1]] > e.first_end) &&
                (i + len == n || after[(size_t)s[i + len - 1] << 8 | s[i + len]] > e.last_end)) {
                out[m++] = e.token;
                i += len;
                continue;
            }
        }
        out[m++] = c;
        i++;
    }
    return m;
}

static size_t piece_chars(const fbpe_bpe *b, const uint8_t *s, size_t n, uint32_t *out) {
    return piece_chars_below(b, s, n, out, FBPE_NO_RANK);
}

/* The symbols of a text-form piece: UTF-8 bytes, and each atom's code point as its id. */
static size_t piece_symbols(const fbpe_bpe *b, const uint8_t *s, size_t n, uint32_t *out) {
    size_t m = 0;
    if (!b->atom_of) {
        for (size_t i = 0; i < n; i++) out[i] = s[i];
        return n;
    }
    for (size_t i = 0; i < n;) {
        int32_t cp = fbpe_utf8_private_use(s, i, n);
        if (cp >= 0 && b->atom_of[cp]) {
            out[m++] = b->atom_of[cp];
            i += 3;
            continue;
        }
        out[m++] = s[i++];
    }
    return m;
}

/* ---- merging a short piece: scan for the lowest rank --------------------------------- */

/* The lowest of ranks[0..n), the leftmost where several are equal (equal ranks are the same
 * pair, which merges left to right); *at is where it is. */
static inline uint32_t lowest_rank(const uint32_t *ranks, size_t n, size_t *at) {
    uint32_t best = FBPE_NO_RANK;
    *at = 0;
    for (size_t i = 0; i < n; i++)
        if (ranks[i] < best) {
            best = ranks[i];
            *at = i;
        }
    return best;
}

/* The merged id of (left, right) if it is made before `limit`, else FBPE_NO_RANK. */
static ALWAYS_INLINE uint32_t rank_below(const fbpe_bpe *b, uint32_t left, uint32_t right,
                                         uint32_t limit) {
    if (limit == FBPE_NO_RANK) return rank_of(b, left, right);
    uint32_t r = rank_of(b, left, right);
    return r < limit ? r : FBPE_NO_RANK;
}

/* The short scan with the merges made before `limit` only (FBPE_NO_RANK: all of them; the
 * compiler makes a copy for that constant, without the compare). */
static ALWAYS_INLINE size_t merge_short_below(const fbpe_bpe *b, uint32_t *ids, size_t n, uint32_t limit) {
    uint32_t ranks[SHORT_PIECE];
    if (n < 2) return n;
    for (size_t i = 0; i + 1 < n; i++) ranks[i] = rank_below(b, ids[i], ids[i + 1], limit);
    while (n > 1) {
        size_t at;
        uint32_t best = lowest_rank(ranks, n - 1, &at);
        if (best == FBPE_NO_RANK) break;
        ids[at] = best;
        /* Drop symbol at+1 and the pair that started on it: a few words each. Written as
         * loops (o200k, callgrind: zh-CN 110.8 M -> 108.7 M instructions in
         * fbpe_encode_text against two calls of memmove, English 20.1 M -> 19.9 M), but GCC's
         * -O3 makes each loop a call of memmove again (75,211 calls in a 500 KB call of the 22
         * languages). Kept as loops by an opaque index, they cost 0.3 M more instructions
         * there and 0.05 M fewer on Chinese, and 0.96-1.03x the time (bench_encode_peers.py
         * --against, --threads 1, 15 rounds): left to the compiler. */
        for (size_t k = at + 1; k + 1 < n; k++) ids[k] = ids[k + 1];
        for (size_t k = at + 1; k + 2 < n; k++) ranks[k] = ranks[k + 1];
        n--;
        if (at > 0) ranks[at - 1] = rank_below(b, ids[at - 1], ids[at], limit);
        if (at + 1 < n) ranks[at] = rank_below(b, ids[at], ids[at + 1], limit);
    }
    return n;
}

static size_t merge_short(const fbpe_bpe *b, uint32_t *ids, size_t n) {
    return merge_short_below(b, ids, n, FBPE_NO_RANK);
}

/* ---- merging a long piece: a sweep over buckets of positions, one rank at a time --------
 *
 * The symbols form a linked list over their original positions. Every adjacent pair that is
 * a merge is filed under its rank. Ranks are taken lowest first (a small heap of distinct
 * ranks); all positions filed under a rank are merged in one left-to-right sweep. A merge
 * only creates pairs that contain the new id, whose ranks are higher than the one being
 * swept, so a rank, once swept, never comes back, and the result is exactly that of merging
 * the lowest-ranked leftmost pair again and again. Each position is filed at most three
 * times (once at the start, then once per neighbour merge), so the work is O(n log n) at
 * worst and, for a run of one repeated symbol, a handful of linear sweeps. */

typedef struct {
    uint32_t *pos;
    uint32_t len, cap;
    uint32_t rank;
    int sorted;
} bucket;

typedef struct {
    bucket *buckets;
    size_t num_buckets, cap_buckets;
    uint32_t *index_keys; /* rank + 1; 0 is empty */
    uint32_t *index_vals; /* bucket number */
    size_t index_mask;
    unsigned index_shift;
    uint64_t *heap; /* ranks with a bucket waiting, smallest on top */
    size_t heap_len, heap_cap;
    /* The two buckets filed into last: a sweep files the pairs on either side of each merge,
     * and in a run of one symbol those are the same two pairs again and again, so the
     * index is rarely probed. */
    uint32_t memo_rank[2];
    size_t memo_bucket[2];
} sweep;

static void sweep_free(sweep *w) {
    for (size_t k = 0; k < w->num_buckets; k++) free(w->buckets[k].pos);
    free(w->buckets);
    free(w->index_keys);
    free(w->index_vals);
    free(w->heap);
}

static fbpe_status heap_push(sweep *w, uint32_t rank) {
    if (w->heap_len == w->heap_cap) {
        size_t cap = fbpe_grow_to(w->heap_cap, 64, w->heap_len + 1, sizeof(uint64_t));
        if (!cap) return FBPE_ENOMEM;
        uint64_t *grown = (uint64_t *)realloc(w->heap, cap * sizeof(uint64_t));
        if (!grown) return FBPE_ENOMEM;
        w->heap = grown;
        w->heap_cap = cap;
    }
    fbpe_key_push(w->heap, &w->heap_len, rank);
    return FBPE_OK;
}

static uint32_t heap_pop(sweep *w) { return (uint32_t)fbpe_key_pop(w->heap, &w->heap_len); }

static fbpe_status index_grow(sweep *w) {
    size_t cap = w->index_mask ? 2 * (w->index_mask + 1) : 256;
    uint32_t *keys = (uint32_t *)calloc(cap, sizeof(uint32_t));
    uint32_t *vals = (uint32_t *)malloc(cap * sizeof(uint32_t));
    unsigned shift = fbpe_slot_shift(cap);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return FBPE_ENOMEM;
    }
    for (size_t k = 0; k < w->num_buckets; k++) {
        size_t i = fbpe_slot_u64(w->buckets[k].rank, shift);
        while (keys[i]) i = (i + 1) & (cap - 1);
        keys[i] = w->buckets[k].rank + 1;
        vals[i] = (uint32_t)k;
    }
    free(w->index_keys);
    free(w->index_vals);
    w->index_keys = keys;
    w->index_vals = vals;
    w->index_mask = cap - 1;
    w->index_shift = shift;
    return FBPE_OK;
}

/* File position p under rank. */
static inline fbpe_status file_position(sweep *w, uint32_t rank, uint32_t p) {
    bucket *bk = NULL;
    if (rank == w->memo_rank[0]) {
        bk = &w->buckets[w->memo_bucket[0]];
        goto append;
    }
    if (rank == w->memo_rank[1]) {
        bk = &w->buckets[w->memo_bucket[1]];
        goto append;
    }
    if (2 * (w->num_buckets + 1) > w->index_mask + 1 && index_grow(w)) return FBPE_ENOMEM;
    size_t i = fbpe_slot_u64(rank, w->index_shift);
    while (w->index_keys[i]) {
        if (w->index_keys[i] == rank + 1) {
            bk = &w->buckets[w->index_vals[i]];
            break;
        }
        i = (i + 1) & w->index_mask;
    }
    if (!bk) {
        if (w->num_buckets == w->cap_buckets) {
            size_t cap = fbpe_grow_to(w->cap_buckets, 64, w->num_buckets + 1, sizeof(bucket));
            if (!cap) return FBPE_ENOMEM;
            bucket *grown = (bucket *)realloc(w->buckets, cap * sizeof(bucket));
            if (!grown) return FBPE_ENOMEM;
            w->buckets = grown;
            w->cap_buckets = cap;
        }
        if (heap_push(w, rank)) return FBPE_ENOMEM;
        w->index_keys[i] = rank + 1;
        w->index_vals[i] = (uint32_t)w->num_buckets;
        bk = &w->buckets[w->num_buckets++];
        bk->pos = NULL;
        bk->len = bk->cap = 0;
        bk->rank = rank;
        bk->sorted = 1;
    }
    w->memo_rank[1] = w->memo_rank[0];
    w->memo_bucket[1] = w->memo_bucket[0];
    w->memo_rank[0] = rank;
    w->memo_bucket[0] = (size_t)(bk - w->buckets);
append:
    if (bk->len == bk->cap) {
        /* A bucket holds positions of one piece, fewer than UINT32_MAX (fbpe_merge). */
        uint32_t cap = bk->cap > UINT32_MAX / 2 ? UINT32_MAX : (bk->cap ? 2 * bk->cap : 8);
        if (cap == bk->cap) return FBPE_ENOMEM;
        uint32_t *grown = (uint32_t *)realloc(bk->pos, (size_t)cap * sizeof(uint32_t));
        if (!grown) return FBPE_ENOMEM;
        bk->pos = grown;
        bk->cap = cap;
    }
    if (bk->len && bk->pos[bk->len - 1] > p) bk->sorted = 0;
    bk->pos[bk->len++] = p;
    return FBPE_OK;
}

static bucket *find_bucket(sweep *w, uint32_t rank) {
    size_t i = fbpe_slot_u64(rank, w->index_shift);
    while (w->index_keys[i] != rank + 1) i = (i + 1) & w->index_mask;
    return &w->buckets[w->index_vals[i]];
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The sweep over ids[0..n) (n < 2^32); the new length in *len. FBPE_OK or FBPE_ENOMEM. */
static fbpe_status merge_long(const fbpe_bpe *b, uint32_t *ids, size_t n, size_t *len_out) {
    *len_out = n;
    if (n < 2) return FBPE_OK;
    uint32_t *next = (uint32_t *)malloc(n * sizeof(uint32_t));
    uint32_t *prev = (uint32_t *)malloc(n * sizeof(uint32_t));
    sweep w;
    memset(&w, 0, sizeof w);
    w.memo_rank[0] = w.memo_rank[1] = FBPE_NO_RANK;
    fbpe_status rc = FBPE_ENOMEM;
    if (!next || !prev) goto done;
    for (size_t i = 0; i < n; i++) {
        next[i] = i + 1 < n ? (uint32_t)(i + 1) : NONE;
        prev[i] = i ? (uint32_t)(i - 1) : NONE;
    }
    uint32_t r = FBPE_NO_RANK;
    for (size_t i = 0; i + 1 < n; i++) {
        /* In a run of one symbol the pair repeats: look it up once. */
        if (!i || ids[i] != ids[i - 1] || ids[i + 1] != ids[i]) r = rank_of(b, ids[i], ids[i + 1]);
        if (r != FBPE_NO_RANK && file_position(&w, r, (uint32_t)i)) goto done;
    }
    while (w.heap_len) {
        r = heap_pop(&w);
        bucket *bk = find_bucket(&w, r);
        uint32_t *ps = bk->pos, len = bk->len;
        int sorted = bk->sorted;
        /* Detached: filing positions may move the bucket array, and r never comes back. */
        bk->pos = NULL;
        bk->len = bk->cap = 0;
        uint32_t a = merge_left(b, r - b->num_fixed), c = merge_right(b, r - b->num_fixed);
        /* Only a pair of two equal symbols can overlap itself ("x x x"); then the order of
         * the sweep decides which occurrences merge, and it must be left to right. */
        if (!sorted && a == c) qsort(ps, len, sizeof(uint32_t), cmp_u32);
        for (uint32_t k = 0; k < len; k++) {
            uint32_t p = ps[k], q = next[p];
            if (ids[p] != a || q == NONE || ids[q] != c) continue; /* stale (or dead) */
            ids[p] = r;
            ids[q] = DEAD;
            next[p] = next[q];
            if (next[q] != NONE) prev[next[q]] = p;
            if (prev[p] != NONE) {
                uint32_t r1 = rank_of(b, ids[prev[p]], r);
                if (r1 != FBPE_NO_RANK && file_position(&w, r1, prev[p])) {
                    free(ps);
                    goto done;
                }
            }
            if (next[p] != NONE) {
                uint32_t r2 = rank_of(b, r, ids[next[p]]);
                if (r2 != FBPE_NO_RANK && file_position(&w, r2, p)) {
                    free(ps);
                    goto done;
                }
            }
        }
        free(ps);
    }
    /* Position 0 is never removed (a merge removes the right symbol of its pair). */
    size_t m = 0;
    for (uint32_t p = 0; p != NONE; p = next[p]) ids[m++] = ids[p];
    *len_out = m;
    rc = FBPE_OK;
done:
    free(next);
    free(prev);
    sweep_free(&w);
    return rc;
}

/* ---- merging a long piece made of a few runs: rounds over run-length form ---------------
 *
 * A megabyte of spaces, or of one letter, is one run; after its first merge it is again
 * one run (of the merged token) and perhaps a leftover symbol. Kept as (symbol, count)
 * runs, such a piece takes one short round per merge, however long it is. A round finds
 * the lowest rank among the pairs inside runs (x, x) and across run boundaries, and merges
 * every occurrence of that pair, left to right, as fbpe_merge would:
 *   - (x, x) inside a run of c: c / 2 merged tokens, and one x left over at the end if c is
 *     odd (left to right without overlap);
 *   - (a, b) with a != b only occurs across a boundary, and two such occurrences never
 *     overlap: the last a of the run before and the first b of the run after merge.
 * When a piece has (or grows) too many runs, or the rounds have done more work than a sweep
 * would, the runs are written out and the sweep finishes from there: a sequence in which
 * no pair of rank <= r is left merges on the same way whoever did the first part. */

#define MAX_RUNS 64

typedef struct {
    uint32_t sym, count;
} run;

/* Append (sym, count) to runs, joining it to the last run when the symbols are equal. */
static inline void emit_run(run *runs, size_t *len, uint32_t sym, uint32_t count) {
    if (!count) return;
    if (*len && runs[*len - 1].sym == sym)
        runs[*len - 1].count += count;
    else
        runs[(*len)++] = (run){sym, count};
}

/* Returns the new length, or 0 if the piece is not a few runs (ids untouched then, or
 * rewritten to a valid intermediate state that the caller must finish with a sweep: *more
 * tells which). */
static size_t merge_runs(const fbpe_bpe *b, uint32_t *ids, size_t n, int *more) {
    run buf_a[2 * MAX_RUNS], buf_b[2 * MAX_RUNS];
    run *runs = buf_a, *next = buf_b;
    size_t len = 0, work = 0;
    *more = 0;
    for (size_t i = 0; i < n; i++) {
        if (len && runs[len - 1].sym == ids[i]) {
            runs[len - 1].count++;
            continue;
        }
        if (len == MAX_RUNS) return 0;
        runs[len++] = (run){ids[i], 1};
    }
    for (;;) {
        uint32_t best = FBPE_NO_RANK;
        for (size_t i = 0; i < len; i++) {
            if (runs[i].count >= 2) {
                uint32_t r = rank_of(b, runs[i].sym, runs[i].sym);
                if (r < best) best = r;
            }
            if (i + 1 < len) {
                uint32_t r = rank_of(b, runs[i].sym, runs[i + 1].sym);
                if (r < best) best = r;
            }
        }
        if (best == FBPE_NO_RANK) break;
        uint32_t a = merge_left(b, best - b->num_fixed), c = merge_right(b, best - b->num_fixed);
        size_t out = 0;
        if (a == c) {
            for (size_t i = 0; i < len; i++) {
                if (runs[i].sym == a && runs[i].count >= 2) {
                    emit_run(next, &out, best, runs[i].count / 2);
                    emit_run(next, &out, a, runs[i].count % 2);
                } else {
                    emit_run(next, &out, runs[i].sym, runs[i].count);
                }
            }
        } else {
            uint32_t taken = 0; /* symbols of this run already merged into the one before */
            for (size_t i = 0; i < len; i++) {
                uint32_t count = runs[i].count - taken;
                taken = 0;
                if (runs[i].sym == a && i + 1 < len && runs[i + 1].sym == c) {
                    emit_run(next, &out, a, count - 1);
                    emit_run(next, &out, best, 1);
                    taken = 1;
                } else {
                    emit_run(next, &out, runs[i].sym, count);
                }
            }
        }
        run *t = runs;
        runs = next;
        next = t;
        len = out;
        work += len;
        if (len > MAX_RUNS || work > 4 * n + 1024) {
            *more = 1;
            break;
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < len; i++)
        for (uint32_t k = 0; k < runs[i].count; k++) ids[m++] = runs[i].sym;
    return m;
}

/* ---- merging in any order: a heap of (rank, position) ----------------------------------
 *
 * With joins (fbpe_bpe_add_joins) a merge can make a pair that ranks before the pair just
 * merged ('.:.' + ':' makes '.:.:', ranked before '.:.' in Llama 3), so neither the sweep
 * nor the rounds over runs, which take each rank once, apply. tiktoken's own procedure
 * does: merge the lowest-ranked pair, the leftmost of equals, again and again. Each pair is
 * filed under (rank, position) in a binary heap; a popped entry whose pair has changed
 * since is skipped, so a piece of n symbols costs O(n log n). */

static void heap_sift_up(uint64_t *h, size_t i) {
    while (i) {
        size_t parent = (i - 1) / 2;
        if (h[parent] <= h[i]) break;
        uint64_t t = h[parent];
        h[parent] = h[i];
        h[i] = t;
        i = parent;
    }
}

static void heap_sift_down(uint64_t *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h[l] < h[m]) m = l;
        if (l + 1 < n && h[l + 1] < h[m]) m = l + 1;
        if (m == i) return;
        uint64_t t = h[m];
        h[m] = h[i];
        h[i] = t;
        i = m;
    }
}

static fbpe_status merge_heap(const fbpe_bpe *b, uint32_t *ids, size_t n, size_t *len_out) {
    *len_out = n;
    if (n < 2) return FBPE_OK;
    /* next, prev, the rank of the pair starting at each position, and the heap: each pair
     * is filed once at the start and once per merge beside it, at most 3n entries. */
    uint32_t *next = (uint32_t *)malloc(fbpe_array_bytes(n, 3 * sizeof(uint32_t)));
    uint64_t *heap = (uint64_t *)malloc(fbpe_array_bytes(n, 3 * sizeof(uint64_t)));
    if (!next || !heap) {
        free(next);
        free(heap);
        return FBPE_ENOMEM;
    }
    uint32_t *prev = next + n, *pair = next + 2 * n;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        next[i] = i + 1 < n ? (uint32_t)(i + 1) : NONE;
        prev[i] = i ? (uint32_t)(i - 1) : NONE;
        pair[i] = i + 1 < n ? rank_of(b, ids[i], ids[i + 1]) : FBPE_NO_RANK;
        if (pair[i] != FBPE_NO_RANK) heap[len++] = (uint64_t)pair[i] << 32 | i;
    }
    for (size_t i = len / 2; i--;) heap_sift_down(heap, len, i);
    while (len) {
        uint64_t top = heap[0];
        heap[0] = heap[--len];
        heap_sift_down(heap, len, 0);
        uint32_t p = (uint32_t)top, r = (uint32_t)(top >> 32);
        if (ids[p] == DEAD || pair[p] != r) continue; /* stale: the pair has changed */
        uint32_t q = next[p];
        ids[p] = r;
        ids[q] = DEAD;
        next[p] = next[q];
        if (next[q] != NONE) prev[next[q]] = p;
        pair[q] = FBPE_NO_RANK;
        uint32_t sides[2] = {prev[p], p};
        for (int k = 0; k < 2; k++) {
            uint32_t at = sides[k];
            if (at == NONE) continue;
            pair[at] = next[at] == NONE ? FBPE_NO_RANK : rank_of(b, ids[at], ids[next[at]]);
            if (pair[at] != FBPE_NO_RANK) {
                heap[len] = (uint64_t)pair[at] << 32 | at;
                heap_sift_up(heap, len++);
            }
        }
    }
    size_t m = 0;
    for (uint32_t p = 0; p != NONE; p = next[p]) ids[m++] = ids[p];
    *len_out = m;
    free(next);
    free(heap);
    return FBPE_OK;
}

/* ---- the backtracking encoder: cost per byte that does not grow with the piece ---------
 *
 * The encoding of a piece is the one sequence of tokens, each of which encodes to itself,
 * in which every two neighbours are compatible: merged from their bytes alone they come out
 * as the same two tokens (the observation behind GitHub's `bpe` crate, Antwerpen and
 * Neubeck; this is our own code). So the piece can be read left to right: at each position
 * take the longest token there (a walk down a trie of the tokens' bytes); while it is not
 * compatible with the token before it, or the rest of the piece is known to have no
 * encoding from where it ends, try the next shorter token that is a prefix of it; when none
 * is left, take back the token before and mark that position as a dead end. Each position
 * is a dead end at most once, so the work is about linear in the piece.
 *
 * Compatibility of t1 and t2 (compatible): merged alone, the last symbol of t1 and the
 * first of t2 meet at the boundary through the merges that make them; at every stage the
 * pair across the boundary must not be a merge that comes before both sides are used up.
 * Taking apart whichever of the two was made later (the higher id) walks those stages
 * backwards; `limit` is when the current pair stops existing. A pair ranked exactly at the
 * limit merges first only on the left (leftmost of equal ranks), hence the +1 on the right.
 *
 * Only for tables without atoms or joins: with atoms a piece's symbols are not its bytes,
 * and with joins a token has more than one pair that makes it. Those keep the merges.
 *
 * Built on request (fbpe_bpe_backtracking; BPE.build_backtracking in Python), it then
 * encodes the pieces of 2-64 bytes that are neither a whole token nor cached, and the parts
 * the cut leaves, in place of the short scan (merge_piece); it is also fbpe_merge's method
 * 4. The short scan costs each merge a scan of the ranks, a move of the rest and two pair
 * probes, about 1,000 instructions for a 6-15-byte part of Chinese that the cut leaves;
 * here a token costs a walk of about its length in trie probes and a compatibility test of
 * a few pair probes. Instructions in fbpe_encode_text (callgrind, 300,000 characters of
 * warm-up and 300,000 fresh, both counted), short scan -> backtracking: o200k ru 66.0 M ->
 * 50.1 M, zh-CN 102.4 M -> 92.3 M. It is not built by default, because the walks touch the
 * trie (12 MB for o200k's 421,660 nodes, 12-byte slots, one probe a byte) at random: on ru
 * the simulated misses of a 2 MB last-level cache went from 105 K to 206 K reads, and wall
 * time, in alternating pairs of processes on a shared machine, was mostly below the short
 * scan's (ru 0.61-1.28x, zh-CN 0.69-0.76x; docs/encoding.md; used on the parts of 16-64
 * bytes alone: 0.80x). A walk that misses less (an
 * automaton laid out by depth, the first levels as arrays, smaller slots) is what it needs
 * to be the default. Longer pieces keep the sweep and the rounds over runs even when it is
 * built: on pieces of a megabyte (base64, random letters, random CJK) it ran at about half
 * the sweep's speed, and on runs of one byte far slower than the rounds. */

#define TRIE_EMPTY UINT32_MAX
/* Nodes are numbered in 24 bits (node << 8 | byte in a 32-bit key): o200k has 421,660
 * nodes, a table past 16M nodes is not built (and keeps the other ways). */
#define TRIE_MAX_NODES ((1u << 24) - 1)

static inline const uint32_t *trie_edge(const fbpe_bpe *b, uint32_t node, uint8_t c) {
    uint32_t key = node << 8 | c;
    size_t i = fbpe_slot_u64(key, b->trie_shift);
    for (;;) {
        const uint32_t *e = b->trie + 3 * i;
        if (e[0] == key) return e;
        if (e[0] == TRIE_EMPTY) return NULL;
        i = (i + 1) & b->trie_mask;
    }
}

static inline uint32_t token_len(const fbpe_bpe *b, uint32_t id) {
    return (uint32_t)(b->tok_off[id + 1] - b->tok_off[id]);
}

/* The longest token of the trie that s[0..n) begins with (every byte is one). */
static inline uint32_t longest_token(const fbpe_bpe *b, const uint8_t *s, size_t n) {
    uint32_t node = 0, tok = s[0];
    for (size_t j = 0; j < n; j++) {
        const uint32_t *e = trie_edge(b, node, s[j]);
        if (!e) break;
        node = e[1];
        if (e[2] != FBPE_NO_RANK) tok = e[2];
    }
    return tok;
}

/* Whether token t1 followed by token t2 is what BPE leaves of their bytes while no merge
 * ranked `limit` or later has been made: take the later-made of the two apart, one merge at
 * a time, and check that the pair meeting across the boundary at each step would not have
 * merged first. */
static inline int compatible_before(const fbpe_bpe *b, uint32_t t1, uint32_t t2, uint32_t limit) {
    uint32_t nf = b->num_fixed;
    for (;;) {
        uint32_t r = rank_of(b, t1, t2);
        if (r != FBPE_NO_RANK && r < limit) return 0;
        if (t1 > t2) {
            limit = t1;
            t1 = t1 < nf ? t1 : merge_right(b, t1 - nf);
            if (t1 == limit) { /* t1 is a byte: take t2 apart */
                limit = t2 + 1;
                t2 = t2 < nf ? t2 : merge_left(b, t2 - nf);
                if (t2 + 1 == limit) return 1;
            }
        } else {
            limit = t2 + 1;
            t2 = t2 < nf ? t2 : merge_left(b, t2 - nf);
            if (t2 + 1 == limit) {
                limit = t1;
                t1 = t1 < nf ? t1 : merge_right(b, t1 - nf);
                if (t1 == limit) return 1;
            }
        }
    }
}

static inline int compatible(const fbpe_bpe *b, uint32_t t1, uint32_t t2) {
    return compatible_before(b, t1, t2, UINT32_MAX);
}

/* The ids of s[0..n) (n >= 1) into ids (room for n), their number in *m. dead: n + 1 bits,
 * zeroed: positions from which the rest has no encoding. */
static void backtrack(const fbpe_bpe *b, const uint8_t *s, size_t n, uint32_t *ids, size_t *m,
                      uint64_t *dead) {
    size_t len = 0, pos = 0;
    uint32_t tok = longest_token(b, s, n);
    while (pos < n) {
        size_t end = pos + token_len(b, tok);
        if (!(dead[end >> 6] >> (end & 63) & 1) && (!len || compatible(b, ids[len - 1], tok))) {
            ids[len++] = tok;
            pos = end;
            if (pos < n) tok = longest_token(b, s + pos, n - pos);
            continue;
        }
        if (b->next_prefix[tok] != FBPE_NO_RANK) {
            tok = b->next_prefix[tok];
            continue;
        }
        /* No token from pos fits: pos is a dead end; try the token before it shorter. A
         * byte followed by a byte is always compatible when they do not merge, and the
         * BPE encoding exists, so len is not 0 here. */
        dead[pos >> 6] |= (uint64_t)1 << (pos & 63);
        tok = ids[--len];
        pos -= token_len(b, tok);
    }
    *m = len;
}

static fbpe_status merge_backtracking(const fbpe_bpe *b, const uint8_t *s, size_t n,
                                      uint32_t *ids, size_t *m) {
    uint64_t small[8], *dead = small;
    size_t words = n / 64 + 1;
    *m = 0;
    if (!n) return FBPE_OK;
    if (words > 8) {
        dead = (uint64_t *)calloc(words, sizeof(uint64_t));
        if (!dead) return FBPE_ENOMEM;
    } else {
        memset(small, 0, sizeof small);
    }
    backtrack(b, s, n, ids, m, dead);
    if (dead != small) free(dead);
    return FBPE_OK;
}

static fbpe_status trie_grow(fbpe_bpe *b, size_t cap);

/* Add the bytes of token `id` to the trie, growing it to stay at most half full. */
static fbpe_status trie_add(fbpe_bpe *b, uint32_t id, size_t *nodes) {
    size_t len;
    const uint8_t *t = token_bytes(b, id, &len);
    uint32_t node = 0;
    for (size_t j = 0; j < len; j++) {
        if (2 * (*nodes + 1) > b->trie_mask + 1) { /* room for one more node */
            fbpe_status rc = trie_grow(b, 2 * (b->trie_mask + 1));
            if (rc) return rc;
        }
        uint32_t key = node << 8 | t[j];
        size_t i = fbpe_slot_u64(key, b->trie_shift);
        uint32_t *e;
        for (;;) {
            e = b->trie + 3 * i;
            if (e[0] == key || e[0] == TRIE_EMPTY) break;
            i = (i + 1) & b->trie_mask;
        }
        if (e[0] == TRIE_EMPTY) {
            if (*nodes >= TRIE_MAX_NODES) return FBPE_EINVALID;
            e[0] = key;
            e[1] = (uint32_t)++*nodes;
            e[2] = FBPE_NO_RANK;
        }
        if (j + 1 == len) e[2] = id;
        node = e[1];
    }
    return FBPE_OK;
}

static fbpe_status trie_grow(fbpe_bpe *b, size_t cap) {
    uint32_t *slots = (uint32_t *)malloc(fbpe_array_bytes(cap, 3 * sizeof(uint32_t)));
    if (!slots) return FBPE_ENOMEM;
    memset(slots, 0xFF, cap * 3 * sizeof(uint32_t));
    unsigned shift = fbpe_slot_shift(cap);
    for (size_t k = 0; b->trie && k <= b->trie_mask; k++) {
        const uint32_t *e = b->trie + 3 * k;
        if (e[0] == TRIE_EMPTY) continue;
        size_t i = fbpe_slot_u64(e[0], shift);
        while (slots[3 * i] != TRIE_EMPTY) i = (i + 1) & (cap - 1);
        memcpy(slots + 3 * i, e, 3 * sizeof(uint32_t));
    }
    free(b->trie);
    b->trie = slots;
    b->trie_mask = cap - 1;
    b->trie_shift = shift;
    return FBPE_OK;
}

/* The trie and next_prefix of every token that encodes to itself (and every byte). */
fbpe_status fbpe_bpe_backtracking(fbpe_bpe *b) {
    size_t nodes = 0;
    if (b->trie) return FBPE_OK; /* built already: never rebuilt under a reader */
    if (b->atom_of || b->any_order) return FBPE_EINVALID;
    fbpe_status rc = trie_grow(b, fbpe_pow2_at_least(2 * (size_t)b->num_tokens + 512));
    if (rc) return rc;
    b->next_prefix = (uint32_t *)malloc(fbpe_array_bytes(b->num_tokens, sizeof(uint32_t)));
    if (!b->next_prefix) { /* no half-built encoder: merge_piece takes it when trie is set */
        free(b->trie);
        b->trie = NULL;
        return FBPE_ENOMEM;
    }
    for (uint32_t id = 0; id < b->num_tokens; id++) {
        b->next_prefix[id] = FBPE_NO_RANK;
        size_t len;
        const uint8_t *t = token_bytes(b, id, &len);
        if (id >= 256 && fbpe_whole_token(b, t, len) != id) continue;
        rc = trie_add(b, id, &nodes);
        if (rc) {
            free(b->trie);
            free(b->next_prefix);
            b->trie = NULL;
            b->next_prefix = NULL;
            return rc;
        }
    }
    /* The longest proper prefix of each token that is a token: the last one on its path. */
    for (uint32_t id = 256; id < b->num_tokens; id++) {
        size_t len;
        const uint8_t *t = token_bytes(b, id, &len);
        if (fbpe_whole_token(b, t, len) != id) continue;
        uint32_t node = 0, best = FBPE_NO_RANK;
        for (size_t j = 0; j + 1 < len; j++) {
            const uint32_t *e = trie_edge(b, node, t[j]);
            node = e[1];
            if (e[2] != FBPE_NO_RANK) best = e[2];
        }
        b->next_prefix[id] = best;
    }
    return FBPE_OK;
}

fbpe_status fbpe_merge(const fbpe_bpe *b, uint32_t *ids, size_t n, int method, size_t *len) {
    *len = n;
    if (n >= UINT32_MAX) return FBPE_ETOOLONG; /* positions and run lengths are 32-bit */
    if (method == 4) {
        if (!b->trie) return FBPE_EINVALID;
        uint8_t *bytes = (uint8_t *)malloc(n ? n : 1);
        if (!bytes) return FBPE_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            if (ids[i] > 255) {
                free(bytes);
                return FBPE_EINVALID;
            }
            bytes[i] = (uint8_t)ids[i];
        }
        fbpe_status rc = merge_backtracking(b, bytes, n, ids, len);
        free(bytes);
        return rc;
    }
    if (b->any_order && !(method == 1 && n <= SHORT_PIECE)) {
        /* The short scan already takes the lowest, leftmost pair one at a time. */
        if (n <= SHORT_PIECE) {
            *len = merge_short(b, ids, n);
            return FBPE_OK;
        }
        return merge_heap(b, ids, n, len);
    }
    if (method == 1 || (method == 0 && n <= SHORT_PIECE)) {
        if (n > SHORT_PIECE) return FBPE_EINVALID;
        *len = merge_short(b, ids, n);
        return FBPE_OK;
    }
    if (method == 0 || method == 3) {
        int more;
        size_t m = merge_runs(b, ids, n, &more);
        if (m && !more) {
            *len = m;
            return FBPE_OK;
        }
        if (m) n = m;
    }
    return merge_long(b, ids, n, len);
}

/* ---- the piece cache ------------------------------------------------------------------ */

static void cache_free(fbpe_cache *c) {
    if (!c) return;
    free(c->slots);
    free(c->keys);
    free(c->vals);
    free(c);
}

static void cache_clear(fbpe_cache *c) {
    if (c->slots) memset(c->slots, 0, (c->mask + 1) * sizeof(fbpe_cache_slot));
    c->size = c->keys_len = c->vals_len = 0;
}

/* Slots of 8 MB or more are on huge pages (table_alloc), as the whole-token table: each
 * probe is at a random place in up to 16 MB. Smaller ones are not: 4 KB pages reach that far
 * from the TLB, and a huge page may cost the kernel a compaction when it is first touched
 * (`defrag` madvise, as here): growing a shared cache from 16,384 slots to 65,536 before a
 * call's threads start took 0.5 to 11 ms on huge pages. cap: a power of two. */
static fbpe_status cache_resize(fbpe_cache *c, size_t cap) {
    if (cap > (size_t)UINT32_MAX + 1) return FBPE_ENOMEM; /* a slot keeps 32 bits of its hash */
    size_t bytes = fbpe_array_bytes(cap, sizeof(fbpe_cache_slot));
    fbpe_cache_slot *slots = (fbpe_cache_slot *)(bytes >= ((size_t)8 << 20) ? table_alloc(bytes)
                                                                           : calloc(1, bytes));
    if (!slots) return FBPE_ENOMEM;
    for (size_t k = 0; c->slots && k <= c->mask; k++) {
        fbpe_cache_slot e = c->slots[k];
        if (!e.key_len) continue;
        size_t i = (size_t)e.hash & (cap - 1);
        while (slots[i].key_len) i = (i + 1) & (cap - 1);
        slots[i] = e;
    }
    free(c->slots);
    c->slots = slots;
    c->mask = cap - 1;
    return FBPE_OK;
}

static fbpe_status cache_grow(fbpe_cache *c) {
    return cache_resize(c, c->slots ? 2 * (c->mask + 1) : 1024);
}

static fbpe_status reserve_bytes(uint8_t **p, size_t *cap, size_t need) {
    if (need <= *cap) return FBPE_OK;
    size_t grown_cap = fbpe_grow_to(*cap, 4096, need, 1);
    if (!grown_cap) return FBPE_ENOMEM;
    uint8_t *grown = (uint8_t *)realloc(*p, grown_cap);
    if (!grown) return FBPE_ENOMEM;
    *p = grown;
    *cap = grown_cap;
    return FBPE_OK;
}

/* Room in vals for n ids in all. */
static fbpe_status reserve_vals(fbpe_cache *c, size_t n) {
    size_t bytes = c->vals_cap * sizeof(uint32_t);
    fbpe_status rc = reserve_bytes((uint8_t **)&c->vals, &bytes, fbpe_array_bytes(n, sizeof(uint32_t)));
    c->vals_cap = bytes / sizeof(uint32_t);
    return rc;
}

static void cache_put_shared(fbpe_cache *c, const uint8_t *s, size_t n, size_t readable, uint64_t h,
                             const uint32_t *ids, size_t m);

/* Remember piece s[0..n) -> ids[0..m). Out of memory only means it is not remembered. */
static void cache_put(fbpe_cache *c, const uint8_t *s, size_t n, size_t readable, uint64_t h,
                      const uint32_t *ids, size_t m) {
    /* a slot's lengths are 16-bit: such a piece is not kept */
    if (m > UINT16_MAX || n > FBPE_CACHE_MAX_PIECE) return;
    if (c->shared) {
        cache_put_shared(c, s, n, readable, h, ids, m);
        return;
    }
    size_t rest = n > FBPE_INLINE_KEY ? n - FBPE_INLINE_KEY : 0; /* the bytes after the key's words */
    /* full, it starts again (which also keeps its 32-bit offsets in range) */
    if (c->size >= (c->limit ? c->limit : CACHE_MAX_ENTRIES) ||
        c->keys_len + rest + (c->vals_len + m) * sizeof(uint32_t) > CACHE_MAX_BYTES)
        cache_clear(c);
    if ((!c->slots || 2 * (c->size + 1) > c->mask + 1) && cache_grow(c)) return;
    if (reserve_bytes(&c->keys, &c->keys_cap, c->keys_len + rest) || reserve_vals(c, c->vals_len + m))
        return;
    size_t i = (size_t)h & c->mask;
    while (c->slots[i].key_len) i = (i + 1) & c->mask;
    fbpe_cache_slot *e = &c->slots[i];
    uint64_t w[2]; /* its key without the hash, which is h */
    fbpe_key_words(s, n, readable, w);
    e->hash = (uint32_t)h;
    e->w[0] = w[0];
    e->w[1] = w[1];
    e->key_off = (uint32_t)c->keys_len;
    e->key_len = (uint16_t)n;
    e->ids_off = (uint32_t)c->vals_len;
    e->ids_len = (uint16_t)m;
    if (rest) memcpy(c->keys + c->keys_len, s + FBPE_INLINE_KEY, rest);
    memcpy(c->vals + c->vals_len, ids, m * sizeof(uint32_t));
    c->keys_len += rest;
    c->vals_len += m;
    c->size++;
}

/* ---- one cache for the threads of a call ----
 * Each thread kept a cache of its own, and learnt only the pieces of the stretches it took:
 * o200k on 2 MB of Russian never seen, after a quarter of ru.txt, took 19.7 ms of CPU on one
 * thread and 31.9 ms on two (13.1 ms and 12.9 ms for the same text encoded again, every piece
 * then cached). The threads of one call now read and add to one cache. Nothing in it may
 * move while they do, so fbpe_cache_share makes room for the call's pieces before they start,
 * and a piece is then added in place: its bytes and ids where an atomic add on keys_len and
 * vals_len puts them, its slot claimed by a compare-and-swap of key_len from 0 to
 * FBPE_CACHE_BUSY, filled, and published by writing key_len last (a release store; the
 * lookup reads it first, acquiring). A piece two threads merge at once may be added twice:
 * the lookup takes the first. When the room is spent the cache takes no more pieces in that
 * call (they are merged again where they recur), and the next call makes more. */

#if defined(_MSC_VER)
#define ADD_RELAXED(p, v) ((size_t)_InterlockedExchangeAdd64((volatile __int64 *)(p), (__int64)(v)))
#define LOAD_RELAXED(p) (*(volatile size_t *)(p))
#else
#define ADD_RELAXED(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#endif

static int claim_slot(fbpe_cache_slot *e) {
#if defined(_MSC_VER)
    return _InterlockedCompareExchange16((volatile short *)&e->key_len, (short)FBPE_CACHE_BUSY, 0) == 0;
#else
    uint16_t empty = 0;
    return __atomic_load_n(&e->key_len, __ATOMIC_RELAXED) == 0 &&
           __atomic_compare_exchange_n(&e->key_len, &empty, (uint16_t)FBPE_CACHE_BUSY, 0,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
#endif
}

static void publish_slot(fbpe_cache_slot *e, size_t n) {
#if defined(_MSC_VER)
    _InterlockedExchange16((volatile short *)&e->key_len, (short)n);
#else
    __atomic_store_n(&e->key_len, (uint16_t)n, __ATOMIC_RELEASE);
#endif
}

static void cache_put_shared(fbpe_cache *c, const uint8_t *s, size_t n, size_t readable, uint64_t h,
                             const uint32_t *ids, size_t m) {
    size_t rest = n > FBPE_INLINE_KEY ? n - FBPE_INLINE_KEY : 0;
    /* at most half full, give or take a piece a thread */
    size_t key_off = 0, ids_off = 0;
    if (LOAD_RELAXED(&c->size) >= (c->mask + 1) / 2 ||
        (rest && ((key_off = ADD_RELAXED(&c->keys_len, rest)) > c->keys_room || rest > c->keys_room - key_off)) ||
        (ids_off = ADD_RELAXED(&c->vals_len, m)) > c->vals_room || m > c->vals_room - ids_off) {
        ADD_RELAXED(&c->refused, 1);
        return;
    }
    if (rest) memcpy(c->keys + key_off, s + FBPE_INLINE_KEY, rest);
    memcpy(c->vals + ids_off, ids, m * sizeof(uint32_t));
    size_t i = (size_t)h & c->mask;
    while (!claim_slot(&c->slots[i])) i = (i + 1) & c->mask;
    fbpe_cache_slot *e = &c->slots[i];
    uint64_t w[2];
    fbpe_key_words(s, n, readable, w);
    e->hash = (uint32_t)h;
    e->w[0] = w[0];
    e->w[1] = w[1];
    e->key_off = (uint32_t)key_off;
    e->ids_off = (uint32_t)ids_off;
    e->ids_len = (uint16_t)m;
    publish_slot(e, n);
    ADD_RELAXED(&c->size, 1);
}

/* The shared cache, now held by the caller (made at the first), or NULL where another call
 * holds it or memory is short. */
static fbpe_cache *hold_shared(fbpe_bpe *b) {
    if (!try_hold(&b->shared_held)) return NULL;
    if (!b->shared) b->shared = (fbpe_cache *)calloc(1, sizeof(fbpe_cache));
    if (!b->shared) spin_unlock(&b->shared_held);
    return b->shared;
}

fbpe_cache *fbpe_cache_take(fbpe_bpe *b) {
    fbpe_cache *c = hold_shared(b);
    if (c) return c;
    spin_lock(&b->pool_lock);
    if (b->pool_len) c = b->pool[--b->pool_len];
    spin_unlock(&b->pool_lock);
    if (!c) c = (fbpe_cache *)calloc(1, sizeof(fbpe_cache));
    return c;
}

fbpe_cache *fbpe_cache_share(fbpe_bpe *b, size_t bytes) {
    fbpe_cache *c = hold_shared(b);
    if (!c) return NULL;
    /* Full, or nearly, it starts again, as cache_put would at its next piece. */
    if (c->size >= CACHE_MAX_ENTRIES ||
        c->keys_len + c->vals_len * sizeof(uint32_t) > CACHE_MAX_BYTES - CACHE_MAX_BYTES / 16)
        cache_clear(c);
    /* Slots at most half full with twice the new pieces a byte that the last shared call
     * added or found no room for (at first, one in 128 bytes). Not for every piece the text
     * could hold (one in 4 bytes), which is 16 MB of slots for 2 MB of text, where o200k's
     * 2 MB of English after a quarter of en.txt added 4,371 pieces (the quarter 2,356): that
     * table, on huge pages, made such a call 0.93 times as fast [0.78-1.12] (medians of 7
     * pairs of processes), and the first call pays for its pages. */
    double rate = c->shared_bytes ? 2.0 * (double)c->shared_added / (double)c->shared_bytes : 1.0 / 128;
    double expect = (double)bytes * rate;
    size_t pieces = expect < CACHE_MAX_ENTRIES ? c->size + (size_t)expect + 256 : CACHE_MAX_ENTRIES;
    size_t cap = c->slots ? c->mask + 1 : 1024;
    if (pieces > CACHE_MAX_ENTRIES) pieces = CACHE_MAX_ENTRIES;
    while (cap < 2 * pieces) cap *= 2;
    /* Keys and ids for as many pieces, 16 bytes and 8 ids each at most (a key's first 16
     * bytes are in its slot; o200k's pieces of 2 MB of Russian: 3.8 and 2.8 a piece); room
     * for every byte of the text instead cost 5 ms of a 9 ms call on 2 MB of English, as
     * realloc copied what was there into pages new to the process. */
    size_t more = cap / 2 - c->size, room = CACHE_MAX_BYTES - c->keys_len - c->vals_len * sizeof(uint32_t);
    size_t keys = 16 * more < room / 4 ? 16 * more : room / 4;
    size_t vals = 8 * more < room / 4 * 3 / sizeof(uint32_t) ? 8 * more : room / 4 * 3 / sizeof(uint32_t);
    fbpe_status rc = c->slots && cap == c->mask + 1 ? FBPE_OK : cache_resize(c, cap);
    if (rc == FBPE_OK) rc = reserve_bytes(&c->keys, &c->keys_cap, c->keys_len + keys);
    if (rc == FBPE_OK) rc = reserve_vals(c, c->vals_len + vals);
    if (rc != FBPE_OK) {
        fbpe_cache_give(b, c);
        return NULL;
    }
    c->keys_room = c->keys_len + keys;
    c->vals_room = c->vals_len + vals;
    c->shared_bytes = bytes ? bytes : 1;
    c->shared_from = c->size;
    c->refused = 0;
    c->shared = 1;
    return c;
}

void fbpe_cache_unshare(fbpe_bpe *b, fbpe_cache *c) {
    if (!c) return;
    c->shared = 0; /* before fbpe_cache_give below, which then lets it go */
    /* the adds that found no room moved these past what was written */
    if (c->keys_len > c->keys_room) c->keys_len = c->keys_room;
    if (c->vals_len > c->vals_room) c->vals_len = c->vals_room;
    c->shared_added = c->size - c->shared_from + c->refused;
    fbpe_cache_give(b, c);
}

void fbpe_cache_counts(fbpe_bpe *b, size_t *shared_pieces, size_t *pooled) {
    fbpe_cache *c = hold_shared(b);
    *shared_pieces = c ? c->size : 0;
    fbpe_cache_give(b, c);
    spin_lock(&b->pool_lock);
    *pooled = b->pool_len;
    spin_unlock(&b->pool_lock);
}

fbpe_cache *fbpe_cache_take_in(fbpe_bpe *b, fbpe_cache *shared) {
    return shared ? shared : fbpe_cache_take(b);
}

void fbpe_cache_give(fbpe_bpe *b, fbpe_cache *c) {
    if (!c) return;
    if (c == b->shared) {
        if (!c->shared) spin_unlock(&b->shared_held); /* while shared, fbpe_cache_unshare does */
        return;
    }
    spin_lock(&b->pool_lock);
    if (b->pool_len < FBPE_POOL_SIZE) {
        b->pool[b->pool_len++] = c;
        c = NULL;
    }
    spin_unlock(&b->pool_lock);
    cache_free(c);
}

/* A cache filled by the caller: for the schemes whose text form is written per raw piece
 * (the Functionalizer), raw piece -> ids of its whole text form. */
fbpe_cache *fbpe_cache_new(size_t limit) {
    fbpe_cache *c = (fbpe_cache *)calloc(1, sizeof(fbpe_cache));
    if (c) c->limit = limit;
    return c;
}

void fbpe_cache_delete(fbpe_cache *c) { cache_free(c); }

void fbpe_cache_store(fbpe_cache *c, const uint8_t *s, size_t n, const uint32_t *ids, size_t m) {
    if (n <= FBPE_CACHE_MAX_PIECE) cache_put(c, s, n, n, fbpe_hash_bytes(s, n), ids, m);
}

/* ---- cutting a piece where no merge joins ---------------------------------------------
 *
 * A merge that joins two symbols across byte boundary i of a piece makes a token whose two
 * parts meet exactly there, so the bytes around i are the bytes around that token's
 * meeting point: its last one or two bytes before it and first one or two after (fewer
 * only where the token itself begins or ends). join_bits holds one bit per merged token at
 * the hash of those bytes and their counts. When none of the four windows around i
 * (1 or 2 bytes before, 1 or 2 after) has its bit set, no merge can ever join across i,
 * and the piece merges as its two sides would each alone: the lowest-ranked, leftmost pair
 * of the whole is the lowest of the two sides' own. A false bit only leaves a piece whole.
 *
 * Why: a Chinese or Japanese piece under the gpt4 pattern is a whole clause (a run of
 * letters), 20-60 bytes that seldom repeat, so the piece cache misses and every piece was
 * merged from bytes by the quadratic scan; a vocabulary with few CJK merges can join only
 * a few neighbouring characters, and cut at the rest the parts are single characters and
 * short words: whole tokens, or found in the cache. Measured with callgrind on 300,000
 * characters of zh-CN (695 KB; vocabulary of 32,768 trained on 22 languages): 150 M
 * instructions without the cut, two thirds of them in the scan, and 72 M with it
 * (docs/encoding.md has the other languages). */

/* Shorter pieces are not cut: most are cached, and checking every boundary of the many
 * short uncached pieces of base64 cost more than it saved (callgrind, 400 KB: +11% with
 * 8 bytes here; zh-CN, 300 KB: -53% with 8 and -52% with 16). */
#define CUT_MIN_PIECE 16
#define JOIN_BITS_PER_MERGE 32 /* about 3% of bits set: few false joins */

static inline uint64_t join_tag(uint32_t w, size_t before, size_t after) {
    return (uint64_t)w | (uint64_t)(before << 4 | after) << 32;
}

/* The bytes at[-before .. after) (at most four), first byte lowest, tagged with the counts. */
static inline uint64_t join_key(const uint8_t *at, size_t before, size_t after) {
    uint32_t w = 0;
    for (size_t k = 0; k < before + after; k++) w |= (uint32_t)at[k - before] << (8 * k);
    return join_tag(w, before, after);
}

/* Whether join_lone has the bit of bytes x, y. */
static inline int lone_bit(const uint64_t *lone, uint8_t x, uint8_t y) {
    unsigned k = (unsigned)x << 8 | y;
    return (int)(lone[k >> 6] >> (k & 63)) & 1;
}

/* Can a merge join across s[i-1] | s[i] (0 < i < n)? Away from the ends of the piece the
 * four windows are one 32-bit load (join_key's order is the load's on a little-endian
 * machine), cut down by shifts and masks. Written as four bytes shifted together, gcc kept
 * the byte the caller had read and loaded the other three: nine instructions a boundary,
 * 2-3% of the call on CJK (callgrind, 500 KB fresh, one thread, cl100k zh-CN 41.72 M ->
 * 40.93 M, ja 39.66 M -> 38.59 M; o200k zh-CN 34.01 M -> 33.16 M, ja 34.98 M -> 33.80 M).
 * With `lone` (join_lone of the same bits), the windows with one byte on a side are probed
 * only where some merge with a part of one byte meets between these two bytes: between two
 * CJK characters, where a part is nearly always a whole character, that is one probe rather
 * than four (callgrind, o200k zh-CN: "cutting a piece"). */
static inline int may_join_in(const uint64_t *bits, unsigned shift, const uint64_t *lone,
                              const uint8_t *s, size_t i, size_t n) {
    if (i >= 2 && n - i >= 2) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint32_t w;
        memcpy(&w, s + i - 2, 4);
#else
        uint32_t w = (uint32_t)s[i - 2] | (uint32_t)s[i - 1] << 8 | (uint32_t)s[i] << 16 |
                     (uint32_t)s[i + 1] << 24;
#endif
        if (key_bit(bits, shift, join_tag(w, 2, 2))) return 1;
        if (lone && !lone_bit(lone, s[i - 1], s[i])) return 0;
        return key_bit(bits, shift, join_tag(w >> 8, 1, 2)) ||
               key_bit(bits, shift, join_tag(w & 0xFFFFFF, 2, 1)) ||
               key_bit(bits, shift, join_tag(w >> 8 & 0xFFFF, 1, 1));
    }
    size_t most_after = n - i >= 2 ? 2 : 1;
    for (size_t before = i >= 2 ? 2 : 1; before; before--)
        for (size_t after = most_after; after; after--)
            if (key_bit(bits, shift, join_key(s + i, before, after))) return 1;
    return 0;
}

static inline int may_join(const fbpe_bpe *b, const uint8_t *s, size_t i, size_t n) {
    return may_join_in(b->join_bits, b->join_shift, b->join_lone, s, i, n);
}

/* The bit of the place where `left` ends inside `token` (which begins with it). */
static void set_join_bit_in(const fbpe_bpe *b, uint64_t *bits, unsigned shift, uint32_t token,
                            uint32_t left) {
    size_t c, len;
    const uint8_t *t = token_bytes(b, token, &len);
    token_bytes(b, left, &c);
    set_key_bit(bits, shift, join_key(t + c, c >= 2 ? 2 : 1, len - c >= 2 ? 2 : 1));
}

static void set_join_bit(fbpe_bpe *b, uint32_t token, uint32_t left) {
    set_join_bit_in(b, b->join_bits, b->join_shift, token, left);
    size_t c, len;
    const uint8_t *t = token_bytes(b, token, &len);
    token_bytes(b, left, &c);
    if (c == 1 || len - c == 1) {
        unsigned k = (unsigned)t[c - 1] << 8 | t[c];
        b->join_lone[k >> 6] |= (uint64_t)1 << (k & 63);
    }
}

/* The bit of fbpe_words.meets of the two bytes where `left` ends inside `token`. */
static void set_meet(const fbpe_bpe *b, fbpe_words *w, uint32_t token, uint32_t left) {
    size_t c, len;
    const uint8_t *bytes = token_bytes(b, token, &len);
    token_bytes(b, left, &c);
    w->meets[bytes[c - 1]] |= (uint64_t)1 << (bytes[c] & 63);
}

static fbpe_status build_join_bits(fbpe_bpe *b) {
    size_t num_merges = b->num_tokens - b->num_fixed;
    size_t bits = fbpe_pow2_at_least(JOIN_BITS_PER_MERGE * num_merges + 64);
    b->join_bits = (uint64_t *)table_alloc(bits / 8);
    if (!b->join_bits) return FBPE_ENOMEM;
    b->join_shift = fbpe_slot_shift(bits);
    for (size_t k = 0; k < num_merges; k++)
        set_join_bit(b, b->num_fixed + (uint32_t)k, merge_left(b, k));
    /* Every merge as one first stage (fbpe_encode_table_piece), as fbpe_bpe_set_stages
     * allows stages: not with atoms (nor joins, fbpe_bpe_add_joins). */
    memset(&b->one_stage, 0, sizeof b->one_stage);
    if (b->atom_of) return FBPE_OK;
    b->one_stage.limit = b->num_tokens;
    b->one_stage.join_bits = b->join_bits;
    b->one_stage.join_shift = b->join_shift;
    for (size_t k = 0; k < num_merges; k++)
        set_meet(b, &b->one_stage, b->num_fixed + (uint32_t)k, merge_left(b, k));
    return FBPE_OK;
}

/* ---- a piece in two stages ------------------------------------------------------------
 *
 * A vocabulary grown in two stages (SuperBPE's superwords, any continued training) has every
 * merge of its second stage after every merge of its first, and no first-stage merge has a
 * second-stage token as a part. So in any piece the first-stage merges all happen before the
 * first second-stage one, and none can happen after it: a piece's ids are the second stage's
 * merges applied to the piece's first-stage ids. (That holds for any limit, since a merge's
 * parts are made before it; the right limit is the one that makes the first stage cheap.)
 *
 * The first-stage ids of a long piece are found word by word. The piece is cut into
 * segments before each space that follows a non-space, and around line breaks: where the
 * first stage's own pattern cut the text it learned from, so each segment is a word the
 * first stage knows whole or has seen (a first-stage token, or found in the piece cache
 * under a key of its own). The segments' ids, put side by side, are the first-stage ids of
 * the whole piece exactly when each two tokens that meet at a cut are compatible below the
 * limit (compatible_before: merged alone with the first stage's merges, their bytes come out
 * as the same two tokens); the backtracking encoder rests on the same fact. Where a pair is
 * not, the piece is merged from its bytes as before, so the ids never depend on the cuts.
 * The second stage then merges far fewer symbols: ids, not bytes.
 *
 * Why: SuperBPE's second-stage pattern makes pieces of several words, mostly never seen
 * whole, so the piece cache missed and each was merged from its bytes (the short scan
 * alone was a quarter of encoding fresh English).
 *
 * Measured with callgrind, instructions inside fbpe_encode_text for two texts of 300,000
 * characters of English prose, the first one to fill the cache and then one not seen
 * (a superword tokenizer of 8,192 ids, t = 6,000, trained on 2,000,000 other characters):
 * 284.3 M in one stage; 232.3 M in two with cuts around every line break (a quarter of the
 * pieces failed the check: the first stage's tokens end in ".\n\n"); 182.8 M with the cuts
 * below; 168.4 M without the cut where no merge joins (encode_part); 157.6 M with the heap
 * for the second stage. The text not seen alone (benchmarks/callgrind_superwords.py):
 * 145.1 M before, 77.1 M in two stages, 74.1 M finding the cuts eight bytes at a time
 * (next_segment), of which about 42 M is the compiled pattern engine.
 *
 * Two checks by bits, as join_bits for "cutting a piece": where the words of a piece meet,
 * the first stage's own join bits (stage_one.join_bits) show that no first-stage merge can
 * join there at most cuts (a space after a word), and compatible_before is not run; and
 * the second stage runs on the groups of first-stage ids between the neighbours that no
 * second-stage merge joins (stage_join_bits: one bit per second-stage token at the pair of
 * first-stage ids where its parts meet), mostly one to three ids, rather than by the heap
 * over the whole piece, whose every pair was a probe of the merge table. On the text not
 * seen alone, with the engine at 8.6 M: 40.7 M before, 37.2 M with the groups, 31.7 M with
 * the first stage's bits too, 28.4 M with the bytes at the cut tested first
 * (stage_one.meets); with the engine's one-character arms (7.7 M) 27.6 M, and 26.7 M with a
 * segment not seen before taken as its word and its punctuation (stage_one_split). With the
 * words that are first-stage tokens read 16 bytes at a time in a loop of their own
 * (merge_words), the groups of one and three ids moved and merged directly
 * (merge_stage_two) and the punctuation found in 16 lanes: 23.9 M, where the same compiler
 * counted 27.4 M for the build before them. */

/* Pieces shorter than this are merged from their bytes: a word or two, a short scan (8 and
 * 32 bytes cost the same within 0.2%). */
#ifndef STAGED_MIN_PIECE
#define STAGED_MIN_PIECE 16
#endif
/* The second stage merges a group of more than SHORT_PIECE ids by the heap of (rank,
 * position), not by the sweep: few ranks repeat among ids, so the sweep's buckets hold one or two positions
 * each and cost an allocation apiece (the measurement above: 168.4 M instructions with the
 * sweep, 157.6 M with the heap; the scan up to 128 ids, 167.2 M, and up to 1,024, 200.0 M). */
/* The first stage's ids of a segment are cached under the hash of its bytes with these
 * bits flipped: never the key of a whole piece (whose ids are the second stage's), which
 * has the same bytes but the hash unflipped. */
#define SEGMENT_KEY 0x9E3779B97F4A7C15ull
/* stage_join_bits: about 3% of bits set, as join_bits. */
#define STAGE_JOIN_BITS_PER_MERGE 32

/* A segment begins at s[i] (0 < i): at a space after a non-space; at a line break after a
 * letter, a digit or a non-ASCII byte (after punctuation it stays: the first stage's pattern
 * keeps ".\n\n" together, and learned it as a token); after the last of a run of line
 * breaks. */
static inline int starts_segment(const uint8_t *s, size_t i) {
    uint8_t c = s[i], p = s[i - 1];
    if (c == ' ') return p != ' ';
    if (c == '\n')
        return p != '\n' && (p >= 0x80 || (unsigned)((p | 0x20) - 'a') < 26u || (unsigned)(p - '0') < 10u);
    return p == '\n';
}

/* The bytes of w equal to c8's (each byte of c8 the same), as 0x80 in each such byte: exact,
 * with no borrow between bytes. */
static inline uint64_t bytes_equal(uint64_t w, uint64_t c8) {
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7Full;
    uint64_t x = w ^ c8;
    return ~(((x & low7) + low7) | x) & ~low7;
}

/* Where the next segment begins from s[i] on (1 <= i <= n), or n. Eight bytes at a time, on
 * a little-endian machine: only the spaces, the line breaks and the bytes after a line break
 * are looked at one by one. */
static inline size_t next_segment(const uint8_t *s, size_t i, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t spaces = 0x2020202020202020ull, breaks = 0x0A0A0A0A0A0A0A0Aull;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = fbpe_load64(s + i);
        uint64_t at = bytes_equal(w, spaces) | bytes_equal(w, breaks) |
                      bytes_equal(fbpe_load64(s + i - 1), breaks);
        for (; at; at &= at - 1) {
            size_t j = i + (size_t)__builtin_ctzll(at) / 8;
            if (starts_segment(s, j)) return j;
        }
    }
#endif
    for (; i < n; i++)
        if (starts_segment(s, i)) return i;
    return n;
}

#ifdef FBPE_WORDS_SSE2
/* Where the segment that begins at s[0] ends, from c, the 16 bytes at s: the first j in
 * 1..15 where a segment begins (starts_segment), or 16 where none does. Exact in each lane:
 * the byte before lane j is lane j - 1 of the same compare, shifted, so nothing before s is
 * read. Only a line break after a byte other than a line break is looked at one by one, for
 * the byte before it (rare in prose). */
static inline size_t segment_end16(__m128i c, const uint8_t *s) {
    __m128i sp = _mm_cmpeq_epi8(c, _mm_set1_epi8(' ')), nl = _mm_cmpeq_epi8(c, _mm_set1_epi8('\n'));
    __m128i after_nl = _mm_slli_si128(nl, 1);
    unsigned at = (unsigned)_mm_movemask_epi8(
        _mm_or_si128(_mm_andnot_si128(_mm_slli_si128(sp, 1), sp), _mm_andnot_si128(nl, after_nl)));
    unsigned breaks = (unsigned)_mm_movemask_epi8(_mm_andnot_si128(after_nl, nl)) & 0xFFFEu;
    for (; breaks; breaks &= breaks - 1) {
        unsigned j = (unsigned)__builtin_ctz(breaks);
        if (starts_segment(s, j)) {
            at |= 1u << j;
            break;
        }
    }
    return (size_t)__builtin_ctz((at & 0xFFFEu) | 0x10000u);
}
#endif

/* Can a second-stage merge join first-stage ids l and r, side by side? */
static inline int stage_may_join(const fbpe_bpe *b, uint32_t l, uint32_t r) {
    return key_bit(b->stage_join_bits, b->stage_join_shift, (uint64_t)l << 32 | r);
}

/* The second stage on a group of three first-stage ids: the short scan's result, with two
 * or three probes and no arrays (equal ranks are the same pair, which merges left first). */
static inline size_t merge_three(const fbpe_bpe *b, uint32_t *ids) {
    uint32_t r0 = rank_of(b, ids[0], ids[1]), r1 = rank_of(b, ids[1], ids[2]);
    if (r0 == FBPE_NO_RANK && r1 == FBPE_NO_RANK) return 3;
    if (r0 <= r1) {
        ids[0] = r0;
        ids[1] = ids[2];
    } else {
        ids[1] = r1;
    }
    uint32_t r = rank_of(b, ids[0], ids[1]);
    if (r == FBPE_NO_RANK) return 2;
    ids[0] = r;
    return 1;
}

/* The second stage on first-stage ids[0..n): merged as the groups between the neighbours no
 * second-stage merge joins (stage_may_join), each alone, the results moved down in place;
 * their number in *m. A group is mostly one id (34,818 of 46,733 on the text measured in
 * "a piece in two stages"), moved by one store; two ids are one probe and three at most
 * three (merge_three), the rest the short scan or the heap. Before, each group was tested
 * for its size and moved by a loop, and three ids went through the short scan, whose moves
 * the compiler makes calls of memmove: 25.72 M -> 24.67 M instructions in fbpe_encode_text. */
static fbpe_status merge_stage_two(const fbpe_bpe *b, uint32_t *ids, size_t n, size_t *m) {
    size_t out = 0, i = 0;
    while (i < n) {
        size_t start = i++;
        while (i < n && stage_may_join(b, ids[i - 1], ids[i])) i++;
        size_t k = i - start;
        if (k == 1) {
            ids[out++] = ids[start];
            continue;
        }
        if (k == 2) {
            uint32_t r = rank_of(b, ids[start], ids[start + 1]);
            if (r != FBPE_NO_RANK) {
                ids[out++] = r;
                continue;
            }
        } else if (k == 3) {
            k = merge_three(b, ids + start);
        } else if (k > SHORT_PIECE) {
            fbpe_status rc = merge_heap(b, ids + start, k, &k);
            if (rc) return rc;
        } else {
            k = merge_short(b, ids + start, k);
        }
        for (size_t j = 0; j < k; j++) ids[out + j] = ids[start + j];
        out += k;
    }
    *m = out;
    return FBPE_OK;
}

static fbpe_status stage_one_split(const fbpe_bpe *b, const fbpe_words *w, fbpe_cache *cache,
                                   const uint8_t *s, size_t n, size_t readable, uint32_t *ids,
                                   size_t *m);
static STAGE_ONE_REST fbpe_status stage_one_not_token(const fbpe_bpe *b, const fbpe_words *w, fbpe_cache *cache,
                                       const uint8_t *s, size_t n, size_t readable, uint32_t *ids,
                                       size_t *m, const fbpe_key *key);

/* The first-stage ids of segment s[0..n) (n >= 1, readable as in encode_part) into ids (room
 * for n), their number in *m. FBPE_MORE for a segment longer than the short scan takes that
 * is not cached. */
static ALWAYS_INLINE fbpe_status stage_one_segment(const fbpe_bpe *b, const fbpe_words *w,
                                                   fbpe_cache *cache, const uint8_t *s, size_t n,
                                                   size_t readable, uint32_t *ids, size_t *m) {
    uint32_t limit = w->limit;
    if (n == 1) {
        ids[0] = s[0];
        *m = 1;
        return FBPE_OK;
    }
    fbpe_key key;
    fbpe_key_make(&key, s, n, readable);
    /* A token that encodes to itself with every merge and is made before the limit does so
     * with the first stage's merges alone: its bytes never meet a later one. */
    uint32_t id = whole_token(b, &key);
    if (id < limit) {
        ids[0] = id;
        *m = 1;
        return FBPE_OK;
    }
    return stage_one_not_token(b, w, cache, s, n, readable, ids, m, &key);
}

/* stage_one_segment for a segment of at least two bytes, keyed by `key`, that is not a
 * first-stage token: cached, or as its word and punctuation, or merged from its bytes. */
static STAGE_ONE_REST fbpe_status stage_one_not_token(const fbpe_bpe *b, const fbpe_words *w, fbpe_cache *cache,
                                       const uint8_t *s, size_t n, size_t readable, uint32_t *ids,
                                       size_t *m, const fbpe_key *key) {
    uint32_t limit = w->limit;
    uint64_t h = key->hash ^ SEGMENT_KEY;
    fbpe_cache *kept = n < CACHE_MIN_PIECE || n > FBPE_CACHE_MAX_PIECE ? NULL : cache;
    if (kept) {
        const uint32_t *hit = fbpe_cache_get(kept, key, h, m);
        if (hit) {
            memcpy(ids, hit, *m * sizeof(uint32_t));
            return FBPE_OK;
        }
    }
    if (stage_one_split(b, w, cache, s, n, readable, ids, m) != FBPE_OK) {
        if (n > SHORT_PIECE) return FBPE_MORE;
        /* from its characters where the first stage makes them whole (Cyrillic: half the
         * symbols, a quarter of the short scan's work) */
        size_t k = n;
        if (b->char_tokens)
            k = piece_chars_below(b, s, n, ids, limit);
        else
            for (size_t i = 0; i < n; i++) ids[i] = s[i];
        *m = merge_short_below(b, ids, k, limit);
    }
    if (kept) cache_put(kept, s, n, readable, h, ids, *m);
    return FBPE_OK;
}

/* Where ASCII punctuation first follows a letter, a digit or a non-ASCII byte in s[0..n)
 * (" reviewer's", " document.\n\n"), or 0. */
static inline size_t punctuation_after_word(const uint8_t *s, size_t n) {
    for (size_t j = 1; j < n; j++) {
        uint8_t c = s[j], p = s[j - 1];
        if (c > ' ' && c < 0x7F && (unsigned)((c | 0x20) - 'a') >= 26u && (unsigned)(c - '0') >= 10u &&
            (p >= 0x80 || (unsigned)((p | 0x20) - 'a') < 26u || (unsigned)(p - '0') < 10u))
            return j;
    }
    return 0;
}

/* A segment that is neither a first-stage token nor cached, as its word and the punctuation
 * after it, each a token or cached (" reviewer" and "'s", " older" and ","), when the two
 * tokens that meet there are compatible as at the cuts between segments; else FBPE_MORE,
 * ids written over. The first stage's pattern cuts there too, so a segment with punctuation
 * seldom repeats where its word does: 7,683 segments were merged from their bytes on the
 * text measured ("a piece in two stages"), 4.3 M instructions in the short scan. */
#ifdef FBPE_WORDS_SSE2
/* punctuation_after_word of s[0..n) (n <= 16) from the 16 bytes at s, all lanes at once:
 * the loop of bytes cost about 85 instructions a segment (0.43 M on the text measured). */
static inline size_t punctuation_after_word16(const uint8_t *s, size_t n) {
    __m128i c = _mm_loadu_si128((const __m128i *)s);
    __m128i letter = _mm_sub_epi8(_mm_or_si128(c, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
    __m128i digit = _mm_sub_epi8(c, _mm_set1_epi8('0'));
    __m128i alnum = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(letter, _mm_set1_epi8(25)), letter),
                                 _mm_cmpeq_epi8(_mm_min_epu8(digit, _mm_set1_epi8(9)), digit));
    /* signed: 0x21..0x7F are above ' ', the bytes from 0x80 below it */
    __m128i printable = _mm_andnot_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8(0x7F)),
                                         _mm_cmpgt_epi8(c, _mm_set1_epi8(' ')));
    unsigned word = (unsigned)_mm_movemask_epi8(_mm_or_si128(alnum, c));
    unsigned punct = (unsigned)_mm_movemask_epi8(_mm_andnot_si128(alnum, printable));
    unsigned at = punct & word << 1 & ((1u << n) - 1);
    return at ? (size_t)__builtin_ctz(at) : 0;
}
#endif

static NOINLINE fbpe_status stage_one_split(const fbpe_bpe *b, const fbpe_words *w,
                                            fbpe_cache *cache, const uint8_t *s, size_t n,
                                            size_t readable, uint32_t *ids, size_t *m) {
    size_t j, k1, k2;
#ifdef FBPE_WORDS_SSE2
    if (n <= FBPE_INLINE_KEY && readable >= FBPE_INLINE_KEY)
        j = punctuation_after_word16(s, n);
    else
#endif
        j = punctuation_after_word(s, n);
    if (!j) return FBPE_MORE;
    fbpe_status rc = stage_one_segment(b, w, cache, s, j, readable, ids, &k1);
    if (rc) return rc;
    rc = stage_one_segment(b, w, cache, s + j, n - j, readable - j, ids + k1, &k2);
    if (rc) return rc;
    if ((w->meets[s[j - 1]] >> (s[j] & 63) & 1) &&
        may_join_in(w->join_bits, w->join_shift, NULL, s, j, n) &&
        !compatible_before(b, ids[k1 - 1], ids[k1], w->limit))
        return FBPE_MORE;
    *m = k1 + k2;
    return FBPE_OK;
}

#ifdef FBPE_WORDS_SSE2
/* stage_one_not_token after the inline probe of vocab_slots in merge_words gave `id` (in a
 * compact table that probe meets 16 empty slots, so the segment is looked up here). */
static NOINLINE fbpe_status stage_one_after_probe(const fbpe_bpe *b, const fbpe_words *w,
                                                  fbpe_cache *cache, const uint8_t *s, size_t n,
                                                  size_t readable, uint32_t *ids, size_t *m,
                                                  const fbpe_key *key, uint32_t id) {
    if (id == FBPE_NO_RANK && b->vocab_compact) id = whole_token(b, key);
    if (id < w->limit) {
        ids[0] = id;
        *m = 1;
        return FBPE_OK;
    }
    return stage_one_not_token(b, w, cache, s, n, readable, ids, m, key);
}
#endif

#ifdef FBPE_WORDS_SSE2
/* The first-stage ids that stage_one_not_token cached for segment s[0..n) (2..16 bytes) keyed
 * by w0, w1 and h (its hash as a whole token), their number in *k; or NULL (and cache NULL).
 * Found in merge_words' loop of tokens, so that a cached segment (13,109 of the 19,613
 * segments that are no first-stage token on the text measured in "a piece in two stages")
 * stays in that loop, instead of a call through stage_one_after_probe. */
static ALWAYS_INLINE const uint32_t *segment_hit(const fbpe_cache *cache, const uint8_t *s, size_t n,
                                                 uint64_t w0, uint64_t w1, uint64_t h, size_t *k) {
    if (!cache || n < CACHE_MIN_PIECE) return NULL;
    fbpe_key key = {s, n, {w0, w1}, h};
    return fbpe_cache_get(cache, &key, h ^ SEGMENT_KEY, k);
}
#endif

/* The general case of merge_words' loop: the segment from s[0] to the next, which ends at
 * s[*end] (*end <= n), its ids into ids. */
static STAGE_ONE_REST fbpe_status stage_one_next(const fbpe_bpe *b, const fbpe_words *w,
                                           fbpe_cache *cache, const uint8_t *s, size_t n,
                                           size_t readable, uint32_t *ids, size_t *m,
                                           size_t *end) {
    *end = next_segment(s, 1, n);
    return stage_one_segment(b, w, cache, s, *end, readable, ids, m);
}

/* Whether the words that meet at s[i] (0 < i < n), ending in token t1 and beginning with t2,
 * must be merged from their bytes: where no first-stage merge can join across the cut (the
 * first stage's join bits, as in "cutting a piece"), the two tokens are compatible without
 * taking them apart, at most of the cuts, a space after a word. First the two bytes at the
 * cut alone (w->meets, exact for them: one load), which decide most cuts; the four windows'
 * hashes cost about 50 instructions a cut (2.6 M on the text measured). */
static inline int words_clash(const fbpe_bpe *b, const fbpe_words *w, const uint8_t *s, size_t i,
                              size_t n, uint32_t t1, uint32_t t2) {
    return (w->meets[s[i - 1]] >> (s[i] & 63) & 1) &&
           may_join_in(w->join_bits, w->join_shift, NULL, s, i, n) &&
           !compatible_before(b, t1, t2, w->limit);
}

/* Where the word before s[start] and the word s[start..end) clash (words_clash, ids[0..len)
 * the ids up to start): the two taken as one word, its first-stage ids in place of the first
 * one's. Returns the new number of ids, or SIZE_MAX where that does not do (the joined word
 * is too long to merge alone and not cached, or clashes with the word before it): the caller
 * then merges the piece from its bytes. The word before begins where a segment begins
 * (starts_segment), and its ids are the last ones whose bytes make it up.
 *
 * Why: a line break after a non-ASCII character is cut as after a letter, but after an
 * ellipsis or a closing quote the first stage keeps the line breaks with it ("\u2026\n\n" is a
 * token where a text has many), and the whole piece, often a few thousand bytes, went back to
 * its bytes: 18 pieces of SuperBPE's German (16,384 ids), 41% of the instructions of the
 * 300,000 characters measured in docs/superwords.md. */
static NOINLINE size_t rejoin_words(const fbpe_bpe *b, const fbpe_words *w, fbpe_cache *cache,
                                    const uint8_t *s, size_t n, size_t readable, uint32_t *ids,
                                    size_t len, size_t start, size_t end) {
    size_t before = start - 1, j = len, bytes = 0, k;
    while (before > 0 && !starts_segment(s, before)) before--;
    while (j > 0 && bytes < start - before) bytes += token_len(b, ids[--j]);
    if (bytes != start - before ||
        stage_one_segment(b, w, cache, s + before, end - before, readable - before, ids + j, &k) != FBPE_OK ||
        (j && words_clash(b, w, s, before, n, ids[j - 1], ids[j])))
        return SIZE_MAX;
    return j + k;
}

/* The ids that the merges below w->limit give piece s[0..n), found word by word, into ids
 * (room for n), their number in *m; or FBPE_MORE, ids written over, when the segments' ids
 * are not the piece's (or a segment is too long): then the caller merges the piece from its
 * bytes. */
static fbpe_status merge_words(const fbpe_bpe *b, const fbpe_words *w, fbpe_cache *cache,
                               const uint8_t *s, size_t n, size_t readable, uint32_t *ids,
                               size_t *m) {
    size_t len = 0, start = 0;
    while (start < n) {
        size_t e = 0, k;
        fbpe_status rc;
#ifdef FBPE_WORDS_SSE2
        /* Segments of at most 16 bytes, with 16 readable from their start, that are
         * first-stage tokens: found, keyed and looked up in vocab_slots from one load, in a
         * loop of their own that holds little in registers; the first other segment leaves
         * it with its key made. Most segments are such tokens (42,448 of the 55,743 looked
         * up on the text measured in "a piece in two stages"), and through next_segment,
         * fbpe_key_make and whole_token, inlined with the rest, each cost about 200
         * instructions, many of them moving registers to the stack: 27.36 M -> 25.72 M
         * instructions in fbpe_encode_text with the same lookup inline in the loop of all
         * segments, and 24.67 M -> 24.17 M with this loop of its own (the loop of all
         * segments kept its counts on the stack for the calls that take their address). */
        uint64_t w0 = 0, w1 = 0, h = 0;
        uint32_t id = FBPE_NO_RANK;
        const fbpe_vocab_slot *slots = b->vocab_slots;
        size_t mask = b->vocab_mask;
        uint32_t limit = w->limit;
        /* a compact table finds no token inline: its segments go out of line first */
        const fbpe_cache *hits = b->vocab_compact ? NULL : cache;
        while (readable - start >= FBPE_INLINE_KEY) {
            __m128i c = _mm_loadu_si128((const __m128i *)(s + start));
            size_t rest = n - start;
            e = segment_end16(c, s + start);
            if (e == FBPE_INLINE_KEY && rest > FBPE_INLINE_KEY) {
                e = 0;
                break;
            }
            if (e > rest) e = rest;
            if (e == 1) {
                id = s[start];
            } else {
                __m128i kw = _mm_and_si128(c, _mm_loadu_si128((const __m128i *)(fbpe_keep_first + 16 - e)));
                w0 = (uint64_t)_mm_cvtsi128_si64(kw);
                w1 = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(kw, kw));
                h = fbpe_key_hash_short(w0, w1, e);
                id = fbpe_slot_find_short(slots, mask, w0, w1, e, h);
                if (id >= limit) {
                    size_t k;
                    const uint32_t *ids_of = segment_hit(hits, s + start, e, w0, w1, h, &k);
                    if (!ids_of) break;
                    if (start && words_clash(b, w, s, start, n, ids[len - 1], ids_of[0])) {
                        len = rejoin_words(b, w, cache, s, n, readable, ids, len, start, start + e);
                        if (len == SIZE_MAX) return FBPE_MORE;
                    } else {
                        for (size_t j = 0; j < k; j++) ids[len + j] = ids_of[j];
                        len += k;
                    }
                    start += e;
                    e = 0;
                    if (start == n) {
                        *m = len;
                        return FBPE_OK;
                    }
                    continue;
                }
            }
            if (start && words_clash(b, w, s, start, n, ids[len - 1], id)) {
                len = rejoin_words(b, w, cache, s, n, readable, ids, len, start, start + e);
                if (len == SIZE_MAX) return FBPE_MORE;
            } else {
                ids[len++] = id;
            }
            start += e;
            e = 0;
            if (start == n) {
                *m = len;
                return FBPE_OK;
            }
        }
        if (e) { /* left the loop at a segment of e bytes that is not a first-stage token */
            fbpe_key key = {s + start, e, {w0, w1}, h};
            rc = stage_one_after_probe(b, w, cache, s + start, e, readable - start, ids + len,
                                       &k, &key, id);
        } else
#endif
        {
            rc = stage_one_next(b, w, cache, s + start, n - start, readable - start, ids + len,
                                &k, &e);
        }
        if (rc) return rc;
        if (len && words_clash(b, w, s, start, n, ids[len - 1], ids[len])) {
            len = rejoin_words(b, w, cache, s, n, readable, ids, len, start, start + e);
            if (len == SIZE_MAX) return FBPE_MORE;
        } else {
            len += k;
        }
        start += e;
    }
    *m = len;
    return FBPE_OK;
}

/* The ids of piece s[0..n) into ids (room for n), their number in *m, in two stages; or
 * FBPE_MORE, as merge_words. */
static fbpe_status merge_staged(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s, size_t n,
                                size_t readable, uint32_t *ids, size_t *m) {
    size_t len;
    fbpe_status rc = merge_words(b, &b->stage_one, cache, s, n, readable, ids, &len);
    return rc ? rc : merge_stage_two(b, ids, len, m);
}

/* The first-stage id that token t (any id) begins with, or ends with (last). */
static uint32_t stage_one_end(const fbpe_bpe *b, uint32_t t, int last) {
    while (t >= b->stage_limit) t = last ? merge_right(b, t - b->num_fixed) : merge_left(b, t - b->num_fixed);
    return t;
}

static fbpe_status build_stage_join_bits(fbpe_bpe *b) {
    free(b->stage_join_bits);
    free(b->stage_one.join_bits);
    b->stage_join_bits = b->stage_one.join_bits = NULL;
    if (!b->stage_limit) return FBPE_OK;
    size_t num = b->num_tokens - b->stage_limit, num_one = b->stage_limit - b->num_fixed;
    if (num > (SIZE_MAX - 64) / STAGE_JOIN_BITS_PER_MERGE ||
        num_one > (SIZE_MAX - 64) / JOIN_BITS_PER_MERGE)
        return FBPE_ENOMEM;
    size_t bits = fbpe_pow2_at_least(STAGE_JOIN_BITS_PER_MERGE * num + 64);
    size_t bits_one = fbpe_pow2_at_least(JOIN_BITS_PER_MERGE * num_one + 64);
    b->stage_join_bits = (uint64_t *)calloc(bits / 64, sizeof(uint64_t));
    b->stage_one.join_bits = (uint64_t *)calloc(bits_one / 64, sizeof(uint64_t));
    if (!b->stage_join_bits || !b->stage_one.join_bits) {
        free(b->stage_join_bits);
        free(b->stage_one.join_bits);
        b->stage_join_bits = b->stage_one.join_bits = NULL;
        return FBPE_ENOMEM;
    }
    b->stage_join_shift = fbpe_slot_shift(bits);
    b->stage_one.limit = b->stage_limit;
    b->stage_one.join_shift = fbpe_slot_shift(bits_one);
    memset(b->stage_one.meets, 0, sizeof b->stage_one.meets);
    for (uint32_t t = b->num_fixed; t < b->stage_limit; t++) {
        uint32_t left = merge_left(b, t - b->num_fixed);
        set_join_bit_in(b, b->stage_one.join_bits, b->stage_one.join_shift, t, left);
        set_meet(b, &b->stage_one, t, left);
    }
    for (uint32_t t = b->stage_limit; t < b->num_tokens; t++) {
        uint64_t key = (uint64_t)stage_one_end(b, merge_left(b, t - b->num_fixed), 1) << 32 |
                       stage_one_end(b, merge_right(b, t - b->num_fixed), 0);
        set_key_bit(b->stage_join_bits, b->stage_join_shift, key);
    }
    return FBPE_OK;
}

fbpe_status fbpe_bpe_set_stages(fbpe_bpe *b, uint32_t limit) {
    if (limit < b->num_fixed || limit > b->num_tokens || b->atom_of || b->any_order)
        return FBPE_EINVALID;
    b->stage_limit = limit == b->num_fixed || limit == b->num_tokens ? 0 : limit;
    fbpe_status rc = build_stage_join_bits(b);
    if (rc) b->stage_limit = 0;
    return rc;
}

/* ---- encoding a piece ----------------------------------------------------------------- */

static fbpe_status encode_part(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s, size_t n,
                               size_t readable, fbpe_ids *out, int may_cut);

fbpe_status fbpe_encode_piece(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s, size_t n,
                              size_t readable, fbpe_ids *out) {
    return encode_part(b, cache, s, n, readable, out, 1);
}

/* A part that is not a whole token (its key made by cut_part): a call of its own, so that
 * encode_cut keeps its registers for the common case. */
static NOINLINE fbpe_status cut_part_not_whole(const fbpe_bpe *b, fbpe_cache *cache,
                                               const uint8_t *s, size_t n, size_t readable,
                                               fbpe_ids *out, const fbpe_key *key);

/* encode_part(..., 0) for a part cut from a piece, with its common cases inline as in
 * fbpe_encode_piece_inline (encode.h): a byte, and a part of at most 16 bytes that is a
 * whole token (o200k, zh-CN: most parts are one or two characters and a token). Through
 * encode_part each part cost about 100 instructions before its merges; here about half
 * (callgrind, o200k zh-CN, fbpe_encode_text: 108.7 M -> 102.4 M instructions). */
static ALWAYS_INLINE fbpe_status cut_part(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s,
                                          size_t n, size_t readable, fbpe_ids *out) {
    if (out->len < out->cap && readable >= FBPE_INLINE_KEY) {
        if (n == 1) {
            out->ids[out->len++] = s[0];
            return FBPE_OK;
        }
        if (n - 2 <= FBPE_INLINE_KEY - 2) {
            uint64_t w[2];
            fbpe_key_words16(s, n, w);
            uint64_t h = fbpe_key_hash_short(w[0], w[1], n);
            uint32_t id = fbpe_slot_find_short(b->vocab_slots, b->vocab_mask, w[0], w[1], n, h);
            if (id != FBPE_NO_RANK) {
                out->ids[out->len++] = id;
                return FBPE_OK;
            }
            fbpe_key k = {s, n, {w[0], w[1]}, h};
            return cut_part_not_whole(b, cache, s, n, readable, out, &k);
        }
    }
    return encode_part(b, cache, s, n, readable, out, 0);
}

/* Encode s[0..n) as the parts between the boundaries no merge joins across, or return
 * FBPE_MORE, having written nothing, when there is no such boundary. */
/* The bytes of the UTF-8 character that a byte with these four high bits begins; 1 for a
 * continuation byte, so that a stray one is stepped over alone. */
static const uint8_t utf8_step[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};

/* Only the boundaries between characters are tried, stepping from one character's first
 * byte to the next: a boundary inside a character cannot be cut, and looking at each byte
 * for that was a third of the instructions of this loop on CJK (o200k zh-CN). Skipping a
 * boundary only leaves two parts as one, so a stray or cut-short sequence is safe too. */
static fbpe_status encode_cut(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s, size_t n,
                              size_t readable, fbpe_ids *out) {
    size_t start = 0;
    for (size_t i = utf8_step[s[0] >> 4]; i < n; i += utf8_step[s[i] >> 4]) {
        if ((s[i] & 0xC0) == 0x80 || may_join(b, s, i, n)) continue; /* a stray continuation */
        fbpe_status rc = cut_part(b, cache, s + start, i - start, readable - start, out);
        if (rc) return rc;
        start = i;
    }
    if (!start) return FBPE_MORE;
    return cut_part(b, cache, s + start, n - start, readable - start, out);
}

/* Room for n ids: `small`, the caller's SHORT_PIECE on the stack, or an array from malloc
 * (NULL when out of memory) that the caller frees when it is not `small`. */
static inline uint32_t *ids_room(uint32_t *small, size_t n) {
    return n <= SHORT_PIECE ? small : (uint32_t *)malloc(fbpe_array_bytes(n, sizeof(uint32_t)));
}

/* Whether the piece of `key` may hold a character taken whole: not when its key, which holds
 * all of a piece of up to 16 bytes, is ASCII. Reading an English piece for characters cost
 * o200k English 0.55% more instructions in fbpe_encode_text; this test, nothing. */
static inline int may_hold_chars(const fbpe_bpe *b, const fbpe_key *key) {
    return b->char_tokens &&
           (key->len > FBPE_INLINE_KEY || ((key->w[0] | key->w[1]) & 0x8080808080808080ull));
}

/* Merge s[0..n) (neither a token nor cached), append its ids to out and keep them in `kept`
 * (NULL: not kept) under hash h; staged: in two stages where it is long enough; chars: from
 * its characters taken whole (may_hold_chars). */
static ALWAYS_INLINE fbpe_status merge_piece(const fbpe_bpe *b, fbpe_cache *cache, fbpe_cache *kept,
                                             const uint8_t *s, size_t n, size_t readable,
                                             uint64_t h, fbpe_ids *out, int staged, int chars) {
    uint32_t small[SHORT_PIECE], *ids = ids_room(small, n);
    if (!ids) return FBPE_ENOMEM;
    size_t m;
    fbpe_status rc = FBPE_MORE;
    if (staged && n >= STAGED_MIN_PIECE) rc = merge_staged(b, cache, s, n, readable, ids, &m);
    /* Up to SHORT_PIECE bytes the backtracking encoder, where it has been built, instead of
     * the short scan ("the backtracking encoder" above: fewer instructions, more cache
     * misses); longer pieces keep the sweep and the rounds over runs. */
    if (rc == FBPE_MORE && b->trie && n <= SHORT_PIECE) rc = merge_backtracking(b, s, n, ids, &m);
    if (rc == FBPE_MORE)
        rc = fbpe_merge(b, ids, chars ? piece_chars(b, s, n, ids) : piece_symbols(b, s, n, ids),
                        0, &m);
    if (rc == FBPE_OK) {
        rc = push_ids(out, ids, m);
        if (!rc && kept) cache_put(kept, s, n, readable, h, ids, m);
    }
    if (ids != small) free(ids);
    return rc;
}

/* merge_piece for a table of two stages: a call of its own, so that the one-stage path
 * keeps its registers. */
static NOINLINE fbpe_status merge_staged_piece(const fbpe_bpe *b, fbpe_cache *cache,
                                               fbpe_cache *kept, const uint8_t *s, size_t n,
                                               size_t readable, uint64_t h, fbpe_ids *out) {
    return merge_piece(b, cache, kept, s, n, readable, h, out, 1, b->char_tokens != NULL);
}

/* Whether a piece of two-byte characters (Cyrillic, Greek, Arabic, Hebrew: its first byte
 * past a leading ASCII one is a two-byte lead) is merged whole rather than cut where no
 * merge joins: taken from its characters (piece_chars) it is a few symbols, and the cut's
 * probe at every character cost more (callgrind, o200k ru, fbpe_encode_text: 54.3 M ->
 * 50.7 M instructions). CJK pieces are still cut: whole, they cost more (zh-CN 91.0 M ->
 * 100.7 M), being longer and merging fewer characters into each token. */
#define UNCUT_MAX_PIECE 96
static inline int uncut_chars(const fbpe_bpe *b, const uint8_t *s, size_t n) {
    uint8_t c = s[0] < 0x80 ? s[1] : s[0];
    return b->char_tokens && n <= UNCUT_MAX_PIECE && c >= 0xC2 && c < 0xE0;
}

/* Encode s[0..n) (n >= 2), keyed by `key`, which is not a whole token (vocab_slots gave
 * `id`, FBPE_NO_RANK); or, `keyed` 0 (a constant) and key NULL, a piece too long to be a
 * token or cached. */
static ALWAYS_INLINE fbpe_status encode_not_whole(const fbpe_bpe *b, fbpe_cache *cache,
                                                  const uint8_t *s, size_t n, size_t readable,
                                                  fbpe_ids *out, int may_cut,
                                                  const fbpe_key *key, const int keyed) {
    uint32_t id = FBPE_NO_RANK;
    /* Only the whole piece, never a part cut from it: tiktoken looks a piece up whole. */
    if (keyed && may_cut && b->piece_slots)
        id = fbpe_slot_find(b->piece_slots, b->piece_mask, b->tok_bytes, b->tok_off, key);
    if (id != FBPE_NO_RANK) {
        if (reserve(out, 1)) return FBPE_ENOMEM;
        out->ids[out->len++] = id;
        return FBPE_OK;
    }
    uint64_t h = keyed ? key->hash : 0;
    fbpe_cache *kept = !keyed || n < CACHE_MIN_PIECE || n > FBPE_CACHE_MAX_PIECE ? NULL : cache;
    if (kept) {
        size_t m;
        const uint32_t *hit = fbpe_cache_get(kept, key, h, &m);
        if (hit) return push_ids(out, hit, m);
    }
    /* A table of two stages cuts a long piece into words itself. The cut where no merge
     * joins finds few places in its pieces, whose second stage joins words across spaces,
     * and cost more than it saved (182.8 M instructions with it, 168.4 M without: "a piece
     * in two stages" above). */
    if (b->stage_limit) return merge_staged_piece(b, cache, kept, s, n, readable, h, out);
    if (may_cut && n >= CUT_MIN_PIECE && !uncut_chars(b, s, n)) {
        fbpe_status rc = encode_cut(b, cache, s, n, readable, out);
        if (rc != FBPE_MORE) return rc;
    }
    return merge_piece(b, cache, kept, s, n, readable, h, out, 0,
                       keyed ? may_hold_chars(b, key) : b->char_tokens != NULL);
}

/* Append the token whose bytes are the key's, if it is one; FBPE_MORE where none is. */
static inline fbpe_status push_whole(const fbpe_bpe *b, const fbpe_key *key, fbpe_ids *out) {
    uint32_t id = whole_token(b, key);
    if (id == FBPE_NO_RANK) return FBPE_MORE;
    if (reserve(out, 1)) return FBPE_ENOMEM;
    out->ids[out->len++] = id;
    return FBPE_OK;
}

/* What follows the inline probe of vocab_slots (cut_part, fbpe_encode_piece_inline) where it
 * found nothing. In a compact table that probe met vocab_slots' 16 empty slots, so the piece
 * is looked up here: a test on the rare path rather than on every piece's (1.7 instructions
 * a piece, 1% of cl100k's English). */
static ALWAYS_INLINE fbpe_status after_inline_probe(const fbpe_bpe *b, fbpe_cache *cache,
                                                    const uint8_t *s, size_t n, size_t readable,
                                                    fbpe_ids *out, int may_cut, const fbpe_key *key) {
    if (b->vocab_compact) {
        fbpe_status rc = push_whole(b, key, out);
        if (rc != FBPE_MORE) return rc;
    }
    return encode_not_whole(b, cache, s, n, readable, out, may_cut, key, 1);
}

static NOINLINE fbpe_status cut_part_not_whole(const fbpe_bpe *b, fbpe_cache *cache,
                                               const uint8_t *s, size_t n, size_t readable,
                                               fbpe_ids *out, const fbpe_key *key) {
    return after_inline_probe(b, cache, s, n, readable, out, 0, key);
}

static NOINLINE fbpe_status encode_unkeyed(const fbpe_bpe *b, fbpe_cache *cache,
                                           const uint8_t *s, size_t n, size_t readable,
                                           fbpe_ids *out, int may_cut) {
    return encode_not_whole(b, cache, s, n, readable, out, may_cut, NULL, 0);
}

static fbpe_status encode_part(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s, size_t n,
                               size_t readable, fbpe_ids *out, int may_cut) {
    if (n == 0) return FBPE_OK;
    if (n == 1) { /* a byte is its own id */
        if (reserve(out, 1)) return FBPE_ENOMEM;
        out->ids[out->len++] = s[0];
        return FBPE_OK;
    }
    /* No token and no cached piece is this long: not keyed. SuperBPE's second-stage pieces
     * are paragraphs, and hashing them byte by byte was 0.50 M of the superword count (19.36
     * M; docs/superwords.md, "Encoding superword pieces"). */
    if (n > FBPE_CACHE_MAX_PIECE && n > b->longest_token)
        return encode_unkeyed(b, cache, s, n, readable, out, may_cut);
    fbpe_key key;
    fbpe_key_make(&key, s, n, readable);
    fbpe_status rc = push_whole(b, &key, out);
    return rc != FBPE_MORE ? rc : encode_not_whole(b, cache, s, n, readable, out, may_cut, &key, 1);
}

fbpe_status fbpe_encode_piece_not_whole(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s,
                                        size_t n, size_t readable, fbpe_ids *out,
                                        const fbpe_key *key) {
    return after_inline_probe(b, cache, s, n, readable, out, 1, key);
}

/* The pieces of a table of distinct pieces, when continued training replays its base's
 * merges, are SuperBPE's second-stage pieces: phrases, paragraphs, that never repeat. Cut
 * where no merge joins (encode_cut), each was about four probes of join_bits a byte, and
 * every piece went into the cache, never to be found again. Taken as its words instead (the
 * first stage of "a piece in two stages", every merge below the limit), a piece costs a
 * word-at-a-time scan for the cuts and one lookup a word, each word a token or cached;
 * where the words fail the check (5% of the pieces below), the cut where no merge joins, as
 * before. Measured with callgrind, instructions inside fbpe_encode_batch for the replay of
 * SuperBPE training (t = 24,000) on the first tenth of each file of the shared corpora nl,
 * code and parallel (9.8 MB; 64,339 distinct second-stage pieces, 9.2 MB), one thread:
 * 864.2 M cut where no merge joins, 680.5 M as words (benchmarks/callgrind_superword_training.py,
 * "replay"; 1,176.9 M and 993.2 M in all of encode_each_piece). On all of those files
 * (100 MB; 523,933 pieces, 89 MB), encode_each_piece: 8,829 M and 6,413 M; CPU time, paired
 * on a loaded machine, about 5% less (the lookups miss the caches either way). */
fbpe_status fbpe_encode_table_piece(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s,
                                    size_t n, fbpe_ids *out) {
    if (!b->one_stage.limit || b->stage_limit || n < 2) return fbpe_encode_piece(b, cache, s, n, n, out);
    fbpe_key key;
    fbpe_key_make(&key, s, n, n);
    fbpe_status rc = push_whole(b, &key, out);
    if (rc == FBPE_MORE && n >= STAGED_MIN_PIECE) {
        uint32_t small[SHORT_PIECE], *ids = ids_room(small, n);
        if (!ids) return FBPE_ENOMEM;
        size_t m;
        rc = merge_words(b, &b->one_stage, cache, s, n, n, ids, &m);
        if (rc == FBPE_OK) rc = push_ids(out, ids, m);
        if (ids != small) free(ids);
        if (rc == FBPE_MORE) rc = encode_cut(b, cache, s, n, n, out);
    }
    return rc != FBPE_MORE ? rc : merge_piece(b, cache, NULL, s, n, n, key.hash, out, 0,
                                                    may_hold_chars(b, &key));
}

/* ---- building ------------------------------------------------------------------------- */

/* The sizes and atoms alone, before anything is allocated: each count first, so that their
 * sum cannot wrap. */
static fbpe_status check_sizes(const uint32_t *atom_cps, size_t num_atoms, size_t num_merges,
                               size_t num_specials) {
    if (num_atoms > 0x1000 || num_merges > FBPE_MAX_VOCAB_SIZE ||
        num_specials > FBPE_MAX_VOCAB_SIZE ||
        256 + num_atoms + num_merges + num_specials > FBPE_MAX_VOCAB_SIZE)
        return FBPE_EINVALID;
    for (size_t k = 0; k < num_atoms; k++)
        if (atom_cps[k] < 0xE000 || atom_cps[k] > 0xEFFF) return FBPE_EINVALID;
    return FBPE_OK;
}

/* The merges, borrowed (fbpe_bpe_new); each may only name ids made before it. */
static fbpe_status take_merges(fbpe_bpe *b, const uint32_t *merges) {
    size_t num_merges = b->num_tokens - b->num_fixed;
    b->merges = merges;
    for (size_t k = 0; k < num_merges; k++)
        if (merges[2 * k] >= b->num_fixed + k || merges[2 * k + 1] >= b->num_fixed + k) return FBPE_EINVALID;
    return FBPE_OK;
}

/* The byte length of every id into b->tok_off, each checked against the limits as it is
 * added up: a merged token is as long as its two parts, so a few merges that each double a
 * token would otherwise ask for more bytes than size_t holds, and a chain of merges that
 * each add a byte would make a small table cost the square of its size. */
static fbpe_status token_offsets(fbpe_bpe *b, const size_t *special_lens, size_t *total) {
    size_t off = 0;
    for (uint32_t i = 0; i < b->num_ids; i++) {
        size_t len;
        b->tok_off[i] = (uint32_t)off;
        if (i < 256) {
            len = 1;
        } else if (i < b->num_fixed) {
            len = 3;
        } else if (i < b->num_tokens) {
            uint32_t k = i - b->num_fixed;
            /* both parts are earlier ids, each at most FBPE_MAX_TOKEN_BYTES: no overflow */
            len = (size_t)(b->tok_off[merge_left(b, k) + 1] - b->tok_off[merge_left(b, k)]) +
                  (size_t)(b->tok_off[merge_right(b, k) + 1] - b->tok_off[merge_right(b, k)]);
        } else {
            len = special_lens[i - b->num_tokens];
        }
        if (len > FBPE_MAX_TOKEN_BYTES || len > FBPE_MAX_TOTAL_TOKEN_BYTES - off)
            return FBPE_EINVALID;
        off += len;
        b->tok_off[i + 1] = (uint32_t)off; /* at most FBPE_MAX_TOTAL_TOKEN_BYTES */
    }
    *total = off;
    return FBPE_OK;
}

/* The text-form bytes of every id, back to back: lengths first (a merge's parts come before
 * it), then the bytes, each merge the bytes of its two parts. */
static fbpe_status lay_out_tokens(fbpe_bpe *b, const uint32_t *atom_cps,
                                  const uint8_t *const *specials, const size_t *special_lens) {
    size_t total;
    b->tok_off = (uint32_t *)table_alloc(((size_t)b->num_ids + 1) * sizeof(uint32_t));
    if (!b->tok_off) return FBPE_ENOMEM;
    fbpe_status rc = token_offsets(b, special_lens, &total);
    if (rc) return rc;
    b->tok_bytes = (uint8_t *)table_alloc(total ? total : 1);
    if (!b->tok_bytes) return FBPE_ENOMEM;
    b->longest_token = b->num_fixed > 256 ? 3 : 1; /* an atom is a private-use character */
    for (uint32_t i = 0; i < b->num_ids; i++) {
        uint8_t *dst = b->tok_bytes + b->tok_off[i];
        if (i < 256) {
            dst[0] = (uint8_t)i;
        } else if (i < b->num_fixed) {
            fbpe_utf8_put(atom_cps[i - 256], dst);
        } else if (i < b->num_tokens) {
            uint32_t k = i - b->num_fixed;
            size_t l1, l2;
            const uint8_t *p1 = token_bytes(b, merge_left(b, k), &l1);
            const uint8_t *p2 = token_bytes(b, merge_right(b, k), &l2);
            memcpy(dst, p1, l1);
            memcpy(dst + l1, p2, l2);
            if (l1 + l2 > b->longest_token) b->longest_token = l1 + l2;
        } else {
            memcpy(dst, specials[i - b->num_tokens], special_lens[i - b->num_tokens]);
        }
    }
    return FBPE_OK;
}

/* atom_of: from a private-use code point to its atom's id; an atom given twice is refused. */
static fbpe_status index_atoms(fbpe_bpe *b, const uint32_t *atom_cps) {
    size_t num_atoms = b->num_fixed - 256;
    if (!num_atoms) return FBPE_OK;
    b->atom_of = (uint32_t *)calloc(0x1000, sizeof(uint32_t));
    if (!b->atom_of) return FBPE_ENOMEM;
    for (size_t k = 0; k < num_atoms; k++) {
        if (b->atom_of[atom_cps[k] - 0xE000]) return FBPE_EINVALID;
        b->atom_of[atom_cps[k] - 0xE000] = (uint32_t)(256 + k);
    }
    return FBPE_OK;
}

/* File (left, right) -> id; a pair given twice is refused. */
static fbpe_status pair_insert(fbpe_bpe *b, uint32_t left, uint32_t right, uint32_t id) {
    if (b->pair_compact) { /* only merges: joins take the wide table (build_pair_table) */
        if (rank_of_compact(b, left, right) != FBPE_NO_RANK) return FBPE_EINVALID;
        fbpe_compact_insert(b->pair_compact, b->pair_cap,
                            fbpe_compact_hash_u64(((uint64_t)left << 32) | right), id - b->num_fixed);
        return FBPE_OK;
    }
    uint64_t key = ((uint64_t)left << 32) | right;
    size_t i = fbpe_slot_u64(key, b->pair_shift);
    while (b->pair_keys[i] != UINT64_MAX) {
        if (b->pair_keys[i] == key) return FBPE_EINVALID;
        i = (i + 1) & b->pair_mask;
    }
    b->pair_keys[i] = key;
    b->pair_ids[i] = id;
    return FBPE_OK;
}

/* (left, right) -> merged id for the merges and `extra` pairs more (joins, whose key is not
 * their token's merge: always the wide table), at most half full, or compact. */
static fbpe_status build_pair_table(fbpe_bpe *b, size_t extra) {
    size_t num_merges = b->num_tokens - b->num_fixed;
    size_t cap = fbpe_pow2_at_least(2 * (num_merges + extra) + 2);
    free(b->pair_keys);
    free(b->pair_ids);
    free(b->pair_compact);
    b->pair_keys = NULL;
    b->pair_ids = b->pair_compact = NULL;
    if (b->compact && !extra) {
        b->pair_cap = fbpe_compact_cap(num_merges);
        b->pair_compact = (uint32_t *)table_alloc(fbpe_array_bytes(b->pair_cap, sizeof(uint32_t)));
        if (!b->pair_compact) return FBPE_ENOMEM;
    } else {
        if (!(b->pair_keys = (uint64_t *)table_alloc(fbpe_array_bytes(cap, sizeof(uint64_t)))))
            return FBPE_ENOMEM;
        b->pair_ids = (uint32_t *)table_alloc(fbpe_array_bytes(cap, sizeof(uint32_t)));
        if (!b->pair_ids) return FBPE_ENOMEM;
        memset(b->pair_keys, 0xFF, cap * sizeof(uint64_t));
        b->pair_mask = cap - 1;
        b->pair_shift = fbpe_slot_shift(cap);
    }
    for (size_t k = 0; k < num_merges; k++) {
        fbpe_status rc = pair_insert(b, merge_left(b, k), merge_right(b, k), b->num_fixed + (uint32_t)k);
        if (rc) return rc;
    }
    return FBPE_OK;
}

static void vocab_insert(fbpe_bpe *b, uint32_t id) {
    size_t len;
    const uint8_t *t = token_bytes(b, id, &len);
    fbpe_key k;
    fbpe_key_make(&k, t, len, len);
    if (b->vocab_compact)
        fbpe_compact_insert(b->vocab_compact, b->vocab_cap, k.hash, id);
    else
        fbpe_slot_insert(b->vocab_slots, b->vocab_mask, &k, id);
    b->num_self_encoding++;
}

/* The whole tokens of a table of bytes and merges only, from the merge trees: token t made
 * by merging (a, b) encodes to itself exactly when a and b do and BPE of a's bytes then b's
 * keeps them apart until t's own merge (compatible_before, limit t). A few pair lookups per
 * token instead of a merge loop over its bytes: on 4.1 million merges of up to 8 bytes the
 * loop took 4.6 s, a third of building the encoder. Atoms are left to the loop: a merged
 * token's bytes may spell an atom's character, which its bytes would then encode as. */
static fbpe_status whole_tokens_by_trees(fbpe_bpe *b) {
    uint32_t nf = b->num_fixed;
    size_t num_merges = (size_t)(b->num_tokens - nf);
    uint8_t *whole = (uint8_t *)malloc(num_merges + 1);
    if (!whole) return FBPE_ENOMEM;
    for (size_t k = 0; k < num_merges; k++) {
        uint32_t l = merge_left(b, k), r = merge_right(b, k), t = nf + (uint32_t)k;
        whole[k] = (uint8_t)((l < nf || whole[l - nf]) && (r < nf || whole[r - nf]) &&
                             compatible_before(b, l, r, t));
        if (whole[k]) vocab_insert(b, t);
    }
    free(whole);
    return FBPE_OK;
}

/* The table of whole tokens: every atom, and every merged token that, encoded from its own
 * bytes, comes out as itself. That is true of every token a trainer makes from text, but
 * not of every merge table one can write down (or import): only those tokens may be taken
 * whole, or the shortcut would change the result. */
static fbpe_status build_whole_tokens(fbpe_bpe *b) {
    size_t cap = fbpe_pow2_at_least(2 * (size_t)(b->num_tokens - 256) + 2), longest = 1;
    if (b->compact) { /* vocab_slots: empty slots, which every inline probe passes through */
        b->vocab_cap = fbpe_compact_cap((size_t)(b->num_tokens - 256));
        b->vocab_compact = (uint32_t *)table_alloc(fbpe_array_bytes(b->vocab_cap, sizeof(uint32_t)));
        b->vocab_slots = (fbpe_vocab_slot *)calloc(16, sizeof(fbpe_vocab_slot));
        if (!b->vocab_compact || !b->vocab_slots) return FBPE_ENOMEM;
        b->vocab_mask = 15;
    } else {
        b->vocab_slots = (fbpe_vocab_slot *)table_alloc(fbpe_array_bytes(cap, sizeof(fbpe_vocab_slot)));
        if (!b->vocab_slots) return FBPE_ENOMEM;
        b->vocab_mask = cap - 1;
    }
    for (uint32_t i = 256; i < b->num_fixed; i++) vocab_insert(b, i);
    if (!b->atom_of && !b->any_order) return whole_tokens_by_trees(b);
    for (uint32_t i = b->num_fixed; i < b->num_tokens; i++) {
        size_t len = (size_t)(b->tok_off[i + 1] - b->tok_off[i]);
        if (len > longest) longest = len;
    }
    uint32_t *scratch = (uint32_t *)malloc(longest * sizeof(uint32_t));
    if (!scratch) return FBPE_ENOMEM;
    fbpe_status rc = FBPE_OK;
    for (uint32_t i = b->num_fixed; i < b->num_tokens && rc == FBPE_OK; i++) {
        size_t len, m;
        const uint8_t *t = token_bytes(b, i, &len);
        rc = fbpe_merge(b, scratch, piece_symbols(b, t, len, scratch), 0, &m);
        if (rc == FBPE_OK && m == 1 && scratch[0] == i) vocab_insert(b, i);
    }
    free(scratch);
    return rc;
}

/* An edge element of a character (encode.c, "characters taken whole"), and the id of the
 * merge that joins it to the rest. */
typedef struct {
    uint32_t id, end;
} char_edge;

/* The token the bytes s[0..n) of a character (n 2 or 3), or of a space and a character,
 * merge into alone, or FBPE_NO_RANK; its first and last edge elements in the order they are
 * joined, at most n - 1 each. */
static uint32_t char_alone(const fbpe_bpe *b, const uint8_t *s, size_t n, char_edge *first,
                           size_t *num_first, char_edge *last, size_t *num_last) {
    uint32_t ids[4];
    size_t m = n;
    for (size_t i = 0; i < n; i++) ids[i] = s[i];
    *num_first = *num_last = 0;
    while (m > 1) {
        uint32_t best = FBPE_NO_RANK;
        size_t at = 0;
        for (size_t i = 0; i + 1 < m; i++) {
            uint32_t r = rank_of(b, ids[i], ids[i + 1]);
            if (r < best) {
                best = r;
                at = i;
            }
        }
        if (best == FBPE_NO_RANK) return FBPE_NO_RANK;
        if (at == 0) first[(*num_first)++] = (char_edge){ids[0], best};
        if (at + 2 == m) last[(*num_last)++] = (char_edge){ids[m - 1], best};
        ids[at] = best;
        for (size_t i = at + 1; i + 1 < m; i++) ids[i] = ids[i + 1];
        m--;
    }
    return ids[0];
}

/* The index of id in the sorted ids[0..n) (it is there). */
static size_t find_u32(const uint32_t *ids, size_t n, uint32_t id) {
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] <= id) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* char_tokens, cross_before and cross_after ("characters taken whole"): each character of
 * two or three bytes merged alone, then one pass over the merges for the neighbours that
 * could join its edges, and a last look at the characters whose edges are parts. */
static fbpe_status build_char_tokens(fbpe_bpe *b) {
    const size_t num_cps = 0x10000, num_merges = (size_t)(b->num_tokens - b->num_fixed);
    if (b->atom_of || b->any_order) return FBPE_OK;
    /* A byte that is the left of no merge cannot begin a token: the characters of a lead
     * byte that is none are skipped a block at a time, and with no lead byte in any merge
     * (a table of ASCII) there is nothing to build. A table of two merges took 1.3 ms to
     * build without these tests (mostly the pages of its tables), 0.002 ms with them. */
    uint8_t is_left[256] = {0};
    int any_lead = 0;
    for (size_t k = 0; k < num_merges; k++) {
        uint32_t l = merge_left(b, k), r = merge_right(b, k);
        if (l < 256) is_left[l] = 1;
        any_lead |= (l >= 0xC2 && l < 0xF0) | (r >= 0xC2 && r < 0xF0);
    }
    if (!any_lead) return FBPE_OK;
    fbpe_char_token *chars = (fbpe_char_token *)calloc(num_cps, sizeof(fbpe_char_token));
    fbpe_char_token *spaced = (fbpe_char_token *)calloc(num_cps, sizeof(fbpe_char_token));
    b->char_tokens = chars;
    b->space_tokens = spaced;
    b->cross_before = (uint32_t *)malloc(256 * 256 * sizeof(uint32_t));
    b->cross_after = (uint32_t *)malloc(256 * 256 * sizeof(uint32_t));
    uint64_t *is_part = (uint64_t *)calloc((size_t)b->num_tokens / 64 + 1, sizeof(uint64_t));
    uint32_t *parts = (uint32_t *)malloc(4 * num_cps * sizeof(uint32_t));
    uint32_t *part_right = NULL, *part_left = NULL; /* the lowest merge with it on that side */
    fbpe_status rc = FBPE_ENOMEM;
    if (!chars || !spaced || !b->cross_before || !b->cross_after || !is_part || !parts)
        goto done;
    memset(b->cross_before, 0xFF, 256 * 256 * sizeof(uint32_t));
    memset(b->cross_after, 0xFF, 256 * 256 * sizeof(uint32_t));
    size_t num_parts = 0;
    for (uint32_t cp = 0x80; cp < num_cps; cp++) {
        uint8_t u[4] = {' '};
        char_edge first[3], last[3];
        size_t nf, nl, n = fbpe_utf8_put(cp, u + 1);
        if (!is_left[u[1]] && !is_left[' ']) {
            cp |= n == 2 ? 0x3F : 0xFFF; /* the last with this lead byte */
            continue;
        }
        uint32_t t = is_left[u[1]] ? char_alone(b, u + 1, n, first, &nf, last, &nl) : FBPE_NO_RANK;
        if (t != FBPE_NO_RANK) {
            chars[cp] = (fbpe_char_token){t, first[0].end, last[0].end};
            for (size_t k = 1; k < nf; k++) parts[num_parts++] = first[k].id;
            for (size_t k = 1; k < nl; k++) parts[num_parts++] = last[k].id;
        }
        /* After a space at a piece's start only the right edge meets anything. */
        t = is_left[' '] ? char_alone(b, u, n + 1, first, &nf, last, &nl) : FBPE_NO_RANK;
        if (t != FBPE_NO_RANK) {
            spaced[cp] = (fbpe_char_token){t, 0, last[0].end};
            for (size_t k = 1; k < nl; k++) parts[num_parts++] = last[k].id;
        }
    }
    if (num_parts) qsort(parts, num_parts, sizeof(uint32_t), cmp_u32);
    size_t unique = 0;
    for (size_t k = 0; k < num_parts; k++)
        if (!unique || parts[k] != parts[unique - 1]) parts[unique++] = parts[k];
    part_right = (uint32_t *)malloc((unique + 1) * sizeof(uint32_t));
    part_left = (uint32_t *)malloc((unique + 1) * sizeof(uint32_t));
    if (!part_right || !part_left) goto done;
    memset(part_right, 0xFF, (unique + 1) * sizeof(uint32_t));
    memset(part_left, 0xFF, (unique + 1) * sizeof(uint32_t));
    for (size_t k = 0; k < unique; k++) is_part[parts[k] >> 6] |= (uint64_t)1 << (parts[k] & 63);
    /* Ids rise with k: the first merge found for a slot is its lowest. */
    for (size_t k = 0; k < num_merges; k++) {
        uint32_t l = merge_left(b, k), r = merge_right(b, k), id = b->num_fixed + (uint32_t)k;
        size_t ll, lr;
        const uint8_t *pl = token_bytes(b, l, &ll), *pr = token_bytes(b, r, &lr);
        uint32_t *before = &b->cross_before[(size_t)r << 8 | pl[ll - 1]];
        uint32_t *after = &b->cross_after[(size_t)l << 8 | pr[0]];
        if (r < 256 && *before == FBPE_NO_RANK) *before = id;
        if (l < 256 && *after == FBPE_NO_RANK) *after = id;
        if (is_part[r >> 6] >> (r & 63) & 1) {
            size_t at = find_u32(parts, unique, r);
            if (part_right[at] == FBPE_NO_RANK) part_right[at] = id;
        }
        if (is_part[l >> 6] >> (l & 63) & 1) {
            size_t at = find_u32(parts, unique, l);
            if (part_left[at] == FBPE_NO_RANK) part_left[at] = id;
        }
    }
    for (uint32_t cp = 0x80; cp < num_cps && unique; cp++) {
        uint8_t u[4] = {' '};
        char_edge first[3], last[3];
        size_t nf, nl, n = fbpe_utf8_put(cp, u + 1);
        if (chars[cp].token) {
            char_alone(b, u + 1, n, first, &nf, last, &nl);
            for (size_t k = 1; k < nf; k++)
                if (part_right[find_u32(parts, unique, first[k].id)] < first[k].end)
                    chars[cp].token = 0;
            for (size_t k = 1; k < nl; k++)
                if (part_left[find_u32(parts, unique, last[k].id)] < last[k].end)
                    chars[cp].token = 0;
        }
        if (spaced[cp].token) {
            char_alone(b, u, n + 1, first, &nf, last, &nl);
            for (size_t k = 1; k < nl; k++)
                if (part_left[find_u32(parts, unique, last[k].id)] < last[k].end)
                    spaced[cp].token = 0;
        }
    }
    rc = FBPE_OK;
done:
    free(is_part);
    free(parts);
    free(part_right);
    free(part_left);
    return rc;
}

/* Forget char_tokens: joins make it wrong. */
static void drop_char_tokens(fbpe_bpe *b) {
    free(b->char_tokens);
    free(b->space_tokens);
    free(b->cross_before);
    free(b->cross_after);
    b->char_tokens = b->space_tokens = NULL;
    b->cross_before = b->cross_after = NULL;
}

fbpe_status fbpe_bpe_new(const uint32_t *atom_cps, size_t num_atoms, const uint32_t *merges,
                         size_t num_merges, const uint8_t *const *specials,
                         const size_t *special_lens, size_t num_specials, int tables,
                         fbpe_bpe **out) {
    *out = NULL;
    fbpe_status rc = check_sizes(atom_cps, num_atoms, num_merges, num_specials);
    if (rc) return rc;
    fbpe_bpe *b = (fbpe_bpe *)calloc(1, sizeof(fbpe_bpe));
    if (!b) return FBPE_ENOMEM;
    b->num_fixed = (uint32_t)(256 + num_atoms);
    b->num_tokens = b->num_fixed + (uint32_t)num_merges;
    b->num_ids = b->num_tokens + (uint32_t)num_specials;
    b->compact = tables == FBPE_TABLES_COMPACT ||
                 (tables == FBPE_TABLES_AUTO && (size_t)b->num_tokens >= FBPE_COMPACT_FROM);
    if ((rc = take_merges(b, merges)) ||
        (rc = lay_out_tokens(b, atom_cps, specials, special_lens)) ||
        (rc = index_atoms(b, atom_cps)) || (rc = build_pair_table(b, 0)) ||
        (rc = build_long_bits(b)) || (rc = build_whole_tokens(b)) || (rc = build_join_bits(b)) ||
        (rc = build_char_tokens(b))) {
        fbpe_bpe_free(b);
        return rc;
    }
    *out = b;
    return FBPE_OK;
}

fbpe_status fbpe_bpe_add_joins(fbpe_bpe *b, const uint32_t *joins, size_t num, int whole_pieces) {
    /* Distinct pairs make distinct (token, place) splits: fewer than all tokens' bytes. */
    if (num > b->tok_off[b->num_tokens]) return FBPE_EINVALID;
    for (size_t k = 0; k < num; k++) {
        uint32_t l = joins[3 * k], r = joins[3 * k + 1], t = joins[3 * k + 2];
        if (l >= b->num_tokens || r >= b->num_tokens || t < b->num_fixed || t >= b->num_tokens)
            return FBPE_EINVALID;
        size_t nl, nr, nt;
        const uint8_t *pl = token_bytes(b, l, &nl), *pr = token_bytes(b, r, &nr);
        const uint8_t *pt = token_bytes(b, t, &nt);
        if (nl + nr != nt || memcmp(pl, pt, nl) || memcmp(pr, pt + nl, nr)) return FBPE_EINVALID;
    }
    fbpe_status rc = build_pair_table(b, num);
    for (size_t k = 0; k < num && rc == FBPE_OK; k++) {
        rc = pair_insert(b, joins[3 * k], joins[3 * k + 1], joins[3 * k + 2]);
        set_join_bit(b, joins[3 * k + 2], joins[3 * k]);
    }
    if (rc) return rc;
    b->any_order = num > 0;
    b->one_stage.limit = 0; /* a piece taken whole, a join across words: no words */
    if (b->any_order) { /* a merge may make a pair ranked before it */
        drop_char_tokens(b);
        b->stage_limit = 0;
        free(b->stage_join_bits);
        free(b->stage_one.join_bits);
        b->stage_join_bits = b->stage_one.join_bits = NULL;
    }
    if (b->any_order && b->trie) { /* joins: the backtracking encoder no longer applies */
        free(b->trie);
        free(b->next_prefix);
        b->trie = NULL;
        b->next_prefix = NULL;
    }
    /* Which tokens encode to themselves depends on every pair: build that table again. */
    free(b->vocab_slots);
    free(b->vocab_compact);
    b->vocab_slots = NULL;
    b->vocab_compact = NULL;
    b->num_self_encoding = 0;
    if ((rc = build_whole_tokens(b))) return rc;
    if (!whole_pieces || b->num_self_encoding == b->num_tokens - 256) return FBPE_OK;
    size_t cap = fbpe_pow2_at_least(2 * (size_t)(b->num_tokens - 256 - b->num_self_encoding) + 2);
    b->piece_slots = (fbpe_vocab_slot *)calloc(cap, sizeof(fbpe_vocab_slot));
    if (!b->piece_slots) return FBPE_ENOMEM;
    b->piece_mask = cap - 1;
    for (uint32_t i = b->num_fixed; i < b->num_tokens; i++) {
        size_t len;
        const uint8_t *t = token_bytes(b, i, &len);
        if (fbpe_whole_token(b, t, len) == i) continue;
        fbpe_key k;
        fbpe_key_make(&k, t, len, len);
        fbpe_slot_insert(b->piece_slots, b->piece_mask, &k, i);
    }
    return FBPE_OK;
}

void fbpe_bpe_free(fbpe_bpe *b) {
    if (!b) return;
    free(b->piece_slots);
    free(b->pair_keys);
    free(b->pair_ids);
    free(b->pair_compact);
    free(b->tok_off);
    free(b->tok_bytes);
    free(b->vocab_slots);
    free(b->vocab_compact);
    free(b->long_bits);
    free(b->join_bits);
    free(b->stage_join_bits);
    free(b->stage_one.join_bits);
    free(b->atom_of);
    drop_char_tokens(b);
    free(b->trie);
    free(b->next_prefix);
    for (size_t k = 0; k < b->pool_len; k++) cache_free(b->pool[k]);
    cache_free(b->shared);
    free(b);
}

/* ---- decoding ------------------------------------------------------------------------- */

fbpe_status fbpe_decoded_size(const fbpe_bpe *b, const uint32_t *ids, size_t n, size_t *size) {
    size_t total = 0;
    for (size_t k = 0; k < n; k++) {
        size_t len = (size_t)(b->tok_off[ids[k] + 1] - b->tok_off[ids[k]]);
        if (len > SIZE_MAX - total) return FBPE_EOVERFLOW; /* more than memory holds */
        total += len;
    }
    *size = total;
    return FBPE_OK;
}

void fbpe_decode(const fbpe_bpe *b, const uint32_t *ids, size_t n, uint8_t *out) {
    for (size_t k = 0; k < n; k++) {
        size_t len;
        const uint8_t *t = token_bytes(b, ids[k], &len);
        memcpy(out, t, len);
        out += len;
    }
}
