/* Byte-level BPE vocabularies read without a Python object per entry (bytelevel_read.h). */
#include "bytelevel_read.h"
#include "json_text.h"
#include "compact_slots.h"
#include "hash.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define BL_INLINE static inline __attribute__((always_inline))
#else
#define BL_INLINE static inline
#endif

/* GPT-2's characters run from '!' to U+0143: byte_of[c] is the byte character c stands for,
 * -1 for a character of no byte (the space among them: it is written U+0120). */
#define BL_CHARS 0x144

typedef struct {
    int16_t byte_of[BL_CHARS];
    /* byte_of, but -1 for the two characters a JSON string cannot hold as themselves ('"'
     * and '\\'): a character that read_string takes as it is (a lookup and a store, where
     * the tests for each special character were half of reading a tokenizer.json). */
    int16_t plain[BL_CHARS];
} bl_chars;

static void make_chars(bl_chars *ch) {
    int extra = 0;
    for (int c = 0; c < BL_CHARS; c++) ch->byte_of[c] = -1;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        ch->byte_of[printable ? b : 0x100 + extra++] = (int16_t)b;
    }
    memcpy(ch->plain, ch->byte_of, sizeof ch->plain);
    ch->plain['"'] = ch->plain['\\'] = -1;
}

typedef struct {
    uint8_t *p;
    size_t len, cap;
} bl_buf;

static fbpe_status buf_grow(bl_buf *b, uint8_t c) {
    {
        size_t cap = fbpe_grow_to(b->cap, 256, b->len + 1, 1);
        uint8_t *grown = cap ? (uint8_t *)realloc(b->p, cap) : NULL;
        if (!grown) return FBPE_ENOMEM;
        b->p = grown;
        b->cap = cap;
    }
    b->p[b->len++] = c;
    return FBPE_OK;
}

BL_INLINE fbpe_status buf_push(bl_buf *b, uint8_t c) {
    if (b->len == b->cap) return buf_grow(b, c);
    b->p[b->len++] = c;
    return FBPE_OK;
}

/* Make room for `want` uint32 in *p (capacity *cap). */
static fbpe_status grow_u32(uint32_t **p, size_t *cap, size_t want) {
    if (want <= *cap) return FBPE_OK;
    size_t cap2 = fbpe_grow_to(*cap, 1024, want, sizeof(uint32_t));
    uint32_t *grown = cap2 ? (uint32_t *)realloc(*p, cap2 * sizeof(uint32_t)) : NULL;
    if (!grown) return FBPE_ENOMEM;
    *p = grown;
    *cap = cap2;
    return FBPE_OK;
}

static int hex_digit(uint32_t c) {
    if (c >= '0' && c <= '9') return (int)(c - '0');
    if (c >= 'a' && c <= 'f') return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return (int)(c - 'A' + 10);
    return -1;
}

/* The JSON string at t[*i] ('"') as the bytes its characters stand for, appended to out; a
 * space (allowed where space_at is not NULL, once) is not appended: *space_at is where it
 * was (SIZE_MAX: none). *i ends just past the closing quote. FBPE_EINVALID for anything
 * else: a character of no byte, a control character, a bad escape, more than `limit` bytes. */
static fbpe_status read_string(const void *t, int kind, size_t n, size_t *i, const bl_chars *ch,
                               bl_buf *out, size_t *space_at, size_t limit) {
    const int16_t *byte_of = ch->byte_of;
    size_t k = *i + 1, start = out->len;
    for (;;) {
        if (k >= n) return FBPE_EINVALID;
        uint32_t c = fbpe_json_char(t, kind, k++);
        if (kind == FBPE_JSON_UTF8 && c >= 0x80) {
            /* Every character of GPT-2's below U+0800 is two bytes of UTF-8; anything else
             * (or bytes that are not UTF-8) stands for no byte. */
            uint32_t next = k < n ? ((const uint8_t *)t)[k] : 0;
            if (c < 0xC2 || c > 0xDF || (next & 0xC0) != 0x80) return FBPE_EINVALID;
            c = (c & 0x1F) << 6 | (next & 0x3F);
            k++;
        }
        int16_t plain = c < BL_CHARS ? ch->plain[c] : -1;
        if (plain >= 0) {
            if (out->len - start >= limit) return FBPE_EINVALID;
            fbpe_status rc = buf_push(out, (uint8_t)plain);
            if (rc) return rc;
            continue;
        }
        if (c == '"') break;
        if (c == '\\') {
            if (k >= n) return FBPE_EINVALID;
            uint32_t e = fbpe_json_char(t, kind, k++);
            switch (e) {
            case '"': case '\\': case '/': c = e; break;
            case 'u': {
                c = 0;
                for (int d = 0; d < 4; d++) {
                    int h = k < n ? hex_digit(fbpe_json_char(t, kind, k)) : -1;
                    if (h < 0) return FBPE_EINVALID;
                    c = c << 4 | (uint32_t)h;
                    k++;
                }
                break;
            }
            default: return FBPE_EINVALID; /* \b \f \n \r \t: no byte-level character */
            }
        } else if (c < 0x20) {
            return FBPE_EINVALID; /* not JSON */
        }
        if (c == ' ' && space_at && *space_at == SIZE_MAX) {
            *space_at = out->len - start;
            continue;
        }
        if (c >= BL_CHARS || byte_of[c] < 0) return FBPE_EINVALID;
        if (out->len - start >= limit) return FBPE_EINVALID;
        fbpe_status rc = buf_push(out, (uint8_t)byte_of[c]);
        if (rc) return rc;
    }
    *i = k;
    return FBPE_OK;
}

static uint64_t bytes_hash(const uint8_t *s, size_t n) {
    uint64_t h = FBPE_MIX1 ^ n;
    for (size_t k = 0; k < n; k++) h = (h ^ s[k]) * 0x100000001B3ull;
    h ^= h >> 29;
    h *= FBPE_MIX3;
    return h ^ (h >> 32);
}

void fbpe_bl_vocab_free(fbpe_bl_vocab *v) {
    free(v->bytes);
    free(v->off);
    free(v->ids);
    free(v->slots);
    memset(v, 0, sizeof *v);
}

int64_t fbpe_bl_vocab_find(const fbpe_bl_vocab *v, const uint8_t *s, size_t len) {
    if (!v->slots) return -1;
    uint32_t e =
        fbpe_compact_find_bytes(v->slots, v->cap, bytes_hash(s, len), v->bytes, v->off, s, len);
    return e == FBPE_COMPACT_NONE ? -1 : (int64_t)e;
}

/* The table of v's entries by their bytes: FBPE_EINVALID for two entries of the same bytes
 * (a key given twice, which json's reader refuses too). Compact slots (compact_slots.h): a
 * million entries read from a tokenizer.json take 6.7 MB, not the 16.8 MB of 8-byte slots at
 * most half full, while the file itself is held too. */
static fbpe_status index_vocab(fbpe_bl_vocab *v) {
    if (v->num > (size_t)FBPE_COMPACT_INDEX + 1) return FBPE_EINVALID;
    v->cap = fbpe_compact_cap(v->num);
    v->slots = (uint32_t *)calloc(v->cap, sizeof(uint32_t));
    if (!v->slots) return FBPE_ENOMEM;
    for (size_t e = 0; e < v->num; e++) {
        const uint8_t *s = v->bytes + v->off[e];
        size_t len = v->off[e + 1] - v->off[e];
        if (fbpe_bl_vocab_find(v, s, len) >= 0) return FBPE_EINVALID;
        fbpe_compact_insert(v->slots, v->cap, bytes_hash(s, len), (uint32_t)e);
    }
    return FBPE_OK;
}

fbpe_status fbpe_bl_vocab_read(const void *t, int kind, size_t n, size_t pos, size_t max_entries,
                               size_t max_token_bytes, fbpe_bl_vocab *v, size_t *end) {
    bl_chars ch;
    make_chars(&ch);
    /* The bytes of all tokens are fewer than the file's characters, and a file is at most
     * 256 MiB: 32-bit offsets; a longer text is left to json. */
    if (n > UINT32_MAX) return FBPE_EINVALID;
    bl_buf arena = {NULL, 0, 0};
    size_t off_cap = 0, ids_cap = 0, i = fbpe_json_skip_ws(t, kind, n, pos);
    fbpe_status rc = FBPE_EINVALID;
    if (i >= n || fbpe_json_char(t, kind, i) != '{') goto fail;
    if ((rc = grow_u32(&v->off, &off_cap, 1))) goto fail;
    v->off[0] = 0;
    i = fbpe_json_skip_ws(t, kind, n, i + 1);
    if (i < n && fbpe_json_char(t, kind, i) == '}') {
        i++;
    } else {
        for (;;) {
            rc = FBPE_EINVALID;
            if (v->num >= max_entries || i >= n || fbpe_json_char(t, kind, i) != '"') goto fail;
            if ((rc = read_string(t, kind, n, &i, &ch, &arena, NULL, max_token_bytes))) goto fail;
            rc = FBPE_EINVALID;
            if (arena.len == v->off[v->num]) goto fail; /* an empty token */
            i = fbpe_json_skip_ws(t, kind, n, i);
            if (i >= n || fbpe_json_char(t, kind, i) != ':') goto fail;
            i = fbpe_json_skip_ws(t, kind, n, i + 1);
            uint32_t id;
            if (!fbpe_json_id(t, kind, n, &i, &id)) goto fail;
            if ((rc = grow_u32(&v->off, &off_cap, v->num + 2)) || (rc = grow_u32(&v->ids, &ids_cap, v->num + 1)))
                goto fail;
            v->ids[v->num++] = id;
            v->off[v->num] = (uint32_t)arena.len;
            rc = FBPE_EINVALID;
            i = fbpe_json_skip_ws(t, kind, n, i);
            if (i >= n) goto fail;
            uint32_t c = fbpe_json_char(t, kind, i++);
            if (c == '}') break;
            if (c != ',') goto fail;
            i = fbpe_json_skip_ws(t, kind, n, i);
        }
    }
    v->bytes = arena.p;
    arena.p = NULL;
    if ((rc = index_vocab(v))) goto fail;
    *end = i;
    return FBPE_OK;
fail:
    free(arena.p);
    fbpe_bl_vocab_free(v);
    return rc;
}

/* Push the merge of the tokens tok[0..space) and tok[space..len) (entries of v). */
static fbpe_status push_merge(const fbpe_bl_vocab *v, const uint8_t *tok, size_t space, size_t len,
                              uint32_t **out, size_t *cap, size_t *num) {
    int64_t left = fbpe_bl_vocab_find(v, tok, space), right = fbpe_bl_vocab_find(v, tok + space, len - space);
    if (left < 0 || right < 0) return FBPE_EINVALID;
    fbpe_status rc = grow_u32(out, cap, 2 * *num + 2);
    if (rc) return rc;
    (*out)[2 * *num] = (uint32_t)left;
    (*out)[2 * *num + 1] = (uint32_t)right;
    ++*num;
    return FBPE_OK;
}

fbpe_status fbpe_bl_merges_read(const void *t, int kind, size_t n, size_t pos,
                                const fbpe_bl_vocab *v, size_t max_entries, uint32_t **out,
                                size_t *num, size_t *end) {
    bl_chars ch;
    make_chars(&ch);
    bl_buf tok = {NULL, 0, 0};
    size_t cap = 0, i = fbpe_json_skip_ws(t, kind, n, pos);
    fbpe_status rc = FBPE_EINVALID;
    *out = NULL;
    *num = 0;
    if (i >= n || fbpe_json_char(t, kind, i) != '[') goto fail;
    i = fbpe_json_skip_ws(t, kind, n, i + 1);
    if (i < n && fbpe_json_char(t, kind, i) == ']') {
        i++;
    } else {
        for (;;) {
            size_t space = SIZE_MAX;
            rc = FBPE_EINVALID;
            if (*num >= max_entries || i >= n) goto fail;
            tok.len = 0;
            uint32_t c = fbpe_json_char(t, kind, i);
            if (c == '"') { /* "left right" */
                if ((rc = read_string(t, kind, n, &i, &ch, &tok, &space, 2 * FBPE_MAX_TOKEN_BYTES)))
                    goto fail;
                rc = FBPE_EINVALID;
                if (space == SIZE_MAX) goto fail;
            } else if (c == '[') { /* ["left", "right"] */
                i = fbpe_json_skip_ws(t, kind, n, i + 1);
                if (i >= n || fbpe_json_char(t, kind, i) != '"') goto fail;
                if ((rc = read_string(t, kind, n, &i, &ch, &tok, NULL, FBPE_MAX_TOKEN_BYTES))) goto fail;
                rc = FBPE_EINVALID;
                space = tok.len;
                i = fbpe_json_skip_ws(t, kind, n, i);
                if (i >= n || fbpe_json_char(t, kind, i) != ',') goto fail;
                i = fbpe_json_skip_ws(t, kind, n, i + 1);
                if (i >= n || fbpe_json_char(t, kind, i) != '"') goto fail;
                if ((rc = read_string(t, kind, n, &i, &ch, &tok, NULL, FBPE_MAX_TOKEN_BYTES))) goto fail;
                rc = FBPE_EINVALID;
                i = fbpe_json_skip_ws(t, kind, n, i);
                if (i >= n || fbpe_json_char(t, kind, i) != ']') goto fail;
                i++;
            } else {
                goto fail;
            }
            if ((rc = push_merge(v, tok.p, space, tok.len, out, &cap, num))) goto fail;
            rc = FBPE_EINVALID;
            i = fbpe_json_skip_ws(t, kind, n, i);
            if (i >= n) goto fail;
            c = fbpe_json_char(t, kind, i++);
            if (c == ']') break;
            if (c != ',') goto fail;
            i = fbpe_json_skip_ws(t, kind, n, i);
        }
    }
    free(tok.p);
    *end = i;
    return FBPE_OK;
fail:
    free(tok.p);
    free(*out);
    *out = NULL;
    *num = 0;
    return rc;
}

/* The characters other than '\n' at which Python's str.splitlines also breaks a line. */
static int other_break(uint32_t c) {
    return c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 ||
           c == 0x2029;
}

fbpe_status fbpe_bl_lines_read(const void *t, int kind, size_t n, const fbpe_bl_vocab *v,
                               size_t max_entries, uint32_t **out, size_t *num) {
    static const char version[] = "#version";
    bl_chars ch;
    make_chars(&ch);
    bl_buf tok = {NULL, 0, 0};
    size_t cap = 0, i = 0;
    fbpe_status rc = FBPE_EINVALID;
    *out = NULL;
    *num = 0;
    for (size_t line = 1; i < n; line++) {
        size_t j = i;
        while (j < n && fbpe_json_char(t, kind, j) != '\n') j++;
        int is_version = line == 1 && j - i >= sizeof version - 1;
        for (size_t k = 0; is_version && k < sizeof version - 1; k++)
            is_version = fbpe_json_char(t, kind, i + k) == (uint32_t)version[k];
        if (is_version) {
            for (size_t k = i; k < j; k++)
                if (other_break(fbpe_json_char(t, kind, k))) goto fail;
        } else if (j > i) {
            size_t space = SIZE_MAX;
            tok.len = 0;
            for (size_t k = i; k < j; k++) {
                uint32_t c = fbpe_json_char(t, kind, k);
                if (c == ' ' && space == SIZE_MAX) {
                    space = tok.len;
                    continue;
                }
                if (c >= BL_CHARS || ch.byte_of[c] < 0 || tok.len >= 2 * FBPE_MAX_TOKEN_BYTES) goto fail;
                if ((rc = buf_push(&tok, (uint8_t)ch.byte_of[c]))) goto fail;
                rc = FBPE_EINVALID;
            }
            if (space == SIZE_MAX || *num >= max_entries) goto fail;
            if ((rc = push_merge(v, tok.p, space, tok.len, out, &cap, num))) goto fail;
            rc = FBPE_EINVALID;
        }
        i = j + 1;
    }
    free(tok.p);
    return FBPE_OK;
fail:
    free(tok.p);
    free(*out);
    *out = NULL;
    *num = 0;
    return rc;
}

fbpe_status fbpe_bl_table(const fbpe_bl_vocab *v, uint8_t *removed, int unreached,
                          const uint32_t *pairs, size_t num, uint32_t *byte_ids, uint32_t *table,
                          uint32_t *merge_ids, uint32_t *joins, size_t *num_tokens,
                          size_t *num_joins) {
    size_t nv = v->num, cap = fbpe_pow2_at_least(2 * num + 2), next = 256, nj = 0, live = 0;
    const unsigned shift = fbpe_slot_shift(cap);
    uint32_t *joined = (uint32_t *)malloc((num + 1) * sizeof(uint32_t));
    uint32_t *internal = (uint32_t *)malloc((nv + 1) * sizeof(uint32_t));
    uint64_t *seen = (uint64_t *)malloc(cap * sizeof(uint64_t));
    uint8_t *chosen = (uint8_t *)calloc(num + 1, 1); /* by token - 256 */
    bl_buf both = {NULL, 0, 0};
    fbpe_status rc = FBPE_ENOMEM;
    if (!joined || !internal || !seen || !chosen) goto done;
    memset(seen, 0xFF, cap * sizeof(uint64_t));
    /* Each merge's token: its two tokens' bytes together, an entry. */
    for (size_t k = 0; k < num; k++) {
        const uint32_t l = pairs[2 * k], r = pairs[2 * k + 1];
        size_t nl = v->off[l + 1] - v->off[l], nr = v->off[r + 1] - v->off[r];
        if (nl + nr > both.cap) { /* each at most max_token_bytes: no overflow */
            uint8_t *grown = (uint8_t *)realloc(both.p, nl + nr);
            rc = FBPE_ENOMEM;
            if (!grown) goto done;
            both.p = grown;
            both.cap = nl + nr;
        }
        memcpy(both.p, v->bytes + v->off[l], nl);
        memcpy(both.p + nl, v->bytes + v->off[r], nr);
        both.len = nl + nr;
        rc = FBPE_EINVALID;
        int64_t e = fbpe_bl_vocab_find(v, both.p, both.len);
        if (e < 0) goto done;
        joined[k] = (uint32_t)e;
    }
    if (unreached) { /* neither a byte nor made: GPT-2's special tokens */
        for (size_t e = 0; e < nv; e++) removed[e] = v->off[e + 1] - v->off[e] != 1;
        for (size_t k = 0; k < num; k++) removed[joined[k]] = 0;
    }
    rc = FBPE_EINVALID;
    for (size_t e = 0; e < nv; e++) {
        internal[e] = UINT32_MAX;
        live += !removed[e];
    }
    for (size_t e = 0; e < nv; e++)
        if (!removed[e] && v->off[e + 1] - v->off[e] == 1) {
            uint8_t b = v->bytes[v->off[e]];
            internal[e] = b;
            byte_ids[b] = v->ids[e];
        }
    for (unsigned b = 0; b < 256; b++) {
        uint8_t one = (uint8_t)b;
        int64_t e = fbpe_bl_vocab_find(v, &one, 1);
        if (e < 0 || removed[e]) goto done; /* a byte that is not a token */
    }
    for (size_t k = 0; k < num; k++) {
        const uint32_t l = pairs[2 * k], r = pairs[2 * k + 1], j = joined[k];
        if (removed[l] || removed[r] || removed[j]) goto done;
        uint64_t key = (uint64_t)l << 32 | r;
        size_t at = fbpe_slot_u64(key, shift);
        while (seen[at] != UINT64_MAX) {
            if (seen[at] == key) goto done; /* a pair listed twice */
            at = (at + 1) & (cap - 1);
        }
        seen[at] = key;
        if (internal[j] == UINT32_MAX) { /* its first merge: its place in the order */
            internal[j] = (uint32_t)next;
            merge_ids[next - 256] = v->ids[j];
            next++;
        }
    }
    if (next != live) goto done; /* an entry neither a byte nor made by a merge */
    for (size_t k = 0; k < num; k++) {
        uint32_t a = internal[pairs[2 * k]], b = internal[pairs[2 * k + 1]], t = internal[joined[k]];
        if (!chosen[t - 256] && a < t && b < t) {
            chosen[t - 256] = 1;
            table[2 * (t - 256)] = a;
            table[2 * (t - 256) + 1] = b;
        } else {
            joins[3 * nj] = a;
            joins[3 * nj + 1] = b;
            joins[3 * nj + 2] = t;
            nj++;
        }
    }
    for (size_t t = 256; t < next; t++)
        if (!chosen[t - 256]) goto done; /* made only from tokens made later */
    *num_tokens = next - 256;
    *num_joins = nj;
    rc = FBPE_OK;
done:
    free(joined);
    free(internal);
    free(seen);
    free(chosen);
    free(both.p);
    return rc;
}
