/* The merge policy of training.md, in C: a copy of functionalbpe/core/alphabet.py.
 *
 * alphabet.can_merge and alphabet.merged_flags are the definition; the trainer (and the
 * encoder) need them inside loops that hold no Python objects, so they carry this copy.
 * tests/core/test_fast_trainer.py compares both functions with the Python ones for every
 * combination of flags and every policy, and the constants with alphabet's.
 */
#ifndef FBPE_MERGE_POLICY_H
#define FBPE_MERGE_POLICY_H

#include <stdint.h>

/* Kind flags (alphabet.TEXT ...); a merged token ORs the kinds of its parts. */
#define FBPE_TEXT 1u
#define FBPE_OPERATOR 2u
#define FBPE_BOUNDARY 4u
#define FBPE_SHIFT 8u
#define FBPE_KIND_MASK 15u
#define FBPE_STARTS_WITH_BOUNDARY 16u
#define FBPE_ENDS_WITH_BOUNDARY 32u
/* alphabet.SHIFT_MERGES: a shift code that merges as text does (carried on by merges) */
#define FBPE_SHIFT_MERGES 64u

/* alphabet.POLICY_CODES */
#define FBPE_POLICY_ATOMIC 0
#define FBPE_POLICY_PREFIX 1
#define FBPE_POLICY_FREE 2

static inline uint32_t fbpe_merged_flags(uint32_t left, uint32_t right) {
    return ((left | right) & (FBPE_KIND_MASK | FBPE_SHIFT_MERGES)) |
           (left & FBPE_STARTS_WITH_BOUNDARY) | (right & FBPE_ENDS_WITH_BOUNDARY);
}

static inline int fbpe_can_merge(int policy, uint32_t left, uint32_t right) {
    uint32_t kinds = (left | right) & FBPE_KIND_MASK;
    if ((kinds & FBPE_SHIFT) && !((left | right) & FBPE_SHIFT_MERGES)) return 0;
    /* two touching markers stand for one space: keep them apart under every policy */
    if ((left & FBPE_ENDS_WITH_BOUNDARY) && (right & FBPE_STARTS_WITH_BOUNDARY)) return 0;
    if (kinds & FBPE_OPERATOR) {
        if (policy == FBPE_POLICY_ATOMIC) return 0;
        if (policy == FBPE_POLICY_PREFIX) return kinds == FBPE_OPERATOR;
    }
    return 1;
}

/* True when no symbol made from these base flags can ever be refused a merge: then the
 * trainer skips the policy check altogether (the plain scheme). */
static inline int fbpe_policy_never_refuses(const uint32_t *flags, uint32_t n) {
    const uint32_t risky =
        FBPE_OPERATOR | FBPE_SHIFT | FBPE_STARTS_WITH_BOUNDARY | FBPE_ENDS_WITH_BOUNDARY;
    for (uint32_t i = 0; i < n; i++)
        if (flags[i] & risky) return 0;
    return 1;
}

#endif
