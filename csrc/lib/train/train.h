/* The BPE merge loop in plain C: counted pieces in, merge table out.
 * See train.c for the data layout, the cost of one merge and what was measured. */
#ifndef FBPE_TRAIN_H
#define FBPE_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h" /* the status codes */

typedef struct fbpe_pieces fbpe_pieces;
typedef struct fbpe_trainer fbpe_trainer;

typedef struct {
    uint32_t left, right;
    int64_t count; /* how often the pair occurred when it was merged */
} fbpe_trained_merge;

/* The distinct pieces, stored back to back. A piece with a count below 1 or fewer than two
 * symbols has no pair and is dropped, as the reference drops it. */
fbpe_pieces *fbpe_pieces_new(void);
void fbpe_pieces_free(fbpe_pieces *counted);
/* Room for a piece of n symbols (write them, then commit); NULL when out of memory. */
uint32_t *fbpe_pieces_reserve(fbpe_pieces *counted, size_t n);
fbpe_status fbpe_pieces_commit(fbpe_pieces *counted, size_t n, int64_t count);
/* A piece in UTF-8 text form: each byte is a symbol, except that a private-use character
 * U+E000..U+EFFF whose atom_ids entry (indexed by code point - 0xE000) is not -1 is that atom
 * id. atom_ids may be NULL (no atoms). */
fbpe_status fbpe_pieces_add_utf8(fbpe_pieces *counted, const uint8_t *text, size_t n, int64_t count,
                                 const int32_t *atom_ids);

/* A new trainer, *out, over the counted pieces (which it borrows and rewrites in place).
 * flags: the kind flags of ids 0 .. first_id-1; lengths: their text-form bytes, or NULL when
 * they are bytes (1) and atoms (3) only — continued training passes the base's tokens'
 * lengths. max_merges < 0: until no pair is left. A pair whose token would be longer than
 * max_token_bytes is never merged, as a pair the policy forbids is never merged: what
 * training makes, a tokenizer file can hold (FBPE_MAX_TOKEN_BYTES). shapes: NULL, or the
 * shapes of ids 0 .. first_id-1 (word_rules.h), and then a pair whose token has more than
 * max_words words (0: any number) or holds ": " (unless colon_space) is never merged either.
 * threads: how many threads may count the first pairs (fbpe_trainer_count): each the pairs
 * of a part of the pair table where there are about shard_min_pairs distinct pairs or more,
 * else each the pairs of a run of the pieces where there are range_min_pieces pieces or
 * more; the merges are the same for any number. */
fbpe_status fbpe_trainer_new(fbpe_pieces *counted, uint32_t first_id, const uint32_t *flags,
                             const uint32_t *lengths, int policy, int64_t max_merges,
                             int64_t min_frequency, size_t max_token_bytes, const uint32_t *shapes,
                             uint32_t max_words, int colon_space, size_t threads,
                             size_t shard_min_pairs, size_t range_min_pieces, fbpe_trainer **out);
/* Count the first pairs: call it on up to fbpe_trainer_shards threads at once (at most
 * `threads`; each call takes a part of the pair table until none is left, so one call alone
 * counts them all), then, once every call has returned, fbpe_trainer_counted, which says how
 * it went. */
size_t fbpe_trainer_shards(const fbpe_trainer *trainer);
void fbpe_trainer_count(fbpe_trainer *trainer);
fbpe_status fbpe_trainer_counted(fbpe_trainer *trainer);
/* Merge until done (FBPE_OK) or until about `seconds` have passed (FBPE_MORE; at least one
 * merge is made), or an error. */
fbpe_status fbpe_trainer_run(fbpe_trainer *trainer, double seconds);
size_t fbpe_trainer_num_merges(const fbpe_trainer *trainer);
const fbpe_trained_merge *fbpe_trainer_merges(const fbpe_trainer *trainer);
void fbpe_trainer_free(fbpe_trainer *trainer);

/* For a training trace: from now on, note for each merge the pair that came second (the
 * pair with the next best key, the same rule; count 0 when there was none at min_frequency
 * or above). fbpe_trainer_runner_ups has one entry per merge, or is NULL when never asked. */
void fbpe_trainer_keep_runner_ups(fbpe_trainer *trainer);
const fbpe_trained_merge *fbpe_trainer_runner_ups(const fbpe_trainer *trainer);

/* Blocks allocated by this file and not yet freed (all trainers together): the tests check
 * that it returns to where it was after every path, interrupts and errors included. */
long fbpe_live_blocks(void);

#endif
