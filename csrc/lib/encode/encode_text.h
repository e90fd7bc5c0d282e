/* Encoding whole texts: the scanner's pieces go straight into the BPE encoder.
 *
 * For the built-in patterns the scanner (scan.h, scanners.h) finds where each piece ends, and
 * the piece, a byte range of the text, is encoded where it lies: no Python string, no copy.
 * A batch of texts is shared by worker threads that take texts a few at a time from an atomic
 * counter, all with the encoder's one cache (fbpe_cache_share).
 */
#ifndef FBPE_ENCODE_TEXT_H
#define FBPE_ENCODE_TEXT_H

#include "encode.h"
#include "../scan/splitter.h"

/* Encode UTF-8 text s[0..n) that holds no special token, cut as `sp` says; append the ids
 * to out. FBPE_OK or FBPE_ENOMEM. */
fbpe_status fbpe_encode_text(const fbpe_bpe *b, fbpe_cache *cache, const fbpe_splitter *sp,
                             const uint8_t *s, size_t n, fbpe_ids *out);

/* The pieces of s[*pos..n) (a pattern's, not the marker scheme's) looked up whole in a cache
 * of raw pieces that the caller fills, their ids appended to out. Returns FBPE_OK at the end
 * of the text (*pos = n); FBPE_MORE at the first piece not in the cache, s[*pos..*end), for
 * the caller to store and call again; FBPE_ENOMEM; FBPE_EINVALID for the marker scheme or a
 * splitter that leaves texts whole. */
fbpe_status fbpe_encode_cached(const fbpe_cache *raw, const fbpe_splitter *sp, const uint8_t *s,
                               size_t n, size_t *pos, size_t *end, fbpe_ids *out);

typedef struct {
    const uint8_t *data;
    size_t len;
    /* Or, when ucs_kind is 1, 2 or 4, the text is ucs_len code units of that width (a
     * Python str's own buffer): the worker writes its UTF-8 itself, without the GIL, a lone
     * surrogate as U+FFFD and a high surrogate followed by a low one as the character they
     * encode (what Tokenizer.encode makes of such a str). Encoding every non-ASCII text to
     * UTF-8 on the calling thread, under the GIL, was work in series with the encoding. */
    const void *ucs;
    size_t ucs_len;
    int ucs_kind;
    /* Filled by the worker that takes the text: its ids are outs[worker][off .. off + count)
     * of the batch. */
    size_t worker, off, count;
    fbpe_status status; /* what fbpe_encode_text returned */
    /* Set when the text holds one of the batch's needles; the text is then not encoded. */
    int holds_needle;
} fbpe_text_unit;

/* The UTF-8 of the special tokens a batch refuses: each worker looks for them in the texts
 * it takes, so that the check is spread over the workers with the encoding. Refused on the
 * calling thread, text by text under the GIL, it was the larger part of the serial work
 * (165,000 lines of English, cl100k with its specials disallowed: 0.15 s of the calling
 * thread's 0.26 s, against 0.3 s of encoding). */
typedef struct {
    const uint8_t *const *text;
    const size_t *len;
    size_t num;
    /* Of each byte: bit 1 when a needle begins with it, bit 2 when a needle is that byte. */
    uint8_t first[256];
    /* Bit (a << 8 | b) when a needle begins with bytes a, b: most places where a needle's
     * first byte occurs ('<' in code) are ruled out here, whatever the number of needles. */
    uint64_t second[1024];
    int one_first; /* all needles begin with one byte, first_byte: memchr finds the places */
    uint8_t first_byte;
} fbpe_needles;

/* Needle k is text[k][0..len[k]), len[k] >= 1; the arrays are the caller's and must outlive
 * every search. */
void fbpe_needles_init(fbpe_needles *nd, const uint8_t *const *text, const size_t *len, size_t num);

/* Whether s[0..n) holds one of the needles. */
int fbpe_needles_in(const fbpe_needles *nd, const uint8_t *s, size_t n);

/* Each worker appends the ids of all the texts it takes to one array of its own: one
 * allocation per worker rather than one per text, and nothing to free per text on the
 * calling thread, which holds the GIL while it makes the lists (with 49,020 short lines,
 * building the results took as long as encoding them). */
typedef struct {
    fbpe_text_unit *units;
    size_t num_units;
    size_t bytes;       /* the units' bytes, about (code units count twice): sizes a take */
    size_t take;        /* units taken at a time (fbpe_take_size; 0 is 1) */
    size_t next;        /* the next take, in takes; updated atomically */
    fbpe_ids *outs;     /* num_workers arrays, one per call of fbpe_encode_batch */
    size_t num_workers;
    size_t next_worker; /* the next array to take; updated atomically */
    const fbpe_needles *needles; /* or NULL: none looked for */
    fbpe_cache *shared; /* the cache every worker uses (fbpe_cache_share), or NULL: each its own */
} fbpe_text_batch;

/* Encode units of the batch until none is left; call it at most num_workers times, from
 * any threads (a call beyond that does nothing). */
void fbpe_encode_batch(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch);

/* The whole batch encoded on up to `threads` threads (at most num_workers), the calling
 * thread one of them, on the persistent workers of workers.h; returns when it is done. */
void fbpe_encode_batch_on(fbpe_bpe *b, const fbpe_splitter *sp, fbpe_text_batch *batch,
                          size_t threads);

#endif
