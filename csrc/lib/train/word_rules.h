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

/* max_words 0: any number of words; colon_space 0: no token may hold ": ". The same as
 * testing fbpe_joined_shape(left, right), but only the parts of it that the rules read: the
 * trainer asks this of every pair it counts and of every pair a merge changes, and the whole
 * shape cost about 40 instructions a pair (callgrind, SuperBPE's second stage on 9.8 MB of
 * the shared corpora, benchmarks/callgrind_superword_training.py "stage-two": 141 M of the
 * trainer's 899.5 M; 839.1 M with this). */
static inline int fbpe_word_rules_allow(uint32_t max_words, int colon_space, uint32_t left,
                                        uint32_t right) {
    if (!colon_space && (((left | right) & FBPE_HOLDS_COLON_SPACE) ||
                         ((left & FBPE_ENDS_WITH_COLON) && (right & FBPE_STARTS_WITH_SPACE))))
        return 0;
    if (!max_words) return 1;
    uint64_t words = (uint64_t)(left >> FBPE_WORDS_SHIFT) + (right >> FBPE_WORDS_SHIFT);
    if (!(left & FBPE_ENDS_WITH_SPACE) && !(right & FBPE_STARTS_WITH_SPACE) && words) words--;
    if (words > (UINT32_MAX >> FBPE_WORDS_SHIFT)) words = UINT32_MAX >> FBPE_WORDS_SHIFT;
    return words <= max_words;
}

#endif
