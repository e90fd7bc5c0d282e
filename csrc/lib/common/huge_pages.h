/* Large tables read at random places, on transparent huge pages where Linux gives them.
 *
 * A table of tens of megabytes probed at a random slot costs a TLB miss as well as a cache
 * miss with 4 KB pages, and callgrind counts neither. A block of 1 MB or more is aligned to
 * 2 MB and advised MADV_HUGEPAGE before it is first touched, so that the pages are huge when
 * the caller fills it. Measured: the encoder's whole-token and pair tables (encode.c,
 * table_alloc) and the trainer's first pair counts (train.c, count_pairs). Where the kernel
 * gives no huge pages, the advice is ignored. Freed with free(). */
#ifndef FBPE_HUGE_PAGES_H
#define FBPE_HUGE_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

/* `bytes` of uninitialised memory, or NULL. */
static inline void *fbpe_huge_malloc(size_t bytes) {
    if (bytes > SIZE_MAX / 2) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)1 << 21;
    if (bytes >= ((size_t)1 << 20)) {
        void *p = NULL;
        if (posix_memalign(&p, huge, bytes)) return NULL;
        madvise(p, (bytes + huge - 1) & ~(huge - 1), MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(bytes ? bytes : 1);
}

#endif
