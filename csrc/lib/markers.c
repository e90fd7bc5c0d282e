/* The boundary-marker scheme's pieces; see markers.h. Each rule names the line of
 * functionalbpe/markers.py it follows. */
#include "markers.h"
#include "scanners.h" /* decode() */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The piece loop is inlined into each of its callers (count.c, encode_text.c include this
 * file), and with it their sink: a call per piece less, and the sink's state in registers. */
#if defined(__GNUC__)
#define FBPE_MK_INLINE static inline __attribute__((always_inline))
#else
#define FBPE_MK_INLINE static inline
#endif

static fbpe_mk_tables tables;
static int tables_installed = 0;

void fbpe_mk_install(const fbpe_mk_tables *t) {
    tables = *t;
    tables_installed = 1;
}

int fbpe_mk_installed(void) { return tables_installed; }

/* The atoms' UTF-8: BOUNDARY U+E300, TITLE U+E301, UPPER U+E302, LITERAL U+E2FF, and
 * ARG v = U+E000 + v. */
static const uint8_t BOUNDARY_UTF8[3] = {0xEE, 0x8C, 0x80};
static const uint8_t SHIFT_UTF8[3][3] = {{0}, {0xEE, 0x8C, 0x81}, {0xEE, 0x8C, 0x82}};
static const uint8_t LITERAL_UTF8[3] = {0xEE, 0x8B, 0xBF};

static inline unsigned mk_class(const uint8_t *s, size_t i, size_t *len) {
    if (s[i] < 0x80) {
        *len = 1;
        return tables.classes[s[i]];
    }
    return tables.classes[decode(s, i, len)];
}

static inline int32_t map_get(const fbpe_mk_map *m, uint32_t cp) {
    return m->blocks[(size_t)m->index[cp >> 8] * 256 + (cp & 255)];
}

static inline int bytes_at(const uint8_t *s, size_t i, size_t n, uint8_t a, uint8_t b, uint8_t c) {
    return i + 3 <= n && s[i] == a && s[i + 1] == b && s[i + 2] == c;
}
#define AT_VS16(s, i, n) bytes_at(s, i, n, 0xEF, 0xB8, 0x8F)     /* U+FE0F */
#define AT_KEYCAP(s, i, n) bytes_at(s, i, n, 0xE2, 0x83, 0xA3)   /* U+20E3 */
#define AT_ZWJ(s, i, n) bytes_at(s, i, n, 0xE2, 0x80, 0x8D)      /* U+200D */

/* ---- units ------------------------------------------------------------------------------ */

/* The end of the run of characters whose class has a bit of `flags`, from i. */
static inline size_t run_of_flag(const uint8_t *s, size_t i, size_t n, unsigned flags) {
    size_t len;
    while (i < n && (mk_class(s, i, &len) & flags)) i += len;
    return i;
}

/* _KEYCAP = [0-9#*]\ufe0f?\u20e3 at i: its end, or 0. (Without the U+FE0F the U+20E3 would
 * have to stand where the U+FE0F is, so there is nothing to give back.) */
static inline size_t keycap_end(const uint8_t *s, size_t i, size_t n) {
    uint8_t b = s[i];
    if (!((b >= '0' && b <= '9') || b == '#' || b == '*')) return 0;
    size_t j = i + 1;
    if (AT_VS16(s, j, n)) j += 3;
    return AT_KEYCAP(s, j, n) ? j + 3 : 0;
}

/* EMOJI_START at i (class c, length len): its end, or 0. */
static inline size_t emoji_start_end(const uint8_t *s, size_t i, size_t n, unsigned c, size_t len) {
    if (!(c & (FBPE_MK_EMOJI_PRESENTATION | FBPE_MK_PICTOGRAPHIC)) && s[i] >= 0x40) return 0;
    size_t e = keycap_end(s, i, n);
    if (e) return e;
    if (c & FBPE_MK_EMOJI_PRESENTATION) return i + len;
    if ((c & FBPE_MK_PICTOGRAPHIC) && AT_VS16(s, i + len, n)) return i + len + 3;
    return 0;
}

/* (?P<emoji>EMOJI+ INHERITED_MARK*) from i, where EMOJI_START matches; every quantifier
 * takes all it can and nothing after it can fail, so none gives anything back. */
static size_t emoji_end(const uint8_t *s, size_t i, size_t n) {
    size_t len, e;
    for (;;) {
        if (i >= n) break;
        unsigned c = mk_class(s, i, &len);
        if (!(e = emoji_start_end(s, i, n, c, len))) break;
        i = run_of_flag(s, e, n, FBPE_MK_EMOJI_EXTEND);
        /* (?:\u200d PICTOGRAPHIC EMOJI_EXTEND*)* */
        while (AT_ZWJ(s, i, n) && i + 3 < n && (mk_class(s, i + 3, &len) & FBPE_MK_PICTOGRAPHIC))
            i = run_of_flag(s, i + 3 + len, n, FBPE_MK_EMOJI_EXTEND);
    }
    return run_of_flag(s, i, n, FBPE_MK_INHERITED);
}

/* The end of the run of ASCII letters from i, eight bytes at a time (most words are short,
 * and a byte loop pays a mispredicted branch where each one ends); *any gets
 * FBPE_MK_CHANGES_LOWER if one of them is upper case. The ASCII word characters are exactly
 * A-Z and a-z (charclasses.py checks that regex's ASCII letters are). Stops early at a
 * non-ASCII byte, where the caller's loop goes on. */
static inline size_t ascii_letters(const uint8_t *s, size_t i, size_t n, unsigned *any) {
    const uint64_t high = 0x8080808080808080ull;
    while (fbpe_little_endian_scan() && i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        /* Per byte, without carries between bytes (as scanners.h's run_of_letters):
         * OR 0x20 folds A-Z onto a-z, then 0x61 <= y <= 0x7A in the high bit; upper case is
         * 0x41 <= x <= 0x5A of the byte itself. Non-ASCII bytes never count. */
        uint64_t x = w & 0x7F7F7F7F7F7F7F7Full, y = (w | 0x2020202020202020ull) & 0x7F7F7F7F7F7F7F7Full;
        uint64_t letters = (y + 0x1F1F1F1F1F1F1F1Full) & ~(y + 0x0505050505050505ull) & ~w & high;
        uint64_t upper = (x + 0x3F3F3F3F3F3F3F3Full) & ~(x + 0x2525252525252525ull) & ~w & high;
        uint64_t stop = ~letters & high;
        uint64_t taken = stop ? (stop & (0 - stop)) - 1 : ~0ull; /* the bytes before the first stop */
        if (upper & taken) *any |= FBPE_MK_CHANGES_LOWER;
        if (stop) return i + lowest_bit(stop) / 8; /* little-endian: the first byte is the low one */
        i += 8;
    }
    return i;
}

/* What a unit is to the marking rules; also bit numbers in a set of marked kinds. */
enum { U_NONE = 0, U_WORD, U_DIGIT, U_PUNCT, U_SPACE, U_OTHER };

typedef struct {
    size_t end;
    unsigned kind;  /* U_WORD ... U_OTHER */
    unsigned cased; /* a word with a character that lower() changes */
} mk_unit;

/* A run of (?:(?!lookahead) X INHERITED_MARK*)+ from i, X being the characters of `kind`,
 * where s[i] is one and the lookahead fails there. keycaps_only: the lookahead is _KEYCAP
 * (digits), else EMOJI_START. */
static inline size_t run_with_marks(const uint8_t *s, size_t i, size_t n, size_t len, unsigned kind,
                                    int keycaps_only) {
    for (;;) {
        i = run_of_flag(s, i + len, n, FBPE_MK_INHERITED);
        if (i >= n) return n;
        unsigned c = mk_class(s, i, &len);
        if ((c & FBPE_MK_KIND) != kind) return i;
        if (keycaps_only ? keycap_end(s, i, n) != 0 : emoji_start_end(s, i, n, c, len) != 0) return i;
    }
}

/* The unit that starts at i: the alternative of markers.UNITS that matches there. The
 * alternatives are tried in the regex's order; the class of s[i] rules out all but one or
 * two of them. */
FBPE_MK_INLINE mk_unit next_unit(const uint8_t *s, size_t i, size_t n) {
    mk_unit u = {0, U_OTHER, 0};
    size_t len;
    unsigned c = mk_class(s, i, &len);
    switch (c & FBPE_MK_KIND) {
    case FBPE_MK_K_WORD: { /* (?P<word>WORD_CHAR+) */
        unsigned any = c;
        size_t j = ascii_letters(s, i + len, n, &any);
        while (j < n) {
            unsigned d;
            if (s[j] < 0x80) {
                d = tables.classes[s[j]];
                len = 1;
            } else {
                d = tables.classes[decode(s, j, &len)];
            }
            if ((d & FBPE_MK_KIND) != FBPE_MK_K_WORD) break;
            any |= d;
            j += len;
        }
        u.end = j;
        u.kind = U_WORD;
        u.cased = (any & FBPE_MK_CHANGES_LOWER) != 0;
        return u;
    }
    case FBPE_MK_K_SPACELESS: /* SPACELESS_CHAR (?:SPACELESS_CHAR|INHERITED_MARK)* */
        u.end = i + len;
        while (u.end < n) {
            unsigned d = mk_class(s, u.end, &len);
            if ((d & FBPE_MK_KIND) != FBPE_MK_K_SPACELESS && !(d & FBPE_MK_INHERITED)) break;
            u.end += len;
        }
        return u;
    case FBPE_MK_K_SPACE: { /* \s+; a space unit is exactly one U+0020, the rest is other */
        size_t j = i + len;
        while (j < n && (mk_class(s, j, &len) & FBPE_MK_KIND) == FBPE_MK_K_SPACE) j += len;
        u.end = j;
        if (j == i + 1 && s[i] == ' ') u.kind = U_SPACE;
        return u;
    }
    case FBPE_MK_K_PUNCT:
        if (emoji_start_end(s, i, n, c, len)) break;
        u.end = run_with_marks(s, i, n, len, FBPE_MK_K_PUNCT, 0);
        u.kind = U_PUNCT;
        return u;
    case FBPE_MK_K_NUMBER:
        if (keycap_end(s, i, n)) break;
        u.end = run_with_marks(s, i, n, len, FBPE_MK_K_NUMBER, 1);
        u.kind = U_DIGIT;
        return u;
    default: /* rest */
        if (emoji_start_end(s, i, n, c, len)) break;
        u.end = run_with_marks(s, i, n, len, FBPE_MK_K_REST, 0);
        return u;
    }
    u.end = emoji_end(s, i, n);
    return u;
}

/* ---- case codes (markers.case_code) ------------------------------------------------------ */

/* Python's final-sigma rule for the capital sigma at s[at..after) of the word s[0..n):
 * final when a cased character comes before it and none after it, case-ignorable ones
 * skipped (CPython's handle_capital_sigma, measured into the sigma map). */
static int final_sigma(const uint8_t *s, size_t at, size_t after, size_t n) {
    size_t j = at, len;
    int32_t before = 0;
    while (j > 0) {
        do j--;
        while (j > 0 && (s[j] & 0xC0) == 0x80);
        before = map_get(&tables.sigma, decode(s, j, &len));
        if (before != FBPE_MK_CASE_IGNORABLE) break;
    }
    if (before != FBPE_MK_CASED) return 0;
    for (j = after; j < n; j += len) {
        int32_t next = map_get(&tables.sigma, decode(s, j, &len));
        if (next != FBPE_MK_CASE_IGNORABLE) return next != FBPE_MK_CASED;
    }
    return 1;
}

static inline size_t put_utf8(uint32_t cp, uint8_t *out) {
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* low = word.lower(), character by character; then the title test
 * low[:1].upper() + low[1:] == word and the upper test low.upper() == word, also character
 * by character: upper() maps each character on its own, and a character whose upper case
 * is several characters makes the result longer than the word, so unequal. */
int fbpe_mk_case_code(const uint8_t *s, size_t n, uint8_t *out, size_t *out_len) {
    int title = 1, upper = 1, changed = 0;
    size_t i = 0, o = 0, chars = 0, len;
    while (i < n) {
        uint32_t c = decode(s, i, &len), low, up;
        if (c < 0x80) {
            low = c - 'A' < 26u ? c + 32 : c;
        } else if (c == 0x3A3) {
            low = final_sigma(s, i, i + len, n) ? 0x3C2 : 0x3C3;
        } else {
            int32_t d = map_get(&tables.lower, c);
            if (d == FBPE_MK_MULTI) return 0; /* len(low) != len(word): no code */
            low = (uint32_t)((int32_t)c + d);
        }
        if (low < 0x80) {
            up = low - 'a' < 26u ? low - 32 : low;
        } else {
            int32_t d = map_get(&tables.upper, low);
            up = d == FBPE_MK_MULTI ? UINT32_MAX : (uint32_t)((int32_t)low + d);
        }
        title &= chars == 0 ? up == c : low == c;
        upper &= up == c;
        changed |= low != c;
        o += put_utf8(low, out + o);
        i += len;
        chars++;
    }
    if (!changed) return 0;
    *out_len = o;
    if (title) return 1;
    if (upper && chars >= 2) return 2;
    return 0;
}

/* ---- pieces ------------------------------------------------------------------------------ */

/* A piece not yet written: a unit, and the markers it gets. */
typedef struct {
    unsigned kind;            /* U_WORD, U_OTHER (escaped) or any other: copied */
    unsigned left, right;     /* a marker on that side (punct and digit units) */
    unsigned cased;
    size_t start, end;
} mk_piece;

#define SMALL_PIECE 512

typedef struct {
    int options;
    const uint8_t *s;
    size_t n;
    fbpe_mk_sink emit;
    void *ctx;
    uint8_t *heap; /* for pieces that do not fit `small` */
    size_t heap_cap;
    uint8_t small[SMALL_PIECE];
} mk_writer;

static size_t write_word(const uint8_t *u, size_t len, int coded, uint8_t *out) {
    if (coded) { /* markers.BoundaryMarkers._word */
        size_t m;
        int code = fbpe_mk_case_code(u, len, out + 6, &m);
        if (code) {
            memcpy(out, SHIFT_UTF8[code], 3);
            memcpy(out + 3, BOUNDARY_UTF8, 3);
            memcpy(out + 6 + m, BOUNDARY_UTF8, 3);
            return m + 9;
        }
    }
    memcpy(out, BOUNDARY_UTF8, 3);
    memcpy(out + 3, u, len);
    memcpy(out + 3 + len, BOUNDARY_UTF8, 3);
    return len + 6;
}

/* markers.escape_private_use: U+E000..U+EFFF, the code points whose UTF-8 starts with 0xEE,
 * become LITERAL and three base-16 arguments. */
static size_t write_escaped(const uint8_t *u, size_t len, uint8_t *out) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (u[i] != 0xEE) {
            out[o++] = u[i++];
            continue;
        }
        unsigned offset = (unsigned)(u[i + 1] & 0x3F) << 6 | (u[i + 2] & 0x3F);
        memcpy(out + o, LITERAL_UTF8, 3);
        o += 3;
        for (int shift = 8; shift >= 0; shift -= 4) {
            out[o++] = 0xEE;
            out[o++] = 0x80;
            out[o++] = (uint8_t)(0x80 | ((offset >> shift) & 15));
        }
        i += 3;
    }
    return o;
}

/* A piece that is not the unit as it is: written into the writer's buffer. */
static int emit_written(mk_writer *w, const mk_piece *p) {
    const uint8_t *u = w->s + p->start;
    size_t len = p->end - p->start;
    /* Room: a lower-cased character takes at most 1.5 times its bytes, an escaped one 4
     * times; three atoms; 16 readable bytes after the piece. */
    if (len > (SIZE_MAX - 32) / 4) return -1;
    size_t need = (p->kind == U_OTHER ? 4 * len : 2 * len) + 9 + 16, m;
    uint8_t *out = w->small;
    size_t cap = SMALL_PIECE;
    if (need > SMALL_PIECE) {
        if (need > w->heap_cap) {
            uint8_t *grown = realloc(w->heap, need);
            if (!grown) return -1;
            w->heap = grown;
            w->heap_cap = need;
        }
        out = w->heap;
        cap = w->heap_cap;
    }
    if (p->kind == U_WORD) {
        m = write_word(u, len, p->cased && (w->options & FBPE_MK_CASE), out);
    } else if (p->kind == U_OTHER) {
        m = write_escaped(u, len, out);
    } else {
        m = 0;
        if (p->left) {
            memcpy(out, BOUNDARY_UTF8, 3);
            m = 3;
        }
        memcpy(out + m, u, len);
        m += len;
        if (p->right) {
            memcpy(out + m, BOUNDARY_UTF8, 3);
            m += 3;
        }
    }
    return w->emit(w->ctx, out, m, cap, p->start);
}

/* `emit` is w->emit, passed on its own so that once inlined it is a known function. */
FBPE_MK_INLINE int emit_piece(mk_writer *w, const mk_piece *p, fbpe_mk_sink emit) {
    const uint8_t *u = w->s + p->start;
    size_t len = p->end - p->start;
    if (p->kind == U_WORD) {
        if (len <= 16 && w->n - p->start >= 16 && !(p->cased && (w->options & FBPE_MK_CASE))) {
            /* Most pieces: a short word between markers, copied in fixed sizes. */
            memcpy(w->small, BOUNDARY_UTF8, 3);
            memcpy(w->small + 3, u, 16);
            memcpy(w->small + 3 + len, BOUNDARY_UTF8, 3);
            return emit(w->ctx, w->small, len + 6, SMALL_PIECE, p->start);
        }
    } else if (!p->left && !p->right && (p->kind != U_OTHER || !memchr(u, 0xEE, len))) {
        return emit(w->ctx, u, len, w->n - p->start, p->start); /* the unit as it is */
    }
    return emit_written(w, p);
}

/* BoundaryMarkers.pieces: one pass with one unit of delay. A single space after a marked
 * unit is held back until the next unit says whether it is dropped; the last piece is held
 * back (`pending`) because a dropped space after it adds a marker to its end. */
FBPE_MK_INLINE int mk_pieces(int options, const uint8_t *s, size_t n, fbpe_mk_sink emit, void *ctx) {
    mk_writer w;
    w.options = options;
    w.s = s;
    w.n = n;
    w.emit = emit;
    w.ctx = ctx;
    w.heap = NULL;
    w.heap_cap = 0;
    const unsigned marked = 1u << U_WORD | (options & FBPE_MK_PUNCT ? 1u << U_PUNCT : 0) |
                            (options & FBPE_MK_DIGITS ? 1u << U_DIGIT : 0);
    unsigned prev = U_NONE; /* the kind of the unit before */
    int held = 0, have = 0, rc = 0;
    size_t held_at = 0;
    mk_piece pending = {0}, p;
#define PUSH(piece)                                                                            \
    do {                                                                                       \
        if (have && (rc = emit_piece(&w, &pending, emit)) != 0) goto done;                          \
        pending = (piece);                                                                     \
        have = 1;                                                                              \
    } while (0)
    size_t i = 0;
    while (i < n) {
        mk_unit u = next_unit(s, i, n);
        p.kind = u.kind;
        p.left = p.right = 0;
        p.cased = u.cased;
        p.start = i;
        p.end = u.end;
        i = u.end;
        if (held) {
            held = 0;
            if (marked >> u.kind & 1) { /* the space is dropped: markers on both sides of it */
                if (prev != U_WORD) pending.right = 1;
                p.left = u.kind != U_WORD;
                PUSH(p);
                prev = u.kind;
                continue;
            }
            mk_piece space = {U_SPACE, 0, 0, 0, held_at, held_at + 1};
            PUSH(space);
            prev = U_SPACE;
        }
        if (u.kind == U_SPACE && (marked >> prev & 1)) {
            held = 1;
            held_at = p.start;
            continue; /* prev stays the marked unit before the space */
        }
        PUSH(p);
        prev = u.kind;
    }
    if (held) {
        mk_piece space = {U_SPACE, 0, 0, 0, held_at, held_at + 1};
        PUSH(space);
    }
    if (have) rc = emit_piece(&w, &pending, emit);
done:
#undef PUSH
    free(w.heap);
    return rc;
}

int fbpe_mk_pieces(int options, const uint8_t *s, size_t n, fbpe_mk_sink emit, void *ctx) {
    return mk_pieces(options, s, n, emit, ctx);
}
