/* The boundary-marker scheme's pieces, in C: units, markers, shift codes, escapes.
 *
 * The piece loop (fbpe_mk_pieces; inlined by the loops that make pieces, markers_scan.h)
 * gives exactly the pieces of BoundaryMarkers.pieces (functionalbpe/schemes/markers.py, the
 * reference; the rules are in docs/markers.md), as UTF-8, one at a time, to a sink: the
 * piece counter (count.c), the encoder (encode_text.c) or a list for Python (_scanner.pyx).
 * No Python object is touched, so it runs with the GIL released.
 *
 * How the unit regex becomes a scanner. Each alternative of markers.UNITS starts on its own
 * characters (the emoji lookaheads keep emoji out of the punct, digit and rest runs), so the
 * class of the first character says which alternative matches, and that alternative is a run
 * of one class with inherited marks taken along; nothing is ever given back. The classes are
 * one byte per code point, measured from regex (functionalbpe/unicode/markerclasses.py).
 *
 * Case codes follow markers.case_code, which calls Python's str.lower and str.upper. Both
 * map each character on its own, except that lower() turns a capital sigma into a final
 * sigma by its neighbours in the word; so the case maps (measured from Python, per code
 * point) and that one rule reproduce them exactly.
 */
#ifndef FBPE_MARKERS_H
#define FBPE_MARKERS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bounds.h"

/* Options: BoundaryMarkers(punct, digits, case). */
#define FBPE_MK_PUNCT 1
#define FBPE_MK_DIGITS 2
#define FBPE_MK_CASE 4

/* A code point's unit class: the kind in the low three bits, and flags. The values of
 * functionalbpe/unicode/markerclasses.py. */
#define FBPE_MK_KIND 7u
#define FBPE_MK_K_REST 0u      /* none of the others: controls, private use, unassigned, ... */
#define FBPE_MK_K_WORD 1u      /* markers.WORD_CHAR */
#define FBPE_MK_K_SPACELESS 2u /* markers.SPACELESS_CHAR */
#define FBPE_MK_K_SPACE 3u     /* \s */
#define FBPE_MK_K_PUNCT 4u     /* \p{P} \p{S} \p{Cf} */
#define FBPE_MK_K_NUMBER 5u    /* \p{N} */
#define FBPE_MK_INHERITED 8u   /* markers.INHERITED_MARK */
#define FBPE_MK_EMOJI_PRESENTATION 16u
#define FBPE_MK_PICTOGRAPHIC 32u
#define FBPE_MK_EMOJI_EXTEND 64u /* markers.EMOJI_EXTEND */
#define FBPE_MK_CHANGES_LOWER 128u /* chr(c).lower() != chr(c) */

/* A map from code points to int32 in two levels: blocks[index[cp >> 8] * 256 + (cp & 255)]. */
typedef struct {
    const uint16_t *index;
    const int32_t *blocks;
} fbpe_mk_map;

#define FBPE_MK_MULTI INT32_MIN /* in a case map: the result has several characters */
#define FBPE_MK_CASED 1          /* in the sigma map */
#define FBPE_MK_CASE_IGNORABLE 2

typedef struct {
    const uint8_t *classes; /* 0x110000 bytes */
    fbpe_mk_map lower;      /* chr(cp).lower() - cp, or FBPE_MK_MULTI */
    fbpe_mk_map upper;      /* chr(cp).upper() - cp, or FBPE_MK_MULTI */
    fbpe_mk_map sigma;      /* word characters: FBPE_MK_CASED, FBPE_MK_CASE_IGNORABLE or 0 */
} fbpe_mk_tables;

/* The marker scheme as installed: its tables, and the writer of the pieces that are not
 * their unit as it is (markers_scan.h). The module that owns the scanner (_scanner)
 * installs it once and lends it to the encoder, which inlines the piece loop but calls the
 * writer here: one compiled copy of this file, and of the tables. */
typedef struct fbpe_markers fbpe_markers;

/* Install the tables (not copied: the caller keeps them alive for good), once per process;
 * every later call returns the same scheme unchanged. */
const fbpe_markers *fbpe_mk_install(const fbpe_mk_tables *t);

/* Receives each piece: its UTF-8 bytes, of which `readable` (>= len) may be read, and the
 of the unit it comes from (increasing from piece to piece). The bytes
 * are only valid during the call. A return other than FBPE_OK stops fbpe_mk_pieces, which
 * returns it. */
typedef fbpe_status (*fbpe_mk_sink)(void *ctx, const uint8_t *piece, size_t len, size_t readable,
                                    size_t at);

/* The pieces of UTF-8 text s[0..n) (lone surrogates allowed) under `options`, in order.
 * Returns FBPE_OK, FBPE_ENOMEM, or what the sink returned. */
fbpe_status fbpe_mk_pieces(const fbpe_markers *m, int options, const uint8_t *s, size_t n,
                           fbpe_mk_sink emit, void *ctx);

/* markers.case_code on one word (s[0..n), word characters only): 0, 1 (title) or 2 (upper);
 * when not 0, the lower-cased word is written to out (room for 2 * n bytes) and its length
 * stored in *out_len. */
int fbpe_mk_case_code(const fbpe_markers *m, const uint8_t *s, size_t n, uint8_t *out,
                      size_t *out_len);

#endif
