#include "merge_table.h"

#include "../common/hash.h"

#include <stdlib.h>
#include <string.h>

#define ATOM_BYTES 3 /* a private-use character of U+E000..U+EFFF in UTF-8 */

/* The first merge that repeats an earlier pair, or num_merges: an open-addressed set of
 * (left << 32 | right), at most half full; UINT64_MAX (never a pair of ids below 2^22) is
 * an empty slot. */
static fbpe_status first_repeat(const uint32_t *merges, size_t num_merges, size_t *at) {
    size_t cap = 2;
    while (cap < 2 * num_merges + 2) cap *= 2;
    uint64_t *slots = (uint64_t *)malloc(fbpe_array_bytes(cap, sizeof(uint64_t)));
    if (!slots) return FBPE_ENOMEM;
    memset(slots, 0xFF, cap * sizeof(uint64_t));
    unsigned shift = fbpe_slot_shift(cap);
    size_t mask = cap - 1, k;
    for (k = 0; k < num_merges; k++) {
        uint64_t key = (uint64_t)merges[2 * k] << 32 | merges[2 * k + 1];
        size_t i = fbpe_slot_u64(key, shift);
        while (slots[i] != UINT64_MAX && slots[i] != key) i = (i + 1) & mask;
        if (slots[i] == key) break;
        slots[i] = key;
    }
    free(slots);
    *at = k;
    return FBPE_OK;
}

fbpe_status fbpe_check_merges(const uint32_t *merges, size_t num_merges, size_t first_merge,
                              size_t special_bytes) {
    if (first_merge < 256 || first_merge > FBPE_MAX_VOCAB_SIZE ||
        num_merges > FBPE_MAX_VOCAB_SIZE - first_merge || special_bytes > FBPE_MAX_TOTAL_TOKEN_BYTES)
        return FBPE_EINVALID;
    /* Each length is below 2^20 and the total stops at the first token past its limit, so
     * no sum here overflows. */
    uint32_t *lengths = (uint32_t *)malloc(fbpe_array_bytes(first_merge + num_merges, sizeof(uint32_t)));
    if (!lengths) return FBPE_ENOMEM;
    size_t total = special_bytes, k;
    for (k = 0; k < first_merge; k++) {
        lengths[k] = k < 256 ? 1 : ATOM_BYTES;
        total += lengths[k];
    }
    for (k = 0; k < num_merges && total <= FBPE_MAX_TOTAL_TOKEN_BYTES; k++) {
        size_t made = first_merge + k;
        uint32_t a = merges[2 * k], b = merges[2 * k + 1];
        if (a >= made || b >= made) break;
        size_t size = (size_t)lengths[a] + lengths[b];
        if (size > FBPE_MAX_TOKEN_BYTES) break;
        lengths[made] = (uint32_t)size;
        total += size;
    }
    free(lengths);
    if (k < num_merges || total > FBPE_MAX_TOTAL_TOKEN_BYTES) return FBPE_EINVALID;
    size_t repeat;
    fbpe_status rc = first_repeat(merges, num_merges, &repeat);
    if (rc) return rc;
    return repeat < num_merges ? FBPE_EINVALID : FBPE_OK;
}
