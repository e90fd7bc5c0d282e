/* What the two merge loops (train.c, train_parity.c) share: a monotonic clock, for their
 * time slices, and allocation counted in a counter of the caller's, so that the tests can
 * see every block of each loop come back (fbpe_live_blocks, fbpe_parity_live_blocks). */
#ifndef FBPE_COUNTED_H
#define FBPE_COUNTED_H

#include <stddef.h>
#include <stdlib.h>

#include "../common/bounds.h" /* fbpe_status, fbpe_grow_to */

#if defined(_WIN32)
#include <windows.h>
static inline double fbpe_now_seconds(void) {
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
}
#else
#include <time.h>
static inline double fbpe_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif

/* Add d to *live and return the new value (atomically where the compiler can). */
static inline long fbpe_count_blocks(long *live, long d) {
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_add_fetch(live, d, __ATOMIC_RELAXED);
#else
    return *live += d;
#endif
}

static inline void *fbpe_counted_malloc(long *live, size_t size) {
    void *p = malloc(size ? size : 1);
    if (p) fbpe_count_blocks(live, 1);
    return p;
}

static inline void *fbpe_counted_calloc(long *live, size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p) fbpe_count_blocks(live, 1);
    return p;
}

/* Grow *p to hold `want` elements of `size` bytes (doubling). FBPE_OK or FBPE_ENOMEM. */
static inline fbpe_status fbpe_counted_grow(long *live, void **p, size_t *cap, size_t want,
                                            size_t size) {
    if (want <= *cap) return FBPE_OK;
    size_t n = fbpe_grow_to(*cap, 8, want, size);
    if (!n) return FBPE_ENOMEM;
    void *q = realloc(*p, n * size);
    if (!q) return FBPE_ENOMEM;
    if (!*p) fbpe_count_blocks(live, 1);
    *p = q;
    *cap = n;
    return FBPE_OK;
}

static inline void fbpe_counted_free(long *live, void *p) {
    if (p) {
        free(p);
        fbpe_count_blocks(live, -1);
    }
}

#endif
