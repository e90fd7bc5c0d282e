/* A text file encoded into a token file in one call: cut, checked, encoded, packed and
 * written by the persistent workers (workers.h), Python called once per stretch of the file.
 *
 * The file is one document, held whole in memory (mapped read-only by the caller). It is
 * split into nominal blocks of `block` bytes; the place where block j - 1 ends and block j
 * begins is boundary(j): the largest safe cut (fbpe_safe_cut, scan.h) in
 * ((j - 1) * block, j * block] that is not inside an occurrence of a special token, or none.
 * A boundary depends on the bytes alone, so every worker finds the same ones whatever the
 * number of threads. Unit k starts at boundary(k) (0 for k = 0; a block without a boundary
 * starts no unit) and ends at the next boundary, or at the end of the file; the safe cuts
 * make the pieces of the units the pieces of the whole file (cuts.c), so the ids are
 * those of encoding the file as one text, whatever the block size.
 *
 * Workers take units in order from a counter, encode each into an array of their own, lay
 * its ids (and the eot after the last unit) out as the file's bytes into one slot of a ring
 * of slots, and whichever worker completes the unit next in order writes the finished slots
 * in order with write(2) while the others go on encoding. A worker whose slot is still
 * waiting to be written waits: memory is the ring, not the file.
 *
 * A JSON Lines file (job.jsonl) is cut by lines instead: unit k holds the lines whose first
 * byte lies in [k * block, (k + 1) * block), so that, again, the units depend on the bytes
 * alone (a block in which no line starts holds an empty unit; a line longer than a block is
 * one unit). The worker takes the field `key` of each record out with fbpe_jsonl_extract
 * (jsonl.h), encodes each document alone and lays out its ids followed by the eot; the writer
 * also writes where each document starts to index_fd. Whatever the C reader or encoder is
 * not certain of -- a line fbpe_jsonl_extract leaves to its caller, a document holding a
 * needle, a compiled pattern that gives up -- hands that unit to the caller (for_python):
 * the units before it are written, none from it on, and the caller reads it as the stream
 * path reads every line, then goes on from the unit after it.
 */
#ifndef FBPE_FILE_ENCODE_H
#define FBPE_FILE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "encode_text.h"

typedef struct {
    fbpe_bpe *b;
    const fbpe_splitter *sp;
    const fbpe_classes *cl;        /* the classes of the safe cuts */
    const uint32_t *out_map;       /* the id written for each token, or NULL: the token */
    const uint8_t *data;           /* the file, n bytes, valid UTF-8 (fbpe_file_invalid) */
    size_t n;
    size_t block;                  /* >= 1, and n + block does not overflow */
    /* Special tokens: never cut inside one (as Files.units cuts) ... */
    const uint8_t *const *avoid;
    const size_t *avoid_len;
    size_t num_avoid;
    /* ... and a unit that holds one of these is not encoded (a refusal the caller makes). */
    const fbpe_needles *needles;   /* or NULL */
    int width;                     /* 2 or 4 bytes an id, little-endian */
    int with_eot;
    uint32_t eot;
    int fd;                        /* where the bytes go, in order */
    /* JSON Lines (see above), the documents the string field key[0..key_len) of each line. */
    int jsonl;
    const uint8_t *key;
    size_t key_len;
    int index_fd;                  /* JSONL: each document's start goes here, or -1 */
    uint64_t index_base;           /* the ids before the call's first unit, added to each start */
} fbpe_file_job;

typedef struct {
    fbpe_status status;  /* FBPE_ENOMEM, or what fbpe_encode_text returned */
    int holds_needle;    /* a unit holds a needle: nothing after it was written */
    int too_wide;        /* an id above 0xFFFF with width 2 */
    int write_errno;     /* write(2) failed with this errno */
    size_t ids;          /* ids written, eot included */
    size_t bytes;        /* bytes written */
    /* The first unit not written: `end` when every unit was; else the unit that failed (or
     * one before it, when a failure stopped the workers before they finished it). */
    size_t written_end;
    int for_python;      /* JSONL: unit written_end is the caller's to read (see above) */
    int index_errno;     /* write(2) to index_fd failed with this errno */
    /* JSONL, of the units written: documents, the bytes of their text, lines read. */
    size_t docs;
    uint64_t text_bytes;
    uint64_t lines;
} fbpe_file_result;

/* The number of units of the file: ceil(n / block), at least 1 (an empty file is one
 * empty unit, followed by the eot; an empty JSONL file holds no document). */
size_t fbpe_file_units(const fbpe_file_job *job);

/* Where unit k (< fbpe_file_units) of a JSONL file starts and ends; *start == *stop for an
 * empty unit. */
void fbpe_file_jsonl_unit(const fbpe_file_job *job, size_t k, size_t *start, size_t *stop);

/* The offset of the first byte of data[0..n) that is not valid UTF-8 (surrogates refused,
 * as Python's decoder refuses them), or n; checked in pieces of about `piece` bytes on up to
 * `threads` threads. */
size_t fbpe_file_invalid(const uint8_t *data, size_t n, size_t piece, size_t threads);

/* Encode and write units first .. end - 1 (end <= fbpe_file_units) on up to `threads`
 * threads, the calling thread one of them. On any failure nothing after the failing unit
 * is written, and what was written before it is a whole prefix of units (written_end); a
 * unit handed to the caller (for_python) is not a failure: every unit before it is written. */
void fbpe_file_encode(const fbpe_file_job *job, size_t first, size_t end, size_t threads,
                      fbpe_file_result *result);

#endif
