/* SuperBPE's stage-two token rules, in C: a copy of functionalbpe/core/wordrules.py.
 *
 * The trainer keeps no token's bytes, only each symbol's shape: its word count (above
 * FBPE_WORDS_SHIFT) and four bits about its ends, enough to know the shape of two symbols
 * side by side. wordrules.py is the definition; tests/core/test_wordrules.py trains with
 * the rules in C, in the Python heap and in the lesson (which looks at the bytes
 * themselves) and checks that the merges agree.
 */
#ifndef FBPE_WORD_RULES_H
#define FBPE_WORD_RULES_H

#include <stdint.h>

#define FBPE_STARTS_WITH_SPACE 1u
#define FBPE_ENDS_WITH_SPACE 2u
#define FBPE_ENDS_WITH_COLON 4u
#define FBPE_HOLDS_COLON_SPACE 8u
#define FBPE_WORDS_SHIFT 4

/* The shape of two non-empty tokens joined: a word that ends the left one and one that
 * starts the right one become one word. Word counts saturate rather than wrap. */
static inline uint32_t fbpe_joined_shape(uint32_t left, uint32_t right) {
    uint64_t words = (uint64_t)(left >> FBPE_WORDS_SHIFT) + (right >> FBPE_WORDS_SHIFT);
    if (!(left & FBPE_ENDS_WITH_SPACE) && !(right & FBPE_STARTS_WITH_SPACE) && words) words--;
    if (words > (UINT32_MAX >> FBPE_WORDS_SHIFT)) words = UINT32_MAX >> FBPE_WORDS_SHIFT;
    uint32_t holds = (left | right) & FBPE_HOLDS_COLON_SPACE;
    if ((left & FBPE_ENDS_WITH_COLON) && (right & FBPE_STARTS_WITH_SPACE)) holds = FBPE_HOLDS_COLON_SPACE;
    return ((uint32_t)words << FBPE_WORDS_SHIFT) | holds | (left & FBPE_STARTS_WITH_SPACE) |
           (right & (FBPE_ENDS_WITH_SPACE | FBPE_ENDS_WITH_COLON));
}

/* max_words 0: any number of words; colon_space 0: no token may hold ": ". */
static inline int fbpe_word_rules_allow(uint32_t max_words, int colon_space, uint32_t left,
                                        uint32_t right) {
    uint32_t joined = fbpe_joined_shape(left, right);
    if (!colon_space && (joined & FBPE_HOLDS_COLON_SPACE)) return 0;
    return !max_words || (joined >> FBPE_WORDS_SHIFT) <= max_words;
}

#endif
