/* The UTF-8 of a Python str's buffer: n code units of width kind (1, 2 or 4 bytes, as
 * PyUnicode_KIND says), written by C so that no Python bytes object is made, on the calling
 * thread or on the workers (each the units of its own stretch of a long text).
 */
#ifndef FBPE_UCS_UTF8_H
#define FBPE_UCS_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h"

/* How many bytes fbpe_ucs_to_utf8 may write for n code units of width kind (SIZE_MAX: more
 * than memory holds). */
size_t fbpe_ucs_utf8_room(int kind, size_t n);
/* The UTF-8 of the n code units at s written to dst, which has room for
 * fbpe_ucs_utf8_room(kind, n) bytes: its length, or SIZE_MAX when the text holds a surrogate
 * code point, which UTF-8 cannot (the caller then decides, as Python's strict encoder would
 * make it). */
size_t fbpe_ucs_to_utf8(const void *s, int kind, size_t n, uint8_t *dst);
/* The same into *buf, grown as needed (*cap bytes), its length in *len; a lone surrogate is
 * read as U+FFFD and a high one followed by a low one as the character they encode, as
 * encode_ordinary reads them. FBPE_OK or FBPE_ENOMEM. */
fbpe_status fbpe_ucs_to_utf8_grown(const void *s, int kind, size_t n, uint8_t **buf,
                                   size_t *cap, size_t *len);
/* Whether fbpe_ucs_to_utf8 is the faster way to the UTF-8 of this text than CPython's
 * encoder (str.encode), by the width and, for UCS-1 and UCS-4, by the first 1,024 code units
 * (see ucs_utf8.c for the measurements). */
int fbpe_ucs_writes_faster(const void *s, int kind, size_t n);
/* About how many bytes of UTF-8 n code units of width kind are (a surrogate counts 3, as the
 * U+FFFD a lone one becomes; a pair is 6 for the 4 it becomes): for choosing how to cut a
 * text, never for writing it. */
size_t fbpe_ucs_utf8_len(const void *s, int kind, size_t n);

#endif
