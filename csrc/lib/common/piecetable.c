/* The piece hash table: growing, storing, merging, ordering; see piecetable.h. */
#include "piecetable.h"

#include <stdlib.h>

void fbpe_table_init(fbpe_table *t) { memset(t, 0, sizeof *t); }

void fbpe_table_free(fbpe_table *t) {
    free(t->index);
    free(t->entries);
    free(t->first);
    free(t->arena);
    fbpe_table_init(t);
}

static uint64_t entry_hash(const fbpe_table *t, const fbpe_entry *e) {
    return fbpe_hash_bytes(fbpe_entry_bytes(t, e), e->len);
}

/* Rebuild the index at `capacity` slots from the entries. */
static fbpe_status reindex(fbpe_table *t, size_t capacity) {
    uint64_t *index = calloc(capacity, sizeof *index);
    if (!index) return FBPE_ENOMEM;
    for (size_t n = 0; n < t->size; n++) {
        /* The index keeps only the top half of each hash; growing is rare (the index
         * doubles), so the bytes are hashed again for the low half. */
        uint64_t h = entry_hash(t, &t->entries[n]);
        size_t j = h & (capacity - 1);
        while (index[j]) j = (j + 1) & (capacity - 1);
        index[j] = (h >> 32) << 32 | (uint64_t)(n + 1);
    }
    free(t->index);
    t->index = index;
    t->capacity = capacity;
    return FBPE_OK;
}

fbpe_status fbpe_table_reserve(fbpe_table *t) {
    if (t->size >= FBPE_MAX_ENTRIES) return FBPE_ENOMEM;
    if (t->size + 1 > t->entries_cap) {
        size_t cap = fbpe_grow_to(t->entries_cap, 512, t->size + 1, sizeof(fbpe_entry));
        if (!cap) return FBPE_ENOMEM;
        fbpe_entry *entries = realloc(t->entries, cap * sizeof *entries);
        if (!entries) return FBPE_ENOMEM;
        t->entries = entries;
        uint64_t *first = realloc(t->first, cap * sizeof *first);
        if (!first) return FBPE_ENOMEM; /* entries grew, harmlessly: entries_cap is unchanged */
        t->first = first;
        t->entries_cap = cap;
    }
    if (2 * (t->size + 1) > t->capacity) return reindex(t, t->capacity ? 2 * t->capacity : 1024);
    return FBPE_OK;
}

fbpe_status fbpe_table_store(fbpe_table *t, size_t j, const fbpe_key *k, uint64_t count,
                             uint64_t first) {
    fbpe_entry *e = &t->entries[t->size];
    if (k->len > FBPE_INLINE_KEY) {
        if (k->len > t->arena_cap - t->arena_len) {
            size_t cap = k->len > SIZE_MAX - t->arena_len
                             ? 0
                             : fbpe_grow_to(t->arena_cap, (size_t)1 << 16,
                                            t->arena_len + k->len, 1);
            if (!cap) return FBPE_ENOMEM;
            uint8_t *arena = realloc(t->arena, cap);
            if (!arena) return FBPE_ENOMEM;
            t->arena = arena;
            t->arena_cap = cap;
        }
        memcpy(t->arena + t->arena_len, k->p, k->len);
        e->key[1] = t->arena_len;
        t->arena_len += k->len;
    } else {
        e->key[1] = k->w[1];
    }
    e->key[0] = k->w[0];
    e->len = k->len;
    e->count = count;
    t->first[t->size] = first;
    t->size++;
    t->index[j] = (k->hash >> 32) << 32 | (uint64_t)t->size;
    return FBPE_OK;
}

/* A min-heap of (first occurrence, source) over the heads of several sorted sequences. */
typedef struct {
    uint64_t first;
    size_t source;
} head;

static void sift_down(head *h, size_t n, size_t k) {
    for (;;) {
        size_t l = 2 * k + 1, m = k;
        if (l < n && h[l].first < h[m].first) m = l;
        if (l + 1 < n && h[l + 1].first < h[m].first) m = l + 1;
        if (m == k) return;
        head tmp = h[k];
        h[k] = h[m];
        h[m] = tmp;
        k = m;
    }
}

/* Visit the heads of `count` sequences in order of first occurrence: `next_first` gives a
 * source's next first occurrence (UINT64_MAX when it is done), `take` consumes it. */
typedef uint64_t (*next_first_fn)(void *ctx, size_t source);
typedef fbpe_status (*take_fn)(void *ctx, size_t source);

static fbpe_status k_way(size_t count, void *ctx, next_first_fn next_first, take_fn take) {
    head *heap = malloc((count ? count : 1) * sizeof *heap);
    if (!heap) return FBPE_ENOMEM;
    size_t n = 0;
    for (size_t s = 0; s < count; s++) {
        uint64_t f = next_first(ctx, s);
        if (f != UINT64_MAX) heap[n++] = (head){f, s};
    }
    for (size_t k = n; k-- > 0;) sift_down(heap, n, k);
    fbpe_status rc = FBPE_OK;
    while (n) {
        size_t s = heap[0].source;
        if ((rc = take(ctx, s)) != FBPE_OK) break;
        uint64_t f = next_first(ctx, s);
        if (f == UINT64_MAX)
            heap[0] = heap[--n];
        else
            heap[0].first = f;
        sift_down(heap, n, 0);
    }
    free(heap);
    return rc;
}

typedef struct {
    fbpe_table *out;
    fbpe_table *const *ins;
    size_t *at;
} merge_ctx;

static uint64_t merge_next(void *c, size_t s) {
    merge_ctx *m = c;
    return m->at[s] < m->ins[s]->size ? m->ins[s]->first[m->at[s]] : UINT64_MAX;
}

static fbpe_status merge_take(void *c, size_t s) {
    merge_ctx *m = c;
    const fbpe_table *in = m->ins[s];
    const fbpe_entry *e = &in->entries[m->at[s]];
    fbpe_key key;
    fbpe_key_make(&key, fbpe_entry_bytes(in, e), e->len, 0);
    /* Taken in order of first occurrence: a piece already in `out` was seen earlier. */
    fbpe_status rc = fbpe_table_add(m->out, &key, e->count, in->first[m->at[s]], 1);
    m->at[s]++;
    return rc;
}

/* Make room for n entries at once (no growing, no re-indexing on the way). */
static fbpe_status presize(fbpe_table *t, size_t n) {
    if (n > FBPE_MAX_ENTRIES) n = FBPE_MAX_ENTRIES;
    if (n > t->entries_cap) {
        fbpe_entry *entries = realloc(t->entries, n * sizeof *entries);
        if (!entries) return FBPE_ENOMEM;
        t->entries = entries;
        uint64_t *first = realloc(t->first, n * sizeof *first);
        if (!first) return FBPE_ENOMEM;
        t->first = first;
        t->entries_cap = n;
    }
    size_t capacity = t->capacity ? t->capacity : 1024;
    while (capacity < 2 * n) capacity *= 2;
    return capacity > t->capacity ? reindex(t, capacity) : FBPE_OK;
}

fbpe_status fbpe_merge_in_order(fbpe_table *out, fbpe_table *const *ins, size_t count) {
    /* At most the sum of the inputs' sizes; usually much less (workers see the same
     * frequent pieces), but over-reserving costs less than growing several times. */
    size_t total = 0;
    for (size_t s = 0; s < count; s++) total += ins[s]->size;
    if (presize(out, total)) return FBPE_ENOMEM;
    size_t *at = calloc(count ? count : 1, sizeof *at);
    if (!at) return FBPE_ENOMEM;
    merge_ctx m = {out, ins, at};
    fbpe_status rc = k_way(count, &m, merge_next, merge_take);
    free(at);
    if (rc == FBPE_OK)
        for (size_t s = 0; s < count; s++) fbpe_table_free(ins[s]);
    return rc;
}

typedef struct {
    const fbpe_table *tables;
    size_t *at;
    uint64_t *order;
    size_t done;
} order_ctx;

static uint64_t order_next(void *c, size_t s) {
    order_ctx *o = c;
    return o->at[s] < o->tables[s].size ? o->tables[s].first[o->at[s]] : UINT64_MAX;
}

static fbpe_status order_take(void *c, size_t s) {
    order_ctx *o = c;
    o->order[o->done++] = (uint64_t)s << 32 | o->at[s]++;
    return FBPE_OK;
}

fbpe_status fbpe_order_tables(const fbpe_table *tables, size_t count, uint64_t *order) {
    size_t *at = calloc(count ? count : 1, sizeof *at);
    if (!at) return FBPE_ENOMEM;
    order_ctx o = {tables, at, order, 0};
    fbpe_status rc = k_way(count, &o, order_next, order_take);
    free(at);
    return rc;
}

size_t fbpe_table_memory(const fbpe_table *t) {
    return t->capacity * sizeof(uint64_t) +
           t->entries_cap * (sizeof(fbpe_entry) + sizeof(uint64_t)) +
           t->arena_cap;
}
