/* The UTF-8 of a str's buffer; see ucs_utf8.h. */
#include "ucs_utf8.h"

#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#define FBPE_HAVE_SSSE3_PATH 1
#include <tmmintrin.h>
#endif

size_t fbpe_ucs_utf8_room(int kind, size_t n) {
    /* A unit of UCS-1 is at most 2 bytes of UTF-8; of UCS-2 at most 3 (a surrogate pair, 4
     * bytes, is two units); of UCS-4 at most 4. */
    size_t per = kind == 1 ? 2 : kind == 2 ? 3 : 4;
    return n > (SIZE_MAX - 1) / per ? SIZE_MAX : per * n + 1;
}

/* Eight ASCII code units from 8 bytes of UCS-1, or from 16 of UCS-2, as 8 bytes of UTF-8;
 * 0 when one of them is not ASCII. */
static inline int ascii8_ucs1(const uint8_t *p, uint8_t *dst) {
    uint64_t w = fbpe_load64(p);
    if (w & 0x8080808080808080ull) return 0;
    memcpy(dst, &w, 8);
    return 1;
}

static inline int ascii8_ucs2(const uint16_t *p, uint8_t *dst) {
    uint64_t a, b;
    memcpy(&a, p, 8);
    memcpy(&b, p + 4, 8);
    if ((a | b) & 0xFF80FF80FF80FF80ull) return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Each unit's low byte is its character: gather them (4 from each word). */
    a = (a & 0xFF) | (a >> 8 & 0xFF00) | (a >> 16 & 0xFF0000) | (a >> 24 & 0xFF000000);
    b = (b & 0xFF) | (b >> 8 & 0xFF00) | (b >> 16 & 0xFF0000) | (b >> 24 & 0xFF000000);
    uint32_t lo = (uint32_t)a, hi = (uint32_t)b;
    memcpy(dst, &lo, 4);
    memcpy(dst + 4, &hi, 4);
#else
    for (int k = 0; k < 8; k++) dst[k] = (uint8_t)p[k];
#endif
    return 1;
}

/* Eight ASCII code units from 32 bytes of UCS-4, as 8 bytes of UTF-8; 0 when one of them
 * is not ASCII. A str with one character beyond U+FFFF (an emoji) is all UCS-4: 2 MB of
 * English with one such character cost 15 instructions a byte one code point at a time. */
static inline int ascii8_ucs4(const uint32_t *p, uint8_t *dst) {
    uint64_t w[4];
    memcpy(w, p, 32);
    if ((w[0] | w[1] | w[2] | w[3]) & 0xFFFFFF80FFFFFF80ull) return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Each 64-bit word holds two units, their characters at bits 0 and 32. */
    uint64_t g = 0;
    for (int k = 0; k < 4; k++) g |= ((w[k] & 0xFF) | (w[k] >> 24 & 0xFF00)) << (16 * k);
    memcpy(dst, &g, 8);
#else
    for (int k = 0; k < 8; k++) dst[k] = (uint8_t)p[k];
#endif
    return 1;
}

#ifdef __SSE2__
/* Sixteen ASCII code units as 16 bytes of UTF-8, in SSE2 registers (every x86-64); 0 when
 * one of them is not ASCII. English with one emoji (UCS-4) cost 6.3 instructions a
 * character eight at a time in 64-bit words (ascii8_ucs4); sixteen at a time, 2.1 with the
 * loop around it (callgrind, o200k, 500 KB of English: ucs_utf8 3.14 M -> 1.07 M
 * instructions, 14% of the call before). */
static inline int all_zero(__m128i v) {
    return _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())) == 0xFFFF;
}

static inline int ascii16_ucs1(const uint8_t *p, uint8_t *dst) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    if (_mm_movemask_epi8(v)) return 0;
    _mm_storeu_si128((__m128i *)dst, v);
    return 1;
}

static inline int ascii16_ucs2(const uint16_t *p, uint8_t *dst) {
    __m128i a = _mm_loadu_si128((const __m128i *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)(p + 8));
    if (!all_zero(_mm_and_si128(_mm_or_si128(a, b), _mm_set1_epi16((short)0xFF80)))) return 0;
    _mm_storeu_si128((__m128i *)dst, _mm_packus_epi16(a, b));
    return 1;
}

static inline int ascii16_ucs4(const uint32_t *p, uint8_t *dst) {
    __m128i a = _mm_loadu_si128((const __m128i *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)(p + 4));
    __m128i c = _mm_loadu_si128((const __m128i *)(p + 8));
    __m128i d = _mm_loadu_si128((const __m128i *)(p + 12));
    __m128i any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
    if (!all_zero(_mm_and_si128(any, _mm_set1_epi32((int)0xFFFFFF80)))) return 0;
    /* every unit is below 0x80: neither packing's saturation changes one */
    __m128i packed = _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
    _mm_storeu_si128((__m128i *)dst, packed);
    return 1;
}
#endif

/* How many of the `left` code units at p, all ASCII, were written to dst as UTF-8: 16, 8
 * (a shorter run before a letter of another script: accented Latin) or 0. */
#ifdef __SSE2__
#define ASCII16(kind, p, dst) if (left >= 16 && ascii16_##kind(p, dst)) return 16;
#else
#define ASCII16(kind, p, dst)
#endif
#define ASCII_BLOCK(kind, unit)                                                                \
    static inline size_t ascii_block_##kind(const unit *p, size_t left, uint8_t *dst) {       \
        ASCII16(kind, p, dst)                                                                  \
        return left >= 8 && ascii8_##kind(p, dst) ? 8 : 0;                                     \
    }
ASCII_BLOCK(ucs1, uint8_t)
ASCII_BLOCK(ucs2, uint16_t)
ASCII_BLOCK(ucs4, uint32_t)

/* two4_ucs2 and three4_ucs2 read four units as the lanes of a 64-bit word, the first the
 * lowest, and put3 stores a character's bytes as one word: the UTF-8 writers call them on
 * little-endian machines only. */

/* The three UTF-8 bytes of cp (U+0800..U+FFFF) as one store of four, the fourth written
 * over next (room has one spare). */
static inline void put3(uint32_t cp, uint8_t *dst) {
    uint32_t x = 0x8080E0u | cp >> 12 | (cp << 2 & 0x3F00) | (cp << 16 & 0x3F0000);
    memcpy(dst, &x, 4);
}

/* Four code units of UCS-2, each of two bytes in UTF-8 (U+0080..U+07FF: Cyrillic, Greek,
 * Arabic, Hebrew, accented Latin), as 8 bytes of UTF-8; 0 otherwise. One at a time, the
 * UTF-8 of Russian cost more than CPython's encoder (20 M instructions a megabyte of
 * characters against 16.5 M); this takes the four-letter stretches of a word together. */
static inline int two4_ucs2(const uint16_t *p, uint8_t *dst) {
    uint64_t w;
    memcpy(&w, p, 8);
    /* every unit below 0x800, and each with a bit of 0x780 set (so at least 0x80): adding
     * 0x7FFF to a nonzero lane of at most 0x780 sets its top bit and carries nowhere */
    uint64_t mid = w & 0x0780078007800780ull;
    if ((w & 0xF800F800F800F800ull) ||
        ((mid + 0x7FFF7FFF7FFF7FFFull) & 0x8000800080008000ull) != 0x8000800080008000ull)
        return 0;
    /* each 16-bit lane becomes 110xxxxx 10xxxxxx, the lead byte first (the lane's low byte) */
    uint64_t out = ((w >> 6) & 0x001F001F001F001Full) | ((w & 0x003F003F003F003Full) << 8) |
                   0x80C080C080C080C0ull;
    memcpy(dst, &out, 8);
    return 1;
}

/* Four code units of UCS-2, each of three bytes in UTF-8 (U+0800..U+FFFF but surrogates:
 * CJK, kana, Hangul, Devanagari), as 12 bytes of UTF-8 (and a 13th written over next: room
 * has one spare); 0 otherwise. Japanese encoded with o200k on two threads, whose workers
 * write their units' UTF-8 (callgrind, 500 KB of fresh text): this conversion 4.8 M -> 3.9 M
 * instructions, about 2% of the call (whose own count moves more than that from run to
 * run: which worker's piece cache meets which piece varies). */
static inline int three4_ucs2(const uint16_t *p, uint8_t *dst) {
    uint64_t w;
    memcpy(&w, p, 8);
    /* each lane's top five bits: nonzero (at least 0x800) and not 0x1B (a surrogate); adding
     * 0x7FFF to a lane of at most 0x1F sets its top bit exactly when it is nonzero */
    const uint64_t one = 0x7FFF7FFF7FFF7FFFull, top = 0x8000800080008000ull;
    uint64_t t = (w >> 11) & 0x001F001F001F001Full, not_surrogate = t ^ 0x001B001B001B001Bull;
    if (((t + one) & (not_surrogate + one) & top) != top) return 0;
    for (int k = 0; k < 4; k++) put3((uint32_t)(w >> (16 * k)) & 0xFFFF, dst + 3 * k);
    return 1;
}

/* A surrogate at u[i - 1] (cp): as UTF-8 cannot hold it; *i moves past a low one taken. */
static inline uint32_t pair_or_replace(uint32_t cp, uint32_t low, size_t *i) {
    if (cp <= 0xDBFF && low >= 0xDC00 && low <= 0xDFFF) {
        ++*i;
        return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    return 0xFFFD;
}

#ifdef FBPE_HAVE_SSSE3_PATH
/* Eight units of UCS-2 that are ASCII or two bytes in UTF-8 (below U+0800), in any mix, as
 * their UTF-8: each unit is made into the two bytes of its two-byte form, or its own byte and
 * one to drop, and one pshufb keeps the bytes wanted (keep_bytes, by which units are ASCII).
 * Russian and Arabic are words of four to seven two-byte letters between ASCII spaces and
 * punctuation, so four two-byte units in a row (two4_ucs2) were found at most once a word
 * and most letters were written one at a time: the conversion was 15% of the instructions of
 * encoding Russian with o200k on two threads, 12.5% of Arabic (callgrind, 500 KB of fresh
 * text, after a warm-up; fbpe_ucs_writes_faster has the whole call). pshufb is SSSE3, which x86-64 does
 * not promise: the loop that uses it is compiled for SSSE3 on its own and chosen at run time
 * (fbpe_ucs_to_utf8, fbpe_ucs_to_utf8_grown). */
static uint8_t keep_bytes[256][16] __attribute__((aligned(16)));
static uint8_t kept_len[256];

/* The UTF-8 of eight units below U+0800 in the 16-bit lanes of v, written to dst (16 bytes
 * written, the length returned). */
__attribute__((target("ssse3"))) static inline size_t two8_lanes(__m128i v, uint8_t *dst) {
    const __m128i zero = _mm_setzero_si128();
    __m128i ascii = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16((short)0xFF80)), zero);
    /* 110xxxxx in the low byte (written first), 10xxxxxx in the high one */
    __m128i lead = _mm_or_si128(_mm_srli_epi16(v, 6), _mm_set1_epi16(0xC0));
    __m128i cont = _mm_slli_epi16(
        _mm_or_si128(_mm_and_si128(v, _mm_set1_epi16(0x3F)), _mm_set1_epi16(0x80)), 8);
    __m128i lanes = _mm_or_si128(_mm_and_si128(ascii, v),
                                 _mm_andnot_si128(ascii, _mm_or_si128(lead, cont)));
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(ascii, zero));
    __m128i keep = _mm_load_si128((const __m128i *)keep_bytes[m]);
    _mm_storeu_si128((__m128i *)dst, _mm_shuffle_epi8(lanes, keep));
    return kept_len[m];
}

/* The UTF-8 of the eight units at p written to dst (16 bytes written, the length returned),
 * or 0 (nothing written) when one of them is U+0800 or above. */
__attribute__((target("ssse3"))) static inline size_t two8_ucs2(const uint16_t *p, uint8_t *dst) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    if (!all_zero(_mm_and_si128(v, _mm_set1_epi16((short)0xF800)))) return 0;
    return two8_lanes(v, dst);
}

/* UCS-1 (Latin-1: German, French, Spanish, Hungarian without its two letters of Latin
 * Extended-A) sixteen units at a time: ASCII as it is, else each half widened to 16-bit
 * lanes for two8_lanes. One at a time after a block of ASCII failed: o200k, one thread, 500
 * KB of fresh text kept to Latin-1 after a warm-up (callgrind, the whole call), Hungarian
 * 43.98 M -> 40.64 M instructions, French 24.41 M -> 23.44 M. The room (two bytes a unit and
 * one) leaves 33 bytes at dst where 16 units are left, for the two stores of 16. */
__attribute__((target("ssse3"))) static size_t ucs1_utf8_ssse3(const uint8_t *u, size_t n,
                                                              uint8_t *dst) {
    const __m128i zero = _mm_setzero_si128();
    uint8_t *start = dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i c = _mm_loadu_si128((const __m128i *)(u + i));
        if (!_mm_movemask_epi8(c)) {
            _mm_storeu_si128((__m128i *)dst, c);
            dst += 16;
            continue;
        }
        dst += two8_lanes(_mm_unpacklo_epi8(c, zero), dst);
        dst += two8_lanes(_mm_unpackhi_epi8(c, zero), dst);
    }
    for (; i < n; i++) dst += fbpe_utf8_put(u[i], dst);
    return (size_t)(dst - start);
}
#endif

#ifdef FBPE_HAVE_SSSE3_PATH
/* two8_ucs2 for eight units of UCS-4: 0 (nothing written) when one of them is U+0800 or
 * above. */
__attribute__((target("ssse3"))) static inline size_t two8_ucs4(const uint32_t *p, uint8_t *dst) {
    __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)(p + 4));
    if (!all_zero(_mm_and_si128(_mm_or_si128(a, b), _mm_set1_epi32((int)0xFFFFF800)))) return 0;
    return two8_lanes(_mm_packs_epi32(a, b), dst); /* below 0x800: no lane saturates */
}
#endif

#ifdef FBPE_HAVE_SSSE3_PATH
/* Eight units of the Basic Multilingual Plane in any mix of UTF-8 lengths (ASCII, two and
 * three bytes; no surrogate), as their UTF-8. Chinese and Japanese text is runs of about 14
 * CJK characters between runs of about four ASCII ones (digits, spaces, Latin words; zh-CN
 * from a quarter of the way in), so four three-byte units in a row (three4_ucs2) failed
 * about once a run and the units around each run of ASCII went one at a time: 26
 * instructions a character, 10% of encoding fresh Chinese with cl100k on one thread
 * (callgrind, 500 KB). Four units at a time, each in a 32-bit lane: the lane is made into
 * its one-, two- or three-byte form by masks, and one pshufb keeps each lane's bytes
 * (bmp_keep, by which lanes are ASCII and which are below U+0800). */
static uint8_t bmp_keep[256][16] __attribute__((aligned(16)));
static uint8_t bmp_kept_len[256];

/* Row m of a pshufb table: the first lens[u] bytes of each of `lanes` lanes of `width`
 * bytes, in order, then zeros (0x80: pshufb writes a zero there); *len, how many are kept. */
static void keep_row(uint8_t row[16], uint8_t *len, unsigned lanes, unsigned width,
                     const unsigned *lens) {
    unsigned k = 0;
    for (unsigned u = 0; u < lanes; u++)
        for (unsigned b = 0; b < lens[u]; b++) row[k++] = (uint8_t)(width * u + b);
    *len = (uint8_t)k;
    while (k < 16) row[k++] = 0x80;
}

/* Made when the module is loaded, before any thread can read them (8 KB). keep_bytes: bit u
 * of m set where unit u is ASCII; bmp_keep: bit u where lane u is ASCII, bit 4 + u where it
 * is below U+0800. */
__attribute__((constructor)) static void make_keep_tables(void) {
    for (unsigned m = 0; m < 256; m++) {
        unsigned two[8], bmp[4];
        for (unsigned u = 0; u < 8; u++) two[u] = m >> u & 1 ? 1 : 2;
        for (unsigned u = 0; u < 4; u++) bmp[u] = m >> u & 1 ? 1 : m >> (4 + u) & 1 ? 2 : 3;
        keep_row(keep_bytes[m], &kept_len[m], 8, 2, two);
        keep_row(bmp_keep[m], &bmp_kept_len[m], 4, 4, bmp);
    }
}

/* The UTF-8 of four code points below U+10000, none a surrogate, in the 32-bit lanes of v,
 * written to dst (16 bytes written, the length returned). */
__attribute__((target("ssse3"))) static inline size_t bmp4_lanes(__m128i v, uint8_t *dst) {
    const __m128i six = _mm_set1_epi32(0x3F);
    __m128i ascii = _mm_cmplt_epi32(v, _mm_set1_epi32(0x80));
    __m128i below800 = _mm_cmplt_epi32(v, _mm_set1_epi32(0x800));
    /* the last byte 10xxxxxx of both longer forms, and the middle one of three bytes */
    __m128i last = _mm_or_si128(_mm_and_si128(v, six), _mm_set1_epi32(0x80));
    __m128i middle = _mm_or_si128(_mm_and_si128(_mm_srli_epi32(v, 6), six), _mm_set1_epi32(0x80));
    __m128i two = _mm_or_si128(_mm_or_si128(_mm_srli_epi32(v, 6), _mm_set1_epi32(0xC0)),
                               _mm_slli_epi32(last, 8));
    __m128i three = _mm_or_si128(_mm_or_si128(_mm_srli_epi32(v, 12), _mm_set1_epi32(0xE0)),
                                 _mm_or_si128(_mm_slli_epi32(middle, 8), _mm_slli_epi32(last, 16)));
    __m128i longer = _mm_or_si128(_mm_and_si128(below800, two), _mm_andnot_si128(below800, three));
    __m128i lanes = _mm_or_si128(_mm_and_si128(ascii, v), _mm_andnot_si128(ascii, longer));
    unsigned m = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(ascii)) |
                 (unsigned)_mm_movemask_ps(_mm_castsi128_ps(below800)) << 4;
    _mm_storeu_si128((__m128i *)dst,
                     _mm_shuffle_epi8(lanes, _mm_load_si128((const __m128i *)bmp_keep[m])));
    return bmp_kept_len[m];
}

/* Where byte j of the UTF-8 of eight three-byte units comes from: the lanes of the leads
 * and middles packed together (lead u at u, middle u at 8 + u) or of the last bytes (u at
 * u); 0x80 for neither (pshufb writes a zero there). Bytes 0..15, then 16..23. */
static const uint8_t three_from_lm[2][16] __attribute__((aligned(16))) = {
    {0, 8, 0x80, 1, 9, 0x80, 2, 10, 0x80, 3, 11, 0x80, 4, 12, 0x80, 5},
    {13, 0x80, 6, 14, 0x80, 7, 15, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}};
static const uint8_t three_from_last[2][16] __attribute__((aligned(16))) = {
    {0x80, 0x80, 0, 0x80, 0x80, 1, 0x80, 0x80, 2, 0x80, 0x80, 3, 0x80, 0x80, 4, 0x80},
    {0x80, 5, 0x80, 0x80, 6, 0x80, 0x80, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}};

/* The UTF-8 of eight units of the Basic Multilingual Plane in the 16-bit lanes of v, none a
 * surrogate, written to dst (up to 28 bytes written, the length returned). Where all eight
 * are of three bytes (inside a run of CJK), their 24 bytes come from three vectors of lead,
 * middle and last bytes by four pshufb, with no table chosen by a mask (cl100k, 500 KB of
 * fresh Chinese, one thread: the conversion 2.98 M -> 2.29 M instructions, the call 40.93 M
 * -> 40.23 M; Japanese 38.59 M -> 37.76 M). */
__attribute__((target("ssse3"))) static inline size_t bmp8_lanes(__m128i v, uint8_t *dst) {
    const __m128i zero = _mm_setzero_si128(), six = _mm_set1_epi16(0x3F), cont = _mm_set1_epi16(0x80);
    __m128i below800 = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16((short)0xF800)), zero);
    if (!_mm_movemask_epi8(below800)) {
        __m128i lead = _mm_or_si128(_mm_srli_epi16(v, 12), _mm_set1_epi16(0xE0));
        __m128i middle = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(v, 6), six), cont);
        __m128i last = _mm_or_si128(_mm_and_si128(v, six), cont);
        __m128i lm = _mm_packus_epi16(lead, middle), l = _mm_packus_epi16(last, last);
        __m128i first = _mm_or_si128(_mm_shuffle_epi8(lm, _mm_load_si128((const __m128i *)three_from_lm[0])),
                                     _mm_shuffle_epi8(l, _mm_load_si128((const __m128i *)three_from_last[0])));
        __m128i rest = _mm_or_si128(_mm_shuffle_epi8(lm, _mm_load_si128((const __m128i *)three_from_lm[1])),
                                    _mm_shuffle_epi8(l, _mm_load_si128((const __m128i *)three_from_last[1])));
        _mm_storeu_si128((__m128i *)dst, first);
        _mm_storel_epi64((__m128i *)(dst + 16), rest);
        return 24;
    }
    size_t k = bmp4_lanes(_mm_unpacklo_epi16(v, zero), dst);
    return k + bmp4_lanes(_mm_unpackhi_epi16(v, zero), dst + k);
}

/* The UTF-8 of the eight units at p written to dst (up to 28 bytes written, the length
 * returned), or 0 (nothing written) when one of them is a surrogate. */
__attribute__((target("ssse3"))) static inline size_t bmp8_ucs2(const uint16_t *p, uint8_t *dst) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i surrogate = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16((short)0xF800)),
                                        _mm_set1_epi16((short)0xD800));
    if (_mm_movemask_epi8(surrogate)) return 0;
    return bmp8_lanes(v, dst);
}

/* bmp8_ucs2 for eight units of UCS-4: 0 (nothing written) when one of them is a surrogate or
 * beyond U+FFFF. */
__attribute__((target("ssse3"))) static inline size_t bmp8_ucs4(const uint32_t *p, uint8_t *dst) {
    __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)(p + 4));
    const __m128i high = _mm_set1_epi32((int)0xFFFFF800), d800 = _mm_set1_epi32(0xD800);
    __m128i bad = _mm_or_si128(_mm_cmpeq_epi32(_mm_and_si128(a, high), d800),
                               _mm_cmpeq_epi32(_mm_and_si128(b, high), d800));
    if (_mm_movemask_epi8(bad) || !all_zero(_mm_and_si128(_mm_or_si128(a, b), _mm_set1_epi32((int)0xFFFF0000))))
        return 0;
    /* to 16-bit lanes: below 0x10000, each less 0x8000 packs without saturating */
    const __m128i half = _mm_set1_epi32(0x8000);
    __m128i v = _mm_packs_epi32(_mm_sub_epi32(a, half), _mm_sub_epi32(b, half));
    return bmp8_lanes(_mm_add_epi16(v, _mm_set1_epi16((short)0x8000)), dst);
}
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* two4_ucs2 or three4_ucs2 (by cp, the first unit) for four units of UCS-4, none above
 * U+FFFF. */
static inline int four_ucs4(const uint32_t *p, uint32_t cp, uint8_t *dst) {
    uint16_t w[4];
    for (int k = 0; k < 4; k++) {
        if (p[k] > 0xFFFF) return 0;
        w[k] = (uint16_t)p[k];
    }
    return cp < 0x800 ? two4_ucs2(w, dst) : three4_ucs2(w, dst);
}
#endif

/* UCS-2, the width of most non-Latin text, and UCS-4 (width 4: a str with one character
 * beyond U+FFFF, an emoji or an arrow, is all UCS-4): the branches in the order of how
 * common they are (ASCII runs, two-byte scripts, CJK). `ssse3` (a constant): eight units at
 * a time, below U+0800 by two8_ucs2 or two8_ucs4, else any mix of the Basic Multilingual
 * Plane by bmp8_ucs2 or bmp8_ucs4, which the caller has checked the processor can run. The
 * room fbpe_ucs_utf8_room gives (three bytes a unit of UCS-2, four of UCS-4, and one)
 * leaves at least 25 bytes at dst where eight units are left, for the store of 16, and 28
 * where nine are, for bmp8's two. UCS-4 went one code point at a time past each run of
 * ASCII, 9% of the time of encoding Hungarian Wikipedia text with o200k (two arrows in a
 * megabyte; perf, one thread): 43.95 M -> 39.55 M instructions in the whole call
 * (callgrind, 500 KB fresh). */
static inline __attribute__((always_inline)) size_t wide_utf8_with(const void *units, int width,
                                                                   size_t n, uint8_t *dst,
                                                                   int pair_surrogates, int ssse3) {
    const uint16_t *u2 = (const uint16_t *)units;
    const uint32_t *u4 = (const uint32_t *)units;
#define UNIT(k) (width == 2 ? (uint32_t)u2[k] : u4[k])
    uint8_t *start = dst;
    size_t i = 0;
    (void)ssse3;
    while (i < n) {
        uint32_t cp = UNIT(i);
        if (cp < 0x80) {
            /* the block only when the next unit is ASCII too: a space between words of
             * another script is one unit */
            size_t k = 0;
            if (i + 1 < n && UNIT(i + 1) < 0x80)
                k = width == 2 ? ascii_block_ucs2(u2 + i, n - i, dst) : ascii_block_ucs4(u4 + i, n - i, dst);
            if (k) {
                dst += k;
                i += k;
                continue;
            }
        }
#ifdef FBPE_HAVE_SSSE3_PATH
        if (ssse3 && cp < 0x800 && i + 8 <= n) {
            size_t k = width == 2 ? two8_ucs2(u2 + i, dst) : two8_ucs4(u4 + i, dst);
            if (k) {
                dst += k;
                i += 8;
                continue;
            }
        }
        /* any mix with three-byte units; nine units left leave 28 bytes of room in UCS-2 */
        if (ssse3 && i + 9 <= n) {
            size_t k = width == 2 ? bmp8_ucs2(u2 + i, dst) : bmp8_ucs4(u4 + i, dst);
            if (k) {
                dst += k;
                i += 8;
                continue;
            }
        }
#endif
        if (cp < 0x80) {
            *dst++ = (uint8_t)cp;
            i++;
            continue;
        }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (i + 4 <= n && (width == 2 ? (cp < 0x800 ? two4_ucs2(u2 + i, dst) : three4_ucs2(u2 + i, dst))
                                      : four_ucs4(u4 + i, cp, dst))) {
            dst += cp < 0x800 ? 8 : 12;
            i += 4;
            continue;
        }
#endif
        i++;
        if (cp < 0x800) { /* Cyrillic, Greek, Arabic, accented Latin */
            dst[0] = (uint8_t)(0xC0 | (cp >> 6));
            dst[1] = (uint8_t)(0x80 | (cp & 0x3F));
            dst += 2;
            continue;
        }
        if (cp - 0xD800 < 0x800) { /* a surrogate */
            if (!pair_surrogates) return SIZE_MAX;
            cp = pair_or_replace(cp, i < n ? UNIT(i) : 0, &i);
            dst += fbpe_utf8_put(cp, dst);
            continue;
        }
        if (cp > 0xFFFF) { /* UCS-4 only */
            dst += fbpe_utf8_put(cp, dst);
            continue;
        }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        put3(cp, dst); /* CJK and the like */
#else
        dst[0] = (uint8_t)(0xE0 | (cp >> 12));
        dst[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (uint8_t)(0x80 | (cp & 0x3F));
#endif
        dst += 3;
    }
#undef UNIT
    return (size_t)(dst - start);
}

static size_t wide_utf8_plain(const void *u, int width, size_t n, uint8_t *dst, int pair_surrogates) {
    return width == 2 ? wide_utf8_with(u, 2, n, dst, pair_surrogates, 0)
                      : wide_utf8_with(u, 4, n, dst, pair_surrogates, 0);
}

#ifdef FBPE_HAVE_SSSE3_PATH
__attribute__((target("ssse3"))) static size_t wide_utf8_ssse3(const void *u, int width, size_t n,
                                                              uint8_t *dst, int pair_surrogates) {
    return width == 2 ? wide_utf8_with(u, 2, n, dst, pair_surrogates, 1)
                      : wide_utf8_with(u, 4, n, dst, pair_surrogates, 1);
}
#endif

/* The UCS-2 or UCS-4 writer this processor runs best. */
static size_t wide_utf8(const void *u, int width, size_t n, uint8_t *dst, int pair_surrogates) {
#ifdef FBPE_HAVE_SSSE3_PATH
    if (__builtin_cpu_supports("ssse3")) return wide_utf8_ssse3(u, width, n, dst, pair_surrogates);
#endif
    return wide_utf8_plain(u, width, n, dst, pair_surrogates);
}

/* The conversion of both callers: each width by its writer above (without SSSE3, Latin-1 in
 * blocks of ASCII and one code point at a time past them). CPython's encoder, which
 * text.encode("utf-8") runs, cost 11 instructions a byte on English prose (a sixth of
 * encoding it with o200k) and 9 on Chinese (callgrind). pair_surrogates: read a lone
 * surrogate as U+FFFD and a high one followed by a low one as the character they encode;
 * else stop at the first surrogate and return SIZE_MAX. */
static size_t ucs_utf8(const void *s, int kind, size_t n, uint8_t *dst, int pair_surrogates) {
    uint8_t *start = dst;
    size_t i = 0;
    if (kind == 1) {
        const uint8_t *u = (const uint8_t *)s;
#ifdef FBPE_HAVE_SSSE3_PATH
        if (__builtin_cpu_supports("ssse3")) return ucs1_utf8_ssse3(u, n, dst);
#endif
        while (i < n) {
            size_t k = ascii_block_ucs1(u + i, n - i, dst);
            if (k) {
                dst += k;
                i += k;
                continue;
            }
            dst += fbpe_utf8_put(u[i++], dst);
        }
        return (size_t)(dst - start);
    }
    return wide_utf8(s, kind == 2 ? 2 : 4, n, dst, pair_surrogates);
}

static int mostly_ascii(const void *s, int kind, size_t n) {
    size_t look = n < 1024 ? n : 1024, ascii = 0;
    for (size_t i = 0; i < look; i++) {
        uint32_t cp = kind == 1 ? ((const uint8_t *)s)[i]
                      : kind == 2 ? ((const uint16_t *)s)[i] : ((const uint32_t *)s)[i];
        ascii += cp < 0x80;
    }
    return 4 * ascii >= 3 * look;
}

/* Whether at most one in sixteen of the first 1,024 units of UCS-4 is beyond U+FFFF (an
 * emoji), each of which this writer takes alone, after its blocks have failed. */
static int mostly_bmp(const uint32_t *u, size_t n) {
    size_t look = n < 1024 ? n : 1024, beyond = 0;
    for (size_t i = 0; i < look; i++) beyond += u[i] > 0xFFFF;
    return 16 * beyond <= look;
}

/* One encode_ordinary call with o200k on 500 KB of fresh text after a warm-up, one thread
 * (callgrind, the whole call): with this writer for UCS-2 instead of str.encode, Russian
 * 27.38M -> 25.19M instructions, Arabic 32.84M -> 29.96M, Japanese 36.64M -> 36.18M, Chinese
 * 35.42M -> 35.34M. Without SSSE3 it was 0.7% more on Russian and Arabic than str.encode.
 * UCS-4 (a str with one emoji) of the Basic Multilingual Plane, eight units at a time since
 * bmp8_ucs4, 170,000 characters of each file from the 300,000th and an emoji: this writer
 * 0.72 ns a unit on Chinese and Japanese, 0.74 on Korean, 0.33 on Russian and Arabic, where
 * str.encode took 1.36, 1.40, 2.11, 1.40, 1.54 (best of 200 calls each); but with 29% of
 * the units emoji, 6.83 against 3.32, so UCS-4 is written here only where they are few. */
int fbpe_ucs_writes_faster(const void *s, int kind, size_t n) {
#ifdef FBPE_HAVE_SSSE3_PATH
    if (kind == 2 && __builtin_cpu_supports("ssse3")) return 1;
    if (kind == 4 && __builtin_cpu_supports("ssse3") && mostly_bmp((const uint32_t *)s, n)) return 1;
#endif
    return mostly_ascii(s, kind, n);
}

size_t fbpe_ucs_utf8_len(const void *s, int kind, size_t n) {
    size_t len = n;
    if (kind == 1) {
        const uint8_t *u = (const uint8_t *)s;
        for (size_t i = 0; i < n; i++) len += u[i] >= 0x80;
    } else if (kind == 2) {
        const uint16_t *u = (const uint16_t *)s;
        for (size_t i = 0; i < n; i++) len += (size_t)(u[i] >= 0x80) + (u[i] >= 0x800);
    } else {
        const uint32_t *u = (const uint32_t *)s;
        for (size_t i = 0; i < n; i++)
            len += (size_t)(u[i] >= 0x80) + (u[i] >= 0x800) + (u[i] >= 0x10000);
    }
    return len;
}

size_t fbpe_ucs_to_utf8(const void *s, int kind, size_t n, uint8_t *dst) {
    return ucs_utf8(s, kind, n, dst, 0);
}

fbpe_status fbpe_ucs_to_utf8_grown(const void *s, int kind, size_t n, uint8_t **buf,
                                   size_t *cap, size_t *len) {
    size_t want = fbpe_ucs_utf8_room(kind, n);
    if (want == SIZE_MAX) return FBPE_ENOMEM;
    if (want > *cap) {
        size_t grown_cap = fbpe_grow_to(*cap, 4096, want, 1);
        uint8_t *grown = grown_cap ? (uint8_t *)realloc(*buf, grown_cap) : NULL;
        if (!grown) return FBPE_ENOMEM;
        *buf = grown;
        *cap = grown_cap;
    }
    *len = ucs_utf8(s, kind, n, *buf, 1);
    return FBPE_OK;
}
