/* The text field of JSONL records, read in C: no Python object per record.
 *
 * A block of whole lines goes in; the text of each record's field comes out, as UTF-8, one
 * document after another in one buffer, with where each ends. The JSON is read per RFC 8259,
 * and strictly: whatever this reader does not take as certain -- a line that is not valid
 * UTF-8, a key written with escapes, NaN or Infinity, an invalid escape, a raw control
 * character in a string, nesting deeper than FBPE_JSONL_MAX_DEPTH, a missing or non-string
 * field, anything after the record, a line of white space other than JSON's -- stops it at
 * that line (FBPE_MORE), and the caller reads the line with Python's json module, which gives
 * the document or the error message it always gave. So this reader only ever agrees with
 * json.loads (tests/pipeline/test_bytes_pipeline.py checks it on generated records).
 *
 * The field's string is unescaped as json.loads does it: \uD8xx\uDCxx pairs are one
 * character; a lone surrogate escape is written as U+FFFD, which is what
 * functionalbpe.util.checks.bpe_text makes of the lone surrogate json.loads returns. When the
 * field occurs twice, the last one counts (json.loads keeps the last key).
 *
 * Stateless: any module may compile it.
 */
#ifndef FBPE_JSONL_H
#define FBPE_JSONL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h"

/* Deeper nesting is left to Python (whose json module raises RecursionError somewhere
 * near 1,000 levels, a message the caller keeps). */
#define FBPE_JSONL_MAX_DEPTH 64

typedef struct {
    uint8_t *text; /* the documents' UTF-8, one after another */
    size_t len, cap;
    uint64_t *ends; /* ends[k]: where document k ends in text */
    uint64_t *lines; /* lines[k]: its line number, counted from the block's first line */
    size_t num, ends_cap;
} fbpe_jsonl_docs;

void fbpe_jsonl_docs_init(fbpe_jsonl_docs *d);
void fbpe_jsonl_docs_free(fbpe_jsonl_docs *d);
/* Append n bytes as one more document (the caller's reading of a line), from line `line`. */
fbpe_status fbpe_jsonl_docs_add(fbpe_jsonl_docs *d, const uint8_t *s, size_t n, uint64_t line);

/* Read the lines of s[*pos..n) (each ends with '\n', the last one may not), appending the
 * field `key` (UTF-8, key_len bytes) of each record to d; a line of JSON white space is
 * skipped. *line counts the lines read (the caller starts it at the number of the line
 * before s[*pos]). Returns FBPE_OK at the end; FBPE_MORE when the line at *pos (number
 * *line + 1, ending at *line_end) is for the caller to read; FBPE_ENOMEM. */
fbpe_status fbpe_jsonl_extract(const uint8_t *s, size_t n, const uint8_t *key, size_t key_len,
                               size_t *pos, size_t *line_end, uint64_t *line, fbpe_jsonl_docs *d);

#endif
