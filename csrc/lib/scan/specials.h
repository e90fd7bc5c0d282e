/* Cutting special tokens out of a text in one pass, whatever their number.
 *
 * The rule is patterns.split_special's: scan left to right; where special tokens start, the
 * longest one is cut out and the scan goes on after it. Trying every token at every position
 * costs (text length) x (number of tokens): 20,000 tokens made a megabyte of HTML take
 * seconds to count.
 *
 * Here the question "which is the longest token starting at position i" is answered for
 * every i at once by an Aho-Corasick automaton over the *reversed* tokens, run over the text
 * from right to left: after reading s[i], its state stands for the longest s[i..j] that is
 * the end of some token (a node of the reversed trie), and `longest` of that state is the
 * longest token that s[i..] begins with (the state itself if a token ends there, else the
 * nearest such state along the failure links, whose lengths decrease). Each byte is one
 * transition, amortized over the failure links: linear in the text and in the tokens' total
 * length, with no factor for their number or their length.
 *
 * The answers are needed left to right, so the text is done in windows: the automaton runs
 * from the window's end plus the longest token back to the window's start, then the window
 * is cut left to right. A window is at least as long as the longest token, so the overlap at
 * most doubles the work.
 */
#ifndef FBPE_SPECIALS_H
#define FBPE_SPECIALS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h"

typedef struct {
    size_t num_nodes;      /* node 0 is the root */
    size_t max_len;        /* the longest token, in bytes */
    uint32_t *fail;        /* node -> its failure node */
    uint32_t *longest;     /* node -> the longest token that ends the node's string, or 0 */
    uint32_t root_next[256]; /* the root's transitions (0: stay at the root) */
    uint64_t *edge_keys;   /* open addressing: (node << 8 | byte) + 1, 0 if empty */
    uint32_t *edge_child;
    size_t edge_mask;
    unsigned edge_shift;
} fbpe_specials;

/* Build the automaton of `num` tokens (tokens[k], lens[k] bytes, each non-empty). Returns
 * FBPE_OK, FBPE_ENOMEM, or FBPE_EINVALID when the tokens hold 2^31 bytes or more (then *m is
 * empty). */
fbpe_status fbpe_specials_build(fbpe_specials *m, const uint8_t *const *tokens, const size_t *lens,
                                size_t num);
void fbpe_specials_free(fbpe_specials *m);

/* Where the special tokens of s[0..n) are cut out: emit(ctx, start, len) for each, left to
 * right. `scratch` holds at least fbpe_specials_window(m, n) entries. Stops early and returns
 * what emit returns when that is not FBPE_OK; else FBPE_OK. */
typedef fbpe_status (*fbpe_special_sink)(void *ctx, size_t start, size_t len);
size_t fbpe_specials_window(const fbpe_specials *m, size_t n);
fbpe_status fbpe_specials_cut(const fbpe_specials *m, const uint8_t *s, size_t n, uint32_t *scratch,
                      fbpe_special_sink emit, void *ctx);

#endif
