/* Large tables read at random places, on transparent huge pages where Linux gives them.
 *
 * A table of tens of megabytes probed at a random slot costs a TLB miss as well as a cache
 * miss with 4 KB pages, and callgrind counts neither. A block of 1 MB or more is aligned to
 * 2 MB and advised MADV_HUGEPAGE before it is first touched, so that the pages are huge when
 * the caller fills it. Measured: the encoder's whole-token and pair tables (encode.c,
 * table_alloc) and the trainer's first pair counts (train.c, count_pairs). Where the kernel
 * gives no huge pages, the advice is ignored. Freed with free(). fbpe_huge_malloc's content
 * is not kept (it may read as zeros): its callers fill it; fbpe_huge_calloc's is zeros. */
#ifndef FBPE_HUGE_PAGES_H
#define FBPE_HUGE_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* `bytes` of memory, or NULL; with *zeroed (may be NULL), how many of the first bytes read
 * as zeros. */
static inline void *fbpe_huge_malloc_zeroed(size_t bytes, size_t *zeroed) {
    if (zeroed) *zeroed = 0;
    if (bytes > SIZE_MAX / 2) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)1 << 21;
    if (bytes >= ((size_t)1 << 20)) {
        void *p = NULL;
        if (posix_memalign(&p, huge, bytes)) return NULL;
        /* The block may be memory the process has used before (freed and given out again
         * by malloc), whose small pages are already there: advice alone does not replace
         * them: after Tokenizer.from_tiktoken of o200k the encoder's 30 MB of tables had
         * no huge page at all (AnonHugePages in /proc/self/smaps_rollup). Its whole pages
         * are dropped first (their contents are not wanted: the caller fills the block), so
         * that the first touch after the advice faults in huge ones: 30 MB of huge pages,
         * and o200k one thread 1.02-1.04x the speed on English, 1.02-1.03x on Chinese and
         * 1.04-1.08x on the 22 languages (fresh 100 KB chunks, two processes, each order,
         * medians of 20 pairs). */
        long page = sysconf(_SC_PAGESIZE); /* the kernel rounds a length up to it */
        size_t whole = page > 0 ? bytes & ~((size_t)page - 1) : 0;
        /* dropped, private anonymous pages read as zeros when next touched */
        if (whole && madvise(p, whole, MADV_DONTNEED) == 0 && zeroed) *zeroed = whole;
        madvise(p, (bytes + huge - 1) & ~(huge - 1), MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(bytes ? bytes : 1);
}

/* `bytes` of uninitialised memory, or NULL. */
static inline void *fbpe_huge_malloc(size_t bytes) { return fbpe_huge_malloc_zeroed(bytes, NULL); }

/* `bytes` of zeros, or NULL: only what the kernel does not zero is written. A table that
 * grows (the encoder's piece cache doubles as it fills) was zeroed twice, by the kernel as
 * each page was first touched and by memset: 1.05 M of the 19.36 M instructions of the
 * superword tokenizer's count in benchmarks/callgrind_superwords.py, and 30 MB written at
 * every load of o200k's tables. The pages are now touched, and made huge, where first used. */
static inline void *fbpe_huge_calloc(size_t bytes) {
    size_t zeroed;
    uint8_t *p = (uint8_t *)fbpe_huge_malloc_zeroed(bytes, &zeroed);
    if (p && zeroed < bytes) memset(p + zeroed, 0, bytes - zeroed);
    else if (p && !bytes) p[0] = 0;
    return p;
}

#endif
