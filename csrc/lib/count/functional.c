/* The Functionalizer's description of distinct pieces; see functional.h. Each step names the
 * Python function (functionalbpe/schemes/functional.py) it mirrors. */
#include "functional.h"
#include "../common/utf8.h"

#include <stdlib.h>
#include <string.h>

#define ARG0 0xE000u
#define CAPITALIZE 0xE100u
#define REPEAT 0xE200u
#define MULTIREPEAT 0xE201u

void fbpe_describer_init(fbpe_describer *d, int repeat, int split_operators) {
    memset(d, 0, sizeof *d);
    d->repeat = repeat;
    d->split_operators = split_operators;
    for (size_t b = 0; b < FBPE_BLOCKS; b++) d->plan_of_block[b] = -1;
}

void fbpe_describer_free(fbpe_describer *d) {
    free(d->rows);
    free(d->plans);
    free(d->cps);
    free(d->base);
    free(d->border);
    free(d->out);
    free(d->form_end);
    int repeat = d->repeat, split = d->split_operators;
    fbpe_describer_init(d, repeat, split);
}

/* Room for `want` items of `size` bytes at *buf (capacity *cap). */
static fbpe_status grow(void **buf, size_t *cap, size_t want, size_t size) {
    if (want <= *cap) return FBPE_OK;
    size_t cap2 = fbpe_grow_to(*cap, 64, want, size);
    if (!cap2) return FBPE_ENOMEM;
    void *p = realloc(*buf, cap2 * size);
    if (!p) return FBPE_ENOMEM;
    *buf = p;
    *cap = cap2;
    return FBPE_OK;
}

fbpe_status fbpe_describer_add_block(fbpe_describer *d, uint32_t block, const uint32_t *cps,
                                     const fbpe_char_plan *plans, size_t n) {
    if (block >= FBPE_BLOCKS || d->plan_of_block[block] >= 0) return FBPE_OK;
    /* plan numbers are 16-bit; Unicode has about 2,500 plans */
    if (d->num_plans + n > 0xFFFF) return FBPE_EINVALID;
    size_t rows_cap = d->rows_cap, plans_cap = d->plans_cap;
    if (grow((void **)&d->rows, &rows_cap, d->num_rows + 1, sizeof *d->rows)) return FBPE_ENOMEM;
    d->rows_cap = rows_cap;
    if (grow((void **)&d->plans, &plans_cap, d->num_plans + n, sizeof *d->plans))
        return FBPE_ENOMEM;
    d->plans_cap = plans_cap;
    uint16_t *row = d->rows[d->num_rows];
    memset(row, 0, sizeof d->rows[0]);
    for (size_t k = 0; k < n; k++) {
        if (cps[k] >> 8 != block) continue;
        d->plans[d->num_plans] = plans[k];
        row[cps[k] & 255] = (uint16_t)(++d->num_plans);
    }
    d->plan_of_block[block] = (int32_t)d->num_rows++;
    return FBPE_OK;
}

/* ---- UTF-8 ---- */

/* Decode s[0..len) into out (room for len code points); lone surrogates are accepted, as
 * Python's "surrogatepass" writes them. Returns the number of code points, or (size_t)-1 if
 * s is not UTF-8. */
static size_t utf8_decode(const uint8_t *s, size_t len, uint32_t *out) {
    size_t n = 0, k;
    int incomplete;
    for (size_t i = 0; i < len; i += k)
        if (!(k = fbpe_utf8_char(s, i, len, 1, &out[n++], &incomplete))) return (size_t)-1;
    return n;
}

static inline uint8_t *put_utf8(uint8_t *o, uint32_t c) { return o + fbpe_utf8_put(c, o); }

/* ---- repetition: functional.describe_repeats ---- */

/* Whether s[0..n) is a unit of p <= 255 characters repeated k >= 3 times, and then p:
 * functional._period with functional._repeats_whole, by the prefix function. The period of
 * the whole is at least that of each prefix, so the scan stops as soon as a prefix's period
 * is too long, which for most words is within a few characters. One version for code
 * points, one for the bytes of an ASCII piece. */
#define DEFINE_WHOLE_PERIOD(NAME, T)                                                           \
    static size_t NAME(const T *s, size_t n, uint32_t *border) {                               \
        size_t limit = n / 3 < FBPE_MAX_ARG ? n / 3 : FBPE_MAX_ARG;                            \
        if (limit == 0) return 0;                                                              \
        border[0] = 0;                                                                         \
        for (size_t i = 1; i < n; i++) {                                                       \
            uint32_t k = border[i - 1];                                                        \
            while (k && s[i] != s[k]) k = border[k - 1];                                       \
            if (s[i] == s[k]) k++;                                                             \
            border[i] = k;                                                                     \
            if (i + 1 - k > limit) return 0;                                                   \
        }                                                                                      \
        /* The shortest period divides n whenever any period below n does (Fine and Wilf). */ \
        size_t p = n - border[n - 1];                                                          \
        return n % p == 0 && p <= limit ? p : 0;                                               \
    }

DEFINE_WHOLE_PERIOD(whole_period, uint32_t)
DEFINE_WHOLE_PERIOD(whole_period_ascii, uint8_t)

/* functional._describe_run: `unit` (width characters) repeated `count` times at base
 * position `pos`, appended to the base at *blen; returns the position after it. */
static size_t describe_run(fbpe_describer *d, const uint32_t *unit, size_t width, size_t count,
                           size_t pos, size_t *blen) {
    while (count >= 3 && pos + (width > 1 ? width : 0) <= FBPE_MAX_ARG) {
        size_t chunk = count < FBPE_MAX_ARG ? count : FBPE_MAX_ARG;
        fbpe_repeat *r = &d->repeats[d->num_repeats++];
        r->multi = width > 1;
        r->pos = (uint8_t)pos;
        r->end = (uint16_t)(pos + width);
        r->count = (uint8_t)chunk;
        memcpy(d->base + *blen, unit, width * sizeof *unit);
        *blen += width;
        pos += width;
        count -= chunk;
    }
    for (size_t k = 0; k < count; k++) {
        memcpy(d->base + *blen, unit, width * sizeof *unit);
        *blen += width;
    }
    return pos + width * count;
}

/* The repetition instructions of cps[0..n) into d->repeats and their base into d->base;
 * returns the base's length (the base is cps itself when there is no instruction). */
static size_t describe_repeats(fbpe_describer *d, size_t n) {
    const uint32_t *s = d->cps;
    size_t blen = 0;
    d->num_repeats = 0;
    size_t period = whole_period(s, n, d->border);
    if (period) {
        describe_run(d, s, period, n / period, 0, &blen);
        return blen;
    }
    size_t pos = 0, last = 0, i = 0;
    while (i + 2 < n) {
        if (s[i] != s[i + 1] || s[i] != s[i + 2]) {
            i++;
            continue;
        }
        size_t j = i + 3;
        while (j < n && s[j] == s[i]) j++;
        memcpy(d->base + blen, s + last, (i - last) * sizeof *s);
        blen += i - last;
        pos += i - last;
        pos = describe_run(d, s + i, 1, j - i, pos, &blen);
        last = i = j;
    }
    if (!d->num_repeats) return n;
    memcpy(d->base + blen, s + last, (n - last) * sizeof *s);
    return blen + n - last;
}

/* ---- the self-check: functional._decode on instructions + base ---- */

/* Decode the description (repeats, plans, base b[0..blen)) as functional.apply_instructions
 * does, comparing with the piece's n code points as it goes. */
static int decodes_back(const fbpe_describer *d, const uint32_t *b, size_t blen, size_t n) {
    /* Case and accents first: each plan puts its decoded character at its position. */
    uint32_t head[FBPE_HEAD];
    size_t h = blen < FBPE_HEAD ? blen : FBPE_HEAD;
    memcpy(head, b, h * sizeof *b);
    for (size_t q = 0; q < d->num_planned; q++)
        head[d->planned[q]] = d->plans[d->plan_at[q] - 1].decoded;
    /* Then repeats, last written first. Written ranges ascend without overlapping, so each
     * expansion leaves the positions of those before it alone, and the result is each range
     * expanded in place; apply_instructions' checks on each are kept. */
    size_t prev_end = 0;
    for (size_t k = 0; k < d->num_repeats; k++) {
        const fbpe_repeat *r = &d->repeats[k];
        if (r->pos < prev_end || r->end <= r->pos || (r->multi && r->end - r->pos < 2) ||
            r->end > blen || r->count < FBPE_MIN_COUNT)
            return 0;
        prev_end = r->end;
    }
    size_t i = 0, j = 0, k = 0;
    const uint32_t *s = d->cps;
#define AT(x) ((x) < FBPE_HEAD ? head[x] : b[x])
    while (i < blen) {
        if (k < d->num_repeats && d->repeats[k].pos == i) {
            const fbpe_repeat *r = &d->repeats[k++];
            size_t width = r->end - r->pos;
            if (j + width * r->count > n) return 0;
            for (size_t c = 0; c < r->count; c++)
                for (size_t t = 0; t < width; t++)
                    if (s[j++] != AT(r->pos + t)) return 0;
            i = r->end;
        } else {
            if (j >= n || s[j++] != AT(i)) return 0;
            i++;
        }
    }
#undef AT
    return j == n;
}

/* ---- writing the text-form pieces ---- */

static inline uint8_t *put_instruction(uint8_t *o, uint32_t op, const uint32_t *args, size_t n) {
    o = put_utf8(o, op);
    for (size_t k = 0; k < n; k++) o = put_utf8(o, ARG0 + args[k]);
    return o;
}

static fbpe_status write_forms(fbpe_describer *d, const uint32_t *b, size_t blen) {
    size_t instructions = d->num_repeats, ops = 0;
    for (size_t q = 0; q < d->num_planned; q++) {
        const fbpe_char_plan *p = &d->plans[d->plan_at[q] - 1];
        ops += p->num_ops + p->capitalized;
    }
    instructions += ops;
    /* An instruction is at most 4 code points of 3 bytes; a character at most 4 bytes. */
    size_t need = instructions * 12 + blen * 4 + 16;
    if (grow((void **)&d->out, &d->out_cap, need, 1)) return FBPE_ENOMEM;
    if (grow((void **)&d->form_end, &d->forms_cap, instructions + 1, sizeof *d->form_end))
        return FBPE_ENOMEM;
    uint8_t *o = d->out;
    size_t f = 0;
#define END_FORM() \
    if (d->split_operators) d->form_end[f++] = (size_t)(o - d->out)
    /* Repetition first, then accents, then capitals, positions ascending: the order of
     * Functionalizer.describe (repeats + _char_instructions). */
    for (size_t k = 0; k < d->num_repeats; k++) {
        const fbpe_repeat *r = &d->repeats[k];
        uint32_t args[3] = {r->pos, r->multi ? r->end : r->count, r->count};
        o = put_instruction(o, r->multi ? MULTIREPEAT : REPEAT, args, r->multi ? 3 : 2);
        END_FORM();
    }
    for (size_t q = 0; q < d->num_planned; q++) {
        const fbpe_char_plan *p = &d->plans[d->plan_at[q] - 1];
        uint32_t pos = d->planned[q];
        for (size_t m = 0; m < p->num_ops; m++) {
            o = put_instruction(o, 0xE100u + p->ops[m], &pos, 1);
            END_FORM();
        }
    }
    for (size_t q = 0; q < d->num_planned; q++) {
        if (!d->plans[d->plan_at[q] - 1].capitalized) continue;
        uint32_t pos = d->planned[q];
        o = put_instruction(o, CAPITALIZE, &pos, 1);
        END_FORM();
    }
#undef END_FORM
    for (size_t i = 0; i < blen; i++) o = put_utf8(o, b[i]);
    d->form_end[f++] = (size_t)(o - d->out);
    d->num_forms = f;
    return FBPE_OK;
}

/* ---- one piece: Functionalizer.describe ---- */

/* Most pieces of code are ASCII and their own text form: no plan in the first 256
 * characters (in ASCII only A-Z have one), no run of 3, no repetition of a unit. That is
 * decided here on the bytes, in loops without branches, before anything is decoded. */
static int ascii_as_is(fbpe_describer *d, const uint8_t *s, size_t len) {
    int32_t row = d->plan_of_block[0];
    if (row < 0) return 0; /* the general path asks for block 0 */
    uint8_t high = 0;
    for (size_t i = 0; i < len; i++) high |= s[i];
    if (high & 0x80) return 0;
    const uint16_t *plans = d->rows[row];
    unsigned planned = 0;
    size_t h = len < FBPE_HEAD ? len : FBPE_HEAD;
    for (size_t i = 0; i < h; i++) planned |= plans[s[i]];
    if (planned) return 0;
    if (!d->repeat) return 1;
    unsigned run = 0;
    for (size_t i = 2; i < len; i++) run |= (s[i] == s[i - 1]) & (s[i] == s[i - 2]);
    return !run && !whole_period_ascii(s, len, d->border);
}

int fbpe_describe(fbpe_describer *d, const uint8_t *s, size_t len) {
    size_t cap = d->cps_cap;
    if (len > cap) {
        size_t c = cap;
        if (grow((void **)&d->cps, &c, len, sizeof *d->cps)) return FBPE_ENOMEM;
        c = cap;
        if (grow((void **)&d->base, &c, len, sizeof *d->base)) return FBPE_ENOMEM;
        c = cap;
        if (grow((void **)&d->border, &c, len, sizeof *d->border)) return FBPE_ENOMEM;
        d->cps_cap = c;
    }
    if (ascii_as_is(d, s, len)) return FBPE_AS_IS;
    /* U+E000..U+EFFF, written with LITERAL, are exactly the characters whose UTF-8 starts
     * with 0xEE. */
    if (memchr(s, 0xEE, len)) return FBPE_LEAVE;
    size_t n = utf8_decode(s, len, d->cps);
    if (n == (size_t)-1) return FBPE_LEAVE;
    size_t blen = n;
    d->num_repeats = 0;
    if (d->repeat) blen = describe_repeats(d, n);
    uint32_t *b = d->num_repeats ? d->base : d->cps;
    /* Character plans in the first 256 characters of the base (Functionalizer._plan_chars). */
    d->num_planned = 0;
    size_t h = blen < FBPE_HEAD ? blen : FBPE_HEAD;
    const uint16_t *row = NULL;
    uint32_t row_block = UINT32_MAX; /* the characters of a piece are mostly of one block */
    for (size_t i = 0; i < h; i++) {
        if (b[i] >> 8 != row_block) {
            row_block = b[i] >> 8;
            int32_t r = d->plan_of_block[row_block];
            if (r < 0) {
                d->need_block = row_block;
                return FBPE_NEED_BLOCK;
            }
            row = d->rows[r];
        }
        uint16_t plan = row[b[i] & 255];
        if (!plan) continue;
        if (d->plans[plan - 1].num_ops == FBPE_NOT_A_SUBSTITUTION) return FBPE_LEAVE;
        d->planned[d->num_planned] = (uint16_t)i;
        d->plan_at[d->num_planned++] = plan;
    }
    if (!d->num_repeats && !d->num_planned) return FBPE_AS_IS;
    if (d->num_planned) {
        /* The written base: each planned character replaced by its letter. */
        if (b != d->base) memcpy(d->base, b, blen * sizeof *b);
        b = d->base;
        for (size_t q = 0; q < d->num_planned; q++)
            b[d->planned[q]] = d->plans[d->plan_at[q] - 1].letter;
    }
    if (!decodes_back(d, b, blen, n)) return FBPE_LEAVE;
    return write_forms(d, b, blen) ? FBPE_ENOMEM : FBPE_DESCRIBED;
}

fbpe_status fbpe_count_form(fbpe_table *t, const uint8_t *p, size_t len, size_t readable,
                            uint64_t count, uint64_t first) {
    fbpe_key key;
    fbpe_key_make(&key, p, len, readable);
    return fbpe_table_add(t, &key, count, first, 1);
}

int fbpe_describe_flat(fbpe_describer *d, fbpe_table *t, const uint8_t *data,
                       const int64_t *offsets, const int64_t *counts, size_t n, size_t *next,
                       uint8_t *as_is) {
    for (size_t i = *next; i < n; i++) {
        int status = fbpe_describe(d, data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]));
        if (status == FBPE_AS_IS) {
            as_is[i] = 1;
            continue;
        }
        if (status != FBPE_DESCRIBED) {
            *next = i;
            return status;
        }
        size_t start = 0;
        for (size_t f = 0; f < d->num_forms; f++) {
            size_t end = d->form_end[f];
            if (fbpe_count_form(t, d->out + start, end - start, d->out_cap - start,
                                (uint64_t)counts[i], FBPE_FIRST(i, f))) {
                *next = i;
                return FBPE_ENOMEM;
            }
            start = end;
        }
    }
    *next = n;
    return FBPE_DESCRIBED;
}

size_t fbpe_describe_merge(fbpe_table *t, const uint8_t *data, size_t data_len,
                           const int64_t *offsets, const int64_t *counts, size_t n,
                           uint8_t *as_is) {
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (!as_is[i]) continue;
        fbpe_key key;
        size_t len = (size_t)(offsets[i + 1] - offsets[i]);
        fbpe_key_make(&key, data + offsets[i], len, data_len - (size_t)offsets[i]);
        fbpe_entry *e = fbpe_table_find(t, &key);
        if (e) {
            size_t j = (size_t)(e - t->entries);
            e->count += (uint64_t)counts[i];
            if (FBPE_FIRST(i, 0) < t->first[j]) t->first[j] = FBPE_FIRST(i, 0);
            as_is[i] = 0;
        } else {
            kept++;
        }
    }
    return kept;
}

typedef struct {
    uint64_t first;
    size_t entry;
} by_first;

static int compare_first(const void *a, const void *b) {
    uint64_t x = ((const by_first *)a)->first, y = ((const by_first *)b)->first;
    return (x > y) - (x < y);
}

fbpe_status fbpe_describe_order(const fbpe_table *t, const uint8_t *as_is, size_t n,
                                uint64_t *order) {
    by_first *entries = malloc((t->size ? t->size : 1) * sizeof *entries);
    if (!entries) return FBPE_ENOMEM;
    for (size_t j = 0; j < t->size; j++) entries[j] = (by_first){t->first[j], j};
    qsort(entries, t->size, sizeof *entries, compare_first);
    size_t k = 0, j = 0;
    for (size_t i = 0; i < n; i++) {
        if (!as_is[i]) continue;
        for (; j < t->size && entries[j].first < FBPE_FIRST(i, 0); j++)
            order[k++] = FBPE_FORM_ENTRY | entries[j].entry;
        order[k++] = i;
    }
    for (; j < t->size; j++) order[k++] = FBPE_FORM_ENTRY | entries[j].entry;
    free(entries);
    return FBPE_OK;
}
