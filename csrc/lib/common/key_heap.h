/* A binary min-heap of 64-bit keys in heap[0..*len), the caller's array: the encoder's sweep
 * pops its ranks from one, and tiktoken's procedure (encode/ranks.c) its (rank << 32 |
 * position), so that the lowest rank comes first and the leftmost of equal ranks first, the
 * pair the procedure merges next. */
#ifndef FBPE_KEY_HEAP_H
#define FBPE_KEY_HEAP_H

#include <stddef.h>
#include <stdint.h>

static inline void fbpe_key_push(uint64_t *heap, size_t *len, uint64_t key) {
    size_t i = (*len)++;
    while (i && heap[(i - 1) / 2] > key) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = key;
}

static inline uint64_t fbpe_key_pop(uint64_t *heap, size_t *len) {
    uint64_t top = heap[0], last = heap[--*len];
    size_t i = 0, n = *len;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap[c + 1] < heap[c]) c++;
        if (heap[c] >= last) break;
        heap[i] = heap[c];
        i = c;
    }
    if (n) heap[i] = last;
    return top;
}

#endif
