/* Parity-aware BPE: the merges of functionalbpe/core/parity.py without its rescans.
 *
 * The reference recounts every pair of every language, and re-measures every language,
 * before each merge. Here everything is counted once and then kept up to date by the merge
 * itself, as in the frequency trainer (train.c): a merge of (a, b) visits only the pieces
 * that hold the pair, training and dev pieces alike, and changes only what they change.
 *
 * Data
 *   - Pieces: one stream of uint32 words; a header (length, column, 64-bit count, the
 *     number of the last merge that visited it) and the symbols. A *column* is a training
 *     language (0 .. L-1) or, with a dev set, a dev language (L .. 2L-1). A piece that occurs
 *     in several columns is stored once per column: nearly every piece belongs to one
 *     language, and storing it per column keeps a piece's count a single number.
 *   - Pairs: one table of every mergeable pair seen (key left << 32 | right -> index), and
 *     per index the global count (the sum over languages), the where list (the pieces that
 *     held the pair when it gained a piece: a superset of those that hold it), and the merge
 *     that created it. One more table per language holds that language's counts: only the
 *     pairs the language has, so that memory grows with the pairs of each language, not with
 *     languages x pairs. Pairs that occur only in dev text are in the first table with a
 *     count of zero: they are never chosen, but their where lists find the dev pieces.
 *   - Tokens: per column, the symbols its pieces take, times their counts: dev tokens say
 *     who is behind with a dev set, training tokens with target ratios.
 *   - Candidates: a max-heap of (count, pair) per language and one for the global counts.
 *     A pair enters the heaps when it is created (the first count, or the merge that made
 *     its newer symbol); afterwards its counts only fall, so an entry is an upper bound: an
 *     entry whose count is not the live one goes back with the live count, and an entry
 *     whose count is live is the language's best (ties: the smaller key, i.e. the smaller
 *     (left, right), as reference.best_pair_key).
 *
 * One merge of (a, b) into c
 *   Choose the column (global phase, or the language furthest behind that may take part),
 *   take the top of its heap, then visit each piece of the pair's where list once. Only
 *   pairs next to an occurrence change (merge_piece says exactly which): each change is one
 *   operation on the pair table and, for a training piece, one on its language's table. A
 *   dev piece counts nothing but loses tokens, and joins the where lists of its new pairs
 *   so that later merges find it. Then the new pairs enter the heaps of the languages that
 *   have them. Choosing costs O(L) heap peeks a merge.
 *
 * Measured (benchmarks/bench_parity.py, best of 2 on a loaded 2-core VM): the 18 languages of
 * corpora/nl (42.5 M characters) with 2,000 LibreOffice help paragraphs each as dev text,
 * 32,512 merges: 21.5 s against 8.5 s for the frequency loop on the same text (2.5x); whole
 * training, counting included, 26.9 s against 14.1 s (1.9x). The difference is the visits: a
 * piece is stored per language, dev pieces are visited too, and each change costs two table
 * operations instead of one. Taking all of a touched piece's pairs out and putting them back,
 * instead of only those next to an occurrence, cost 2.5 times as much (four table operations
 * per pair of the piece); looking up every language's table for each new pair, instead of
 * listing the languages that got it, another 10%.
 */
/* clock_gettime (counted.h) is POSIX: ask for it, so that -std=c11 compiles this file too. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 199309L
#endif
#include "train_parity.h"
#include "counted.h"
#include "pair_heap.h"
#include "../common/hash.h"
#include "merge_policy.h"
#include "../common/utf8.h"

#include <stdlib.h>
#include <string.h>

/* ---- allocation, counted so that the tests can see every block come back ---- */

static long live_blocks;

long fbpe_parity_live_blocks(void) { return fbpe_count_blocks(&live_blocks, 0); }

#define now_seconds fbpe_now_seconds
#define xcalloc(n, size) fbpe_counted_calloc(&live_blocks, (n), (size))
#define grow(p, cap, want, size) fbpe_counted_grow(&live_blocks, (p), (cap), (want), (size))
#define xfree(p) fbpe_counted_free(&live_blocks, (p))

/* ---- a table of 64-bit keys to 64-bit values: linear probing, load <= 1/2, no deletion ---- */

#define EMPTY_KEY UINT64_MAX /* the pair (2**32-1, 2**32-1): ids stay below 2**32-1 */

typedef struct {
    uint64_t key;
    int64_t value;
} slot;

typedef struct {
    slot *slots;
    size_t cap, n;
    unsigned shift;
} table;

static unsigned shift_of(size_t cap) {
    unsigned bits = 0;
    while (((size_t)1 << bits) < cap) bits++;
    return 64 - bits;
}

static fbpe_status table_init(table *t, size_t cap) {
    t->slots = (slot *)xcalloc(cap, sizeof(slot));
    if (!t->slots) return FBPE_ENOMEM;
    for (size_t i = 0; i < cap; i++) t->slots[i].key = EMPTY_KEY;
    t->cap = cap;
    t->n = 0;
    t->shift = shift_of(cap);
    return FBPE_OK;
}

static slot *table_find(const table *t, uint64_t key) {
    size_t mask = t->cap - 1;
    for (size_t i = fbpe_slot_u64(key, t->shift);; i = (i + 1) & mask) {
        if (t->slots[i].key == key) return &t->slots[i];
        if (t->slots[i].key == EMPTY_KEY) return NULL;
    }
}

static fbpe_status table_grow(table *t) {
    if (t->cap > SIZE_MAX / 2 / sizeof(slot)) return FBPE_ENOMEM;
    table bigger;
    fbpe_status rc = table_init(&bigger, t->cap * 2);
    if (rc) return rc;
    size_t mask = bigger.cap - 1;
    for (size_t k = 0; k < t->cap; k++) {
        if (t->slots[k].key == EMPTY_KEY) continue;
        size_t i = fbpe_slot_u64(t->slots[k].key, bigger.shift);
        while (bigger.slots[i].key != EMPTY_KEY) i = (i + 1) & mask;
        bigger.slots[i] = t->slots[k];
    }
    bigger.n = t->n;
    xfree(t->slots);
    *t = bigger;
    return FBPE_OK;
}

/* The slot of `key`, made with value `fresh` when absent (*created set); NULL: no memory.
 * The pointer lives until the next upsert. */
static slot *table_upsert(table *t, uint64_t key, int64_t fresh, int *created) {
    if ((t->n + 1) * 2 > t->cap && table_grow(t)) return NULL;
    size_t mask = t->cap - 1;
    size_t i = fbpe_slot_u64(key, t->shift);
    while (t->slots[i].key != key) {
        if (t->slots[i].key == EMPTY_KEY) {
            t->slots[i].key = key;
            t->slots[i].value = fresh;
            t->n++;
            if (created) *created = 1;
            return &t->slots[i];
        }
        i = (i + 1) & mask;
    }
    if (created) *created = 0;
    return &t->slots[i];
}

#define HEADER 5 /* length, column, count (two words), last visit */

struct fbpe_parity {
    fbpe_parity_options o;
    uint32_t *flags;   /* per id: kind flags (merged ones appended) */
    uint32_t *lengths; /* per id: bytes in text form */
    size_t cap_ids;
    uint32_t n_columns;
    /* pieces */
    uint32_t *words;
    size_t n_words, cap_words;
    int64_t total_symbols; /* sum of count x length: bounds every count and token total */
    /* pairs */
    table index;       /* key -> pair number */
    uint64_t *keys;    /* per pair number */
    int64_t *global;   /* global count */
    uint32_t **where;  /* where lists (malloc'ed, may be NULL) */
    uint32_t *where_n, *where_cap;
    size_t n_pairs, cap_pairs;
    table *lang;       /* per language: key -> count */
    fbpe_pair_heap *heaps;       /* per language, then the global one */
    int64_t *tokens;   /* per column */
    int64_t *start;    /* training tokens before the first merge */
    /* the window: the last window_size languages chosen by parity */
    uint32_t *ring, *in_window; /* the ring grows as it fills: a window may be huge */
    size_t ring_n, ring_head, ring_cap;
    /* scratch */
    size_t *fresh;     /* pair numbers created by the current merge */
    size_t n_fresh, cap_fresh;
    fbpe_candidate *fresh_lang; /* (language, pair) counted for the first time by the current merge */
    size_t n_fresh_lang, cap_fresh_lang;
    uint32_t *order;   /* candidate languages */
    double *score;
    int started;
    fbpe_parity_merge *merges;
    size_t n_merges, cap_merges;
};

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(addr) __builtin_prefetch(addr)
#else
#define PREFETCH(addr) ((void)0)
#endif

static inline int64_t get_count(const uint32_t *h) {
    int64_t c;
    memcpy(&c, h + 2, sizeof c);
    return c;
}

static fbpe_status init(fbpe_parity *p, const fbpe_parity_options *o) {
    p->o = *o;
    p->o.flags = NULL; /* copied below: the caller's arrays are not kept */
    p->o.ratios = NULL;
    uint32_t L = o->n_langs;
    p->n_columns = o->use_dev ? 2 * L : L;
    if (grow((void **)&p->flags, &p->cap_ids, o->first_id, sizeof(uint32_t))) return FBPE_ENOMEM;
    size_t cap = 0;
    if (grow((void **)&p->lengths, &cap, p->cap_ids, sizeof(uint32_t))) return FBPE_ENOMEM;
    p->cap_ids = cap < p->cap_ids ? cap : p->cap_ids;
    for (uint32_t i = 0; i < o->first_id; i++) {
        p->flags[i] = o->flags[i];
        p->lengths[i] = i < 256 ? 1 : 3; /* a byte, or an atom's private-use character */
    }
    if (o->ratios) {
        double *ratios = (double *)xcalloc(L, sizeof(double));
        if (!ratios) return FBPE_ENOMEM;
        memcpy(ratios, o->ratios, L * sizeof(double));
        p->o.ratios = ratios;
    }
    p->lang = (table *)xcalloc(L, sizeof(table));
    p->heaps = (fbpe_pair_heap *)xcalloc(L + 1, sizeof(fbpe_pair_heap));
    p->tokens = (int64_t *)xcalloc(p->n_columns, sizeof(int64_t));
    p->start = (int64_t *)xcalloc(L, sizeof(int64_t));
    p->in_window = (uint32_t *)xcalloc(L, sizeof(uint32_t));
    p->order = (uint32_t *)xcalloc(L, sizeof(uint32_t));
    p->score = (double *)xcalloc(L, sizeof(double));
    if (!p->lang || !p->heaps || !p->tokens || !p->start || !p->in_window ||
        !p->order || !p->score)
        return FBPE_ENOMEM;
    if (table_init(&p->index, 1024)) return FBPE_ENOMEM;
    for (uint32_t l = 0; l < L; l++)
        if (table_init(&p->lang[l], 64)) return FBPE_ENOMEM;
    return FBPE_OK;
}

fbpe_status fbpe_parity_new(const fbpe_parity_options *o, fbpe_parity **out) {
    *out = NULL;
    if (o->n_langs < 1 || o->n_langs > (1u << 20) || o->first_id < 256 ||
        o->first_id >= UINT32_MAX / 2 || (o->window && o->window_size < 1) ||
        (!o->use_dev && !o->ratios) || !(o->max_token_bytes >= 1))
        return FBPE_EINVALID;
    fbpe_parity *p = (fbpe_parity *)xcalloc(1, sizeof *p);
    if (!p) return FBPE_ENOMEM;
    fbpe_status rc = init(p, o);
    if (rc) {
        fbpe_parity_free(p);
        return rc;
    }
    *out = p;
    return FBPE_OK;
}

void fbpe_parity_free(fbpe_parity *p) {
    if (!p) return;
    xfree(p->flags);
    xfree(p->lengths);
    xfree((void *)p->o.ratios);
    xfree(p->words);
    xfree(p->index.slots);
    for (size_t i = 0; i < p->n_pairs; i++) xfree(p->where[i]);
    xfree(p->keys);
    xfree(p->global);
    xfree(p->where);
    xfree(p->where_n);
    xfree(p->where_cap);
    if (p->lang)
        for (uint32_t l = 0; l < p->o.n_langs; l++) xfree(p->lang[l].slots);
    xfree(p->lang);
    if (p->heaps)
        for (uint32_t l = 0; l <= p->o.n_langs; l++) xfree(p->heaps[l].items);
    xfree(p->heaps);
    xfree(p->tokens);
    xfree(p->start);
    xfree(p->ring);
    xfree(p->in_window);
    xfree(p->fresh);
    xfree(p->fresh_lang);
    xfree(p->order);
    xfree(p->score);
    xfree(p->merges);
    xfree(p);
}

fbpe_status fbpe_parity_add_utf8(fbpe_parity *p, uint32_t column, const uint8_t *s, size_t n,
                                 int64_t count, const int32_t *atom_ids) {
    if (p->started || column >= p->n_columns) return FBPE_EINVALID;
    if (n < 1 || count < 1) return FBPE_OK;
    if (n > SIZE_MAX / 2 || grow((void **)&p->words, &p->cap_words, p->n_words + HEADER + n,
                                 sizeof(uint32_t)))
        return FBPE_ENOMEM;
    uint32_t *out = p->words + p->n_words + HEADER;
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        int32_t cp = atom_ids ? fbpe_utf8_private_use(s, i, n) : -1;
        if (cp >= 0 && atom_ids[cp] >= 0) {
            out[m++] = (uint32_t)atom_ids[cp];
            i += 3;
        } else {
            out[m++] = s[i++];
        }
    }
    /* pieces are named by 32-bit offsets */
    if (p->n_words + HEADER + m > UINT32_MAX) return FBPE_ETOOLONG;
    /* Every count and token total is at most this sum: checked here, never in the loop. */
    if ((int64_t)m > INT64_MAX / count || p->total_symbols > INT64_MAX - count * (int64_t)m)
        return FBPE_EOVERFLOW;
    uint32_t *h = p->words + p->n_words;
    h[0] = (uint32_t)m;
    h[1] = column;
    memcpy(h + 2, &count, sizeof count);
    h[4] = 0;
    p->n_words += HEADER + m;
    p->total_symbols += count * (int64_t)m;
    p->tokens[column] += count * (int64_t)m;
    return FBPE_OK;
}

static inline int mergeable(const fbpe_parity *p, uint32_t a, uint32_t b) {
    return fbpe_can_merge(p->o.policy, p->flags[a], p->flags[b]) &&
           (size_t)p->lengths[a] + p->lengths[b] <= p->o.max_token_bytes;
}

/* The number of the pair `key`, made when absent (and then listed as fresh when `fresh`);
 * (size_t)-1 when out of memory. */
static size_t pair_number(fbpe_parity *p, uint64_t key, int fresh) {
    int created;
    slot *s = table_upsert(&p->index, key, (int64_t)p->n_pairs, &created);
    if (!s) return (size_t)-1;
    if (!created) return (size_t)s->value;
    size_t k = p->n_pairs, cap = p->cap_pairs;
    if (k == cap) {
        size_t c;
        c = cap; if (grow((void **)&p->keys, &c, k + 1, sizeof(uint64_t))) return (size_t)-1;
        c = cap; if (grow((void **)&p->global, &c, k + 1, sizeof(int64_t))) return (size_t)-1;
        c = cap; if (grow((void **)&p->where, &c, k + 1, sizeof(uint32_t *))) return (size_t)-1;
        c = cap; if (grow((void **)&p->where_n, &c, k + 1, sizeof(uint32_t))) return (size_t)-1;
        c = cap; if (grow((void **)&p->where_cap, &c, k + 1, sizeof(uint32_t))) return (size_t)-1;
        p->cap_pairs = c;
    }
    p->keys[k] = key;
    p->global[k] = 0;
    p->where[k] = NULL;
    p->where_n[k] = p->where_cap[k] = 0;
    p->n_pairs++;
    if (fresh) {
        if (grow((void **)&p->fresh, &p->cap_fresh, p->n_fresh + 1, sizeof(size_t)))
            return (size_t)-1;
        p->fresh[p->n_fresh++] = k;
    }
    return k;
}

static fbpe_status where_add(fbpe_parity *p, size_t k, uint32_t piece) {
    uint32_t n = p->where_n[k];
    if (n && p->where[k][n - 1] == piece) return FBPE_OK; /* this piece was just listed */
    if (n == UINT32_MAX) return FBPE_ETOOLONG;
    size_t cap = p->where_cap[k];
    if (grow((void **)&p->where[k], &cap, (size_t)n + 1, sizeof(uint32_t))) return FBPE_ENOMEM;
    p->where_cap[k] = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    p->where[k][n] = piece;
    p->where_n[k] = n + 1;
    return FBPE_OK;
}

/* Replace (a, b) by c in the piece, left to right without overlap; how many were replaced. */
static int64_t rewrite(uint32_t *h, uint32_t a, uint32_t b, uint32_t c) {
    uint32_t len = h[0], *s = h + HEADER, j = 0;
    for (uint32_t i = 0; i < len;) {
        if (i + 1 < len && s[i] == a && s[i + 1] == b) {
            s[j++] = c;
            i += 2;
        } else {
            s[j++] = s[i++];
        }
    }
    h[0] = j;
    return (int64_t)(len - j);
}

static int holds(const uint32_t *h, uint32_t a, uint32_t b) {
    const uint32_t *s = h + HEADER;
    for (uint32_t i = 0; i + 1 < h[0]; i++)
        if (s[i] == a && s[i + 1] == b) return 1;
    return 0;
}

/* Count the pair (x, y) `delta` more times in language `lang` and globally (lang ==
 * NO_LANG: a dev piece, which counts nothing); when `listed`, the piece at `off` joins the
 * pair's where list. A pair that a merge creates is listed as fresh, globally and for each
 * language that gets it, so that it enters those heaps when the merge is done. */
#define NO_LANG UINT32_MAX

static fbpe_status bump(fbpe_parity *p, uint32_t x, uint32_t y, uint32_t lang, int64_t delta,
                        int listed, uint32_t off) {
    if (!mergeable(p, x, y)) return FBPE_OK;
    uint64_t key = fbpe_pair_key(x, y);
    size_t k = pair_number(p, key, p->started);
    if (k == (size_t)-1) return FBPE_ENOMEM;
    if (lang != NO_LANG) {
        p->global[k] += delta;
        int created;
        slot *c = table_upsert(&p->lang[lang], key, 0, &created);
        if (!c) return FBPE_ENOMEM;
        c->value += delta;
        if (created && p->started) {
            if (grow((void **)&p->fresh_lang, &p->cap_fresh_lang, p->n_fresh_lang + 1,
                     sizeof(fbpe_candidate)))
                return FBPE_ENOMEM;
            p->fresh_lang[p->n_fresh_lang].count = lang; /* the language; its count comes later */
            p->fresh_lang[p->n_fresh_lang++].key = key;
        }
    }
    return listed ? where_add(p, k, off) : FBPE_OK;
}

/* Merge (a, b) into c in the piece at `off`, and count what changes, where it changes: next
 * to each occurrence. Before the rewrite, a training piece loses the pair itself, its left
 * neighbour (x, a) and its right neighbour (b, y) -- the latter only when no occurrence
 * starts at y, whose left neighbour it then is, so that no pair is taken out twice. After
 * it, each c gains its left pair (x, c), and its right one (c, y) unless y is a c too. The
 * pairs holding c list the piece. Returns the occurrences replaced in *replaced. */
static fbpe_status merge_piece(fbpe_parity *p, uint32_t off, uint32_t a, uint32_t b, uint32_t c,
                               int64_t *replaced) {
    uint32_t *h = p->words + off, *s = h + HEADER;
    uint32_t len = h[0];
    uint32_t lang = h[1] < p->o.n_langs ? h[1] : NO_LANG;
    int64_t count = get_count(h);
    fbpe_status rc = FBPE_OK;
    if (lang != NO_LANG) {
        for (uint32_t i = 0; i + 1 < len && !rc;) {
            if (s[i] != a || s[i + 1] != b) {
                i++;
                continue;
            }
            rc = bump(p, a, b, lang, -count, 0, off);
            if (!rc && i > 0) rc = bump(p, s[i - 1], a, lang, -count, 0, off);
            if (!rc && i + 2 < len && !(i + 3 < len && s[i + 2] == a && s[i + 3] == b))
                rc = bump(p, b, s[i + 2], lang, -count, 0, off);
            i += 2;
        }
        if (rc) return rc;
    }
    *replaced = rewrite(h, a, b, c);
    len = h[0];
    for (uint32_t j = 0; j < len && !rc; j++) {
        if (s[j] != c) continue;
        if (j > 0) rc = bump(p, s[j - 1], c, lang, count, 1, off);
        if (!rc && j + 1 < len && s[j + 1] != c) rc = bump(p, c, s[j + 1], lang, count, 1, off);
    }
    return rc;
}

/* Count the pairs of the piece at `off` and list it in their where lists (at the start). */
static fbpe_status first_count(fbpe_parity *p, uint32_t off) {
    const uint32_t *h = p->words + off, *s = h + HEADER;
    uint32_t lang = h[1] < p->o.n_langs ? h[1] : NO_LANG;
    int64_t count = get_count(h);
    for (uint32_t i = 0; i + 1 < h[0]; i++) {
        fbpe_status rc = bump(p, s[i], s[i + 1], lang, count, 1, off);
        if (rc) return rc;
    }
    return FBPE_OK;
}

/* The live count of `key` in heap `col` (a language, or n_langs: global). */
static int64_t live_count(const fbpe_parity *p, uint32_t col, uint64_t key) {
    if (col == p->o.n_langs) {
        const slot *s = table_find(&p->index, key);
        return s ? p->global[s->value] : 0;
    }
    const slot *s = table_find(&p->lang[col], key);
    return s ? s->value : 0;
}

/* The best live entry of heap `col` (stale entries fixed on the way), or count 0. */
static fbpe_status best_of(fbpe_parity *p, uint32_t col, fbpe_candidate *best) {
    fbpe_pair_heap *h = &p->heaps[col];
    while (h->n) {
        fbpe_candidate top = h->items[0];
        int64_t live = live_count(p, col, top.key);
        if (live == top.count) {
            *best = top;
            return FBPE_OK;
        }
        fbpe_heap_pop(h);
        if (live > 0 && fbpe_heap_push(h, &live_blocks, live, top.key)) return FBPE_ENOMEM;
    }
    best->count = 0;
    best->key = 0;
    return FBPE_OK;
}

static fbpe_status start(fbpe_parity *p) {
    for (size_t off = 0; off < p->n_words; off += HEADER + p->words[off]) {
        fbpe_status rc = first_count(p, (uint32_t)off);
        if (rc) return rc;
    }
    for (uint32_t l = 0; l < p->o.n_langs; l++) p->start[l] = p->tokens[l];
    p->started = 1;
    for (size_t k = 0; k < p->n_pairs; k++)
        if (p->global[k] > 0 && fbpe_heap_push(&p->heaps[p->o.n_langs], &live_blocks, p->global[k], p->keys[k]))
            return FBPE_ENOMEM;
    for (uint32_t l = 0; l < p->o.n_langs; l++) {
        const table *t = &p->lang[l];
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].key != EMPTY_KEY && t->slots[i].value > 0 &&
                fbpe_heap_push(&p->heaps[l], &live_blocks, t->slots[i].value, t->slots[i].key))
                return FBPE_ENOMEM;
    }
    return FBPE_OK;
}

/* How far behind language l is (larger: worse off), as parity.behind computes it. */
static double behind(const fbpe_parity *p, uint32_t l) {
    if (p->o.use_dev) return (double)p->tokens[p->o.n_langs + l];
    if (!p->start[l]) return 0.0;
    return (double)p->tokens[l] * p->o.ratios[l] / (double)p->start[l];
}

/* The column whose best pair is merged next (n_langs: global) and that pair; FBPE_OK with
 * best->count == 0 when training is over. */
static fbpe_status choose(fbpe_parity *p, uint32_t *col, fbpe_candidate *best) {
    uint32_t L = p->o.n_langs;
    if ((int64_t)p->n_merges < p->o.global_merges) {
        *col = L;
        fbpe_status rc = best_of(p, L, best);
        if (rc) return rc;
        if (best->count < p->o.min_frequency) best->count = 0;
        return FBPE_OK;
    }
    /* the candidates, worst off first (ties: the language given first) */
    size_t n = 0;
    for (uint32_t l = 0; l < L; l++) {
        fbpe_candidate e;
        fbpe_status rc = best_of(p, l, &e);
        if (rc) return rc;
        if (e.count < 1 || e.count < p->o.min_frequency) continue;
        double score = behind(p, l);
        size_t i = n++;
        while (i > 0 && p->score[i - 1] < score) {
            p->score[i] = p->score[i - 1];
            p->order[i] = p->order[i - 1];
            i--;
        }
        p->score[i] = score;
        p->order[i] = l;
    }
    best->count = 0;
    if (!n) return FBPE_OK;
    uint32_t chosen = p->order[0];
    if (p->o.window) {
        for (size_t i = 0; i < n; i++) {
            uint32_t l = p->order[i];
            if ((double)p->in_window[l] * (double)L <= p->o.alpha * (double)p->o.window_size) {
                chosen = l;
                break;
            }
        }
        /* remember it; the oldest choice leaves a full window */
        if (p->ring_n == p->o.window_size) {
            p->in_window[p->ring[p->ring_head]]--;
        } else {
            /* filling: the head is the next free place, ring_n */
            if (grow((void **)&p->ring, &p->ring_cap, p->ring_n + 1, sizeof(uint32_t)))
                return FBPE_ENOMEM;
            p->ring_n++;
        }
        p->ring[p->ring_head] = chosen;
        p->in_window[chosen]++;
        p->ring_head = (p->ring_head + 1) % p->o.window_size;
    }
    *col = chosen;
    return best_of(p, chosen, best);
}

static fbpe_status merge_once(fbpe_parity *p, int *done) {
    uint32_t col;
    fbpe_candidate best;
    fbpe_status rc = choose(p, &col, &best);
    if (rc) return rc;
    if (best.count == 0) {
        *done = 1;
        return FBPE_OK;
    }
    uint32_t a = (uint32_t)(best.key >> 32), b = (uint32_t)best.key;
    size_t id = (size_t)p->o.first_id + p->n_merges;
    if (id >= UINT32_MAX - 1) return FBPE_EIDS;
    uint32_t c = (uint32_t)id;
    const slot *s = table_find(&p->index, best.key);
    if (!s) return FBPE_EINTERNAL;
    size_t k = (size_t)s->value;
    if (grow((void **)&p->merges, &p->cap_merges, p->n_merges + 1, sizeof(fbpe_parity_merge)))
        return FBPE_ENOMEM;
    if (id >= p->cap_ids) {
        size_t cap = p->cap_ids, cap2 = p->cap_ids;
        if (grow((void **)&p->flags, &cap, id + 1, sizeof(uint32_t)) ||
            grow((void **)&p->lengths, &cap2, id + 1, sizeof(uint32_t)))
            return FBPE_ENOMEM;
        p->cap_ids = cap < cap2 ? cap : cap2;
    }
    p->flags[c] = fbpe_merged_flags(p->flags[a], p->flags[b]);
    p->lengths[c] = p->lengths[a] + p->lengths[b];
    fbpe_parity_merge *m = &p->merges[p->n_merges++];
    m->left = a;
    m->right = b;
    m->count = p->global[k];
    m->lang = col == p->o.n_langs ? -1 : (int32_t)col;
    /* The pieces of the pair: its where list, taken whole (none of them will hold it). */
    uint32_t *list = p->where[k], n_list = p->where_n[k];
    p->where[k] = NULL;
    p->where_n[k] = p->where_cap[k] = 0;
    p->n_fresh = p->n_fresh_lang = 0;
    uint32_t stamp = (uint32_t)p->n_merges;
    for (uint32_t i = 0; i < n_list && !rc; i++) {
        /* each visit is about one cache miss: ask for the piece a few visits ahead */
        if (i + 8 < n_list) PREFETCH(p->words + list[i + 8]);
        uint32_t off = list[i], *h = p->words + off;
        if (h[4] == stamp || !holds(h, a, b)) continue;
        h[4] = stamp;
        int64_t replaced = 0;
        rc = merge_piece(p, off, a, b, c, &replaced);
        p->tokens[h[1]] -= replaced * get_count(h);
    }
    xfree(list);
    if (rc) return rc;
    /* the new pairs enter the heaps with their counts after the whole merge */
    for (size_t i = 0; i < p->n_fresh; i++) {
        size_t f = p->fresh[i];
        if (p->global[f] > 0 && fbpe_heap_push(&p->heaps[p->o.n_langs], &live_blocks, p->global[f], p->keys[f]))
            return FBPE_ENOMEM;
    }
    for (size_t i = 0; i < p->n_fresh_lang; i++) {
        uint32_t l = (uint32_t)p->fresh_lang[i].count;
        uint64_t key = p->fresh_lang[i].key;
        int64_t live = live_count(p, l, key);
        if (live > 0 && fbpe_heap_push(&p->heaps[l], &live_blocks, live, key)) return FBPE_ENOMEM;
    }
    return FBPE_OK;
}

fbpe_status fbpe_parity_run(fbpe_parity *p, double seconds) {
    fbpe_status rc;
    if (!p->started && (rc = start(p))) return rc;
    double until = now_seconds() + seconds;
    for (unsigned k = 0;; k++) {
        if (p->o.max_merges >= 0 && (int64_t)p->n_merges >= p->o.max_merges) return FBPE_OK;
        int done = 0;
        rc = merge_once(p, &done);
        if (rc) return rc;
        if (done) {
            p->o.max_merges = (int64_t)p->n_merges; /* a later call returns at once */
            return FBPE_OK;
        }
        if ((k & 15) == 15 && now_seconds() >= until) return FBPE_MORE;
    }
}

size_t fbpe_parity_num_merges(const fbpe_parity *p) { return p->n_merges; }

const fbpe_parity_merge *fbpe_parity_merges(const fbpe_parity *p) { return p->merges; }
