/* The text field of JSONL records; see jsonl.h. */
#include "jsonl.h"

#include <stdlib.h>
#include <string.h>

#include "../common/utf8.h"

void fbpe_jsonl_docs_init(fbpe_jsonl_docs *d) { memset(d, 0, sizeof(*d)); }

void fbpe_jsonl_docs_free(fbpe_jsonl_docs *d) {
    free(d->text);
    free(d->ends);
    free(d->lines);
    fbpe_jsonl_docs_init(d);
}

static fbpe_status reserve_text(fbpe_jsonl_docs *d, size_t extra) {
    if (extra > SIZE_MAX - d->len) return FBPE_ENOMEM;
    size_t want = d->len + extra;
    if (want <= d->cap) return FBPE_OK;
    size_t cap = fbpe_grow_to(d->cap, 4096, want, 1);
    uint8_t *grown = cap ? (uint8_t *)realloc(d->text, cap) : NULL;
    if (!grown) return FBPE_ENOMEM;
    d->text = grown;
    d->cap = cap;
    return FBPE_OK;
}

static fbpe_status end_doc(fbpe_jsonl_docs *d, uint64_t line) {
    if (d->num == d->ends_cap) {
        size_t cap = fbpe_grow_to(d->ends_cap, 256, d->num + 1, sizeof(uint64_t));
        if (!cap) return FBPE_ENOMEM;
        uint64_t *ends = (uint64_t *)realloc(d->ends, fbpe_array_bytes(cap, sizeof(uint64_t)));
        if (!ends) return FBPE_ENOMEM;
        d->ends = ends;
        uint64_t *lines = (uint64_t *)realloc(d->lines, fbpe_array_bytes(cap, sizeof(uint64_t)));
        if (!lines) return FBPE_ENOMEM;
        d->lines = lines;
        d->ends_cap = cap;
    }
    d->ends[d->num] = d->len;
    d->lines[d->num] = line;
    d->num++;
    return FBPE_OK;
}

fbpe_status fbpe_jsonl_docs_add(fbpe_jsonl_docs *d, const uint8_t *s, size_t n, uint64_t line) {
    if (reserve_text(d, n)) return FBPE_ENOMEM;
    if (n) memcpy(d->text + d->len, s, n);
    d->len += n;
    return end_doc(d, line);
}

/* ---- reading one line: every function returns 0 when the line is not for C to read ---- */

typedef struct {
    const uint8_t *s;
    size_t i, n; /* the line is s[i..n) */
} reader;

static inline void skip_ws(reader *r) {
    while (r->i < r->n) {
        uint8_t c = r->s[r->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        r->i++;
    }
}

static inline int hex4(const uint8_t *p, uint32_t *out) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t c = p[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* A string at r->i (the opening quote). With out, its characters are appended to d's text
 * (there is room: unescaping never lengthens a string by more than 3 bytes per 6-byte
 * escape, and the caller reserved the line's length). *escaped says whether it had a
 * backslash. */
static int read_string(reader *r, fbpe_jsonl_docs *out, int *escaped) {
    const uint8_t *s = r->s;
    size_t i = r->i + 1, n = r->n;
    uint8_t *dst = out ? out->text + out->len : NULL;
    *escaped = 0;
    for (;;) {
        size_t start = i;
        /* The run of plain bytes (the line is valid UTF-8: no byte of it is a quote,
         * backslash or control character except those characters themselves). */
        /* Eight bytes at a time while none is a quote, a backslash or below 0x20: the
         * SWAR tests below are exact (no false negatives), and a word that has one goes to
         * the byte loop. On 3 MB of prose records, 14 instructions a byte were 5. */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
            uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
            uint64_t special = ((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w);
            if (special & highs) break;
            i += 8;
        }
        while (i < n && s[i] != '"' && s[i] != '\\' && s[i] >= 0x20) i++;
        if (dst && i > start) {
            memcpy(dst, s + start, i - start);
            dst += i - start;
        }
        if (i >= n || s[i] < 0x20) return 0; /* unterminated, or a raw control character */
        if (s[i] == '"') break;
        *escaped = 1;
        if (i + 1 >= n) return 0;
        uint8_t e = s[i + 1], c;
        uint32_t cp;
        switch (e) {
        case '"': c = '"'; break;
        case '\\': c = '\\'; break;
        case '/': c = '/'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u':
            if (i + 6 > n || !hex4(s + i + 2, &cp)) return 0;
            i += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t low;
                /* A pair is one character, as json.loads joins it. */
                if (i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u' && hex4(s + i + 2, &low) &&
                    low >= 0xDC00 && low <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    i += 6;
                } else {
                    cp = 0xFFFD; /* a lone surrogate, as bpe_text reads it */
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            if (dst) dst += fbpe_utf8_put(cp, dst);
            continue;
        default:
            return 0; /* an invalid escape: json.loads's message says which */
        }
        if (dst) *dst++ = c;
        i += 2;
    }
    if (dst) out->len = (size_t)(dst - out->text);
    r->i = i + 1;
    return 1;
}

/* A number as RFC 8259 writes it (json.loads reads the same grammar; NaN and Infinity are
 * not read here). */
static int skip_number(reader *r) {
    const uint8_t *s = r->s;
    size_t i = r->i, n = r->n;
    if (i < n && s[i] == '-') i++;
    if (i >= n) return 0;
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    } else {
        return 0;
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    r->i = i;
    return 1;
}

static int skip_word(reader *r, const char *word, size_t len) {
    if (r->n - r->i < len || memcmp(r->s + r->i, word, len) != 0) return 0;
    r->i += len;
    return 1;
}

static int skip_value(reader *r, int depth) {
    int escaped;
    if (r->i >= r->n) return 0;
    switch (r->s[r->i]) {
    case '"':
        return read_string(r, NULL, &escaped);
    case 't':
        return skip_word(r, "true", 4);
    case 'f':
        return skip_word(r, "false", 5);
    case 'n':
        return skip_word(r, "null", 4);
    case '{':
    case '[': {
        uint8_t close = r->s[r->i] == '{' ? '}' : ']';
        if (depth >= FBPE_JSONL_MAX_DEPTH) return 0;
        r->i++;
        skip_ws(r);
        if (r->i < r->n && r->s[r->i] == close) {
            r->i++;
            return 1;
        }
        for (;;) {
            if (close == '}') {
                if (r->i >= r->n || r->s[r->i] != '"' || !read_string(r, NULL, &escaped)) return 0;
                skip_ws(r);
                if (r->i >= r->n || r->s[r->i] != ':') return 0;
                r->i++;
                skip_ws(r);
            }
            if (!skip_value(r, depth + 1)) return 0;
            skip_ws(r);
            if (r->i >= r->n) return 0;
            if (r->s[r->i] == close) {
                r->i++;
                return 1;
            }
            if (r->s[r->i] != ',') return 0;
            r->i++;
            skip_ws(r);
        }
    }
    default:
        return skip_number(r);
    }
}

/* One line s[0..n) (its newline included). 1: a document appended (or, *blank, none: a
 * line of white space); 0: not for C. */
static int read_record(const uint8_t *s, size_t n, const uint8_t *key, size_t key_len,
                       fbpe_jsonl_docs *d, int *blank) {
    reader r = {s, 0, n};
    int escaped, found = 0;
    size_t doc_start = d->len;
    *blank = 0;
    skip_ws(&r);
    if (r.i == n) {
        *blank = 1;
        return 1;
    }
    if (s[r.i] != '{') return 0;
    r.i++;
    skip_ws(&r);
    if (r.i < n && s[r.i] == '}') return 0; /* {}: no field */
    int closed = 0;
    for (;;) {
        if (r.i >= n || s[r.i] != '"') break;
        size_t key_at = r.i + 1;
        if (!read_string(&r, NULL, &escaped) || escaped) break;
        int match = r.i - 1 - key_at == key_len && memcmp(s + key_at, key, key_len) == 0;
        skip_ws(&r);
        if (r.i >= n || s[r.i] != ':') break;
        r.i++;
        skip_ws(&r);
        if (match) {
            if (r.i >= n || s[r.i] != '"') break; /* not a string: Python says so */
            d->len = doc_start; /* a later occurrence replaces an earlier one */
            if (!read_string(&r, d, &escaped)) break;
            found = 1;
        } else if (!skip_value(&r, 1)) {
            break;
        }
        skip_ws(&r);
        if (r.i >= n) break;
        if (s[r.i] == '}') {
            r.i++;
            closed = 1;
            break;
        }
        if (s[r.i] != ',') break;
        r.i++;
        skip_ws(&r);
    }
    if (closed) skip_ws(&r);
    /* Not a closed record followed by white space alone, or no field: Python's message. */
    if (!closed || !found || r.i != n) {
        d->len = doc_start;
        return 0;
    }
    return 1;
}

fbpe_status fbpe_jsonl_extract(const uint8_t *s, size_t n, const uint8_t *key, size_t key_len,
                               size_t *pos, size_t *line_end, uint64_t *line, fbpe_jsonl_docs *d) {
    size_t i = *pos;
    while (i < n) {
        const uint8_t *nl = (const uint8_t *)memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) + 1 : n;
        int incomplete, blank, ok = 0;
        size_t len = end - i;
        if (fbpe_utf8_invalid(s + i, len, 0, &incomplete) == len) {
            /* Unescaping never lengthens a string: the document fits in the line's length. */
            if (reserve_text(d, len)) return FBPE_ENOMEM;
            ok = read_record(s + i, len, key, key_len, d, &blank);
            if (ok && !blank && end_doc(d, *line + 1)) return FBPE_ENOMEM;
        }
        if (!ok) {
            *pos = i;
            *line_end = end;
            return FBPE_MORE;
        }
        (*line)++;
        i = end;
    }
    *pos = n;
    return FBPE_OK;
}
