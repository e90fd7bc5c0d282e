/* The piece hash table: growing, storing, merging, ordering; see piecetable.h. */
#include "piecetable.h"

#include <stdlib.h>

void fbpe_table_init(fbpe_table *t) { memset(t, 0, sizeof *t); }

void fbpe_table_free(fbpe_table *t) {
    free(t->slots);
    free(t->first);
    free(t->arena);
    fbpe_table_init(t);
}

int fbpe_table_reserve(fbpe_table *t) {
    if (2 * (t->size + 1) <= t->capacity) return 0;
    size_t capacity = t->capacity ? 2 * t->capacity : 1024;
    fbpe_entry *slots = calloc(capacity, sizeof *slots);
    uint64_t *first = malloc(capacity * sizeof *first);
    if (!slots || !first) {
        free(slots);
        free(first);
        return -1;
    }
    for (size_t k = 0; k < t->capacity; k++) {
        const fbpe_entry *e = &t->slots[k];
        if (!e->count) continue;
        /* The slot index comes from the low hash bits, which the entry does not keep:
         * rehash its bytes (growing is rare; the table doubles). */
        fbpe_key key;
        fbpe_key_make(&key, fbpe_entry_bytes(t, e), fbpe_entry_len(e), 0);
        size_t j = key.hash & (capacity - 1);
        while (slots[j].count) j = (j + 1) & (capacity - 1);
        slots[j] = *e;
        first[j] = t->first[k];
    }
    free(t->slots);
    free(t->first);
    t->slots = slots;
    t->first = first;
    t->capacity = capacity;
    return 0;
}

int fbpe_table_store(fbpe_table *t, size_t j, const fbpe_key *k, uint64_t count, uint64_t first) {
    fbpe_entry *e = &t->slots[j];
    if (k->len > FBPE_INLINE_KEY) {
        if (t->arena_len + k->len > t->arena_cap) {
            size_t cap = t->arena_cap ? t->arena_cap : (size_t)1 << 16;
            while (cap < t->arena_len + k->len) cap *= 2;
            uint8_t *arena = realloc(t->arena, cap);
            if (!arena) return -1;
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
    e->meta = fbpe_key_meta(k);
    e->count = count;
    t->first[j] = first;
    t->size++;
    return 0;
}

int fbpe_table_merge(fbpe_table *dst, const fbpe_table *src) {
    for (size_t j = 0; j < src->capacity; j++) {
        const fbpe_entry *e = &src->slots[j];
        if (!e->count) continue;
        fbpe_key key;
        fbpe_key_make(&key, fbpe_entry_bytes(src, e), fbpe_entry_len(e), 0);
        if (fbpe_table_add(dst, &key, e->count, src->first[j], 0) < 0) return -1;
    }
    return 0;
}

typedef struct {
    uint64_t first;
    size_t slot;
} first_slot;

static int by_first(const void *a, const void *b) {
    uint64_t x = ((const first_slot *)a)->first, y = ((const first_slot *)b)->first;
    return (x > y) - (x < y);
}

size_t *fbpe_table_in_order(const fbpe_table *t) {
    size_t n = t->size ? t->size : 1;
    size_t *order = malloc(n * sizeof *order);
    first_slot *pairs = malloc(n * sizeof *pairs);
    if (!order || !pairs) {
        free(order);
        free(pairs);
        return NULL;
    }
    size_t m = 0;
    for (size_t j = 0; j < t->capacity; j++) {
        if (!t->slots[j].count) continue;
        pairs[m].first = t->first[j];
        pairs[m].slot = j;
        m++;
    }
    /* Two pieces never share a first occurrence, so the order is total. */
    qsort(pairs, m, sizeof *pairs, by_first);
    for (size_t k = 0; k < m; k++) order[k] = pairs[k].slot;
    free(pairs);
    return order;
}

size_t fbpe_table_memory(const fbpe_table *t) {
    return t->capacity * (sizeof(fbpe_entry) + sizeof(uint64_t)) + t->arena_cap;
}
