/* The BPE encoder core: a merge table applied to pieces, with no Python in sight.
 *
 * A piece is the UTF-8 text form of one pre-tokenized piece (for the plain scheme, just its
 * bytes). Encoding it:
 *
 *   1. a piece that is itself a token (and encodes to itself) is that token: one hash probe;
 *   2. a piece seen before in this cache is looked up (pieces repeat a lot in real text);
 *   3. a long piece is cut where no merge can join across, and each part is encoded
 *      as in 1, 2 and 4 (CJK prose, base64: long pieces that rarely repeat whole);
 *   4. otherwise a piece of at most 64 bytes is read left to right by the backtracking
 *      encoder where it has been built (fbpe_bpe_backtracking), or its symbols (bytes, atoms
 *      as one id each) are merged by rank, lowest merged id first: a plain scan for short pieces, a sweep
 *      over buckets of positions for long ones, so that a megabyte of spaces costs about as
 *      much as a megabyte of prose.
 *
 * The table is read-only once built, so any number of threads may encode with it at once.
 * A call takes the encoder's one shared cache where no other call holds it, and a cache of
 * its own from the encoder's pool where one does (fbpe_cache_take); the workers of one call
 * share its cache (fbpe_cache_share).
 */
#ifndef FBPE_ENCODE_H
#define FBPE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h"
#include "vocab_slots.h" /* fbpe_vocab_slot, FBPE_NO_RANK */

/* A growable array of token ids: where encoded pieces go. */
typedef struct {
    uint32_t *ids;
    size_t len, cap;
} fbpe_ids;

void fbpe_ids_init(fbpe_ids *v);
void fbpe_ids_free(fbpe_ids *v);
/* Room for `extra` more ids. FBPE_OK, or FBPE_ENOMEM (v unchanged). */
fbpe_status fbpe_ids_reserve(fbpe_ids *v, size_t extra);

typedef struct fbpe_cache fbpe_cache;

/* What encoding a long piece as its words needs (encode.c, "a piece in two stages"): the
 * words' ids are the tokens below `limit`, and where two words meet, the bits that show that
 * no merge below it can join across. */
typedef struct {
    uint32_t limit;
    unsigned join_shift; /* fbpe_slot_u64 over 2^(64 - join_shift) bits */
    uint64_t *join_bits; /* join_bits of the merges below limit */
    /* Per byte p, bit c & 63 set when some merge below limit has a left part that ends with
     * p and a right part that begins with a byte c (c & 63 the same): none joins across
     * p | c otherwise. */
    uint64_t meets[256];
} fbpe_words;

/* At most this many cached caches wait in the pool; more concurrent callers make their own. */
#define FBPE_POOL_SIZE 64

typedef struct {
    uint32_t num_fixed;  /* bytes + atoms: the first merge id */
    uint32_t num_tokens; /* bytes + atoms + merges: the ids BPE can produce */
    uint32_t num_ids;    /* plus special tokens: every id that decodes */
    /* Merge k = id num_fixed + k is (merges[2k], merges[2k + 1]): the caller's array,
     * borrowed (fbpe_bpe_new), as the tokenizer keeps it (core/pairs.py). A copy of its own
     * was 8 bytes a merge more: 33 MB of 4.1 million. */
    const uint32_t *merges;

    /* (left, right) -> merged id. Open addressing; key UINT64_MAX is an empty slot. NULL in
     * a compact table, where pair_compact holds the merges' numbers instead (rank_of tests
     * for it first: 0.3% of the instructions of cl100k's English, where putting the test
     * behind a probe of empty slots cost 0.5%). */
    uint64_t *pair_keys;
    uint32_t *pair_ids;
    size_t pair_mask;
    unsigned pair_shift; /* fbpe_slot_u64 (hash.h) */

    /* A large vocabulary's tables (FBPE_COMPACT_FROM tokens or more): 4 bytes a slot
     * (../common/compact_slots.h) instead of 12 a pair and 24 a whole token, for a third of
     * the memory a million merges took (encode.c, "compact tables"). pair_compact holds merge
     * k as k, its key compared in merges; vocab_compact holds a whole token's id, its bytes
     * compared in tok_bytes. */
    int compact;
    uint32_t *pair_compact, *vocab_compact;
    size_t pair_cap, vocab_cap;

    /* Text-form bytes of every id: tok_bytes[tok_off[i] .. tok_off[i+1]) (all of them at
     * most FBPE_MAX_TOTAL_TOKEN_BYTES: 32-bit offsets, 16 MB less for 4.1 million ids). */
    uint32_t *tok_off;
    uint8_t *tok_bytes;
    /* The bytes of the longest token (below num_tokens): a longer piece is no token. */
    size_t longest_token;
    /* One bit, at its key's hash (fbpe_slot_u64 with long_shift), for every token of more
     * than FBPE_INLINE_KEY bytes: a key whose bit is clear is no such token (encode.c,
     * "long tokens"). */
    uint64_t *long_bits;
    unsigned long_shift;

    /* Whole tokens: text-form bytes -> id, for every token whose own bytes encode to it.
     * In a compact table, 16 empty slots (the tokens are in vocab_compact). */
    fbpe_vocab_slot *vocab_slots;
    size_t vocab_mask;
    uint32_t num_self_encoding; /* tokens in vocab_slots */

    /* Where a merge can join: one bit per merged token, set at the hash of the bytes on
     * either side of the point where its two parts meet (up to two each side, and how
     * many). A byte boundary of a piece whose surrounding bytes set no bit is never merged
     * across (encode.c, "cutting a piece"). */
    uint64_t *join_bits;
    unsigned join_shift; /* fbpe_slot_u64 over 2^(64 - join_shift) bits */
    /* One bit per pair of bytes (x << 8 | y): set where some merged token's parts meet
     * between byte x and byte y and one of the parts is that byte alone. Where it is clear,
     * the three windows of join_bits with one byte on a side cannot be set, and only the
     * two-and-two window is probed (encode.c, "cutting a piece"). */
    uint64_t join_lone[1024];

    /* Atoms: atom_of[cp - 0xE000] is the atom id of a private-use code point, 0 when that
     * code point is not an atom. NULL for a scheme without atoms. */
    uint32_t *atom_of;

    /* Characters taken whole (encode.c, "characters taken whole"): char_tokens[cp], for a
     * code point of two or three UTF-8 bytes, the token its bytes merge into where BPE
     * makes that token before anything joins them to their neighbours, whichever byte comes
     * before (cross_before) and after (cross_after); token 0: none. NULL with atoms or
     * joins. */
    struct fbpe_char_token *char_tokens;
    /* The same for a space and the character after it at the start of a piece (" привет"
     * merges " \xd0" before "п"), where no byte comes before. */
    struct fbpe_char_token *space_tokens;
    /* [e * 256 + p]: the lowest id merged from a token ending with byte p and byte e
     * (cross_before), or from byte e and a token beginning with byte p (cross_after);
     * FBPE_NO_RANK: none. */
    uint32_t *cross_before, *cross_after;

    /* Joins: pairs that make a token without being its merge (fbpe_bpe_add_joins). Then a
     * merge may make a pair that ranks before it, and pieces merge by the lowest-ranked,
     * leftmost pair one at a time (merge_heap) rather than one rank at a time. */
    int any_order;
    /* Tokens taken whole when a piece is exactly their bytes although their own bytes merge
     * into other tokens (tiktoken's rule, HF's ignore_merges); NULL when there are none. */
    fbpe_vocab_slot *piece_slots;
    size_t piece_mask;

    /* The backtracking encoder of long pieces (encode.c): a trie of the bytes of every
     * token that encodes to itself, three words a slot (node << 8 | byte, child node, the
     * token ending there or FBPE_NO_RANK; key UINT32_MAX: empty), and for each such token
     * the longest such token that is a proper prefix of it. NULL until
     * fbpe_bpe_backtracking builds them. */
    uint32_t *trie;
    size_t trie_mask;
    unsigned trie_shift;
    uint32_t *next_prefix;

    /* Where the merges of a vocabulary grown in two stages begin their second stage (the
     * first merged id of SuperBPE's superwords, or of any continued training): a long piece
     * is then encoded as the first stage's ids of its words, checked where they meet, and
     * merged on from there (encode.c, "a piece in two stages"). 0: one stage. */
    uint32_t stage_limit;
    /* Where a second-stage merge can join two first-stage ids side by side: one bit per
     * second-stage token at the hash of the pair (the last first-stage id of its left part,
     * the first of its right part). Two neighbours whose pair sets no bit are never merged
     * across (encode.c, "a piece in two stages"). NULL with one stage. */
    uint64_t *stage_join_bits;
    unsigned stage_join_shift; /* fbpe_slot_u64 over 2^(64 - stage_join_shift) bits */
    /* The first stage's merges, for checking where a piece's words meet. */
    fbpe_words stage_one;
    /* Every merge as one first stage: how a piece of a table of distinct pieces is encoded
     * as its words (fbpe_encode_table_piece). Its join bits are join_bits, borrowed; limit
     * 0 where that is not done (atoms, joins). */
    fbpe_words one_stage;

    /* The cache every call takes first (made at the first), held by one call at a time:
     * what one call's pieces taught, the next call knows, whatever its threads. */
    fbpe_cache *shared;
    int shared_held;
    /* Caches for calls made while another holds the shared one, waiting to be taken (a tiny
     * lock guards the array). */
    fbpe_cache *pool[FBPE_POOL_SIZE];
    size_t pool_len;
    int pool_lock;
} fbpe_bpe;

/* Build the table into *out. `atom_cps` gives the code point (U+E000..U+EFFF) of each
 * atom, ids 256 on; `merges` holds 2*num_merges ids (left, right), and is borrowed: it must
 * stay, unchanged, until fbpe_bpe_free; `specials` the UTF-8 bytes of each special token.
 * Returns FBPE_OK, FBPE_ENOMEM, or FBPE_EINVALID when the input
 * breaks a rule: a merge naming an id that does not exist before it, a pair merged twice, an
 * atom outside U+E000..U+EFFF or given twice, a limit of bounds.h passed (ids, one token's
 * bytes, all tokens' bytes). `tables`: FBPE_TABLES_AUTO (compact from FBPE_COMPACT_FROM
 * tokens), or the layout forced (for tests: the ids are the same). */
fbpe_status fbpe_bpe_new(const uint32_t *atom_cps, size_t num_atoms, const uint32_t *merges,
                         size_t num_merges, const uint8_t *const *specials,
                         const size_t *special_lens, size_t num_specials, int tables,
                         fbpe_bpe **out);

/* Vocabularies of at least this many tokens (more than any published one: Gemma's 262,144 is
 * the largest we know) get compact tables. */
#define FBPE_COMPACT_FROM ((size_t)1 << 19)
enum { FBPE_TABLES_AUTO = 0, FBPE_TABLES_WIDE = 1, FBPE_TABLES_COMPACT = 2 };
void fbpe_bpe_free(fbpe_bpe *b);

/* Add `num` joins, triples (left, right, token) in `joins`: the pair (left, right) makes
 * `token` (whose bytes are theirs together) although token's merge is another pair, as
 * tiktoken joins any two adjacent parts whose bytes are a token. `whole_pieces`: a piece that
 * is a token's bytes is that token, even where its bytes merge into others. Call it once,
 * right after fbpe_bpe_new. FBPE_OK, FBPE_ENOMEM, or FBPE_EINVALID (an id out of range, bytes
 * that do not match, a pair given twice). */
fbpe_status fbpe_bpe_add_joins(fbpe_bpe *b, const uint32_t *joins, size_t num, int whole_pieces);

/* Build the backtracking encoder (encode.c) that then encodes pieces of 2-64 bytes (fewer
 * instructions than the short scan, more cache misses) and that fbpe_merge's method 4 runs: a piece's tokens read left to right, each compatible with the
 * one before, without a merge loop. Call it before the table is shared between threads. FBPE_OK, FBPE_ENOMEM, or
 * FBPE_EINVALID for a table with atoms or joins, or with more than 2^24 - 1 trie nodes. */
fbpe_status fbpe_bpe_backtracking(fbpe_bpe *b);

/* Say that the merges from id `limit` on were learned after those before it (a vocabulary
 * grown in two stages); num_fixed or num_tokens: one stage. Any limit gives the same ids (a
 * merge's parts are made before it, so the merges before any limit come first in every
 * piece); the right one makes long pieces cheaper. Call it before the table is shared
 * between threads. FBPE_OK, or FBPE_EINVALID for a limit outside num_fixed..num_tokens, or a
 * table with atoms or joins, where one stage is kept. */
fbpe_status fbpe_bpe_set_stages(fbpe_bpe *b, uint32_t limit);

/* The merged id of the pair (a, b), or FBPE_NO_RANK. Its rank: a lower id merged earlier. */
uint32_t fbpe_rank(const fbpe_bpe *b, uint32_t left, uint32_t right);

/* Apply the merges to ids[0..n) in place, the new length in *len. method: 0 chooses by
 * length, 1 forces the short scan (FBPE_EINVALID beyond 64 symbols), 2 the sweep, 3 the
 * rounds over runs (finishing with the sweep when they give up), 4 the backtracking encoder
 * (FBPE_EINVALID where it is not built or a symbol is not a byte): for tests. FBPE_OK,
 * FBPE_ENOMEM, or FBPE_ETOOLONG for 2^32 - 1 symbols or more. */
fbpe_status fbpe_merge(const fbpe_bpe *b, uint32_t *ids, size_t n, int method, size_t *len);

/* Encode one piece of text-form UTF-8 and append its ids to out. cache may be NULL.
 * readable: how many bytes from s may be read (at least n; more lets short pieces be read
 * with whole-word loads). FBPE_OK or FBPE_ENOMEM. */
fbpe_status fbpe_encode_piece(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s, size_t n,
                              size_t readable, fbpe_ids *out);

/* fbpe_encode_piece for a piece of a table of distinct pieces (continued training replays
 * its base's merges on each, csrc/_encoder.pyx encode_each_piece): never cached whole, since
 * it is seen once, and with one stage, a long one is encoded as its words, each a token or
 * cached, as the first stage of a table of two stages is. The same ids. */
fbpe_status fbpe_encode_table_piece(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s,
                                    size_t n, fbpe_ids *out);

/* fbpe_encode_piece for s[0..n) (n >= 2) that the caller has keyed (fbpe_key_make) and found
 * not to be a whole token (not in vocab_slots). */
fbpe_status fbpe_encode_piece_not_whole(const fbpe_bpe *b, fbpe_cache *cache, const uint8_t *s,
                                        size_t n, size_t readable, fbpe_ids *out,
                                        const fbpe_key *key);

/* fbpe_encode_piece with its two common cases inline, for the loops that scan a text
 * (encode_text.c): a byte, and a piece of at most 16 bytes that is a whole token (o200k,
 * English: 96% of the pieces). Through the general function (a call, its prologue, the key
 * written to memory) this lookup was about 102 instructions a piece, here about 55
 * (callgrind, o200k, English); the probe compares the slot's words first, the length last,
 * as a hit is the common case.
 * A piece that is not a token goes on with its key; anything else takes the general path.
 * slots and mask: b's vocab_slots and vocab_mask, in the caller's locals (through b they
 * were read again for every piece: an id stored may alias them, as far as the compiler
 * knows; 0.7 M instructions of 20.8 M on English). In a compact table they are 16 empty slots,
 * and fbpe_encode_piece_not_whole looks the piece up. */
#if defined(__GNUC__) || defined(__clang__)
#define FBPE_PIECE_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define FBPE_PIECE_INLINE static __forceinline
#else
#define FBPE_PIECE_INLINE static inline
#endif
FBPE_PIECE_INLINE fbpe_status fbpe_encode_piece_inline(const fbpe_bpe *b,
                                                      const fbpe_vocab_slot *slots, size_t mask,
                                                      fbpe_cache *cache, const uint8_t *s,
                                                      size_t n, size_t readable, fbpe_ids *out) {
    if (out->len < out->cap && readable >= FBPE_INLINE_KEY) {
        if (n == 1) {
            out->ids[out->len++] = s[0];
            return FBPE_OK;
        }
        if (n - 2 <= FBPE_INLINE_KEY - 2) {
            uint64_t w[2];
            fbpe_key_words16(s, n, w);
            uint64_t h = fbpe_key_hash_short(w[0], w[1], n);
            uint32_t id = fbpe_slot_find_short(slots, mask, w[0], w[1], n, h);
            if (id != FBPE_NO_RANK) {
                out->ids[out->len++] = id;
                return FBPE_OK;
            }
            /* the key fbpe_key_make would make, kept in registers until here */
            fbpe_key k = {s, n, {w[0], w[1]}, h};
            return fbpe_encode_piece_not_whole(b, cache, s, n, readable, out, &k);
        }
    }
    return fbpe_encode_piece(b, cache, s, n, readable, out);
}

/* The id of the token whose text-form bytes are s[0..n) and which encodes to itself, or
 * FBPE_NO_RANK. */
uint32_t fbpe_whole_token(const fbpe_bpe *b, const uint8_t *s, size_t n);

/* A cache for one thread at a time: the shared one where no other call holds it, else one
 * from the pool, or new (NULL when out of memory). */
fbpe_cache *fbpe_cache_take(fbpe_bpe *b);
/* A worker's cache: `shared` (its call's, from fbpe_cache_share) where not NULL, else one
 * as fbpe_cache_take gives. */
fbpe_cache *fbpe_cache_take_in(fbpe_bpe *b, fbpe_cache *shared);
/* Hand a cache back (the pool frees it when full); a cache shared by a call's threads stays
 * held until fbpe_cache_unshare. */
void fbpe_cache_give(fbpe_bpe *b, fbpe_cache *c);
/* The shared cache made ready for the threads of one call to read and add to at once, with
 * room for the pieces of `bytes` of text made now (nothing in it moves while they work); NULL
 * when another call holds it or memory is short: each thread then takes its own. */
fbpe_cache *fbpe_cache_share(fbpe_bpe *b, size_t bytes);
/* The end of that call: fbpe_cache_give for a cache fbpe_cache_share gave (NULL: nothing). */
void fbpe_cache_unshare(fbpe_bpe *b, fbpe_cache *c);
/* The pieces the shared cache holds (0 while a call holds it), and the caches waiting in the
 * pool: for tests. */
void fbpe_cache_counts(fbpe_bpe *b, size_t *shared_pieces, size_t *pooled);

/* A cache that the caller fills (fbpe_encode_cached): piece bytes -> ids, for pieces of at
 * most 256 bytes (longer ones are never found); emptied when it holds `limit` pieces. */
fbpe_cache *fbpe_cache_new(size_t limit);
void fbpe_cache_delete(fbpe_cache *c);
/* Looking a piece up: fbpe_cache_lookup (piece_cache.h, inline). */
/* Remember s[0..n) -> ids[0..m); out of memory only means it is not remembered. */
void fbpe_cache_store(fbpe_cache *c, const uint8_t *s, size_t n, const uint32_t *ids, size_t m);

/* Total bytes of the tokens ids[0..n) (ids must be < num_ids) into *size; FBPE_OK, or
 * FBPE_EOVERFLOW when that is more than size_t holds. */
fbpe_status fbpe_decoded_size(const fbpe_bpe *b, const uint32_t *ids, size_t n, size_t *size);
/* Write the bytes of ids[0..n) to out (fbpe_decoded_size bytes). */
void fbpe_decode(const fbpe_bpe *b, const uint32_t *ids, size_t n, uint8_t *out);

#endif
