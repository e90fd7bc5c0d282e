/* Encoding whole texts; see encode_text.h. The scanners are inline (scanners.h,
 * markers_scan.h), so that each pattern's scanner is inlined into its loop below; their
 * tables are the ones the scanner's module installed (splitter.h). */
#include "encode_text.h"

#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/utf8.h"
#include "../scan/markers_scan.h"
#include "../scan/scanners.h"
#include "../common/take_next.h"
#include "../common/workers.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* One loop per pattern, so that the compiler inlines that pattern's scanner into it. */
#define ENCODE_LOOP(END_FN)                                                                    \
    while (i < n) {                                                                            \
        size_t e = END_FN(cl, s, i, n);                                                        \
        if (fbpe_encode_piece_inline(b, vslots, vmask, cache, s + i, e - i, n - i, out))       \
            return FBPE_ENOMEM;                                                                \
        i = e;                                                                                 \
    }

/* The boundary-marker scheme: its pieces are written by the piece loop, then encoded. */
typedef struct {
    const fbpe_bpe *b;
    fbpe_cache *cache;
    fbpe_ids *out;
} marker_encoder;

FBPE_MK_INLINE fbpe_status encode_marker_piece(void *ctx, const uint8_t *p, size_t len,
                                               size_t readable, size_t at) {
    marker_encoder *e = (marker_encoder *)ctx;
    (void)at;
    return fbpe_encode_piece(e->b, e->cache, p, len, readable, e->out);
}

/* A compiled pattern's pieces (regex_vm.h), encoded; FBPE_EPATTERN when its matcher gives
 * up, and then the caller encodes the text with regex. */
static fbpe_status encode_program(const fbpe_bpe *b, fbpe_cache *cache, const fbpe_rx *prog,
                                  const uint8_t *s, size_t n, fbpe_ids *out) {
    fbpe_rx_vm vm;
    fbpe_status rc = FBPE_OK;
    size_t i = 0;
    fbpe_rx_vm_init(&vm, n);
    while (i < n) {
        size_t e = fbpe_rx_piece_end(prog, &vm, s, i, n);
        if (e == i) {
            rc = vm.status;
            break;
        }
        if (fbpe_encode_piece(b, cache, s + i, e - i, n - i, out)) {
            rc = FBPE_ENOMEM;
            break;
        }
        i = e;
    }
    fbpe_rx_vm_free(&vm);
    return rc;
}

fbpe_status fbpe_encode_text(const fbpe_bpe *b, fbpe_cache *cache, const fbpe_splitter *sp,
                             const uint8_t *s, size_t n, fbpe_ids *out) {
    size_t i = 0;
    const fbpe_classes *cl = sp->classes;
    const fbpe_vocab_slot *vslots = b->vocab_slots; /* fbpe_encode_piece_inline */
    size_t vmask = b->vocab_mask;
    /* Room for one token per three bytes: prose has about one per four, but JavaScript
     * (0.29 a byte with cl100k or o200k) and Chinese or Japanese with cl100k (0.32) passed a
     * quarter, and the ids were copied once more as the array doubled (500 KB of them for
     * 500 KB of JavaScript: 2.5% of the call's instructions, callgrind). Room not written is
     * not touched. */
    if (fbpe_ids_reserve(out, n / 3 + 16)) return FBPE_ENOMEM;
    if (sp->markers) {
        marker_encoder e = {b, cache, out};
        return fbpe_mk_pieces_inline(sp->markers, sp->options, s, n, encode_marker_piece, &e);
    }
    if (sp->whole) return n ? fbpe_encode_table_piece(b, cache, s, n, out) : FBPE_OK;
    if (sp->prog) return encode_program(b, cache, sp->prog, s, n, out);
#define ENCODE_CASE(WHICH, END_FN)                                                             \
    case WHICH:                                                                                \
        ENCODE_LOOP(END_FN)                                                                    \
        break;
    switch ((int)sp->which) {
        FBPE_FOR_EACH_SCANNER(ENCODE_CASE)
    default:
        return FBPE_EINVALID;
    }
#undef ENCODE_CASE
    return FBPE_OK;
}

#define CACHED_LOOP(END_FN)                                                                    \
    while (i < n) {                                                                            \
        size_t e = END_FN(cl, s, i, n), m;                                                     \
        const uint32_t *hit = fbpe_cache_lookup(raw, s + i, e - i, &m);                        \
        if (!hit) {                                                                            \
            *pos = i;                                                                          \
            *end = e;                                                                          \
            return FBPE_MORE;                                                                  \
        }                                                                                      \
        if (fbpe_ids_reserve(out, m)) return FBPE_ENOMEM;                                      \
        memcpy(out->ids + out->len, hit, m * sizeof(uint32_t));                                \
        out->len += m;                                                                         \
        i = e;                                                                                 \
    }

fbpe_status fbpe_encode_cached(const fbpe_cache *raw, const fbpe_splitter *sp, const uint8_t *s,
                               size_t n, size_t *pos, size_t *end, fbpe_ids *out) {
    size_t i = *pos;
    const fbpe_classes *cl = sp->classes;
    if (sp->markers || sp->whole) return FBPE_EINVALID;
    if (sp->prog) {
        /* A compiled pattern: the same loop with its matcher. A piece not in the cache ends
         * the call (FBPE_MORE), so each call scans from *pos with a budget of its own. */
        fbpe_rx_vm vm;
        fbpe_status rc = FBPE_OK;
        fbpe_rx_vm_init(&vm, n - i);
        while (i < n) {
            size_t e = fbpe_rx_piece_end(sp->prog, &vm, s, i, n), m;
            if (e == i) {
                rc = vm.status;
                break;
            }
            const uint32_t *hit = fbpe_cache_lookup(raw, s + i, e - i, &m);
            if (!hit) {
                *pos = i;
                *end = e;
                rc = FBPE_MORE;
                break;
            }
            if (fbpe_ids_reserve(out, m)) {
                rc = FBPE_ENOMEM;
                break;
            }
            memcpy(out->ids + out->len, hit, m * sizeof(uint32_t));
            out->len += m;
            i = e;
        }
        fbpe_rx_vm_free(&vm);
        if (rc == FBPE_OK) *pos = n;
        return rc;
    }
#define CACHED_CASE(WHICH, END_FN)                                                             \
    case WHICH:                                                                                \
        CACHED_LOOP(END_FN)                                                                    \
        break;
    switch ((int)sp->which) {
        FBPE_FOR_EACH_SCANNER(CACHED_CASE)
    default:
        return FBPE_EINVALID;
    }
#undef CACHED_CASE
    *pos = n;
    return FBPE_OK;
}


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
 * run: which worker's piece cache meets which piece varies). On one thread, text that is
 * not mostly ASCII is still converted by CPython (str.encode): with this, ours took 1.3%
 * fewer instructions of the call on Japanese, 0.5% on Chinese, but 0.7% more on Russian and
 * Arabic. */
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

/* UCS-2, the width of most non-Latin text: the branches in the order of how common they
 * are in it (ASCII runs, two-byte scripts, CJK). */
static size_t ucs2_utf8(const uint16_t *u, size_t n, uint8_t *dst, int pair_surrogates) {
    uint8_t *start = dst;
    size_t i = 0;
    while (i < n) {
        uint32_t cp = u[i];
        if (cp < 0x80) {
            /* the block only when the next unit is ASCII too: a space between words of
             * another script is one unit */
            size_t k = i + 1 < n && u[i + 1] < 0x80 ? ascii_block_ucs2(u + i, n - i, dst) : 0;
            if (k) {
                dst += k;
                i += k;
            } else {
                *dst++ = (uint8_t)cp;
                i++;
            }
            continue;
        }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (i + 4 <= n && (cp < 0x800 ? two4_ucs2(u + i, dst) : three4_ucs2(u + i, dst))) {
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
            cp = pair_or_replace(cp, i < n ? u[i] : 0, &i);
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
    return (size_t)(dst - start);
}

/* UCS-4 (a str with a character beyond U+FFFF, emoji): runs of ASCII in blocks, the rest
 * one code point at a time. */
static size_t ucs4_utf8(const uint32_t *u, size_t n, uint8_t *dst, int pair_surrogates) {
    uint8_t *start = dst;
    size_t i = 0;
    while (i < n) {
        size_t k = u[i] < 0x80 ? ascii_block_ucs4(u + i, n - i, dst) : 0;
        if (k) {
            dst += k;
            i += k;
            continue;
        }
        uint32_t cp = u[i++];
        if (cp - 0xD800 < 0x800) {
            if (!pair_surrogates) return SIZE_MAX;
            cp = pair_or_replace(cp, i < n ? u[i] : 0, &i);
        }
        dst += fbpe_utf8_put(cp, dst);
    }
    return (size_t)(dst - start);
}

/* The conversion of both callers: runs of ASCII in blocks (ascii_block_*), the rest one code
 * point at a time. CPython's encoder, which text.encode("utf-8") runs, cost 11
 * instructions a byte on English prose (a sixth of encoding it with o200k) and 9 on
 * Chinese (callgrind). pair_surrogates: read a lone surrogate as U+FFFD and a high one
 * followed by a low one as the character they encode; else stop at the first surrogate and
 * return SIZE_MAX. */
static size_t ucs_utf8(const void *s, int kind, size_t n, uint8_t *dst, int pair_surrogates) {
    uint8_t *start = dst;
    size_t i = 0;
    if (kind == 1) {
        const uint8_t *u = (const uint8_t *)s;
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
    return kind == 2 ? ucs2_utf8((const uint16_t *)s, n, dst, pair_surrogates)
                     : ucs4_utf8((const uint32_t *)s, n, dst, pair_surrogates);
}

int fbpe_ucs_mostly_ascii(const void *s, int kind, size_t n) {
    size_t look = n < 1024 ? n : 1024, ascii = 0;
    for (size_t i = 0; i < look; i++) {
        uint32_t cp = kind == 1 ? ((const uint8_t *)s)[i]
                      : kind == 2 ? ((const uint16_t *)s)[i] : ((const uint32_t *)s)[i];
        ascii += cp < 0x80;
    }
    return 4 * ascii >= 3 * look;
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

/* The UTF-8 of n code units of width kind into *buf (grown as needed); its length in *len. */
static fbpe_status ucs_to_utf8(const void *s, int kind, size_t n, uint8_t **buf, size_t *cap,
                               size_t *len) {
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

void fbpe_needles_init(fbpe_needles *nd, const uint8_t *const *text, const size_t *len, size_t num) {
    memset(nd, 0, sizeof *nd);
    nd->text = text;
    nd->len = len;
    nd->num = num;
    nd->one_first = num > 0;
    for (size_t k = 0; k < num; k++) {
        uint8_t a = text[k][0];
        if (a != text[0][0]) nd->one_first = 0;
        nd->first[a] |= len[k] == 1 ? 2 : 1;
        if (len[k] >= 2) {
            unsigned bit = (unsigned)a << 8 | text[k][1];
            nd->second[bit >> 6] |= (uint64_t)1 << (bit & 63);
        }
    }
    nd->first_byte = num ? text[0][0] : 0;
}

int fbpe_needles_in(const fbpe_needles *nd, const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (nd->one_first) {
            const uint8_t *at = (const uint8_t *)memchr(s + i, nd->first_byte, n - i);
            if (!at) return 0;
            i = (size_t)(at - s);
        } else if (!nd->first[s[i]]) {
            continue;
        }
        uint8_t a = s[i];
        if (nd->first[a] & 2) return 1;
        if (i + 1 == n) return 0;
        unsigned bit = (unsigned)a << 8 | s[i + 1];
        if (!(nd->second[bit >> 6] >> (bit & 63) & 1)) continue;
        for (size_t k = 0; k < nd->num; k++)
            if (nd->len[k] <= n - i && nd->text[k][0] == a && memcmp(nd->text[k], s + i, nd->len[k]) == 0)
                return 1;
    }
    return 0;
}

void fbpe_encode_batch(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch) {
    size_t w = fbpe_take_next(&batch->next_worker);
    if (w >= batch->num_workers) return;
    /* The worker's array of ids is filled through a copy on its own stack, put back at the
     * end: the workers' arrays lie side by side (batch->outs), so their lengths shared a
     * cache line, written at every piece by each worker, and the line went from core to
     * core. Two threads then did the work of one thread in more CPU time than it took it:
     * o200k, a text encoded again, English 180 MB/s a CPU-second on one thread, 113 on two;
     * Python source 135 and 74. */
    fbpe_ids own = batch->outs[w], *out = &own;
    fbpe_cache *cache = fbpe_cache_take(b);
    uint8_t *scratch = NULL; /* this worker's UTF-8 of the texts given as code units */
    size_t scratch_cap = 0;
    for (;;) {
        size_t k = fbpe_take_next(&batch->next);
        if (k >= batch->num_units) break;
        fbpe_text_unit *u = &batch->units[k];
        u->worker = w;
        u->off = out->len;
        const uint8_t *s = u->data;
        size_t n = u->len;
        u->status = FBPE_OK;
        if (u->ucs_kind) {
            u->status = ucs_to_utf8(u->ucs, u->ucs_kind, u->ucs_len, &scratch, &scratch_cap, &n);
            s = scratch;
        }
        if (u->status == FBPE_OK) {
            if (batch->needles && fbpe_needles_in(batch->needles, s, n))
                u->holds_needle = 1; /* refused by the caller: no ids */
            else
                u->status = fbpe_encode_text(b, cache, sp, s, n, out);
        }
        u->count = out->len - u->off;
    }
    batch->outs[w] = own;
    free(scratch);
    fbpe_cache_give(b, cache);
}

typedef struct {
    fbpe_bpe *b;
    const fbpe_splitter *sp;
    fbpe_text_batch *batch;
} batch_job;

static void run_batch_job(void *arg) {
    batch_job *job = (batch_job *)arg;
    fbpe_encode_batch(job->b, job->sp, job->batch);
}

void fbpe_encode_batch_on(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch,
                          size_t threads) {
    batch_job job = {b, sp, batch};
    if (threads > batch->num_workers) threads = batch->num_workers;
    fbpe_workers_run(threads, run_batch_job, &job);
}
