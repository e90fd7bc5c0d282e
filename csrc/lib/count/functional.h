/* The Functionalizer's description of distinct pieces, in C.
 *
 * Training describes every distinct raw piece once (functionalbpe/schemes/functional.py,
 * Functionalizer.describe_table); on the standard library that is 130k pieces, and in Python
 * it cost more than counting and merging together. This is the same description for the
 * cases that make up nearly all pieces, at C speed, read from and written to flat tables
 * (no Python object per piece), the counts of the text-form pieces summed in a piece table
 * (piecetable.h):
 *
 *   - no instruction at all (the piece is its own text form);
 *   - REPEAT / MULTIREPEAT: a piece that is a unit repeated k >= 3 times, else each run of
 *     c >= 3 identical characters (functional.describe_repeats, in chunks of 255);
 *   - CAPITALIZE and the accent operators, per character of the base's first 256, from a
 *     table of *character plans* that Python fills one Unicode block (256 code points) at a
 *     time, the first time a block is met: each plan is functional.char_plan's, and the
 *     block's letter, capital and accents are what the Python decoder made of it;
 *   - the self-check: the description is decoded and compared with the piece.
 *
 * What this does not handle it leaves to Python's Functionalizer.describe, which stays the
 * reference (tests compare the two piece for piece): a piece with a character of
 * U+E000..U+EFFF (LITERAL), a character whose plan is not one character at every decoding
 * step, and a piece whose description fails the check (Python then tries repeats alone, then
 * the piece as it is).
 *
 * Why the check can be done here without Unicode tables: a plan is kept in the table only if
 * every step of its decoding (CAPITALIZE, then each mark added with NFC, as
 * functional.apply_instructions does them) keeps one character, so each plan is a
 * substitution of one character that does not depend on its neighbours, and the decoder
 * applies the plans of different positions in an order that does not matter. Repetition is
 * decoded here as apply_instructions does it (last written first, with its range checks),
 * on instructions whose ranges are disjoint and ascending, which is what the describer
 * writes and what is checked before decoding.
 */
#ifndef FBPE_FUNCTIONAL_H
#define FBPE_FUNCTIONAL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/piecetable.h"

#define FBPE_MAX_ARG 255
#define FBPE_HEAD (FBPE_MAX_ARG + 1) /* positions 0..255: the part of a base instructions reach */
#define FBPE_MIN_COUNT 3             /* the fewest copies a repetition makes (MIN_COUNT) */
#define FBPE_MAX_PLAN_OPS 4          /* accent operators one character may take */
#define FBPE_NOT_A_SUBSTITUTION 0xFF /* num_ops of a plan that Python must apply */
#define FBPE_BLOCKS 0x1100           /* code points >> 8 */

/* What fbpe_describe did with a piece; it returns one of these, or FBPE_ENOMEM. */
enum {
    FBPE_DESCRIBED = 0,  /* its text-form pieces are in d->forms */
    FBPE_AS_IS = 1,      /* it is its own text form */
    FBPE_LEAVE = 2,      /* Python describes it */
    FBPE_NEED_BLOCK = 3, /* the plans of block d->need_block are needed first */
};

/* How one character is written: `letter` in the base, the accent operators `ops` (U+E100 +
 * ops[k], in the order written) and CAPITALIZE if `capitalized`; `decoded` is what the
 * decoder makes of that, the character itself. */
typedef struct {
    uint32_t letter;
    uint32_t decoded;
    uint8_t capitalized;
    uint8_t num_ops; /* or FBPE_NOT_A_SUBSTITUTION */
    uint8_t ops[FBPE_MAX_PLAN_OPS];
} fbpe_char_plan;

/* REPEAT (end == pos + 1, written without `end`) or MULTIREPEAT over base[pos:end]. */
typedef struct {
    uint8_t multi;
    uint8_t pos, count;
    uint16_t end;
} fbpe_repeat;

typedef struct {
    int repeat, split_operators;
    /* Character plans: plan_of_block[cp >> 8] is -1 while the block is unknown, else the
     * index of its row in `rows`, whose entry cp & 255 is 0 (no plan) or 1 + a plan's index. */
    int32_t plan_of_block[FBPE_BLOCKS];
    uint16_t (*rows)[256];
    size_t num_rows, rows_cap;
    fbpe_char_plan *plans;
    size_t num_plans, plans_cap;
    uint32_t need_block;
    /* Scratch for one piece: its code points, its base, the prefix function. */
    uint32_t *cps, *base, *border;
    size_t cps_cap;
    fbpe_repeat repeats[FBPE_HEAD];
    size_t num_repeats;
    uint16_t planned[FBPE_HEAD]; /* base positions with a plan, ascending */
    uint16_t plan_at[FBPE_HEAD]; /* their plan numbers (1 + index) */
    size_t num_planned;
    /* The text-form pieces of the last FBPE_DESCRIBED piece, UTF-8: form k is
     * out[form_end[k - 1] .. form_end[k]) (form_end[-1] = 0). `out` has 16 bytes to spare
     * past its last form, for the piece table's key loads. */
    uint8_t *out;
    size_t out_cap;
    size_t *form_end;
    size_t num_forms, forms_cap;
} fbpe_describer;

void fbpe_describer_init(fbpe_describer *d, int repeat, int split_operators);
void fbpe_describer_free(fbpe_describer *d);

/* Install the plans of block `block`: `cps[k]` (in the block) is written as `plans[k]`; the
 * block's other code points have none. FBPE_OK, FBPE_ENOMEM, or FBPE_EINVALID past 65,535
 * plans. */
fbpe_status fbpe_describer_add_block(fbpe_describer *d, uint32_t block, const uint32_t *cps,
                             const fbpe_char_plan *plans, size_t n);

/* Describe one piece (UTF-8, s[0..len)): what the enum above says, or FBPE_ENOMEM. */
int fbpe_describe(fbpe_describer *d, const uint8_t *s, size_t len);

/* Add `count` occurrences of the UTF-8 form p[0..len) to `t`, first met at `first` (see
 * FBPE_FIRST); `readable`: bytes that may be read from p, as for fbpe_key_make. FBPE_OK or
 * FBPE_ENOMEM. */
fbpe_status fbpe_count_form(fbpe_table *t, const uint8_t *p, size_t len, size_t readable,
                            uint64_t count, uint64_t first);

/* Training's passes over a flat table of distinct pieces (piece i is
 * data[offsets[i] .. offsets[i + 1]), occurring counts[i] times).
 *
 * Most pieces are their own text form, and they are distinct, so they are not put in a
 * table: that would be one insertion into a table of all the pieces, each a cache miss.
 * The first pass marks them (as_is[i] = 1; the caller zeroes as_is) and adds the forms of
 * the others to `t`, a table of only the described forms, small enough to stay in cache.
 * It stops at the first piece that is not FBPE_DESCRIBED or FBPE_AS_IS and returns that
 * outcome (or FBPE_ENOMEM) with *next at the piece (the caller deals with it and calls
 * again from *next + 1 or *next); it returns FBPE_DESCRIBED with *next = n when all are
 * done.
 *
 * The second pass (merge) moves the count of each marked piece that is also a form in `t`
 * (a base `hello` of `Hello` met as `hello` too) into that form's entry and unmarks it; it
 * returns the number of pieces still marked. The result is the marked pieces and the
 * entries of `t`; fbpe_describe_order puts them in order of first occurrence, as a loop
 * over the pieces in order, adding each one's forms in order, would meet them: order[k] is
 * a piece number, or FBPE_FORM_ENTRY | an entry of `t` (room for kept + t->size). The
 * first occurrence of form f of piece i is FBPE_FIRST(i, f). FBPE_OK or FBPE_ENOMEM. */
#define FBPE_FIRST(i, f) ((uint64_t)(i) << 12 | (uint64_t)(f)) /* a piece has < 4096 forms */
#define FBPE_FORM_ENTRY (1ull << 63)
int fbpe_describe_flat(fbpe_describer *d, fbpe_table *t, const uint8_t *data,
                       const int64_t *offsets, const int64_t *counts, size_t n, size_t *next,
                       uint8_t *as_is);
size_t fbpe_describe_merge(fbpe_table *t, const uint8_t *data, size_t data_len,
                           const int64_t *offsets, const int64_t *counts, size_t n, uint8_t *as_is);
fbpe_status fbpe_describe_order(const fbpe_table *t, const uint8_t *as_is, size_t n,
                                uint64_t *order);

#endif
