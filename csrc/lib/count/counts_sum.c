/* Adding counted tables together (counts_sum.h). */
#include "counts_sum.h"

#include "../common/hash.h"

/* The checks of one flat table, before anything is added: a table is taken whole or not at
 * all, except for an overflow, which only the sums can show. */
static fbpe_status check_flat(size_t data_len, const int64_t *offsets, const int64_t *counts,
                              size_t n, size_t *bad) {
    if (offsets[0] != 0) {
        *bad = 0;
        return FBPE_EINVALID;
    }
    for (size_t i = 0; i < n; i++) {
        if (offsets[i + 1] <= offsets[i] || (uint64_t)offsets[i + 1] > data_len || counts[i] < 1) {
            *bad = i;
            return FBPE_EINVALID;
        }
    }
    if ((uint64_t)offsets[n] != data_len) {
        *bad = n ? n - 1 : 0;
        return FBPE_EINVALID;
    }
    return FBPE_OK;
}

fbpe_status fbpe_counts_add(fbpe_table *t, uint64_t table, const uint8_t *data, size_t data_len,
                           const int64_t *offsets, const int64_t *counts, size_t n, size_t *bad) {
    fbpe_status status = check_flat(data_len, offsets, counts, n, bad);
    if (status) return status;
    /* A piece repeated within one table would be summed silently: such a table is not one
     * that any count makes. The entries' first-occurrence slots, which a sum never needs
     * (its entries are in order already), hold the number of the last table that added to
     * each entry: a hit on an entry this table has added to already is a repeat. */
    for (size_t i = 0; i < n; i++) {
        size_t at = (size_t)offsets[i], len = (size_t)(offsets[i + 1] - offsets[i]);
        fbpe_key k;
        fbpe_key_make(&k, data + at, len, data_len - at);
        fbpe_entry *e = fbpe_table_find(t, &k);
        if (e) {
            size_t at_entry = (size_t)(e - t->entries);
            if (t->first[at_entry] == table) {
                *bad = i;
                return FBPE_EINVALID;
            }
            t->first[at_entry] = table;
            if (e->count > (uint64_t)INT64_MAX - (uint64_t)counts[i]) {
                *bad = i;
                return FBPE_EOVERFLOW;
            }
            e->count += (uint64_t)counts[i];
        } else {
            /* New pieces are appended: the entries are in order of first appearance. */
            status = fbpe_table_add(t, &k, (uint64_t)counts[i], table, 1);
            if (status) {
                *bad = i;
                return status;
            }
        }
    }
    return FBPE_OK;
}
