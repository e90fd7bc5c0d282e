/* The scanners themselves, as inline functions: each loop that cuts text into pieces (the
 * counter, count.c; the encoder, encode_text.c) inlines the scanner of its pattern. They
 * read the character classes through the table they are given (scan.h), which the module
 * that owns the scanner installs once and lends to the others.
 *
 * How a regex alternation becomes a scanner. findall tries the alternatives at the current
 * position in order and takes the first that matches; inside an alternative, greedy
 * quantifiers take as much as they can and give back one character at a time until the rest
 * matches. For these patterns the giving back has a closed form, worked out below for each
 * alternative, so a scanner reads each run of a class once, remembers the one or two
 * positions the backtracking would land on, and returns. The rules are tested against regex
 * on hypothesis text and on real corpora (tests/text/test_scanner.py).
 *
 * Notation: L = \p{L}, N = \p{N}, S = \s, "other" = none of L, N, S. Classes come from
 * the table measured from regex (charclasses.py); only ASCII characters are tested by value.
 */
#ifndef FBPE_SCANNERS_H
#define FBPE_SCANNERS_H

#include "scan.h"
#include "../common/utf8.h"

#include <string.h>

#if defined(__GNUC__)
#define FBPE_NOINLINE __attribute__((noinline, unused)) /* unused: a file may use no o200k scanner */
#define FBPE_ALWAYS_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define FBPE_NOINLINE __declspec(noinline)
#define FBPE_ALWAYS_INLINE __forceinline
#else
#define FBPE_NOINLINE
#define FBPE_ALWAYS_INLINE inline
#endif

/* Always inline: a few instructions that GCC, its budget for the file spent on the encoding
 * loops, made a call in o200k's scanner (o200k, 500 KB of fresh English, the whole call:
 * 21.09M instructions with the call, 20.91M inlined). */
static FBPE_ALWAYS_INLINE unsigned fbpe_class_at(const fbpe_classes *cl, const uint8_t *s,
                                                 size_t i, size_t *len) {
    if (s[i] < 0x80) {
        *len = 1;
        return cl->cls[s[i]];
    }
    return cl->cls[fbpe_utf8_decode(s, i, len)];
}

static inline int fbpe_little_endian(void) {
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* Two two-byte characters (110xxxxx 10xxxxxx, twice) read as one little-endian word w:
 * fbpe_is_two_byte_pair(w) says whether the four bytes are that; fbpe_two_byte_pair(p), the
 * word at p when they are, else 0 (never such a word; always 0 on a big-endian machine);
 * fbpe_pair_first and fbpe_pair_second, their code points as fbpe_utf8_decode reads them.
 * (o200k's U*W+ loads the word itself: written with fbpe_two_byte_pair, GCC compiled it to
 * 0.6% more instructions on Arabic.) */
static inline int fbpe_is_two_byte_pair(uint32_t w) { return (w & 0xC0E0C0E0u) == 0x80C080C0u; }
static inline uint32_t fbpe_two_byte_pair(const uint8_t *p) {
    uint32_t w;
    if (!fbpe_little_endian()) return 0;
    memcpy(&w, p, 4);
    return fbpe_is_two_byte_pair(w) ? w : 0;
}
static inline uint32_t fbpe_pair_first(uint32_t w) { return (w & 0x1F) << 6 | (w >> 8 & 0x3F); }
static inline uint32_t fbpe_pair_second(uint32_t w) { return (w >> 10 & 0x7C0) | (w >> 24 & 0x3F); }

/* The end of the run of characters whose class has a bit of `bits`, from i. Two two-byte
 * characters (Cyrillic, Greek, Arabic, Hebrew) are read as one 32-bit word where both are
 * there: a Russian or Arabic word is a run of them, and one at a time through the general
 * decoder they cost about 18 instructions a letter with two branches each (callgrind, o200k
 * on 500 KB of fresh Russian; the decoding reads them as fbpe_utf8_decode does, so any bytes
 * give the same run). */
static inline size_t fbpe_run_of(const fbpe_classes *cl, const uint8_t *s, size_t i, size_t n,
                                 unsigned bits) {
    size_t len;
    while (i < n) {
        if (s[i] < 0x80) {
            if (!(cl->cls[s[i]] & bits)) return i;
            i++;
            continue;
        }
        if ((s[i] & 0xF0) == 0xE0 && i + 3 <= n) {
            /* Three-byte characters (CJK, kana, Hangul, Devanagari, Thai) without the
             * general decoder's branches, as it reads them (cl100k, 500 KB of fresh
             * Chinese, one thread: the call 45.82M -> 42.99M instructions; the 22
             * languages 40.93M -> 40.65M). */
            do {
                uint32_t cp = (uint32_t)(s[i] & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 |
                              (s[i + 2] & 0x3F);
                if (!(cl->cls[cp] & bits)) return i;
                i += 3;
            } while (i + 3 <= n && (s[i] & 0xF0) == 0xE0);
            continue;
        }
        uint32_t w;
        while (i + 4 <= n && (w = fbpe_two_byte_pair(s + i))) {
            if (!(cl->cls[fbpe_pair_first(w)] & bits)) return i;
            if (!(cl->cls[fbpe_pair_second(w)] & bits)) return i + 2;
            i += 4;
        }
        if (i >= n) break;
        if (s[i] < 0x80) continue;
        if (!(cl->cls[fbpe_utf8_decode(s, i, &len)] & bits)) return i;
        i += len;
    }
    return n;
}

/* The index of the lowest set bit of a nonzero word. */
static inline unsigned fbpe_lowest_bit(uint64_t x) {
#if defined(_MSC_VER)
    unsigned long k;
    _BitScanForward64(&k, x);
    return (unsigned)k;
#else
    return (unsigned)__builtin_ctzll(x);
#endif
}

/* Where the ASCII lower-case letters from i end (with fold 0x20, letters of either case),
 * eight at a time: most words are short, and a byte loop pays a mispredicted branch where
 * each one ends, which a word-at-a-time count of the leading letters does not. Returns the
 * end when an ASCII byte stops the run; else the offset of the non-ASCII character (or the
 * last bytes) where the caller's loop through the class table goes on, and *done is 0. */
static FBPE_ALWAYS_INLINE size_t fbpe_ascii_letters_run(const uint8_t *s, size_t i, size_t n,
                                                       uint64_t fold, int *done) {
    const uint64_t high = 0x8080808080808080ull;
    *done = 0;
    while (fbpe_little_endian() && i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        /* Per byte, without carries between bytes: OR fold maps A-Z onto a-z, then two
         * additions test 0x61 <= y <= 0x7A in the high bit; non-ASCII bytes never count. */
        uint64_t y = (w | fold) & 0x7F7F7F7F7F7F7F7Full;
        uint64_t letters = (y + 0x1F1F1F1F1F1F1F1Full) & ~(y + 0x0505050505050505ull) & ~w & high;
        uint64_t stop = ~letters & high;
        if (!stop) {
            i += 8;
            continue;
        }
        i += fbpe_lowest_bit(stop) / 8; /* little-endian: the first byte is the low one */
        *done = s[i] < 0x80;
        return i;
    }
    return i;
}

/* fbpe_ascii_letters_run where the compiler decides whether to inline it: forced into
 * every caller, o200k's scanner called its run of lower-case letters instead, 6% more
 * instructions encoding English (callgrind); left to the compiler in gpt4's inline path,
 * it was called there, 9% more (JavaScript). */
static inline size_t fbpe_ascii_letters_end(const uint8_t *s, size_t i, size_t n, uint64_t fold,
                                            int *done) {
    return fbpe_ascii_letters_run(s, i, n, fold, done);
}

/* The end of the run of letters from i (regex's ASCII letters are exactly A-Z and a-z;
 * charclasses.py checks it). */
static inline size_t fbpe_run_of_letters(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                         size_t n) {
    int done;
    i = fbpe_ascii_letters_end(s, i, n, 0x2020202020202020ull, &done);
    return done ? i : fbpe_run_of(cl, s, i, n, FBPE_LETTER);
}

/* The end of the run of "other" characters (none of L, N, S) from i. */
static FBPE_ALWAYS_INLINE size_t fbpe_run_of_other(const fbpe_classes *cl, const uint8_t *s,
                                                   size_t i, size_t n) {
    size_t len;
    const unsigned bits = FBPE_LETTER | FBPE_NUMBER | FBPE_SPACE;
    while (i < n) {
        if (s[i] < 0x80) {
            if (cl->cls[s[i]] & bits) return i;
            i++;
            continue;
        }
        if (cl->cls[fbpe_utf8_decode(s, i, &len)] & bits) return i;
        i += len;
    }
    return n;
}

static inline int fbpe_is_other(unsigned c) {
    return !(c & (FBPE_LETTER | FBPE_NUMBER | FBPE_SPACE));
}

/* \p{N}{1,3}: up to three numbers from i (s[i] is one). */
static FBPE_ALWAYS_INLINE size_t fbpe_up_to_three_numbers(const fbpe_classes *cl,
                                                          const uint8_t *s, size_t i, size_t n) {
    size_t len;
    for (int k = 0; k < 3 && i < n; k++) {
        if (!(fbpe_class_at(cl, s, i, &len) & FBPE_NUMBER)) break;
        i += len;
    }
    return i;
}

/* The contraction letter (lower-case ASCII) that (?i) matches at s[i], or 0. */
static inline char fbpe_folded_letter(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                      size_t *len) {
    if (s[i] < 0x80) {
        *len = 1;
        return cl->ascii_fold[s[i]];
    }
    uint32_t cp = fbpe_utf8_decode(s, i, len);
    for (size_t k = 0; k < cl->num_folds; k++)
        if (cl->fold_cp[k] == cp) return cl->fold_letter[k];
    return 0;
}

/* The contraction letter at s[j] and its length: with case_sensitive (GPT-2), only ASCII
 * lower case counts; otherwise whatever (?i) matches to one. */
static inline char fbpe_contraction_letter(const fbpe_classes *cl, const uint8_t *s, size_t j,
                                           int case_sensitive, size_t *len) {
    if (!case_sensitive) return fbpe_folded_letter(cl, s, j, len);
    *len = 1;
    return s[j] >= 'a' && s[j] <= 'z' ? cl->ascii_fold[s[j]] : 0;
}

/* '(?i:[sdmt]|ll|ve|re) at s[i] == '\'': the end of the contraction, or 0. The alternatives
 * start with different letters, so at most one can match. */
static inline size_t fbpe_contraction_end(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                          size_t n, int case_sensitive) {
    size_t j = i + 1, len;
    if (j >= n) return 0;
    char a = fbpe_contraction_letter(cl, s, j, case_sensitive, &len);
    if (a == 's' || a == 'd' || a == 'm' || a == 't') return j + len;
    if (a != 'l' && a != 'v' && a != 'r') return 0;
    j += len;
    if (j >= n) return 0;
    char b = fbpe_contraction_letter(cl, s, j, case_sensitive, &len);
    if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e')) return j + len;
    return 0;
}

/* A run of white space from i (s[i] is white space): its end, the start of its last
 * character, and the end of its last \r or \n (0 if it has none). */
typedef struct {
    size_t end, last, after_newline;
} fbpe_space_run;

static inline fbpe_space_run fbpe_run_of_space(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                               size_t n) {
    fbpe_space_run r = {i, i, 0};
    size_t len;
    while (i < n) {
        uint8_t b = s[i];
        if (b == ' ' && i + 8 <= n && fbpe_little_endian()) {
            /* Indentation: runs of plain spaces, eight at a time. */
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t other = w ^ 0x2020202020202020ull;
            size_t k = other ? fbpe_lowest_bit(other) / 8 : 8; /* >= 1: s[i] is a space */
            i += k;
            r.last = i - 1;
            continue;
        }
        if (b < 0x80) {
            if (!(cl->cls[b] & FBPE_SPACE)) break;
            if (b == '\n' || b == '\r') r.after_newline = i + 1;
            len = 1;
        } else if (!(cl->cls[fbpe_utf8_decode(s, i, &len)] & FBPE_SPACE)) {
            break;
        }
        r.last = i;
        i += len;
    }
    r.end = i;
    return r;
}

/* The tail every pattern but the Functionalizer's shares, at a white-space character i:
 *   \s+(?!\S)  the run, less its last character when a non-space follows (giving back
 *              one character is the first backtrack that satisfies the lookahead, and it
 *              needs the run to keep at least one character);
 *   \s+        otherwise: the run is one character followed by a non-space. */
static inline size_t fbpe_space_tail(fbpe_space_run r, size_t i, size_t n) {
    if (r.end == n) return n;
    if (r.last > i) return r.last;
    return r.end;
}

/* From a line break at i, through the run of ASCII white space after it: the end of the
 * run's last \r or \n (where \s*[\r\n] and \s*[\r\n]+ end when the run is all ASCII), and in
 * *stop where the ASCII white space ends (a non-ASCII byte there may be more of it). */
static FBPE_ALWAYS_INLINE size_t fbpe_ascii_line_breaks(const fbpe_classes *cl, const uint8_t *s,
                                                        size_t i, size_t n, size_t *stop) {
    size_t k = i + 1, last = i + 1;
    while (k < n && s[k] < 0x80 && (cl->cls[s[k]] & FBPE_SPACE)) {
        if (s[k] == '\n' || s[k] == '\r') last = k + 1;
        k++;
    }
    *stop = k;
    return last;
}

/* ---- gpt2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ ---- */
static inline size_t fbpe_gpt2_end(const fbpe_classes *cl, const uint8_t *s, size_t i, size_t n) {
    size_t len;
    unsigned c = fbpe_class_at(cl, s, i, &len);
    if (s[i] == '\'') {
        size_t e = fbpe_contraction_end(cl, s, i, n, 1);
        if (e) return e;
    }
    /* " ?X+" for X in L, N, other: the optional space is taken when the next character
     * starts the run; a space followed by a space or the end falls through to \s. */
    size_t start = i;
    if (s[i] == ' ' && i + 1 < n) {
        size_t l2;
        unsigned next = fbpe_class_at(cl, s, i + 1, &l2);
        if (!(next & FBPE_SPACE)) {
            start = i + 1;
            c = next;
        }
    }
    if (!(c & FBPE_SPACE)) {
        if (c & FBPE_LETTER) return fbpe_run_of_letters(cl, s, start, n);
        if (c & FBPE_NUMBER) return fbpe_run_of(cl, s, start, n, FBPE_NUMBER);
        return fbpe_run_of_other(cl, s, start, n);
    }
    return fbpe_space_tail(fbpe_run_of_space(cl, s, i, n), i, n);
}

/* ---- gpt4 (and llama3) ----
 *   '(?i:[sdmt]|ll|ve|re) | [^\r\n\p{L}\p{N}]?+\p{L}+ | \p{N}{1,3}
 *   | ?[^\s\p{L}\p{N}]++[\r\n]* | \s*[\r\n] | \s+(?!\S) | \s+
 * llama3 spells it without possessives and with \s*[\r\n]+. Neither changes a match: the
 * possessive prefix could only be given back to a letter run that cannot start on it, the
 * possessive other-run is followed by [\r\n]* which always matches, and in \s*[\r\n]+ the
 * \s* gives back characters until it stands before the run's last \r or \n, so [\r\n]+
 * takes exactly that one character, as [\r\n] does. */

/* The white-space alternatives from i (s[i] is white space). \s*[\r\n]: \s* takes the
 * whole run and gives back until it stands before a \r or \n; the first such place from
 * the right is the run's last one. */
static inline size_t fbpe_gpt4_like_space_end(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                              size_t n, int space_to_end) {
    fbpe_space_run r = fbpe_run_of_space(cl, s, i, n);
    if (space_to_end && r.end == n) return n; /* tiktoken's \s++$ (fbpe_cl100k_end) */
    if (r.after_newline) return r.after_newline;
    return fbpe_space_tail(r, i, n);
}

/*  ?[^\s\p{L}\p{N}]++[\r\n]*  from the run's first character, start. */
static FBPE_ALWAYS_INLINE size_t fbpe_gpt4_like_other_end(const fbpe_classes *cl,
                                                          const uint8_t *s, size_t start,
                                                          size_t n) {
    size_t e = fbpe_run_of_other(cl, s, start, n);
    while (e < n && (s[e] == '\r' || s[e] == '\n')) e++;
    return e;
}

/* Every piece, in the pattern's order; called for those fbpe_gpt4_like_end leaves. */
static FBPE_NOINLINE size_t fbpe_gpt4_like_general(const fbpe_classes *cl, const uint8_t *s,
                                                   size_t i, size_t n, int single_digits,
                                                   int space_to_end) {
    size_t len, l2;
    uint8_t b = s[i];
    unsigned c = fbpe_class_at(cl, s, i, &len);
    if (b == '\'') {
        size_t e = fbpe_contraction_end(cl, s, i, n, 0);
        if (e) return e;
    }
    if (c & FBPE_LETTER) return fbpe_run_of_letters(cl, s, i, n);
    /* One character that is not \r, \n, L or N may lead a letter run. */
    if (!(c & FBPE_NUMBER) && b != '\r' && b != '\n' && i + len < n &&
        (fbpe_class_at(cl, s, i + len, &l2) & FBPE_LETTER))
        return fbpe_run_of_letters(cl, s, i + len, n);
    if (c & FBPE_NUMBER) return single_digits ? i + len : fbpe_up_to_three_numbers(cl, s, i, n);
    /*  ?[^\s\p{L}\p{N}]++[\r\n]* */
    size_t start = i;
    if (b == ' ' && i + 1 < n && fbpe_is_other(fbpe_class_at(cl, s, i + 1, &l2))) {
        start = i + 1;
        c = 0; /* the run starts on the character after the space: "other" */
    }
    if (fbpe_is_other(c)) return fbpe_gpt4_like_other_end(cl, s, start, n);
    return fbpe_gpt4_like_space_end(cl, s, i, n, space_to_end);
}

/* The common pieces of English and code, all ASCII, are found here, inlined into each loop;
 * the rest by the call above: a word of letters with its one-character prefix (" the",
 * "(foo"), a run of punctuation with its space and line breaks (");\n", " {"), a line break
 * before anything but white space, digits, indentation. Every piece called the whole
 * scanner before, and saving and restoring its registers was a fifth of its instructions on
 * JavaScript, whose pieces are short. Callgrind, cl100k, 500 KB of fresh text encoded after
 * a warm-up (fbpe_encode_text and what it calls): JavaScript 29.3 M -> 26.2 M instructions,
 * English 21.9 M -> 19.3 M, Python 20.9 M -> 18.9 M; scan and count of 1 MB of English
 * (count_segment) 56.9 M -> 48.5 M. The helpers it runs are forced inline
 * (fbpe_ascii_letters_run, fbpe_run_of_other, fbpe_up_to_three_numbers): the compiler's
 * budget for inlining is shared by the whole file, and left to it, it called o200k's run of
 * lower-case letters instead (o200k English 6% more); o200k is 0.8% above where it was.
 * The apostrophe is left to the general path (a contraction comes first), and so is a
 * white-space run that goes on past ASCII (a space of another script) or, for \s++$, to the
 * end of the text. */
static FBPE_ALWAYS_INLINE size_t fbpe_gpt4_like_end(const fbpe_classes *cl, const uint8_t *s,
                                                    size_t i, size_t n, int single_digits,
                                                    int space_to_end) {
    uint8_t b = s[i];
    if (b < 0x80 && b != '\'' && i + 1 < n && s[i + 1] < 0x80) {
        unsigned c = cl->cls[b], c1 = cl->cls[s[i + 1]];
        size_t word = n; /* where a word of letters starts, if one does */
        if (c & FBPE_LETTER) {
            word = i;
        } else if (b == '\n' || b == '\r') {
            size_t k, last = fbpe_ascii_line_breaks(cl, s, i, n, &k); /* \s*[\r\n] */
            if (k < n ? s[k] < 0x80 : !space_to_end) return last;
        } else if (c & FBPE_NUMBER) {
            /* \p{N}{1,3} of ASCII digits (a non-ASCII character after them may be one) */
            if (single_digits) return i + 1;
            size_t k = i + 1;
            while (k < i + 3 && k < n && s[k] < 0x80 && (cl->cls[s[k]] & FBPE_NUMBER)) k++;
            if (k == i + 3 || k == n || s[k] < 0x80) return k;
        } else if (c1 & FBPE_LETTER) {
            word = i + 1;
        } else if (fbpe_is_other(c) || (b == ' ' && fbpe_is_other(c1))) {
            return fbpe_gpt4_like_other_end(cl, s, b == ' ' ? i + 1 : i, n);
        } else if (c & FBPE_SPACE) {
            return fbpe_gpt4_like_space_end(cl, s, i, n, space_to_end); /* indentation */
        }
        if (word < n) {
            int done;
            size_t e = fbpe_ascii_letters_run(s, word, n, 0x2020202020202020ull, &done);
            return done ? e : fbpe_run_of(cl, s, e, n, FBPE_LETTER);
        }
    }
    return fbpe_gpt4_like_general(cl, s, i, n, single_digits, space_to_end);
}

static FBPE_ALWAYS_INLINE size_t fbpe_gpt4_end(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                               size_t n) {
    return fbpe_gpt4_like_end(cl, s, i, n, 0, 0);
}

/* ---- cl100k as tiktoken ships it ----
 *   '(?i:[sdmt]|ll|ve|re) | [^\r\n\p{L}\p{N}]?+\p{L}++ | \p{N}{1,3}+
 *   | ?[^\s\p{L}\p{N}]++[\r\n]*+ | \s++$ | \s*[\r\n] | \s+(?!\S) | \s
 * gpt4 with possessive runs, which change nothing here (nothing after them gives a reason to
 * give back), \s for \s+ (reached only where \s+(?!\S) failed, which needs a run of one
 * character), and \s++$: a white-space run reached at its alternative (no letter run or
 * other-run took its first character) that goes on to the end of the text is one piece. $
 * also holds before a final \n, but that \n is white space, so the run has taken it. */
static FBPE_ALWAYS_INLINE size_t fbpe_cl100k_end(const fbpe_classes *cl, const uint8_t *s,
                                                 size_t i, size_t n) {
    return fbpe_gpt4_like_end(cl, s, i, n, 0, 1);
}

/* ---- o200k ----
 *   [^\r\n\p{L}\p{N}]?U*W+C? | [^\r\n\p{L}\p{N}]?U+W*C? | \p{N}{1,3}
 *   | ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}] and C the
 * optional contraction (?i:'s|'t|'re|'ve|'m|'ll|'d). Lm, Lo and M are in both U and W;
 * marks are not letters, so a mark may also be the one-character prefix. */

/* The end of the run of W from i. ASCII lower-case letters (W's only ASCII members,
 * charclasses.py checks it) are taken eight at a time, as fbpe_run_of_letters takes
 * letters: an English word is a run of them, and the byte loop through the class table was
 * most of the o200k scanner's instructions. */
static inline size_t fbpe_run_of_lowerish(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                          size_t n) {
    int done;
    i = fbpe_ascii_letters_end(s, i, n, 0, &done);
    return done ? i : fbpe_run_of(cl, s, i, n, FBPE_LOWERISH);
}

/* U*W+ from i: the end, or 0 if it cannot match. U* takes the whole U run; if a W follows
 * (it can only be Ll), W+ takes the W run from there. Otherwise U* gives back characters
 * until W+ can start on one: the run's last character that is also in W, and W+ ends right
 * after it (the characters after it in the run are not in W). */
static inline size_t fbpe_upper_then_lower(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                           size_t n) {
    size_t len, after_last_both = 0;
    const unsigned both = FBPE_UPPERISH | FBPE_LOWERISH;
    /* A run of three-byte characters in both classes (CJK ideographs and kana are Lo) is
     * read without the general decoder's branches (callgrind, fbpe_encode_text: o200k
     * zh-CN 81.5 M -> 80.3 M instructions, ja 92.2 M -> 90.4 M). */
    while (i + 3 <= n && (s[i] & 0xF0) == 0xE0 &&
           (cl->cls[(uint32_t)(s[i] & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 |
                    (s[i + 2] & 0x3F)] & both) == both) {
        i += 3;
        after_last_both = i;
    }
    /* So is a run of two-byte ones, two at a time (Arabic and Hebrew letters are Lo, their
     * vowel marks M: fbpe_run_of says why; o200k on 500 KB of fresh Arabic, two threads:
     * fbpe_o200k_general_end and its decoding 8.58M -> 7.27M instructions). */
    while (fbpe_little_endian() && i + 4 <= n) {
        uint32_t w;
        memcpy(&w, s + i, 4);
        if (!fbpe_is_two_byte_pair(w) || (cl->cls[fbpe_pair_first(w)] & both) != both) break;
        i += (cl->cls[fbpe_pair_second(w)] & both) == both ? 4 : 2;
        after_last_both = i;
    }
    while (i < n) {
        unsigned c = fbpe_class_at(cl, s, i, &len);
        if (!(c & FBPE_UPPERISH)) {
            if (c & FBPE_LOWERISH) return fbpe_run_of_lowerish(cl, s, i, n);
            return after_last_both;
        }
        if (c & FBPE_LOWERISH) after_last_both = i + len;
        i += len;
    }
    return after_last_both;
}

/* U+W* from i: the end, or 0. Nothing to give back: W* may be empty. */
static inline size_t fbpe_upper_or_lower(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                         size_t n) {
    size_t e = fbpe_run_of(cl, s, i, n, FBPE_UPPERISH);
    if (e == i) return 0;
    return fbpe_run_of_lowerish(cl, s, e, n);
}

static inline size_t fbpe_with_contraction(const fbpe_classes *cl, const uint8_t *s, size_t e,
                                           size_t n) {
    if (e < n && s[e] == '\'') {
        size_t c = fbpe_contraction_end(cl, s, e, n, 0);
        if (c) return c;
    }
    return e;
}

/* A letter piece whose letters start with ASCII, at j (s[j] an ASCII letter; j after the
 * one-character prefix when there is one): the end, or 0 when a non-ASCII character follows
 * the capitals and the general path must decide. The ASCII members of U are A-Z and of W
 * a-z (charclasses.py checks it), so U*W+ is the capitals then the lower-case run when one
 * follows; otherwise U*W+ cannot match (no capital is in W), nor can the alternatives without
 * the prefix (the prefix is neither U nor W), and U+W* is the capitals alone. Always
 * inlined: once the encoder's loop inlined its lookup of whole tokens too, the compiler
 * called it instead, 1.9 M more instructions on English (callgrind, o200k). */
static FBPE_ALWAYS_INLINE size_t fbpe_o200k_ascii_word(const fbpe_classes *cl,
                                                       const uint8_t *s, size_t j, size_t n) {
    size_t k = j;
    while (k < n && (unsigned)(s[k] - 'A') < 26u) k++;
    if (k < n) {
        if (s[k] >= 0x80) return 0;
        if ((unsigned)(s[k] - 'a') < 26u) { /* fbpe_run_of_lowerish, inlined here */
            int done;
            k = fbpe_ascii_letters_run(s, k, n, 0, &done);
            if (!done) k = fbpe_run_of(cl, s, k, n, FBPE_LOWERISH);
        }
    }
    return fbpe_with_contraction(cl, s, k, n);
}

/* The four letter alternatives are tried in the pattern's order, but only where they can
 * match: each needs its first character (after the prefix, if taken) in U or W, so the
 * class of that character is read once and the alternatives that cannot start there are
 * skipped. Before, " ," or ". " read the class of the same characters four times over.
 * Not inlined: fbpe_o200k_end below, inlined into each loop, decides most pieces without
 * it, and this large function's saving and restoring of registers was 20 instructions a
 * piece when every piece called it. */
static FBPE_NOINLINE size_t fbpe_o200k_general_end(const fbpe_classes *cl, const uint8_t *s,
                                                   size_t i, size_t n) {
    size_t len, l2, e;
    uint8_t b = s[i];
    unsigned c = fbpe_class_at(cl, s, i, &len);
    const unsigned letter_start = FBPE_UPPERISH | FBPE_LOWERISH;
    /* The optional prefix is tried first (greedy), then without it. Without it, the letter
     * part can only start on i when i is a mark or a letter (c has U or W). */
    int prefix = !(c & (FBPE_LETTER | FBPE_NUMBER)) && b != '\r' && b != '\n' && i + len < n &&
                 (fbpe_class_at(cl, s, i + len, &l2) & letter_start);
    int letterish = (c & letter_start) != 0;
    if (prefix && (e = fbpe_upper_then_lower(cl, s, i + len, n)))
        return fbpe_with_contraction(cl, s, e, n);
    if (letterish && (e = fbpe_upper_then_lower(cl, s, i, n)))
        return fbpe_with_contraction(cl, s, e, n);
    if (prefix && (e = fbpe_upper_or_lower(cl, s, i + len, n)))
        return fbpe_with_contraction(cl, s, e, n);
    if (letterish && (e = fbpe_upper_or_lower(cl, s, i, n)))
        return fbpe_with_contraction(cl, s, e, n);
    if (c & FBPE_NUMBER) return fbpe_up_to_three_numbers(cl, s, i, n);
    /*  ?[^\s\p{L}\p{N}]+[\r\n/]*  (a mark is "other" here) */
    size_t start = i;
    if (b == ' ' && i + 1 < n && fbpe_is_other(fbpe_class_at(cl, s, i + 1, &l2))) {
        start = i + 1;
        c = 0;
    }
    if (fbpe_is_other(c)) {
        e = fbpe_run_of_other(cl, s, start, n);
        while (e < n && (s[e] == '\r' || s[e] == '\n' || s[e] == '/')) e++;
        return e;
    }
    /* \s*[\r\n]+: as gpt4's \s*[\r\n] (the last \r or \n of the run ends it). */
    fbpe_space_run r = fbpe_run_of_space(cl, s, i, n);
    if (r.after_newline) return r.after_newline;
    return fbpe_space_tail(r, i, n);
}

/* Words of ASCII letters (" the", "Word", "(foo"), most pieces of English and code, and
 * lower-case non-ASCII words after an ASCII prefix are found here; the rest go to
 * fbpe_o200k_general_end. Instructions in fbpe_encode_text (callgrind, o200k ranks, 300 KB
 * of text encoded after 300 KB of warm-up, both counted): English, the scanner 14.7 M
 * before this path and the skipping above, 9.9 M after (gpt4's scanner on the same text:
 * 9.1 M), all of the encoding 33.2 M before, 27.6 M after; Python code 37.9 M -> 33.5 M;
 * Russian 74.0 M -> 71.7 M. Always inlined: with the non-ASCII branch the compiler stopped
 * inlining it, and the call cost English 2.2 M instructions. */
static FBPE_ALWAYS_INLINE size_t fbpe_o200k_end(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                                size_t n) {
    uint8_t b = s[i];
    if (b < 0x80) {
        size_t j = i, e, len;
        unsigned c = cl->cls[b];
        if (!(c & (FBPE_LETTER | FBPE_NUMBER)) && b != '\r' && b != '\n' && i + 1 < n) j = i + 1;
        if (s[j] < 0x80) {
            unsigned cj = cl->cls[s[j]];
            if (cj & FBPE_LETTER) {
                if ((e = fbpe_o200k_ascii_word(cl, s, j, n))) return e;
            } else if (c & FBPE_NUMBER) {
                /* A digit: the letter alternatives cannot start on it, nor take it as
                 * their prefix. */
                return fbpe_up_to_three_numbers(cl, s, i, n);
            } else if (fbpe_is_other(c) || (b == ' ' && j > i && fbpe_is_other(cj))) {
                /* ",", ".\n\n", " (", " -": s[j] is no letter (the ASCII members of U and W
                 * are letters), so the letter alternatives fail, and  ?[^\s\p{L}\p{N}]+[\r\n/]*
                 * takes the space, the run of other characters and the line breaks. */
                e = fbpe_run_of_other(cl, s, b == ' ' ? j : i, n);
                while (e < n && (s[e] == '\r' || s[e] == '\n' || s[e] == '/')) e++;
                return e;
            } else if (b == ' ' && j > i && (cj & FBPE_NUMBER)) {
                /* " 1": no alternative takes a space before a number but \s+, alone. */
                return j;
            } else if (b == '\n' || b == '\r') {
                /* \s*[\r\n]+, when the run is ASCII (else a space of another script may go
                 * on with it) */
                size_t k, last = fbpe_ascii_line_breaks(cl, s, i, n, &k);
                if (k == n || s[k] < 0x80) return last;
            }
        } else if ((cl->cls[fbpe_utf8_decode(s, j, &len)] & (FBPE_UPPERISH | FBPE_LOWERISH)) ==
                   FBPE_LOWERISH) {
            /* A lower-case letter that is not also upper-case-like (Ll: " слово", " été"):
             * U* takes nothing and W+ the run of W, with the prefix when there is one, the
             * pattern's first alternative. (Lo, Lm and marks are in both: the general path.) */
            return fbpe_with_contraction(cl, s, fbpe_run_of_lowerish(cl, s, j, n), n);
        }
    }
    return fbpe_o200k_general_end(cl, s, i, n);
}

/* ---- the Functionalizer's splits ----
 * functionalizer (the paper's): \n+|\t+| |[^\p{L}\p{N}\s _]+|(?:[\p{L}\p{N}_]|[^\S\n\t ])+
 * functionalizer-runs:          \n+|\t+|\u2581+| +|[^\p{L}\p{N}\s _]+|(?:[\p{L}\p{N}_]|[^\S\n\t ])+
 * Every character starts exactly one alternative, and each alternative is a run of one
 * class (the paper's space is one character), so a piece is the run of the class of its
 * first character. In the paper's split U+2581 is "other"; in functionalizer-runs it has an
 * alternative of its own, but a run of other characters that started elsewhere goes on
 * through it. */
static inline int fbpe_functional_word(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                       size_t *len) {
    uint8_t b = s[i];
    if (b < 0x80) {
        *len = 1;
        if (b == '_') return 1;
        if (b == '\n' || b == '\t' || b == ' ') return 0;
        return (cl->cls[b] & (FBPE_LETTER | FBPE_NUMBER | FBPE_SPACE)) != 0;
    }
    return (cl->cls[fbpe_utf8_decode(s, i, len)] & (FBPE_LETTER | FBPE_NUMBER | FBPE_SPACE)) != 0;
}

static inline size_t fbpe_functional_end(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                          size_t n, int space_runs) {
    size_t len, e;
    uint8_t b = s[i];
    if (b == '\n' || b == '\t' || (b == ' ' && space_runs)) {
        e = i + 1;
        while (e < n && s[e] == b) e++;
        return e;
    }
    if (b == ' ') return i + 1;
    uint32_t cp = fbpe_utf8_decode(s, i, &len);
    if (cp == 0x2581 && space_runs) {
        e = i + 3;
        while (e + 3 <= n && s[e] == 0xE2 && s[e + 1] == 0x96 && s[e + 2] == 0x81) e += 3;
        return e;
    }
    if (b != '_' && fbpe_is_other(cl->cls[cp])) {
        e = i + len;
        while (e < n) {
            uint8_t x = s[e];
            if (x == '_') break;
            unsigned c = fbpe_class_at(cl, s, e, &len);
            if (!fbpe_is_other(c)) break;
            e += len;
        }
        return e;
    }
    /* A word: its ASCII letters eight at a time (as fbpe_run_of_letters reads them), any other
     * character of it one at a time (scan+count of 1 MB of English, callgrind_scan.py
     * functionalizer hand: 76.52M -> 71.67M instructions; functionalizer-runs 78.16M ->
     * 72.72M). */
    e = i + len;
    for (;;) {
        int done;
        e = fbpe_ascii_letters_end(s, e, n, 0x2020202020202020ull, &done);
        if (e >= n || !fbpe_functional_word(cl, s, e, &len)) return e;
        e += len;
    }
}

static inline size_t fbpe_functionalizer_end(const fbpe_classes *cl, const uint8_t *s, size_t i,
                                             size_t n) {
    return fbpe_functional_end(cl, s, i, n, 0);
}

static inline size_t fbpe_functionalizer_runs_end(const fbpe_classes *cl, const uint8_t *s,
                                                  size_t i, size_t n) {
    return fbpe_functional_end(cl, s, i, n, 1);
}

/* ---- joined runs: what the Functionalizer counts with repeat on ----
 * A run of k >= 3 identical consecutive pieces u is one piece u^k (REPEAT or MULTIREPEAT
 * then describes it), if the shortest period of u is at most 255 characters; a longer run is
 * joined in blocks of 255 pieces, and a last block of 1 or 2 stays apart
 * (Functionalizer._join_runs). The pieces of a run lie next to each other, so the joined
 * piece is a byte range of the text like any other, and the scanner below is a piece end
 * like the others: from a piece's start it counts how many copies follow (at most 255, and
 * only 3 where the run cannot be joined), so every byte is read a bounded number of times. */
#define FBPE_MAX_JOINED 255

/* The shortest period of u[0..len) in characters, if it is at most FBPE_MAX_JOINED; else
 * FBPE_MAX_JOINED + 1. A period of u in bytes that divides len starts on a character (u[q]
 * equals u[0], a lead byte), so the shortest such one is the shortest period in characters. */
static inline size_t fbpe_short_period(const uint8_t *u, size_t len) {
    size_t chars = 0;
    for (size_t q = 1; q <= len; q++) {
        if ((u[q - 1] & 0xC0) != 0x80) chars++;
        if (chars > FBPE_MAX_JOINED) return FBPE_MAX_JOINED + 1;
        if (q < len && (u[q] & 0xC0) == 0x80) continue;
        if (len % q == 0 && memcmp(u, u + q, len - q) == 0) return chars;
    }
    return chars;
}

#define FBPE_DEFINE_JOINED(NAME, END_FN)                                                       \
    static inline size_t NAME(const fbpe_classes *cl, const uint8_t *s, size_t i, size_t n) {  \
        size_t e = END_FN(cl, s, i, n), len = e - i, j = e, k = 1;                             \
        /* a first byte before a call of memcmp: the next piece nearly always differs there    \
         * (a Functionalizer's encoding of fresh English: 47.83M -> 46.98M instructions) */    \
        while (k < FBPE_MAX_JOINED && len <= n - j && s[j] == s[i] &&                          \
               memcmp(s + j, s + i, len) == 0 &&                                               \
               END_FN(cl, s, j, n) == j + len) {                                               \
            j += len;                                                                          \
            if (++k == 3 && fbpe_short_period(s + i, len) > FBPE_MAX_JOINED) return e;         \
        }                                                                                      \
        return k >= 3 ? j : e;                                                                 \
    }

/* ---- functionalizer-llama: the paper's Llama configuration, gpt4 with single digits ---- */
static FBPE_ALWAYS_INLINE size_t fbpe_llama_digits_end(const fbpe_classes *cl,
                                                       const uint8_t *s, size_t i, size_t n) {
    return fbpe_gpt4_like_end(cl, s, i, n, 1, 0);
}

/* The joined form of every pattern's scanner: fbpe_<pattern>_end_joined. */
FBPE_DEFINE_JOINED(fbpe_gpt2_end_joined, fbpe_gpt2_end)
FBPE_DEFINE_JOINED(fbpe_gpt4_end_joined, fbpe_gpt4_end)
FBPE_DEFINE_JOINED(fbpe_o200k_end_joined, fbpe_o200k_end)
FBPE_DEFINE_JOINED(fbpe_functionalizer_end_joined, fbpe_functionalizer_end)
FBPE_DEFINE_JOINED(fbpe_functionalizer_runs_end_joined, fbpe_functionalizer_runs_end)
FBPE_DEFINE_JOINED(fbpe_llama_digits_end_joined, fbpe_llama_digits_end)
FBPE_DEFINE_JOINED(fbpe_cl100k_end_joined, fbpe_cl100k_end)

/* X(which, end function) for every scanner: the loops that cut text (count.c,
 * encode_text.c, scan.c) are one switch over this list, each case with its scanner inlined. */
#define FBPE_FOR_EACH_SCANNER(X)                                                               \
    X(FBPE_GPT2, fbpe_gpt2_end)                                                                \
    X(FBPE_GPT4, fbpe_gpt4_end)                                                                \
    X(FBPE_O200K, fbpe_o200k_end)                                                              \
    X(FBPE_FUNCTIONALIZER, fbpe_functionalizer_end)                                            \
    X(FBPE_FUNCTIONALIZER_RUNS, fbpe_functionalizer_runs_end)                                  \
    X(FBPE_LLAMA_DIGITS, fbpe_llama_digits_end)                                                \
    X(FBPE_CL100K, fbpe_cl100k_end)                                                            \
    X(FBPE_GPT2 | FBPE_JOIN_RUNS, fbpe_gpt2_end_joined)                                        \
    X(FBPE_GPT4 | FBPE_JOIN_RUNS, fbpe_gpt4_end_joined)                                        \
    X(FBPE_O200K | FBPE_JOIN_RUNS, fbpe_o200k_end_joined)                                      \
    X(FBPE_FUNCTIONALIZER | FBPE_JOIN_RUNS, fbpe_functionalizer_end_joined)                    \
    X(FBPE_FUNCTIONALIZER_RUNS | FBPE_JOIN_RUNS, fbpe_functionalizer_runs_end_joined)          \
    X(FBPE_LLAMA_DIGITS | FBPE_JOIN_RUNS, fbpe_llama_digits_end_joined)                        \
    X(FBPE_CL100K | FBPE_JOIN_RUNS, fbpe_cl100k_end_joined)

#endif
