/* JSON tables of ids read and written without a Python object per number.
 *
 * A tokenizer file's merges are a JSON array of rows, [[104,105],[256,33],...]: 4.1 million
 * of them in a 61 MB file. json.loads makes a list and two ints of each row (535 MB for that
 * file, 0.8 s); read here, they take 8 bytes a row (33 MB, 0.15 s). Only the strict form is
 * read: anything else is reported as "not such a table", and the caller parses the text as
 * JSON, whose errors name the place. Writing is the same rows as compact JSON, which is also
 * what the file's checksum hashes.
 */
#ifndef FBPE_ID_ROWS_H
#define FBPE_ID_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* Read text[pos..n) as a JSON array of rows of `width` (1..16) non-negative integers below
 * 2^32, with JSON whitespace between tokens. `kind` is the bytes per character (1, 2 or 4:
 * a Python str's buffer). With `out` NULL the rows are only counted; else their ids are
 * written to out, row after row (out holds *rows * width ids, as a first call counted).
 * Returns 1, with *rows and *end (just past the closing ']'), when the text is such a
 * table; 0 when it is not: a float, a negative number, a leading zero, a string, a row of
 * another width, an id of 2^32 or more, the text ending early. */
int fbpe_id_rows_read(const void *text, int kind, size_t n, size_t pos, size_t width, uint32_t *out,
                      size_t *rows, size_t *end);

/* The bytes fbpe_id_rows_write needs for `num` rows of `width` ids joined by `sep_len`
 * bytes, at most; SIZE_MAX when that does not fit in size_t. */
size_t fbpe_id_rows_room(size_t num, size_t width, size_t sep_len);

/* Write ids[0..num * width) as compact JSON rows ("[104,105]", as json.dumps writes them
 * with separators (",", ":")) joined by sep[0..sep_len) into out (fbpe_id_rows_room
 * bytes); returns the bytes written. */
size_t fbpe_id_rows_write(const uint32_t *ids, size_t num, size_t width, const uint8_t *sep,
                          size_t sep_len, uint8_t *out);

#endif
