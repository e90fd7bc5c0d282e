/* A batch's ids laid out flat by the workers: the bytes of a token file, or the array of a
 * flat batch.
 *
 * Once every unit is encoded, unit k's ids (each written as its output id, out_map) and, when
 * last[k] says it ends a document, the eot, go to dst from index starts[k] on, as
 * little-endian integers of `width` bytes. The units are taken in runs by whichever worker
 * is free, each writing its own range: laid out by the calling thread alone, after the
 * workers had finished, this was work in series with all of the encoding (about 2 ns an id:
 * 14 ms for the 7 M ids of 30 MB of English, a tenth of the wall time on two threads). */
#ifndef FBPE_PACK_H
#define FBPE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "encode_text.h"

typedef struct {
    const fbpe_text_batch *batch;
    const uint32_t *out_map; /* the id written for each token, or NULL: the token itself */
    const uint8_t *last;     /* per unit, 1 where an eot follows it; NULL: never */
    uint32_t eot;
    int width;               /* 2 or 4 bytes an id */
    const uint64_t *starts;  /* per unit: the index in dst of its first id */
    uint8_t *dst;            /* room for every id and eot */
    size_t next;             /* the next run of units to take; updated atomically */
    uint32_t widest;         /* every value written, OR'ed: the caller checks a width of 2 */
} fbpe_pack_job;

/* Lay out every unit of job->batch (each encoded, status FBPE_OK) on up to `threads`
 * threads, the calling thread one of them. */
void fbpe_pack_batch(fbpe_pack_job *job, size_t threads);

#endif
