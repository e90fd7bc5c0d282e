/* Encoding whole texts: the scanner's pieces go straight into the BPE encoder.
 *
 * For the built-in patterns the scanner (scan.h, scanners.h) finds where each piece ends, and
 * the piece, a byte range of the text, is encoded where it lies: no Python string, no copy.
 * A batch of texts is shared by worker threads that take texts one at a time from an atomic
 * counter, each with a cache of its own from the encoder's pool.
 */
#ifndef FBPE_ENCODE_TEXT_H
#define FBPE_ENCODE_TEXT_H

#include "bpe.h"

/* Which scanner: the values of scan.h's fbpe_scanner. */
#define FBPE_TEXT_GPT2 0
#define FBPE_TEXT_GPT4 1 /* also llama3 */
#define FBPE_TEXT_O200K 2
#define FBPE_TEXT_FUNCTIONALIZER 3
/* The boundary-marker scheme's pieces (markers.h): FBPE_TEXT_MARKERS + its options. */
#define FBPE_TEXT_MARKERS 16

/* Give the scanner its character classes (see scan.h). */
void fbpe_text_install_classes(const uint8_t *table, const uint32_t *fold_cps, const char *fold_letters,
                               size_t num_folds);

/* Encode UTF-8 text s[0..n) that holds no special token; append the ids to out.
 * Returns 0, or -1 when out of memory. */
int fbpe_encode_text(const fbpe_bpe *b, fbpe_cache *cache, int which, const uint8_t *s, size_t n,
                     fbpe_ids *out);

/* The pieces of s[*pos..n) (a pattern, not a marker scheme) looked up whole in a cache of
 * raw pieces that the caller fills, their ids appended to out. Returns 0 at the end of the
 * text (*pos = n); 1 at the first piece not in the cache, s[*pos..*end), for the caller to
 * store and call again; -1 when out of memory or `which` is a marker scheme. */
int fbpe_encode_cached(const fbpe_cache *raw, int which, const uint8_t *s, size_t n, size_t *pos,
                       size_t *end, fbpe_ids *out);

typedef struct {
    const uint8_t *data;
    size_t len;
    fbpe_ids out; /* filled by the worker that takes the text */
    int failed;   /* what fbpe_encode_text returned, when not 0 */
} fbpe_text_unit;

typedef struct {
    fbpe_text_unit *units;
    size_t num_units;
    size_t next; /* the next unit to take; updated atomically */
} fbpe_text_batch;

/* Encode units of the batch until none is left (call from any number of threads). */
void fbpe_encode_batch(fbpe_bpe *b, int which, fbpe_text_batch *batch);

#endif
