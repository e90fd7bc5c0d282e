/* Handing units of work to threads: each worker takes the next index from a shared counter,
 * so that a long unit does not hold up the others. Used by counting (count.c), encoding
 * (encode_text.c), packing (pack.c) and the ints of a batch's lists (_encoder.pyx). */
#ifndef FBPE_TAKE_NEXT_H
#define FBPE_TAKE_NEXT_H

#include <stddef.h>

#if defined(_MSC_VER)
#include <windows.h>
static inline size_t fbpe_take_next(size_t *next) {
    return (size_t)InterlockedIncrement64((volatile LONG64 *)next) - 1;
}
#else
static inline size_t fbpe_take_next(size_t *next) {
    return __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
}
#endif

/* How many of n units (bytes of text in all) a worker takes at a time on `threads` threads:
 * about FBPE_TAKE_BYTES of text, and at least FBPE_TAKES_PER_THREAD takes a thread where
 * there are enough units, so that the last takes still share out evenly. Taken one at a
 * time, every unit moved the counter's cache line, and the line of units it lies in where a
 * worker writes to its unit, from core to core: on 661,086 short lines (30 MB, cl100k),
 * fbpe_encode_batch's own share of the profile (perf) went from 2.7% on one thread to 14.6%
 * on two, and two threads spent 1.47 times the CPU time of one. */
enum { FBPE_TAKE_BYTES = 64 * 1024, FBPE_TAKES_PER_THREAD = 64 };

static inline size_t fbpe_take_size(size_t n, size_t bytes, size_t threads) {
    if (!n || !threads) return 1;
    size_t take = FBPE_TAKE_BYTES / (bytes / n + 1), most = n / threads / FBPE_TAKES_PER_THREAD;
    if (take > most) take = most;
    return take ? take : 1;
}

/* The next `take` of units [0, n) for this worker, [*first, *last), or 0 when none is left. */
static inline int fbpe_take_range(size_t *next, size_t take, size_t n, size_t *first, size_t *last) {
    size_t t = fbpe_take_next(next);
    if (t >= n / take + (n % take != 0)) return 0;
    *first = t * take;
    *last = n - *first > take ? *first + take : n;
    return 1;
}

#endif
