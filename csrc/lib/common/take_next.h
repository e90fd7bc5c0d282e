/* Handing units of work to threads: each worker takes the next index from a shared counter,
 * so that a long unit does not hold up the others. Used by counting (count.c) and encoding
 * (encode_text.c). */
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

#endif
