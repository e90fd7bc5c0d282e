/* Cutting special tokens out of a text in one pass; see specials.h. */
#include "specials.h"
#include "../common/hash.h"

#include <stdlib.h>
#include <string.h>

/* Windows of at least 64K positions: 256 KB of scratch, and the overlap of a window (the
 * longest token) small next to it for any real token. (A test build may make it tiny.) */
#ifndef FBPE_SPECIALS_WINDOW
#define FBPE_SPECIALS_WINDOW ((size_t)1 << 16)
#endif
#define WINDOW_MIN FBPE_SPECIALS_WINDOW
/* Node ids and token lengths are uint32_t; the automaton is refused beyond this. */
#define MAX_TOTAL ((size_t)1 << 31)



static inline uint32_t child_of(const fbpe_specials *m, uint32_t node, uint8_t byte) {
    if (!node) return m->root_next[byte];
    uint64_t key = ((uint64_t)node << 8 | byte) + 1;
    for (size_t i = fbpe_slot_u64(key, m->edge_shift);; i = (i + 1) & m->edge_mask) {
        if (m->edge_keys[i] == key) return m->edge_child[i];
        if (!m->edge_keys[i]) return 0;
    }
}

static void add_edge(fbpe_specials *m, uint32_t node, uint8_t byte, uint32_t child) {
    if (!node) {
        m->root_next[byte] = child;
        return;
    }
    uint64_t key = ((uint64_t)node << 8 | byte) + 1;
    size_t i = fbpe_slot_u64(key, m->edge_shift);
    while (m->edge_keys[i]) i = (i + 1) & m->edge_mask;
    m->edge_keys[i] = key;
    m->edge_child[i] = child;
}

void fbpe_specials_free(fbpe_specials *m) {
    free(m->fail);
    free(m->longest);
    free(m->edge_keys);
    free(m->edge_child);
    memset(m, 0, sizeof *m);
}

fbpe_status fbpe_specials_build(fbpe_specials *m, const uint8_t *const *tokens, const size_t *lens,
                                size_t num) {
    memset(m, 0, sizeof *m);
    size_t total = 0;
    for (size_t k = 0; k < num; k++) {
        if (lens[k] >= MAX_TOTAL - total) return FBPE_EINVALID;
        total += lens[k];
        if (lens[k] > m->max_len) m->max_len = lens[k];
    }
    size_t cap = total + 1, slots = 16;
    while (slots < 2 * cap) slots <<= 1;
    m->fail = calloc(cap, sizeof *m->fail);
    m->longest = calloc(cap, sizeof *m->longest);
    m->edge_keys = calloc(slots, sizeof *m->edge_keys);
    m->edge_child = malloc(slots * sizeof *m->edge_child);
    m->edge_mask = slots - 1;
    m->edge_shift = fbpe_slot_shift(slots);
    /* The trie's children as lists, for the breadth-first pass; and its queue. */
    uint32_t *first_child = calloc(cap, sizeof *first_child);
    uint32_t *next_sibling = malloc(cap * sizeof *next_sibling);
    uint8_t *byte_of = malloc(cap);
    uint32_t *queue = malloc(cap * sizeof *queue);
    int ok = m->fail && m->longest && m->edge_keys && m->edge_child && first_child &&
             next_sibling && byte_of && queue;
    if (ok) {
        m->num_nodes = 1;
        /* The trie of the reversed tokens; a token's length marks the node where it ends. */
        for (size_t k = 0; k < num; k++) {
            uint32_t node = 0;
            for (size_t j = lens[k]; j-- > 0;) {
                uint8_t b = tokens[k][j];
                uint32_t c = child_of(m, node, b);
                if (!c) {
                    c = (uint32_t)m->num_nodes++;
                    add_edge(m, node, b, c);
                    next_sibling[c] = first_child[node];
                    first_child[node] = c;
                    byte_of[c] = b;
                }
                node = c;
            }
            if (lens[k]) m->longest[node] = (uint32_t)lens[k];
        }
        /* Failure links breadth first, so that a node's failure node (shallower) is done. */
        size_t head = 0, tail = 0;
        for (uint32_t c = first_child[0]; c; c = next_sibling[c]) queue[tail++] = c;
        while (head < tail) {
            uint32_t u = queue[head++];
            for (uint32_t v = first_child[u]; v; v = next_sibling[v]) {
                uint32_t f = m->fail[u], w;
                while (!(w = child_of(m, f, byte_of[v])) && f) f = m->fail[f];
                m->fail[v] = w;
                if (!m->longest[v]) m->longest[v] = m->longest[w];
                queue[tail++] = v;
            }
        }
    }
    free(first_child);
    free(next_sibling);
    free(byte_of);
    free(queue);
    if (!ok) {
        fbpe_specials_free(m);
        return FBPE_ENOMEM;
    }
    return FBPE_OK;
}

size_t fbpe_specials_window(const fbpe_specials *m, size_t n) {
    size_t window = m->max_len > WINDOW_MIN ? m->max_len : WINDOW_MIN;
    return window < n ? window : n;
}

static inline uint32_t step(const fbpe_specials *m, uint32_t state, uint8_t byte) {
    for (;;) {
        uint32_t c = child_of(m, state, byte);
        if (c || !state) return c;
        state = m->fail[state];
    }
}

fbpe_status fbpe_specials_cut(const fbpe_specials *m, const uint8_t *s, size_t n, uint32_t *scratch,
                      fbpe_special_sink emit, void *ctx) {
    if (m->num_nodes <= 1 || !n) return FBPE_OK; /* no token, or no text */
    size_t window = fbpe_specials_window(m, n);
    size_t pos = 0; /* where the scan stands: nothing before it is cut again */
    for (size_t a = 0; a < n; a += window) {
        size_t b = n - a > window ? a + window : n;
        if (pos >= b) continue;
        /* The longest token starting at each i of [a, b) for scratch[i - a]: the automaton,
         * right to left from where a token starting before b can end. */
        size_t hi = n - b > m->max_len - 1 ? b + m->max_len - 1 : n;
        uint32_t state = 0;
        for (size_t j = hi; j > a;) {
            j--;
            state = step(m, state, s[j]);
            if (j < b) scratch[j - a] = m->longest[state];
        }
        for (size_t i = pos > a ? pos : a; i < b; i++) {
            uint32_t len = scratch[i - a];
            if (!len) continue;
            fbpe_status rc = emit(ctx, i, len);
            if (rc) return rc;
            pos = i + len;
            i = pos - 1;
        }
    }
    return FBPE_OK;
}
