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

/* The next `take` of units [0, n) for this worker, [*first, *last), or 0 when none is left.
 * Many short units are taken several at a time: one at a time, every unit moved the
 * counter's cache line, and the line of units it lies in where the worker writes to its
 * unit, from core to core (encode_text.c, batch_take, has the measurement). */
static inline int fbpe_take_range(size_t *next, size_t take, size_t n, size_t *first, size_t *last) {
    size_t t = fbpe_take_next(next);
    if (t >= n / take + (n % take != 0)) return 0;
    *first = t * take;
    *last = n - *first > take ? *first + take : n;
    return 1;
}

#endif
