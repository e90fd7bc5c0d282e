/* The checks of a merge table, however it was made (core/limits.py check_merges says the
 * rules and words the refusals; this is the same pass over a table too large for a Python
 * loop: 4.1 million merges took 5.9 s there).
 */
#ifndef FBPE_MERGE_TABLE_H
#define FBPE_MERGE_TABLE_H

#include "../common/bounds.h"

/* `merges` holds 2 * num_merges ids (left, right); merge k makes id first_merge + k, and
 * ids below first_merge are bytes (one byte each) and atoms (three). FBPE_OK when each merge
 * joins ids made before it, no pair is merged twice and the tokens (with `special_bytes` of
 * special tokens) keep the limits of bounds.h; FBPE_EINVALID when one of these fails (the
 * Python check then finds which and says why), or FBPE_ENOMEM. */
fbpe_status fbpe_check_merges(const uint32_t *merges, size_t num_merges, size_t first_merge,
                              size_t special_bytes);

#endif
