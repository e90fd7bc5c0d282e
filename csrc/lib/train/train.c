/* The BPE merge loop: the same merges as functionalbpe/core/reference.py, made fast.
 *
 * PERFORMANCE NOTE
 *
 * Data layout
 *   - Pieces: every distinct piece once, in one stream of uint32 words: a header (current
 *     length, 64-bit count) and then its symbol ids. A piece is named by its offset, so a visit
 *     costs one cache miss; a merge shortens the piece in place.
 *   - Pairs: an open-addressing table keyed by left << 32 | right (linear probing, the
 *     integer hash of hash.h, load <= 1/2, deletion by backward shift: no tombstones), cut
 *     into shards by the hash's high bits where the first count runs on several threads. The
 *     probed array holds 16-byte (key, 64-bit count) slots; a parallel array holds each
 *     pair's *where list*, the offsets of the pieces that held it when it gained count (a
 *     superset of those that still hold it). Where lists are power-of-two blocks from a
 *     slab (capacity implied by length).
 *   - Candidates: a 4-ary max-heap of (count, key) for counts at or above a floor (a power
 *     of two), and below it one unordered bucket per power of two. A pair becomes a candidate
 *     when it is created (the first count, or the merge that made its newer symbol); after
 *     that its count only falls, so every entry is an upper bound: a popped entry whose count
 *     is not the live one goes back with the live count (or is dropped if the pair is gone);
 *     one whose count is live is the true best, since every other pair's live key is at most
 *     its entry's key. Decreases never touch the heap. When the heap runs dry the floor drops
 *     to the next non-empty bucket, which moves into the heap whole.
 *
 * One merge of (a, b) into c
 *   Pop the best pair, take its where list, rewrite each listed piece in place, left to right
 *   without overlap. Only positions next to a replacement change: (x, a) -> (x, c) on the
 *   left, (b, y) -> (c, y) on the right, (b, a) -> (c, c) between adjacent occurrences. These
 *   changes are gathered in arrays indexed by x or y, then applied to the table once per
 *   changed pair. Cost: O(total length of the listed pieces) to scan them, O(1) per changed
 *   position, one expected-O(1) table operation per distinct changed pair, O(log H) per
 *   candidate pushed. A pair gains count only in the merge that creates its newer symbol,
 *   so a count that reaches zero stays zero and its slot goes at once.
 *
 * What each choice is worth, measured against the simpler thing it stands in for. Pieces:
 * the .py files of the Python 3.11 standard library (31.5 MB), gpt4 pattern: 118,609
 * distinct pieces, 986,550 bytes in them, 32,512 merges (vocabulary 32768). Loop alone
 * (fbpe_trainer_run): CPU seconds, best of 18 runs on a busy 2-core VM, and instructions
 * counted by callgrind, which no load can change. The loop as it is: 0.16 s, 304 M
 * instructions. The simplest version (pieces in separate start/length/count arrays,
 * 40-byte slots with a "touched" stamp, a binary heap, malloc'ed where lists, the table
 * updated at every occurrence) takes 0.37 s, 403 M. Of the difference:
 *   - inline piece headers (one miss per visit instead of three), 4-ary heap, prefetching
 *     the piece 8 entries ahead in the where list: 0.16 s, 15 M;
 *   - where lists from a slab (malloc and free cost 13% of the loop), candidates below a
 *     floor kept out of the heap: 0.04 s, 48 M;
 *   - changes gathered per symbol id (table operations in the loop: 3.0 M instead of
 *     0.4 M): 24 M instructions, but no time: the misses move, they do not vanish;
 *   - 16-byte probed slots apart from the where lists, waiting candidates in power-of-two
 *     buckets (refilling the heap by rescanning every waiting candidate costs 14% of the
 *     last-level misses), large where blocks freed by the slab, not by a table walk:
 *     0.01 s, 12 M.
 *   Not taken: a copy of the rewrite loop without the policy test for the plain scheme (7%
 *   *more* instructions: the branch is cheap, the copy costs registers); comparing two
 *   symbols as one 64-bit load (0.5% fewer instructions, not worth a macro).
 *   Where the time goes: 1.25 M piece visits, 0.55 M of them to pieces that no longer hold
 *   the pair (where lists are supersets), each about one cache miss; 80 K heap pops for
 *   32.5 K merges; the rest is table misses, a few per merge. The late merges (count < 100,
 *   two thirds of them) cost about 4 us each, nearly all in misses.
 *   From Python (functionalbpe.core.trainer.train, a counted table of text-form pieces in, merge
 *   table out): 0.04 s CPU to load the pieces and count pairs, 0.18 s for the loop, 32 MB
 *   peak. rustbpe's whole training of the same corpus takes about 3.4 s on a quiet machine
 *   (benchmarks/bench_train.py prints both, side by side).
 */
/* clock_gettime (counted.h), posix_memalign and madvise (huge_pages.h) are POSIX and Linux:
 * ask for them, so that -std=c11 compiles this file too. */
#if !defined(_WIN32) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE
#endif
#include "train.h"
#include "counted.h"
#include "pair_heap.h"
#include "../common/hash.h"
#include "../common/huge_pages.h"
#include "merge_policy.h"
#include "../common/utf8.h"
#include "word_rules.h"
#include "../common/take_next.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- allocation, counted so that the tests can see every block come back ---- */

static long live_blocks;

long fbpe_live_blocks(void) { return fbpe_count_blocks(&live_blocks, 0); }

#define now_seconds fbpe_now_seconds
#define xmalloc(size) fbpe_counted_malloc(&live_blocks, (size))
#define xcalloc(n, size) fbpe_counted_calloc(&live_blocks, (n), (size))
#define grow(p, cap, want, size) fbpe_counted_grow(&live_blocks, (p), (cap), (want), (size))
#define xfree(p) fbpe_counted_free(&live_blocks, (p))

/* A large table (huge_pages.h), counted and freed as the others. */
static void *huge_malloc(size_t bytes) {
    void *p = fbpe_huge_malloc(bytes);
    if (p) fbpe_count_blocks(&live_blocks, 1);
    return p;
}

/* ---- pieces ----
 * One stream of uint32 words. Each piece is a header of three words -- its current length,
 * then its 64-bit count in two words -- followed by its symbols; a merge shortens it in
 * place.
 * A piece is named by the offset of its header, so visiting it touches one place. */

#define HEADER 3

struct fbpe_pieces {
    uint32_t *words;
    size_t n_words, cap_words;
    size_t n_pieces;
    int64_t total_pairs; /* sum of count x (len - 1): bounds every pair count */
};

static inline int64_t piece_count(const uint32_t *header) {
    int64_t count;
    memcpy(&count, header + 1, sizeof count);
    return count;
}

fbpe_pieces *fbpe_pieces_new(void) { return (fbpe_pieces *)xcalloc(1, sizeof(fbpe_pieces)); }

void fbpe_pieces_free(fbpe_pieces *c) {
    if (!c) return;
    xfree(c->words);
    xfree(c);
}

uint32_t *fbpe_pieces_reserve(fbpe_pieces *c, size_t n) {
    if (n > SIZE_MAX / 2 ||
        grow((void **)&c->words, &c->cap_words, c->n_words + HEADER + n, sizeof(uint32_t)))
        return NULL;
    return c->words + c->n_words + HEADER;
}

fbpe_status fbpe_pieces_commit(fbpe_pieces *c, size_t n, int64_t count) {
    if (n < 2 || count < 1) return FBPE_OK;
    /* pieces are named by 32-bit offsets: 16 GiB of symbols in distinct pieces at most */
    if (n > UINT32_MAX || c->n_words + HEADER + n > UINT32_MAX) return FBPE_ETOOLONG;
    /* Every pair count is at most this sum, so checking it once here means no count can
     * overflow inside the loop. */
    if ((int64_t)(n - 1) > INT64_MAX / count ||
        c->total_pairs > INT64_MAX - count * (int64_t)(n - 1))
        return FBPE_EOVERFLOW;
    uint32_t *header = c->words + c->n_words;
    header[0] = (uint32_t)n;
    memcpy(header + 1, &count, sizeof count);
    c->n_words += HEADER + n;
    c->n_pieces++;
    c->total_pairs += count * (int64_t)(n - 1);
    return FBPE_OK;
}

fbpe_status fbpe_pieces_add_utf8(fbpe_pieces *c, const uint8_t *s, size_t n, int64_t count,
                                 const int32_t *atom_ids) {
    if (n < 2 || count < 1) return FBPE_OK; /* no pair: one byte, or nothing */
    uint32_t *out = fbpe_pieces_reserve(c, n);
    if (!out) return FBPE_ENOMEM;
    size_t m = 0;
    if (!atom_ids) {
        for (size_t i = 0; i < n; i++) out[i] = s[i];
        m = n;
    } else {
        for (size_t i = 0; i < n;) {
            int32_t cp = fbpe_utf8_private_use(s, i, n);
            if (cp >= 0 && atom_ids[cp] >= 0) {
                out[m++] = (uint32_t)atom_ids[cp];
                i += 3;
                continue;
            }
            out[m++] = s[i++];
        }
    }
    return fbpe_pieces_commit(c, m, count);
}

/* ---- where lists: power-of-two blocks from a slab ----
 * A where list of n entries has room for max(2, next power of two >= n), so its capacity
 * needs no field. Small blocks come from 1 MiB chunks and go back to a free list of their
 * size: millions of tiny lists would otherwise spend much of the loop in malloc and free. */

#define SLAB_CLASSES 10 /* blocks of 2, 4, ..., 1024 entries */
#define SLAB_LARGEST ((size_t)2 << (SLAB_CLASSES - 1))
#define SLAB_CHUNK ((size_t)1 << 20)

/* A block too large for the slab: malloc'ed, with this in front, so that the slab can free
 * every one of them at the end without a walk over the pair table. */
typedef struct big_block {
    struct big_block *prev, *next;
} big_block;

typedef struct {
    void *free_list[SLAB_CLASSES]; /* a freed block holds the next pointer */
    big_block big;                 /* the large blocks, in a ring through this one */
    char *next;                    /* carve blocks from here ... */
    size_t left;                   /* ... while this many bytes are left in the chunk */
    void **chunks;
    size_t n_chunks, cap_chunks;
} where_slab;

static inline size_t where_capacity(uint32_t n) {
    size_t cap = 2;
    while (cap < n) cap *= 2;
    return cap;
}

static inline int slab_class(size_t cap) {
    int k = 0;
    while (((size_t)2 << k) < cap) k++;
    return k;
}

static uint32_t *slab_alloc(where_slab *s, size_t cap) {
    if (cap > SLAB_LARGEST) {
        if (cap > (SIZE_MAX - sizeof(big_block)) / sizeof(uint32_t)) return NULL;
        big_block *b = (big_block *)xmalloc(sizeof(big_block) + cap * sizeof(uint32_t));
        if (!b) return NULL;
        if (!s->big.next) s->big.next = s->big.prev = &s->big;
        b->next = s->big.next;
        b->prev = &s->big;
        b->next->prev = b;
        s->big.next = b;
        return (uint32_t *)(b + 1);
    }
    int k = slab_class(cap);
    void *p = s->free_list[k];
    if (p) {
        memcpy(&s->free_list[k], p, sizeof(void *));
        return (uint32_t *)p;
    }
    size_t bytes = cap * sizeof(uint32_t);
    if (s->left < bytes) {
        if (grow((void **)&s->chunks, &s->cap_chunks, s->n_chunks + 1, sizeof(void *))) return NULL;
        char *chunk = (char *)xmalloc(SLAB_CHUNK);
        if (!chunk) return NULL;
        s->chunks[s->n_chunks++] = chunk;
        s->next = chunk;
        s->left = SLAB_CHUNK; /* the tail of the old chunk is dropped: at most 4 KiB */
    }
    p = s->next;
    s->next += bytes;
    s->left -= bytes;
    return (uint32_t *)p;
}

static void slab_free(where_slab *s, uint32_t *p, size_t cap) {
    if (!p) return;
    if (cap > SLAB_LARGEST) {
        big_block *b = (big_block *)p - 1;
        b->prev->next = b->next;
        b->next->prev = b->prev;
        xfree(b);
        return;
    }
    int k = slab_class(cap);
    memcpy(p, &s->free_list[k], sizeof(void *));
    s->free_list[k] = p;
}

static void slab_destroy(where_slab *s) {
    if (s->big.next) {
        while (s->big.next != &s->big) {
            big_block *b = s->big.next;
            s->big.next = b->next;
            xfree(b);
        }
    }
    for (size_t i = 0; i < s->n_chunks; i++) xfree(s->chunks[i]);
    xfree(s->chunks);
    memset(s, 0, sizeof *s);
}

/* ---- the pair table ---- */

#define EMPTY_KEY UINT64_MAX /* the pair (2**32-1, 2**32-1): ids stay below 2**32-1 */

/* The table is two parallel arrays: the probed part, 16 bytes a slot (four to a cache line),
 * and the where lists, touched only when a pair is merged or created. */
typedef struct {
    uint64_t key;
    int64_t count;
} pair_slot;

typedef struct {
    uint32_t *items; /* offsets of pieces that held the pair when it gained count */
    uint32_t n;      /* capacity: where_capacity(n) */
    uint32_t last;   /* while counting (n > 0): items[n - 1], kept here, in what was padding,
                        so that a piece's repeats are found without reading the list */
} where_list;

typedef struct {
    pair_slot *slots;
    where_list *where;
    size_t cap, n_live;
    unsigned shift;    /* without 128-bit products: cap is 2**(64 - shift) */
    unsigned skip;     /* high bits of the hash that chose this table (shard_of), not read here */
    where_slab *lists; /* where the where lists live */
} pair_table;

/* The home slot: the hash's bits below the shard's, scaled to cap (a multiply and a shift,
 * as the top bits would be for a power of two). Any cap, so that a table sized from an
 * estimate (fbpe_trainer_new) is as large as it was asked to be, not up to twice that: its
 * memory is zeroed by the kernel as it is first touched. */
static inline size_t home_slot(const pair_table *t, uint64_t key) {
    uint64_t h = (key * FBPE_MIX3) << t->skip;
#if defined(__SIZEOF_INT128__)
    return (size_t)(((unsigned __int128)h * t->cap) >> 64);
#else
    return (size_t)(h >> t->shift);
#endif
}

static inline size_t next_slot(const pair_table *t, size_t i) { return i + 1 == t->cap ? 0 : i + 1; }

static fbpe_status table_init(pair_table *t, size_t want, unsigned skip) {
    if (want > SIZE_MAX / 4 / sizeof(pair_slot)) return FBPE_ENOMEM;
#if defined(__SIZEOF_INT128__)
    size_t cap = 2 * want < 16 ? 16 : 2 * want;
#else
    size_t cap = 16;
    while (cap < 2 * want) cap *= 2;
#endif
    t->slots = (pair_slot *)huge_malloc(cap * sizeof(pair_slot));
    t->where = (where_list *)huge_malloc(cap * sizeof(where_list));
    if (!t->slots || !t->where) {
        xfree(t->slots);
        xfree(t->where);
        t->slots = NULL;
        t->where = NULL;
        return FBPE_ENOMEM;
    }
    memset(t->where, 0, cap * sizeof(where_list));
    for (size_t i = 0; i < cap; i++) t->slots[i].key = EMPTY_KEY;
    t->cap = cap;
    t->shift = fbpe_slot_shift(cap); /* the power of two at least cap */
    t->skip = skip;
    t->n_live = 0;
    t->lists = NULL;
    return FBPE_OK;
}

static void table_free(pair_table *t) {
    if (!t->slots) return; /* the where lists go with the slab */
    xfree(t->slots);
    xfree(t->where);
    t->slots = NULL;
    t->where = NULL;
}

static ptrdiff_t table_find(const pair_table *t, uint64_t key) {
    for (size_t i = home_slot(t, key);; i = next_slot(t, i)) {
        uint64_t k = t->slots[i].key;
        if (k == key) return (ptrdiff_t)i;
        if (k == EMPTY_KEY) return -1;
    }
}

static fbpe_status table_double(pair_table *t) {
    pair_table bigger;
    if (table_init(&bigger, t->cap, t->skip)) return FBPE_ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].key == EMPTY_KEY) continue;
        size_t j = home_slot(&bigger, t->slots[i].key);
        while (bigger.slots[j].key != EMPTY_KEY) j = next_slot(&bigger, j);
        bigger.slots[j] = t->slots[i];
        bigger.where[j] = t->where[i];
    }
    bigger.n_live = t->n_live;
    bigger.lists = t->lists;
    xfree(t->slots);
    xfree(t->where);
    *t = bigger;
    return FBPE_OK;
}

/* The slot of `key` into *slot, made with count 0 and no where list if absent (then
 * *created is set). The slot is good until the next insertion or deletion. FBPE_OK or
 * FBPE_ENOMEM. */
static inline fbpe_status table_upsert(pair_table *t, uint64_t key, size_t *slot, int *created) {
    size_t i = home_slot(t, key);
    for (;; i = next_slot(t, i)) {
        uint64_t k = t->slots[i].key;
        if (k == key) {
            *slot = i;
            return FBPE_OK;
        }
        if (k == EMPTY_KEY) break;
    }
    if (2 * (t->n_live + 1) > t->cap) {
        if (table_double(t)) return FBPE_ENOMEM;
        i = home_slot(t, key);
        while (t->slots[i].key != EMPTY_KEY) i = next_slot(t, i);
    }
    t->slots[i].key = key;
    t->slots[i].count = 0;
    t->where[i].items = NULL;
    t->where[i].n = 0;
    t->n_live++;
    *created = 1;
    *slot = i;
    return FBPE_OK;
}

/* Free slot i and close the gap by shifting later entries of its probe run back, so that
 * lookups never wade through tombstones. */
static void table_delete(pair_table *t, size_t i) {
    slab_free(t->lists, t->where[i].items, where_capacity(t->where[i].n));
    for (size_t j = i;;) {
        j = next_slot(t, j);
        uint64_t k = t->slots[j].key;
        if (k == EMPTY_KEY) break;
        size_t h = home_slot(t, k);
        /* the entry at j may fill the hole at i unless its home lies cyclically in (i, j] */
        int in_between = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);
        if (!in_between) {
            t->slots[i] = t->slots[j];
            t->where[i] = t->where[j];
            i = j;
        }
    }
    t->slots[i].key = EMPTY_KEY;
    t->where[i].items = NULL;
    t->where[i].n = 0;
    t->n_live--;
}

/* Move w's items to a block of room for `cap` (at least w->n). */
static fbpe_status where_move(where_slab *slab, where_list *w, size_t cap) {
    uint32_t *q = slab_alloc(slab, cap);
    if (!q) return FBPE_ENOMEM;
    if (w->n) {
        memcpy(q, w->items, w->n * sizeof(uint32_t));
        slab_free(slab, w->items, where_capacity(w->n));
    }
    w->items = q;
    return FBPE_OK;
}

static fbpe_status where_add(where_slab *slab, where_list *w, uint32_t piece) {
    uint32_t n = w->n;
    /* a piece adds its pairs in one pass, so its repeats arrive one after another */
    if (n && w->last == piece) return FBPE_OK;
    if (n == 0 || (n >= 2 && (n & (n - 1)) == 0)) { /* full: capacity is a power of two */
        if (n > UINT32_MAX / 2 || where_move(slab, w, n ? 2 * (size_t)n : 2)) return FBPE_ENOMEM;
    }
    w->items[n] = piece;
    w->n = n + 1;
    w->last = piece;
    return FBPE_OK;
}

/* ---- the candidates ---- */

/* ---- the trainer ---- */

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif
#define PREFETCH_AHEAD 8

/* What one merge of (a, b) into c changes. It can only lose pairs (x, a) and (b, y) and
 * only gain pairs (x, c) and (c, y), so each change is named by one symbol id and gathered
 * in arrays indexed by id, which stay in cache; the pair table then sees each changed pair
 * once per merge instead of once per occurrence. */
typedef struct {
    uint64_t key;
    int64_t count;
    uint32_t *where;
    uint32_t n_where;
    uint32_t last; /* the piece that gained it last: a piece is listed once */
} gain_entry;

#define MAX_SHARDS 16

struct fbpe_trainer {
    fbpe_pieces *counted;
    uint32_t first_id;
    int policy;
    int check_policy; /* 0 when no pair can ever be refused (fbpe_policy_never_refuses) */
    uint32_t *flags;  /* of every id made so far */
    size_t cap_flags;
    /* No token longer than max_token_bytes (in the text form: a byte is 1, an atom 3) is
     * made; check_length is 0 when no piece is that long, so no pair can be refused. */
    size_t max_token_bytes;
    int check_length;
    uint32_t *lengths; /* of every id made so far, when check_length */
    size_t cap_lengths;
    /* SuperBPE's token rules (word_rules.h), when check_words */
    int check_words;
    uint32_t max_words;
    int colon_space;
    uint32_t *shapes; /* of every id made so far, when check_words */
    size_t cap_shapes;
    fbpe_trained_merge *merges;
    size_t n_merges, cap_merges;
    int64_t max_merges; /* < 0: no limit */
    int64_t min_frequency;
    /* The pairs, in 2**shard_bits tables chosen by the high bits of a pair's hash
     * (shard_of), each with the slab of its where lists: so that counting the first pairs
     * runs on one thread per table (fbpe_trainer_count); one table on one thread. */
    pair_table pairs[MAX_SHARDS];
    where_slab lists[MAX_SHARDS];
    unsigned shard_bits;
    size_t table_want;                 /* the pairs the tables are made for, all shards */
    /* Or, with one shard, the pieces cut into `ranges` runs (range r ends at word offset
     * range_end[r]), each counted into table r and the others added to table 0 in order
     * (fbpe_trainer_counted). 0: no ranges. */
    size_t ranges, range_want;
    size_t range_end[MAX_SHARDS];
    size_t next_shard;                 /* the next part to count (fbpe_trainer_count) */
    fbpe_status shard_rc[MAX_SHARDS];  /* how counting each went */
    int counted_all;                   /* fbpe_trainer_counted said FBPE_OK */
    /* Candidates with a count of at least `floor` (a power of two) are in the heap; the
     * others wait unordered in the bucket of their count's power of two. The heap stays
     * small, most pairs (counted once or twice) never cost a heap operation, and lowering
     * the floor reads only the bucket that moves into the heap. */
    fbpe_pair_heap heap;
    fbpe_candidate *bucket[64];
    size_t n_bucket[64], cap_bucket[64];
    int64_t floor;
    /* the changes of the current merge, per id (room for cap_ids ids) */
    size_t cap_ids;
    int64_t *loss_x, *loss_y; /* occurrences lost by (x, a), by (b, y) */
    uint32_t *xs, *ys;        /* the ids with a loss, each once */
    size_t n_xs, n_ys;
    int32_t *gain_x, *gain_y; /* index in gains of (x, c), of (c, y); -1: none */
    gain_entry *gains;
    size_t n_gains, cap_gains;
    uint64_t *log; /* gain index << 32 | piece, in the order met */
    size_t n_log, cap_log;
    int finished;
    /* For a trace only (fbpe_trainer_keep_runner_ups): runner_ups[k] is the pair that came
     * second when merge k was chosen, count 0 when none did. */
    fbpe_trained_merge *runner_ups;
    size_t cap_runner_ups;
    int keep_runner_ups;
};

static inline size_t shard_of(const fbpe_trainer *t, uint64_t key) {
    return t->shard_bits ? (size_t)((key * FBPE_MIX3) >> (64 - t->shard_bits)) : 0;
}

static inline pair_table *table_of(fbpe_trainer *t, uint64_t key) {
    return &t->pairs[shard_of(t, key)];
}

static inline int mergeable(const fbpe_trainer *t, uint32_t left, uint32_t right) {
    return (!t->check_policy || fbpe_can_merge(t->policy, t->flags[left], t->flags[right])) &&
           (!t->check_length || (size_t)t->lengths[left] + t->lengths[right] <= t->max_token_bytes) &&
           (!t->check_words ||
            fbpe_word_rules_allow(t->max_words, t->colon_space, t->shapes[left], t->shapes[right]));
}

/* Room in the per-id arrays for ids 0 .. n-1. */
static fbpe_status reserve_ids(fbpe_trainer *t, size_t n) {
    if (n <= t->cap_ids) return FBPE_OK;
    size_t old = t->cap_ids, cap = old, c1 = old, c2 = old, c3 = old, c4 = old, c5 = old;
    if (grow((void **)&t->loss_x, &cap, n, sizeof(int64_t)) ||
        grow((void **)&t->loss_y, &c1, n, sizeof(int64_t)) ||
        grow((void **)&t->xs, &c2, n, sizeof(uint32_t)) ||
        grow((void **)&t->ys, &c3, n, sizeof(uint32_t)) ||
        grow((void **)&t->gain_x, &c4, n, sizeof(int32_t)) ||
        grow((void **)&t->gain_y, &c5, n, sizeof(int32_t)))
        return FBPE_ENOMEM; /* the arrays that grew are freed with the trainer */
    for (size_t i = old; i < cap; i++) {
        t->loss_x[i] = t->loss_y[i] = 0;
        t->gain_x[i] = t->gain_y[i] = -1;
    }
    t->cap_ids = cap;
    return FBPE_OK;
}

static inline void lose(int64_t *loss, uint32_t *ids, size_t *n_ids, uint32_t id, int64_t w) {
    if (loss[id] == 0) ids[(*n_ids)++] = id;
    loss[id] += w;
}

static inline fbpe_status gain(fbpe_trainer *t, int32_t *index, uint32_t id, uint64_t key,
                               int64_t w, uint32_t piece) {
    int32_t g = index[id];
    if (g < 0) {
        if (t->n_gains >= INT32_MAX ||
            grow((void **)&t->gains, &t->cap_gains, t->n_gains + 1, sizeof(gain_entry)))
            return FBPE_ENOMEM;
        g = (int32_t)t->n_gains++;
        gain_entry fresh = {key, 0, NULL, 0, UINT32_MAX};
        t->gains[g] = fresh;
        index[id] = g;
    }
    gain_entry *e = &t->gains[g];
    e->count += w;
    if (e->last != piece) {
        if (grow((void **)&t->log, &t->cap_log, t->n_log + 1, sizeof(uint64_t))) return FBPE_ENOMEM;
        t->log[t->n_log++] = ((uint64_t)g << 32) | piece;
        e->last = piece;
        e->n_where++;
    }
    return FBPE_OK;
}

/* The count of `key` falls by `amount`. A count that reaches zero stays there (see the note
 * at the top), so its slot goes at once. */
static fbpe_status pair_lose(fbpe_trainer *t, uint64_t key, int64_t amount) {
    pair_table *table = table_of(t, key);
    ptrdiff_t i = table_find(table, key);
    if (i < 0) return FBPE_EINTERNAL; /* every pair of every piece is counted */
    pair_slot *s = &table->slots[i];
    s->count -= amount;
    if (s->count < 0) return FBPE_EINTERNAL;
    if (s->count == 0) table_delete(table, (size_t)i);
    return FBPE_OK;
}

static inline int log2_floor(int64_t count) {
    int k = 0;
    while (k < 62 && ((int64_t)2 << k) <= count) k++;
    return k;
}

static fbpe_status add_candidate(fbpe_trainer *t, int64_t count, uint64_t key) {
    if (count >= t->floor) return fbpe_heap_push(&t->heap, &live_blocks, count, key);
    int k = log2_floor(count);
    if (grow((void **)&t->bucket[k], &t->cap_bucket[k], t->n_bucket[k] + 1, sizeof(fbpe_candidate)))
        return FBPE_ENOMEM;
    fbpe_candidate c = {count, key};
    t->bucket[k][t->n_bucket[k]++] = c;
    return FBPE_OK;
}

/* The heap ran dry: lower the floor to the top of the highest waiting bucket and move that
 * bucket into the heap. Returns FBPE_MORE (candidates moved), FBPE_OK when no candidate is
 * left at min_frequency or above, or an error. */
static fbpe_status lower_floor(fbpe_trainer *t) {
    int k = 63;
    while (k >= 0 && t->n_bucket[k] == 0) k--;
    /* bucket k holds counts below 2**(k+1) */
    if (k < 0 || (k < 62 && ((int64_t)2 << k) - 1 < t->min_frequency)) return FBPE_OK;
    size_t n = t->n_bucket[k];
    if (grow((void **)&t->heap.items, &t->heap.cap, t->heap.n + n, sizeof(fbpe_candidate)))
        return FBPE_ENOMEM;
    memcpy(t->heap.items + t->heap.n, t->bucket[k], n * sizeof(fbpe_candidate));
    t->heap.n += n;
    t->n_bucket[k] = 0;
    t->floor = (int64_t)1 << k;
    for (size_t i = t->heap.n / 4 + 1; i-- > 0;)
        if (i < t->heap.n) fbpe_heap_sift_down(&t->heap, i);
    return FBPE_MORE;
}

void fbpe_trainer_free(fbpe_trainer *t) {
    if (!t) return;
    for (size_t k = 0; k < MAX_SHARDS; k++) {
        table_free(&t->pairs[k]);
        slab_destroy(&t->lists[k]); /* every where list, the half-built ones of an error too */
    }
    xfree(t->heap.items);
    for (int k = 0; k < 64; k++) xfree(t->bucket[k]);
    xfree(t->loss_x);
    xfree(t->loss_y);
    xfree(t->xs);
    xfree(t->ys);
    xfree(t->gain_x);
    xfree(t->gain_y);
    xfree(t->gains);
    xfree(t->log);
    xfree(t->flags);
    xfree(t->lengths);
    xfree(t->shapes);
    xfree(t->merges);
    xfree(t->runner_ups);
    xfree(t);
}

/* The text-form bytes of a symbol below first_id: a byte, or an atom (U+E000..U+EFFF). */
static inline uint32_t symbol_bytes(uint32_t id) { return id < 256 ? 1 : 3; }

/* Count the pairs of every piece into the tables, each with the pieces that hold it. */
/* The pair PAIRS_AHEAD pairs after the one being counted, whose slot (and where list, at the
 * same index when it is home) is fetched early. Each pair counted costs three reads far
 * apart in memory (its slot, its where list, the list's end); on SuperBPE's second stage,
 * whose pieces hold most of the corpus, these misses were most of the trainer's setup (perf:
 * 83% of fbpe_trainer_new at 100 MB). The list's end is kept in the where list itself. */
#define PAIRS_AHEAD 16
typedef struct {
    size_t off;  /* the piece */
    uint32_t i;  /* the pair at s[i], s[i + 1] of it */
    size_t end;  /* where the pieces counted end */
} pair_cursor;

static inline void prefetch_next_pair(const fbpe_trainer *t, const pair_table *table,
                                      size_t shard, pair_cursor *c) {
    const uint32_t *words = t->counted->words;
    while (c->off < c->end) {
        uint32_t n = words[c->off];
        while (c->i + 1 < n) {
            const uint32_t *s = words + c->off + HEADER + c->i++;
            uint64_t key = fbpe_pair_key(s[0], s[1]);
            if (shard_of(t, key) != shard) continue;
            size_t home = home_slot(table, key);
            PREFETCH(&table->slots[home]);
            PREFETCH(&table->where[home]);
            return;
        }
        c->off += HEADER + n;
        c->i = 0;
    }
}

#define SKETCH_BITS 12
static inline uint8_t leading_zeros(uint64_t x) { /* x != 0 */
#if defined(__GNUC__) || defined(__clang__)
    return (uint8_t)__builtin_clzll(x);
#else
    uint8_t n = 0;
    while (!(x >> 63)) x <<= 1, n++;
    return n;
#endif
}
/* About how many distinct pairs the pieces hold (HyperLogLog, 4,096 registers: within a few
 * per cent; 2.34 M said for 2.19 M), or 0 when too few to tell (under about 10,000), into
 * *distinct: what decides whether counting is split over threads, and how large the tables
 * are made. The same pass checks that every symbol is below first_id (FBPE_EINTERNAL: the
 * caller checks ids). */
static fbpe_status distinct_pairs(const fbpe_pieces *counted, uint32_t first_id, size_t *distinct) {
    uint8_t reg[1 << SKETCH_BITS];
    memset(reg, 0, sizeof reg);
    const uint32_t *words = counted->words;
    for (size_t off = 0; off < counted->n_words; off += HEADER + words[off]) {
        const uint32_t *s = words + off + HEADER;
        for (uint32_t i = 0; i < words[off]; i++) {
            if (s[i] >= first_id) return FBPE_EINTERNAL;
            if (i + 1 == words[off]) break;
            uint64_t key = fbpe_pair_key(s[i], s[i + 1]);
            uint64_t h = (key ^ (key >> 32)) * FBPE_MIX2;
            size_t r = (size_t)(h >> (64 - SKETCH_BITS));
            uint8_t rank = leading_zeros(h << SKETCH_BITS | (uint64_t)1 << (SKETCH_BITS - 1)) + 1;
            if (rank > reg[r]) reg[r] = rank;
        }
    }
    double m = (double)(1 << SKETCH_BITS), sum = 0;
    for (size_t k = 0; k < ((size_t)1 << SKETCH_BITS); k++) sum += 1.0 / (double)((uint64_t)1 << reg[k]);
    double e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    *distinct = e <= 2.5 * m ? 0 : (size_t)(e * 1.05);
    return FBPE_OK;
}

/* Count the pairs of shard `shard` of the pieces from word offset `begin` to `end` into
 * table `into`, made for `want` pairs. Counting is bound by misses (a random slot, where
 * list and list end per pair), which threads overlap as well as share. */
static fbpe_status count_pairs(fbpe_trainer *t, size_t into, size_t want, size_t shard, size_t begin,
                               size_t end) {
    const uint32_t *words = t->counted->words;
    pair_table *table = &t->pairs[into];
    if (table_init(table, want, t->shard_bits)) return FBPE_ENOMEM;
    table->lists = &t->lists[into];
    pair_cursor ahead = {begin, 0, end};
    for (unsigned k = 0; k < PAIRS_AHEAD; k++) prefetch_next_pair(t, table, shard, &ahead);
    for (size_t off = begin; off < end;) {
        uint32_t n = words[off];
        int64_t count = piece_count(words + off);
        const uint32_t *s = words + off + HEADER;
        for (uint32_t i = 0; i + 1 < n; i++) {
            uint64_t key = fbpe_pair_key(s[i], s[i + 1]);
            if (shard_of(t, key) != shard) continue;
            prefetch_next_pair(t, table, shard, &ahead);
            if (!mergeable(t, s[i], s[i + 1])) continue;
            int created = 0;
            size_t k;
            if (table_upsert(table, key, &k, &created) ||
                where_add(table->lists, &table->where[k], (uint32_t)off))
                return FBPE_ENOMEM;
            table->slots[k].count += count;
        }
        off += HEADER + n;
    }
    return FBPE_OK;
}

/* Count shard k, reading every piece and counting only that shard's pairs, so that each
 * where list still lists its pieces in order, as on one thread; or, with ranges, every pair
 * of range k. */
static fbpe_status count_part(fbpe_trainer *t, size_t k) {
    if (!t->ranges) return count_pairs(t, k, t->table_want >> t->shard_bits, k, 0, t->counted->n_words);
    /* Table 0 is the loop's, made for all the pairs to come; the others hold one range's. */
    return count_pairs(t, k, k ? t->range_want : t->table_want, 0, k ? t->range_end[k - 1] : 0,
                       t->range_end[k]);
}

size_t fbpe_trainer_shards(const fbpe_trainer *t) {
    return t->ranges ? t->ranges : (size_t)1 << t->shard_bits;
}

void fbpe_trainer_count(fbpe_trainer *t) {
    size_t parts = fbpe_trainer_shards(t), k;
    while ((k = fbpe_take_next(&t->next_shard)) < parts) t->shard_rc[k] = count_part(t, k);
}

/* Add the pairs of range tables 1 .. ranges-1 to table 0, in order: each pair's where list
 * then lists its pieces in order, as one thread's would. */
static fbpe_status join_ranges(fbpe_trainer *t) {
    pair_table *all = &t->pairs[0];
    for (size_t r = 1; r < t->ranges; r++) {
        pair_table *part = &t->pairs[r];
        for (size_t i = 0; i < part->cap; i++) {
            if (part->slots[i].key == EMPTY_KEY) continue;
            size_t k;
            int created = 0;
            if (table_upsert(all, part->slots[i].key, &k, &created)) return FBPE_ENOMEM;
            all->slots[k].count += part->slots[i].count;
            const where_list *from = &part->where[i];
            where_list *w = &all->where[k];
            /* a list's length is 32-bit (a pair is in fewer pieces than 32-bit offsets name) */
            size_t n = w->n, total = n + from->n;
            if (total > UINT32_MAX) return FBPE_ENOMEM;
            if (where_capacity((uint32_t)total) > (n ? where_capacity(w->n) : 0) &&
                where_move(all->lists, w, where_capacity((uint32_t)total)))
                return FBPE_ENOMEM;
            memcpy(w->items + n, from->items, from->n * sizeof(uint32_t));
            w->n = (uint32_t)total;
            w->last = w->items[total - 1];
        }
        table_free(part);
        slab_destroy(&t->lists[r]);
    }
    return FBPE_OK;
}

fbpe_status fbpe_trainer_counted(fbpe_trainer *t) {
    size_t parts = fbpe_trainer_shards(t), shards = (size_t)1 << t->shard_bits;
    if (t->counted_all) return FBPE_OK;
    if (t->next_shard < parts) return FBPE_EINTERNAL; /* fbpe_trainer_count was not called */
    for (size_t k = 0; k < parts; k++)
        if (t->shard_rc[k]) return t->shard_rc[k];
    if (t->ranges) {
        fbpe_status rc = join_ranges(t);
        if (rc) return rc;
    }
    /* Every pair starts in a bucket; the first lower_floor fills the heap. */
    t->floor = INT64_MAX;
    for (size_t k = 0; k < shards; k++)
        for (size_t i = 0; i < t->pairs[k].cap; i++) {
            fbpe_status rc;
            if (t->pairs[k].slots[i].key != EMPTY_KEY &&
                (rc = add_candidate(t, t->pairs[k].slots[i].count, t->pairs[k].slots[i].key)))
                return rc;
        }
    t->counted_all = 1;
    return FBPE_OK;
}

fbpe_status fbpe_trainer_new(fbpe_pieces *counted, uint32_t first_id, const uint32_t *flags,
                             const uint32_t *lengths, int policy, int64_t max_merges,
                             int64_t min_frequency, size_t max_token_bytes, const uint32_t *shapes,
                             uint32_t max_words, int colon_space, size_t threads,
                             size_t shard_min_pairs, size_t range_min_pieces, fbpe_trainer **out) {
    fbpe_status rc = FBPE_ENOMEM;
    *out = NULL;
    if (first_id >= UINT32_MAX) return FBPE_EIDS;
    fbpe_trainer *t = (fbpe_trainer *)xcalloc(1, sizeof(fbpe_trainer));
    if (!t) return FBPE_ENOMEM;
    t->counted = counted;
    t->first_id = first_id;
    t->policy = policy;
    t->check_policy = !fbpe_policy_never_refuses(flags, first_id);
    t->max_merges = max_merges;
    t->min_frequency = min_frequency;
    t->max_token_bytes =
        max_token_bytes < FBPE_MAX_TOKEN_BYTES ? max_token_bytes : FBPE_MAX_TOKEN_BYTES;
    if (grow((void **)&t->flags, &t->cap_flags, (size_t)first_id + 1, sizeof(uint32_t))) goto fail;
    if (first_id) memcpy(t->flags, flags, (size_t)first_id * sizeof(uint32_t));

    /* A token is a run of symbols inside one piece: if no piece is longer than the limit,
     * no merge can pass it, and the loop need not look at lengths. */
    for (size_t off = 0; off < counted->n_words && !t->check_length;) {
        uint32_t n = counted->words[off];
        size_t bytes = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t s = counted->words[off + HEADER + i];
            bytes += lengths ? lengths[s] : symbol_bytes(s);
        }
        t->check_length = bytes > t->max_token_bytes;
        off += HEADER + n;
    }
    if (t->check_length) {
        if (grow((void **)&t->lengths, &t->cap_lengths, (size_t)first_id + 1, sizeof(uint32_t)))
            goto fail;
        for (uint32_t i = 0; i < first_id; i++) t->lengths[i] = lengths ? lengths[i] : symbol_bytes(i);
    }
    if (shapes) {
        t->check_words = 1;
        t->max_words = max_words;
        t->colon_space = colon_space;
        if (grow((void **)&t->shapes, &t->cap_shapes, (size_t)first_id + 1, sizeof(uint32_t))) goto fail;
        if (first_id) memcpy(t->shapes, shapes, (size_t)first_id * sizeof(uint32_t));
    }

    /* The tables are made for half as many pairs again as are counted, or as there are
     * pieces, the merges making new pairs as they go (a table that doubled in the loop would
     * take twice the memory): a plain training counts few pairs of bytes (14 K on 100 MB),
     * and its merges make many (614 K live at the end, from 626 K pieces). */
    size_t distinct;
    if ((rc = distinct_pairs(counted, first_id, &distinct))) goto fail;
    t->table_want = distinct > counted->n_pieces + 1024 ? distinct : counted->n_pieces + 1024;
    t->table_want += t->table_want / 2;
    /* Shards, a power of two, one a thread, only where the pairs miss the caches: a plain
     * training's 14 K pairs of bytes stay in them, and two threads each reading every piece
     * took longer than one (1.63-1.66 s against 1.52-1.55 s for its whole merge loop, two runs
     * each; a whole plain training, paired: 0.89x [0.87-0.95]). */
    while (distinct >= shard_min_pairs && ((size_t)2 << t->shard_bits) <= threads &&
           ((size_t)2 << t->shard_bits) <= MAX_SHARDS)
        t->shard_bits++;
    /* Fewer pairs than that stay in the caches, and each thread counts the pairs of a run of
     * the pieces into a small table of its own, added to the loop's in order afterwards: on
     * the shared corpora (103 MB, 626 K pieces, 14 K pairs of bytes) counting took 0.11 s on
     * one thread; a whole training on two threads is 1.01-1.05x as fast this way
     * (docs/training.md). */
    if (!t->shard_bits && threads > 1 && counted->n_pieces >= range_min_pieces) {
        t->ranges = threads < MAX_SHARDS ? threads : MAX_SHARDS;
        t->range_want = distinct > 1024 ? distinct : 1024;
        t->range_want += t->range_want / 2;
        size_t r = 0, off = 0;
        while (off < counted->n_words && r + 1 < t->ranges) {
            /* range r ends at the first piece at or past (r + 1) shares of the words */
            if (off >= counted->n_words / t->ranges * (r + 1)) t->range_end[r++] = off;
            off += HEADER + counted->words[off];
        }
        while (r < t->ranges) t->range_end[r++] = counted->n_words;
    }
    *out = t;
    return FBPE_OK;
fail:
    fbpe_trainer_free(t);
    return rc;
}

void fbpe_trainer_keep_runner_ups(fbpe_trainer *t) { t->keep_runner_ups = 1; }
const fbpe_trained_merge *fbpe_trainer_runner_ups(const fbpe_trainer *t) { return t->runner_ups; }

size_t fbpe_trainer_num_merges(const fbpe_trainer *t) { return t->n_merges; }
const fbpe_trained_merge *fbpe_trainer_merges(const fbpe_trainer *t) { return t->merges; }

/* The first k >= i with s[k] == a and s[k + 1] == b (k + 1 < n), or n. With SSE2 (every
 * x86-64) eight positions are compared at a time: the pieces of SuperBPE's second stage are
 * hundreds of ids long (78% of the ids of the first 18 MB of the shared corpora lie in
 * pieces of more than 64), and each merge that lists a piece looks through it. A loop of
 * eight scalar compares into a mask, which gcc -O3 left scalar, cost 7 instructions an id. */
static inline size_t find_pair(const uint32_t *s, size_t i, size_t n, uint32_t a, uint32_t b) {
    if (n < 2) return n;
    size_t last = n - 1; /* a pair starts before it */
#ifdef __SSE2__
    const __m128i va = _mm_set1_epi32((int)a), vb = _mm_set1_epi32((int)b);
    for (; i + 8 <= last; i += 8) { /* reads s[i..i + 9) */
        const __m128i *p = (const __m128i *)(s + i), *q = (const __m128i *)(s + i + 1);
        __m128i lo = _mm_and_si128(_mm_cmpeq_epi32(_mm_loadu_si128(p), va),
                                   _mm_cmpeq_epi32(_mm_loadu_si128(q), vb));
        __m128i hi = _mm_and_si128(_mm_cmpeq_epi32(_mm_loadu_si128(p + 1), va),
                                   _mm_cmpeq_epi32(_mm_loadu_si128(q + 1), vb));
        unsigned mask = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(lo)) |
                        (unsigned)_mm_movemask_ps(_mm_castsi128_ps(hi)) << 4;
        if (mask) return i + (size_t)__builtin_ctz(mask);
    }
#endif
    for (; i < last; i++)
        if (s[i] == a && s[i + 1] == b) return i;
    return n;
}

/* Rewrite the piece at `off`: replace (a, b) by c left to right without overlap, and move
 * the counts at the positions that changed. Only the symbols next to a new c change their
 * pairs; the runs between are found by find_pair and moved whole. */
static fbpe_status merge_in_piece(fbpe_trainer *t, uint32_t off, uint32_t a, uint32_t b,
                                  uint32_t c) {
    uint32_t *header = t->counted->words + off;
    uint32_t *s = header + HEADER;
    size_t n = header[0];
    size_t i = find_pair(s, 0, n, a, b);
    if (i >= n) return FBPE_OK; /* listed, but no longer holds the pair */
    int64_t w = piece_count(header);
    size_t j = i;    /* s[0..j) is final; s[i..n) is still to read */
    int after_c = 0; /* the last symbol written is a c made here */
    fbpe_status rc;
#define TRY(call) \
    if ((rc = (call)) != FBPE_OK) return rc;
    while (i < n) { /* a pair (a, b) starts at i */
        if (after_c) {
            /* a b a b: the pair (b, a) between them becomes (c, c); when a == b,
             * (b, a) is the merged pair itself, which is gone already */
            if (a != b && mergeable(t, b, a)) lose(t->loss_y, t->ys, &t->n_ys, a, w);
            if (mergeable(t, c, c)) TRY(gain(t, t->gain_x, c, fbpe_pair_key(c, c), w, off));
        } else if (j > 0) {
            uint32_t x = s[j - 1]; /* (x, a) is never the merged pair: x a b with
                                      x == a == b would have matched one earlier */
            if (mergeable(t, x, a)) lose(t->loss_x, t->xs, &t->n_xs, x, w);
            if (mergeable(t, x, c)) TRY(gain(t, t->gain_x, x, fbpe_pair_key(x, c), w, off));
        }
        s[j++] = c;
        i += 2;
        after_c = 1;
        if (i >= n || (i + 1 < n && s[i] == a && s[i + 1] == b)) continue;
        uint32_t y = s[i];
        /* (b, y) is the merged pair only in a a a with a == b */
        if (!(a == b && y == b) && mergeable(t, b, y)) lose(t->loss_y, t->ys, &t->n_ys, y, w);
        if (mergeable(t, c, y)) TRY(gain(t, t->gain_y, y, fbpe_pair_key(c, y), w, off));
        s[j++] = y;
        i++;
        after_c = 0;
        size_t next = find_pair(s, i, n, a, b);
        memmove(s + j, s + i, (next - i) * sizeof(uint32_t));
        j += next - i;
        i = next;
    }
#undef TRY
    header[0] = (uint32_t)j;
    return FBPE_OK;
}

/* Bring the pair table and the candidates up to date with the gathered changes. */
static fbpe_status apply_changes(fbpe_trainer *t, uint32_t a, uint32_t b, uint32_t c) {
    fbpe_status rc = FBPE_OK;
    for (size_t k = 0; k < t->n_xs && rc == FBPE_OK; k++) {
        uint32_t x = t->xs[k];
        rc = pair_lose(t, fbpe_pair_key(x, a), t->loss_x[x]);
        t->loss_x[x] = 0;
    }
    for (size_t k = 0; k < t->n_ys && rc == FBPE_OK; k++) {
        uint32_t y = t->ys[k];
        rc = pair_lose(t, fbpe_pair_key(b, y), t->loss_y[y]);
        t->loss_y[y] = 0;
    }
    t->n_xs = t->n_ys = 0;
    if (rc) return rc;

    /* The new pairs are complete: give each its where list, in the order the pieces were
     * met, and make it a candidate with its final count. */
    size_t g;
    for (g = 0; g < t->n_gains; g++) {
        gain_entry *e = &t->gains[g];
        e->where = slab_alloc(table_of(t, e->key)->lists, where_capacity(e->n_where));
        if (!e->where) return FBPE_ENOMEM; /* the slab frees the lists made so far */
        e->last = 0; /* from here on: how many are filled in */
    }
    for (size_t k = 0; k < t->n_log; k++) {
        gain_entry *e = &t->gains[t->log[k] >> 32];
        e->where[e->last++] = (uint32_t)t->log[k];
    }
    t->n_log = 0;
    for (g = 0; g < t->n_gains; g++) {
        gain_entry *e = &t->gains[g];
        uint32_t left = (uint32_t)(e->key >> 32), right = (uint32_t)e->key;
        if (right == c)
            t->gain_x[left] = -1;
        else
            t->gain_y[right] = -1;
        int created = 0;
        size_t i;
        pair_table *table = table_of(t, e->key);
        if (table_upsert(table, e->key, &i, &created)) return FBPE_ENOMEM;
        if (!created) return FBPE_EINTERNAL; /* a pair with c cannot exist before c */
        table->slots[i].count = e->count;
        table->where[i].items = e->where;
        table->where[i].n = e->n_where;
        e->where = NULL;
        if ((rc = add_candidate(t, e->count, e->key)) != FBPE_OK) return rc;
    }
    t->n_gains = 0;
    return FBPE_OK;
}

/* Take the best live candidate out of the heap into *best, its table and slot into *table
 * and *slot (FBPE_MORE), or say that none is left at min_frequency or above (FBPE_OK). */
static fbpe_status pop_best(fbpe_trainer *t, fbpe_candidate *best, pair_table **table,
                            ptrdiff_t *slot) {
    for (;;) {
        if (t->heap.n == 0) {
            fbpe_status rc = lower_floor(t);
            if (rc != FBPE_MORE) return rc; /* none left, or an error */
        }
        *best = fbpe_heap_pop(&t->heap);
        *table = table_of(t, best->key);
        *slot = table_find(*table, best->key);
        if (*slot < 0) continue; /* the pair is gone */
        int64_t live = (*table)->slots[*slot].count;
        if (live == best->count) return FBPE_MORE;
        /* stale: counts only fall after a push, so the live count is lower */
        if (live > best->count || live <= 0) return FBPE_EINTERNAL;
        fbpe_status rc = add_candidate(t, live, best->key);
        if (rc) return rc;
    }
}

/* For a trace: note the pair that comes second to the one just popped (each pair has one
 * candidate entry, so it is the next live one), and put it back. Training is unchanged. */
static fbpe_status note_runner_up(fbpe_trainer *t) {
    if (grow((void **)&t->runner_ups, &t->cap_runner_ups, t->n_merges + 1,
             sizeof(fbpe_trained_merge)))
        return FBPE_ENOMEM;
    fbpe_trained_merge none = {0, 0, 0}, *out = &t->runner_ups[t->n_merges];
    *out = none;
    fbpe_candidate next;
    pair_table *table;
    ptrdiff_t slot;
    fbpe_status rc = pop_best(t, &next, &table, &slot);
    if (rc != FBPE_MORE) return rc; /* FBPE_OK: no runner-up */
    if (next.count >= t->min_frequency) {
        fbpe_trained_merge m = {(uint32_t)(next.key >> 32), (uint32_t)next.key, next.count};
        *out = m;
    }
    return add_candidate(t, next.count, next.key);
}

/* Make one merge (FBPE_MORE), or say that there is none (FBPE_OK). */
static fbpe_status merge_once(fbpe_trainer *t) {
    if (t->max_merges >= 0 && (int64_t)t->n_merges >= t->max_merges) return FBPE_OK;
    fbpe_candidate best;
    pair_table *table;
    ptrdiff_t slot;
    fbpe_status found = pop_best(t, &best, &table, &slot);
    if (found != FBPE_MORE) return found;
    if (best.count < t->min_frequency) return FBPE_OK;
    if (t->keep_runner_ups) {
        fbpe_status rc = note_runner_up(t);
        if (rc) return rc; /* (the heap moved, the pair tables did not: slot holds) */
    }
    uint32_t a = (uint32_t)(best.key >> 32), b = (uint32_t)best.key;
    size_t id = (size_t)t->first_id + t->n_merges;
    if (id >= UINT32_MAX - 1) return FBPE_EIDS;
    uint32_t c = (uint32_t)id;
    if (grow((void **)&t->merges, &t->cap_merges, t->n_merges + 1, sizeof(fbpe_trained_merge)) ||
        grow((void **)&t->flags, &t->cap_flags, id + 1, sizeof(uint32_t)) || reserve_ids(t, id + 1))
        return FBPE_ENOMEM;
    fbpe_trained_merge m = {a, b, best.count};
    t->merges[t->n_merges++] = m;
    t->flags[c] = fbpe_merged_flags(t->flags[a], t->flags[b]);
    if (t->check_length) {
        if (grow((void **)&t->lengths, &t->cap_lengths, id + 1, sizeof(uint32_t)))
            return FBPE_ENOMEM;
        t->lengths[c] = t->lengths[a] + t->lengths[b]; /* both at most max_token_bytes */
    }
    if (t->check_words) {
        if (grow((void **)&t->shapes, &t->cap_shapes, id + 1, sizeof(uint32_t))) return FBPE_ENOMEM;
        t->shapes[c] = fbpe_joined_shape(t->shapes[a], t->shapes[b]);
    }

    /* Take the where list and drop the merged pair: the rewrite never looks it up again. */
    uint32_t *where = table->where[slot].items;
    uint32_t n_where = table->where[slot].n;
    table->where[slot].items = NULL;
    table_delete(table, (size_t)slot);

    fbpe_status rc = FBPE_OK;
    for (uint32_t k = 0; k < n_where && rc == FBPE_OK; k++) {
        /* the pieces are far apart in memory and known in advance: ask for them early */
        if (k + PREFETCH_AHEAD < n_where) PREFETCH(t->counted->words + where[k + PREFETCH_AHEAD]);
        rc = merge_in_piece(t, where[k], a, b, c);
    }
    slab_free(table->lists, where, where_capacity(n_where));
    if (rc) return rc;
    rc = apply_changes(t, a, b, c);
    return rc ? rc : FBPE_MORE;
}

fbpe_status fbpe_trainer_run(fbpe_trainer *t, double seconds) {
    if (!t->counted_all) return FBPE_EINTERNAL; /* fbpe_trainer_counted first */
    if (t->finished) return FBPE_OK;
    double deadline = now_seconds() + seconds;
    for (unsigned k = 1;; k++) {
        fbpe_status rc = merge_once(t);
        if (rc != FBPE_MORE) {
            if (rc == FBPE_OK) t->finished = 1;
            return rc;
        }
        /* a clock read costs about as much as a small merge: look every 16 merges */
        if ((k & 15) == 0 && now_seconds() >= deadline) return FBPE_MORE;
    }
}
