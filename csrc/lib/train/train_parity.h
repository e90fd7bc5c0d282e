/* Parity-aware BPE: the merges of functionalbpe/core/parity.py, made incrementally.
 * See train_parity.c for the bookkeeping. */
#ifndef FBPE_TRAIN_PARITY_H
#define FBPE_TRAIN_PARITY_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h" /* the status codes */

typedef struct fbpe_parity fbpe_parity;

typedef struct {
    uint32_t first_id;      /* ids below are bytes and atoms; merges count up from here */
    const uint32_t *flags;  /* kind flags of ids 0 .. first_id-1 (merge_policy.h) */
    int policy;             /* FBPE_POLICY_* */
    size_t max_token_bytes; /* a pair whose token would be longer is never merged */
    int64_t max_merges;     /* < 0: until no language can take part */
    int64_t min_frequency;  /* a language takes part while its best pair reaches this */
    uint32_t n_langs;       /* training columns 0 .. n_langs-1 */
    int use_dev;            /* dev columns n_langs .. 2 n_langs - 1 measure who is behind */
    const double *ratios;   /* else: the target ratio of each language (n_langs entries) */
    int window;             /* the moving-window variant */
    uint32_t window_size;
    double alpha;
    int64_t global_merges;  /* the first merges by the global count (the hybrid) */
} fbpe_parity_options;

typedef struct {
    uint32_t left, right;
    int64_t count; /* the pair's global count when it was merged */
    int32_t lang;  /* the language whose count chose it; -1 in the global phase */
} fbpe_parity_merge;

/* A new trainer with the options (copied; flags and ratios too), or an error. */
fbpe_status fbpe_parity_new(const fbpe_parity_options *options, fbpe_parity **out);
/* One piece of column `column` (a training language, or n_langs + a dev language), in UTF-8
 * text form: each byte a symbol, except a private-use character whose atom_ids entry
 * (indexed by code point - 0xE000) is not -1, which is that atom. atom_ids may be NULL. A
 * piece with a count below 1 or no symbol is left out. Before the first run only. */
fbpe_status fbpe_parity_add_utf8(fbpe_parity *p, uint32_t column, const uint8_t *text, size_t n,
                                 int64_t count, const int32_t *atom_ids);
/* Merge until done (FBPE_OK) or until about `seconds` have passed (FBPE_MORE), or an error.
 * The first call counts the pairs. */
fbpe_status fbpe_parity_run(fbpe_parity *p, double seconds);
size_t fbpe_parity_num_merges(const fbpe_parity *p);
const fbpe_parity_merge *fbpe_parity_merges(const fbpe_parity *p);
void fbpe_parity_free(fbpe_parity *p);

/* Blocks allocated by this file and not yet freed, for the tests. */
long fbpe_parity_live_blocks(void);

#endif
