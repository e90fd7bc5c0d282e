/* Rank tables: reading tiktoken's files.
 *
 * A .tiktoken file has ranks, not merges; each token's parts are what tiktoken's procedure
 * (merge the adjacent pair whose joined bytes have the lowest rank) makes of its bytes with
 * the ranks below it. Token r is arena[off[r] .. off[r + 1]); ranks are 0 .. num-1. */
#ifndef FBPE_RANKS_H
#define FBPE_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h"

typedef struct fbpe_ranks fbpe_ranks;
/* FBPE_OK, FBPE_ENOMEM, or FBPE_EINVALID (more than FBPE_MAX_VOCAB_SIZE ranks, an empty token
 * or one of more than FBPE_MAX_TOKEN_BYTES). */
fbpe_status fbpe_ranks_new(const uint8_t *arena, const uint32_t *off, uint32_t num,
                           fbpe_ranks **out);
void fbpe_ranks_free(fbpe_ranks *t);
/* How many parts token r comes out as (*parts), in O(n log n) lookups for a token of n
 * bytes, where the first ends (*cut), and when there are two, their ranks (*left, *right;
 * else FBPE_NO_RANK). FBPE_OK or FBPE_ENOMEM. */
fbpe_status fbpe_tiktoken_parts(const fbpe_ranks *t, uint32_t r, size_t *parts, size_t *cut,
                                uint32_t *left, uint32_t *right);

#endif
