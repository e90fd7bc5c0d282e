/* The boundary-marker scheme's unit scanner and piece loop, as inline functions: the loops
 * that make pieces (the counter, count.c; the encoder, encode_text.c; the list for Python,
 * markers.c) each inline fbpe_mk_pieces_inline with their own sink, so that the call per
 * piece goes and the sink's state stays in registers. The pieces that must be written (a
 * marker added, a case code, an escape) are written out of line, once, in markers.c. Each
 * rule names the line of the BoundaryMarkers reference (markers.py) it follows; see
 * markers.h.
 */
#ifndef FBPE_MARKERS_SCAN_H
#define FBPE_MARKERS_SCAN_H

#include "markers.h"
#include "scanners.h" /* fbpe_little_endian, fbpe_lowest_bit */
#include "../common/utf8.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define FBPE_MK_INLINE static inline __attribute__((always_inline))
#else
#define FBPE_MK_INLINE static inline
#endif

/* The atom BOUNDARY, U+E300, in UTF-8. */
static const uint8_t FBPE_MK_BOUNDARY_UTF8[3] = {0xEE, 0x8C, 0x80};

static inline unsigned fbpe_mk_class(const uint8_t *cls, const uint8_t *s, size_t i, size_t *len) {
    if (s[i] < 0x80) {
        *len = 1;
        return cls[s[i]];
    }
    return cls[fbpe_utf8_decode(s, i, len)];
}

static inline int fbpe_mk_bytes_at(const uint8_t *s, size_t i, size_t n, uint8_t a, uint8_t b,
                                   uint8_t c) {
    return i + 3 <= n && s[i] == a && s[i + 1] == b && s[i + 2] == c;
}
#define FBPE_MK_AT_VS16(s, i, n) fbpe_mk_bytes_at(s, i, n, 0xEF, 0xB8, 0x8F)   /* U+FE0F */
#define FBPE_MK_AT_KEYCAP(s, i, n) fbpe_mk_bytes_at(s, i, n, 0xE2, 0x83, 0xA3) /* U+20E3 */
#define FBPE_MK_AT_ZWJ(s, i, n) fbpe_mk_bytes_at(s, i, n, 0xE2, 0x80, 0x8D)    /* U+200D */

/* ---- units ------------------------------------------------------------------------------ */


/* The end of the run of characters whose class has a bit of `flags`, from i. */
static inline size_t fbpe_mk_run_of_flag(const uint8_t *cls, const uint8_t *s, size_t i, size_t n,
                                         unsigned flags) {
    size_t len;
    while (i < n && (fbpe_mk_class(cls, s, i, &len) & flags)) i += len;
    return i;
}

/* _KEYCAP = [0-9#*]\ufe0f?\u20e3 at i: its end, or 0. (Without the U+FE0F the U+20E3 would
 * have to stand where the U+FE0F is, so there is nothing to give back.) */
static inline size_t fbpe_mk_keycap_end(const uint8_t *s, size_t i, size_t n) {
    uint8_t b = s[i];
    if (!((b >= '0' && b <= '9') || b == '#' || b == '*')) return 0;
    size_t j = i + 1;
    if (FBPE_MK_AT_VS16(s, j, n)) j += 3;
    return FBPE_MK_AT_KEYCAP(s, j, n) ? j + 3 : 0;
}

/* EMOJI_START at i (class c, length len): its end, or 0. */
static inline size_t fbpe_mk_emoji_start_end(const uint8_t *s, size_t i, size_t n, unsigned c,
                                             size_t len) {
    if (!(c & (FBPE_MK_EMOJI_PRESENTATION | FBPE_MK_PICTOGRAPHIC)) && s[i] >= 0x40) return 0;
    size_t e = fbpe_mk_keycap_end(s, i, n);
    if (e) return e;
    if (c & FBPE_MK_EMOJI_PRESENTATION) return i + len;
    if ((c & FBPE_MK_PICTOGRAPHIC) && FBPE_MK_AT_VS16(s, i + len, n)) return i + len + 3;
    return 0;
}

/* (?P<emoji>EMOJI+ INHERITED_MARK*) from i, where EMOJI_START matches; every quantifier
 * takes all it can and nothing after it can fail, so none gives anything back. */
static inline size_t fbpe_mk_emoji_end(const uint8_t *cls, const uint8_t *s, size_t i, size_t n) {
    size_t len, e;
    for (;;) {
        if (i >= n) break;
        unsigned c = fbpe_mk_class(cls, s, i, &len);
        if (!(e = fbpe_mk_emoji_start_end(s, i, n, c, len))) break;
        i = fbpe_mk_run_of_flag(cls, s, e, n, FBPE_MK_EMOJI_EXTEND);
        /* (?:\u200d PICTOGRAPHIC EMOJI_EXTEND*)* */
        while (FBPE_MK_AT_ZWJ(s, i, n) && i + 3 < n &&
               (fbpe_mk_class(cls, s, i + 3, &len) & FBPE_MK_PICTOGRAPHIC))
            i = fbpe_mk_run_of_flag(cls, s, i + 3 + len, n, FBPE_MK_EMOJI_EXTEND);
    }
    return fbpe_mk_run_of_flag(cls, s, i, n, FBPE_MK_INHERITED);
}

/* The end of the run of ASCII letters from i, eight bytes at a time (most words are short,
 * and a byte loop pays a mispredicted branch where each one ends); *any gets
 * FBPE_MK_CHANGES_LOWER if one of them is upper case. The ASCII word characters are exactly
 * A-Z and a-z (charclasses.py checks that regex's ASCII letters are). Stops early at a
 * non-ASCII byte, where the caller's loop goes on. */
static inline size_t fbpe_mk_ascii_letters(const uint8_t *s, size_t i, size_t n, unsigned *any) {
    const uint64_t high = 0x8080808080808080ull;
    while (fbpe_little_endian() && i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        /* Per byte, without carries between bytes (as scanners.h's run_of_letters):
         * OR 0x20 folds A-Z onto a-z, then 0x61 <= y <= 0x7A in the high bit; upper case is
         * 0x41 <= x <= 0x5A of the byte itself. Non-ASCII bytes never count. */
        uint64_t x = w & 0x7F7F7F7F7F7F7F7Full;
        uint64_t y = (w | 0x2020202020202020ull) & 0x7F7F7F7F7F7F7F7Full;
        uint64_t letters = (y + 0x1F1F1F1F1F1F1F1Full) & ~(y + 0x0505050505050505ull) & ~w & high;
        uint64_t upper = (x + 0x3F3F3F3F3F3F3F3Full) & ~(x + 0x2525252525252525ull) & ~w & high;
        uint64_t stop = ~letters & high;
        /* the bytes before the first stop */
        uint64_t taken = stop ? (stop & (0 - stop)) - 1 : ~0ull;
        if (upper & taken) *any |= FBPE_MK_CHANGES_LOWER;
        /* little-endian: the first byte is the low one */
        if (stop) return i + fbpe_lowest_bit(stop) / 8;
        i += 8;
    }
    return i;
}

/* What a unit is to the marking rules; also bit numbers in a set of marked kinds. */
enum {
    FBPE_MK_U_NONE = 0,
    FBPE_MK_U_WORD,
    FBPE_MK_U_DIGIT,
    FBPE_MK_U_PUNCT,
    FBPE_MK_U_SPACE,
    FBPE_MK_U_OTHER
};

typedef struct {
    size_t end;
    unsigned kind;  /* FBPE_MK_U_WORD ... FBPE_MK_U_OTHER */
    unsigned cased; /* a word with a character that lower() changes */
} fbpe_mk_unit;

/* A run of (?:(?!lookahead) X INHERITED_MARK*)+ from i, X being the characters of `kind`,
 * where s[i] is one and the lookahead fails there. keycaps_only: the lookahead is _KEYCAP
 * (digits), else EMOJI_START. */
static inline size_t fbpe_mk_run_with_marks(const uint8_t *cls, const uint8_t *s, size_t i,
                                            size_t n, size_t len, unsigned kind, int keycaps_only) {
    for (;;) {
        i = fbpe_mk_run_of_flag(cls, s, i + len, n, FBPE_MK_INHERITED);
        if (i >= n) return n;
        unsigned c = fbpe_mk_class(cls, s, i, &len);
        if ((c & FBPE_MK_KIND) != kind) return i;
        if (keycaps_only ? fbpe_mk_keycap_end(s, i, n) != 0
                         : fbpe_mk_emoji_start_end(s, i, n, c, len) != 0)
            return i;
    }
}

/* The unit that starts at i: the alternative of markers.UNITS that matches there. The
 * alternatives are tried in the regex's order; the class of s[i] rules out all but one or
 * two of them. */
FBPE_MK_INLINE fbpe_mk_unit fbpe_mk_next_unit(const uint8_t *cls, const uint8_t *s, size_t i,
                                              size_t n) {
    fbpe_mk_unit u = {0, FBPE_MK_U_OTHER, 0};
    size_t len;
    unsigned c = fbpe_mk_class(cls, s, i, &len);
    switch (c & FBPE_MK_KIND) {
    case FBPE_MK_K_WORD: { /* (?P<word>WORD_CHAR+) */
        unsigned any = c;
        size_t j = fbpe_mk_ascii_letters(s, i + len, n, &any);
        while (j < n) {
            unsigned d;
            if (s[j] < 0x80) {
                d = cls[s[j]];
                len = 1;
            } else {
                d = cls[fbpe_utf8_decode(s, j, &len)];
            }
            if ((d & FBPE_MK_KIND) != FBPE_MK_K_WORD) break;
            any |= d;
            j += len;
        }
        u.end = j;
        u.kind = FBPE_MK_U_WORD;
        u.cased = (any & FBPE_MK_CHANGES_LOWER) != 0;
        return u;
    }
    case FBPE_MK_K_SPACELESS: /* SPACELESS_CHAR (?:SPACELESS_CHAR|INHERITED_MARK)* */
        u.end = i + len;
        while (u.end < n) {
            unsigned d = fbpe_mk_class(cls, s, u.end, &len);
            if ((d & FBPE_MK_KIND) != FBPE_MK_K_SPACELESS && !(d & FBPE_MK_INHERITED)) break;
            u.end += len;
        }
        return u;
    case FBPE_MK_K_SPACE: { /* \s+; a space unit is exactly one U+0020, the rest is other */
        size_t j = i + len;
        while (j < n && (fbpe_mk_class(cls, s, j, &len) & FBPE_MK_KIND) == FBPE_MK_K_SPACE)
            j += len;
        u.end = j;
        if (j == i + 1 && s[i] == ' ') u.kind = FBPE_MK_U_SPACE;
        return u;
    }
    case FBPE_MK_K_PUNCT:
        if (fbpe_mk_emoji_start_end(s, i, n, c, len)) break;
        u.end = fbpe_mk_run_with_marks(cls, s, i, n, len, FBPE_MK_K_PUNCT, 0);
        u.kind = FBPE_MK_U_PUNCT;
        return u;
    case FBPE_MK_K_NUMBER:
        if (fbpe_mk_keycap_end(s, i, n)) break;
        u.end = fbpe_mk_run_with_marks(cls, s, i, n, len, FBPE_MK_K_NUMBER, 1);
        u.kind = FBPE_MK_U_DIGIT;
        return u;
    default: /* rest */
        if (fbpe_mk_emoji_start_end(s, i, n, c, len)) break;
        u.end = fbpe_mk_run_with_marks(cls, s, i, n, len, FBPE_MK_K_REST, 0);
        return u;
    }
    u.end = fbpe_mk_emoji_end(cls, s, i, n);
    return u;
}

/* ---- pieces ------------------------------------------------------------------------------ */

typedef struct fbpe_mk_writer fbpe_mk_writer;

/* A piece not yet written: a unit, and the markers it gets. */
typedef struct {
    unsigned kind;            /* FBPE_MK_U_WORD, FBPE_MK_U_OTHER (escaped) or any other: copied */
    unsigned left, right;     /* a marker on that side (punct and digit units) */
    unsigned cased;
    size_t start, end;
} fbpe_mk_piece;

#define FBPE_MK_SMALL_PIECE 512

struct fbpe_mk_writer {
    const fbpe_markers *m;
    int options;
    const uint8_t *s;
    size_t n;
    fbpe_mk_sink emit;
    void *ctx;
    uint8_t *heap; /* for pieces that do not fit `small` */
    size_t heap_cap;
    uint8_t small[FBPE_MK_SMALL_PIECE];
};

struct fbpe_markers {
    fbpe_mk_tables tables;
    /* Writes a piece that is not its unit as it is into the writer's buffer, and emits it. */
    fbpe_status (*write)(fbpe_mk_writer *w, const fbpe_mk_piece *p);
};

/* `emit` is w->emit, passed on its own so that once inlined it is a known function. */
FBPE_MK_INLINE fbpe_status fbpe_mk_emit_piece(fbpe_mk_writer *w, const fbpe_mk_piece *p,
                                              fbpe_mk_sink emit) {
    const uint8_t *u = w->s + p->start;
    size_t len = p->end - p->start;
    if (p->kind == FBPE_MK_U_WORD) {
        if (len <= 16 && w->n - p->start >= 16 && !(p->cased && (w->options & FBPE_MK_CASE))) {
            /* Most pieces: a short word between markers, copied in fixed sizes. */
            memcpy(w->small, FBPE_MK_BOUNDARY_UTF8, 3);
            memcpy(w->small + 3, u, 16);
            memcpy(w->small + 3 + len, FBPE_MK_BOUNDARY_UTF8, 3);
            return emit(w->ctx, w->small, len + 6, FBPE_MK_SMALL_PIECE, p->start);
        }
    } else if (!p->left && !p->right && (p->kind != FBPE_MK_U_OTHER || !memchr(u, 0xEE, len))) {
        return emit(w->ctx, u, len, w->n - p->start, p->start); /* the unit as it is */
    }
    return w->m->write(w, p); /* out of line, in markers.c */
}

/* BoundaryMarkers.pieces: one pass with one unit of delay. A single space after a marked
 * unit is held back until the next unit says whether it is dropped; the last piece is held
 * back (`pending`) because a dropped space after it adds a marker to its end. */
FBPE_MK_INLINE fbpe_status fbpe_mk_pieces_inline(const fbpe_markers *m, int options,
                                                 const uint8_t *s, size_t n, fbpe_mk_sink emit,
                                                 void *ctx) {
    fbpe_mk_writer w;
    const uint8_t *cls = m->tables.classes;
    w.m = m;
    w.options = options;
    w.s = s;
    w.n = n;
    w.emit = emit;
    w.ctx = ctx;
    w.heap = NULL;
    w.heap_cap = 0;
    const unsigned marked = 1u << FBPE_MK_U_WORD |
                            (options & FBPE_MK_PUNCT ? 1u << FBPE_MK_U_PUNCT : 0) |
                            (options & FBPE_MK_DIGITS ? 1u << FBPE_MK_U_DIGIT : 0);
    unsigned prev = FBPE_MK_U_NONE; /* the kind of the unit before */
    int held = 0, have = 0;
    fbpe_status rc = FBPE_OK;
    size_t held_at = 0;
    fbpe_mk_piece pending = {0}, p;
#define PUSH(piece)                                                                            \
    do {                                                                                       \
        if (have && (rc = fbpe_mk_emit_piece(&w, &pending, emit)) != FBPE_OK) goto done;       \
        pending = (piece);                                                                     \
        have = 1;                                                                              \
    } while (0)
    size_t i = 0;
    while (i < n) {
        fbpe_mk_unit u = fbpe_mk_next_unit(cls, s, i, n);
        p.kind = u.kind;
        p.left = p.right = 0;
        p.cased = u.cased;
        p.start = i;
        p.end = u.end;
        i = u.end;
        if (held) {
            held = 0;
            if (marked >> u.kind & 1) { /* the space is dropped: markers on both sides of it */
                if (prev != FBPE_MK_U_WORD) pending.right = 1;
                p.left = u.kind != FBPE_MK_U_WORD;
                PUSH(p);
                prev = u.kind;
                continue;
            }
            fbpe_mk_piece space = {FBPE_MK_U_SPACE, 0, 0, 0, held_at, held_at + 1};
            PUSH(space);
            prev = FBPE_MK_U_SPACE;
        }
        if (u.kind == FBPE_MK_U_SPACE && (marked >> prev & 1)) {
            held = 1;
            held_at = p.start;
            continue; /* prev stays the marked unit before the space */
        }
        PUSH(p);
        prev = u.kind;
    }
    if (held) {
        fbpe_mk_piece space = {FBPE_MK_U_SPACE, 0, 0, 0, held_at, held_at + 1};
        PUSH(space);
    }
    if (have) rc = fbpe_mk_emit_piece(&w, &pending, emit);
done:
#undef PUSH
    free(w.heap);
    return rc;
}

#endif
