/* Counting pieces: texts in, piece tables out, on several threads.
 *
 * The unit of work is a contiguous UTF-8 text (a document, or a chunk of a file cut at a safe
 * boundary) with its global byte offset. A batch is an array of units; every worker thread
 * calls fbpe_count_batch on the same batch with its own tables and takes units from a shared
 * atomic counter, about 64 KB of text at a time (take_next.h), so a long document does not
 * hold up the others. No Python object is touched: the caller releases the GIL around the
 * call.
 *
 * Each worker splits its counts over P partitions by hash (P = the number of workers), so
 * that merging is parallel too: worker p merges partition p of every worker
 * (fbpe_merge_partition). A piece lands in the same partition in every worker.
 */
#ifndef FBPE_COUNT_H
#define FBPE_COUNT_H

#include "../common/piecetable.h"
#include "../scan/specials.h"
#include "../scan/splitter.h"

typedef struct {
    const uint8_t *data;
    size_t len;
    uint64_t base; /* global offset of data[0]: orders first occurrences across units */
    int validate;  /* check that data is UTF-8 first (bytes from files; a Python str is) */
} fbpe_unit;

typedef struct {
    fbpe_splitter split;
    /* Special tokens, cut out and never counted (NULL: none); see specials.h. */
    const fbpe_specials *specials;
} fbpe_count_config;

typedef struct {
    fbpe_unit *units;
    size_t num_units;
    size_t take; /* units taken at a time (take_next.h's fbpe_take_size; 0 is 1) */
    size_t next; /* the next take; updated atomically */
} fbpe_batch;

/* What went wrong in a worker: FBPE_OK (nothing), FBPE_ENOMEM, or FBPE_EUTF8: invalid UTF-8
 * at `offset` (global) of unit number `unit`. */
typedef struct {
    fbpe_status status;
    uint64_t offset;
    size_t unit;
} fbpe_count_error;

/* One worker's tables: its counts split over `num_parts` partitions by hash. */
typedef struct {
    fbpe_table *parts;
    size_t num_parts;
} fbpe_parts;

/* A worker's pieces of one ASCII byte (a space, a comma, a line end), counted here once the
 * piece is on its way into the worker's table, and added to their entries when its share of
 * a batch is done (fbpe_count_batch): a piece that is one byte takes a compare and an add
 * instead of a key, a hash, two prefetches and a probe. The Functionalizer's pattern makes
 * every space a piece: on English about half of its pieces are one byte, and counting took
 * about three quarters of its scan and count. The first occurrence still goes through the
 * table, so that the entries stay in order of first occurrence. */
typedef struct {
    uint64_t count[128];
    uint8_t seen[128]; /* 1: the piece of this byte has gone into the table */
} fbpe_singles;

/* Whether the piece s[i..e) is one ASCII byte whose entry is on its way: then it is counted
 * in `one` and the caller is done with it. The first such piece is marked and left to the
 * table. (`seen` as bytes, not bits: functionalizer-runs' scan+count 56.7M -> 55.0M.) */
static inline __attribute__((always_inline)) int fbpe_single_counted(fbpe_singles *one, const uint8_t *s,
                                                                     size_t i, size_t e) {
    if (e - i != 1 || s[i] >= 0x80) return 0;
    unsigned c = s[i];
    if (one->seen[c]) {
        one->count[c]++;
        return 1;
    }
    one->seen[c] = 1;
    return 0;
}

static inline fbpe_table *fbpe_part_of(const fbpe_parts *w, uint64_t hash) {
    /* The top 32 bits of the hash, scaled to [0, num_parts): no division. */
    return &w->parts[((hash >> 32) * w->num_parts) >> 32];
}

/* Count the pieces of the batch's units into `w` until no unit is left. A unit with invalid
 * UTF-8 is skipped and the earliest such offset kept in *err (the caller raises); running
 * out of memory stops this worker. */
void fbpe_count_batch(const fbpe_count_config *cfg, const fbpe_parts *w, fbpe_batch *batch,
                      fbpe_count_error *err);

/* Count the pieces of one text into `w` and `one` (special tokens cut out; `one` is added
 * to `w` by the caller). Returns FBPE_OK or FBPE_ENOMEM. */
fbpe_status fbpe_count_text(const fbpe_count_config *cfg, const fbpe_parts *w, fbpe_singles *one,
                            const uint8_t *s, size_t n, uint64_t base);

#endif
