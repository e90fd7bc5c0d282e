/* Adding counted tables together: the merge of piece counts made anywhere (a shard, a worker,
 * a file), into one table whose memory is bounded by the result.
 *
 * A table arrives flat, as Python holds it (functionalbpe/core/piecetable.py): `data` holds
 * the UTF-8 pieces back to back, piece i is data[offsets[i] .. offsets[i + 1]) and occurs
 * counts[i] times. Tables are added one after another into a piece hash table
 * (piecetable.h); a piece not yet held is appended, so the result lists the pieces in order
 * of first appearance over the tables in the order they were added: for tables counted on
 * consecutive shards of a corpus, the order of first occurrence in the whole corpus, as one
 * count of everything would give.
 *
 * Counts are signed 64-bit on the Python side: a sum past 2^63 - 1 is an error
 * (FBPE_EOVERFLOW), never a wrapped count, and never saturated either, which would change
 * the merges silently.
 */
#ifndef FBPE_COUNTS_SUM_H
#define FBPE_COUNTS_SUM_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h"
#include "../common/piecetable.h"

/* Add the flat table (n pieces, data_len bytes) into `t`, as table number `table`: a number
 * the caller gives each table it adds, distinct from the others' (1, 2, 3, ...). Offsets must start at 0, go up at
 * every piece (no empty piece) and end at data_len, and counts must be at least 1: else
 * FBPE_EINVALID and `t` unchanged. A piece given twice in one table is FBPE_EINVALID too, a
 * sum of counts past 2^63 - 1 is FBPE_EOVERFLOW, and either, like FBPE_ENOMEM, leaves part of
 * the table added: `t` must then be thrown away. *bad is the index of the piece at fault. */
fbpe_status fbpe_counts_add(fbpe_table *t, uint64_t table, const uint8_t *data, size_t data_len,
                           const int64_t *offsets, const int64_t *counts, size_t n, size_t *bad);

#endif
