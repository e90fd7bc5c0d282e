/* Byte-level BPE vocabularies (HF tokenizer.json, GPT-2's encoder.json and vocab.bpe) read
 * without a Python object per token or merge.
 *
 * Such a file writes each token as one printable character per byte (GPT-2's table: the
 * printable Latin-1 bytes stand for themselves, the other 68 take U+0100..U+0143), and each
 * merge as two of those strings. json.loads of a tokenizer.json of a million merges holds a
 * str and an int per token and a str per merge, and the merge table built from them a tuple
 * and a str per merge more (778 MB above the interpreter at the peak); read here, the tokens
 * are their bytes back to back and the merges pairs of uint32 (141 MB at the peak, the file's
 * text and this vocabulary; the tokenizer built after them 127 MB: docs/security.md).
 *
 * Only the strict form is read: anything else (a character outside GPT-2's table, an id that
 * is not a uint32, a key given twice, a merge of a token not in the vocabulary, a table that
 * is not a merge table over the 256 bytes) is FBPE_EINVALID, and the caller reads the file
 * with json and Python, whose checks name what is wrong. So every error message is the
 * Python reader's, and this reading only ever gives what that one gives.
 */
#ifndef FBPE_BYTELEVEL_READ_H
#define FBPE_BYTELEVEL_READ_H

#include <stddef.h>
#include <stdint.h>

#include "bounds.h"

/* Entry k of a vocabulary: bytes[off[k] .. off[k + 1]) with the id ids[k], in the file's
 * order. slots: the entries by their bytes, cap compact slots (compact_slots.h). */
typedef struct {
    uint8_t *bytes;
    uint32_t *off, *ids;
    size_t num;
    uint32_t *slots;
    size_t cap;
} fbpe_bl_vocab;

void fbpe_bl_vocab_free(fbpe_bl_vocab *v);

/* The JSON object of "token": id at text[pos..n) (whitespace before it allowed; `kind` bytes a
 * character, a Python str's buffer, or FBPE_JSON_UTF8 (json_text.h) for a file's bytes, pos
 * and *end then byte offsets) into *v (zeroed by the caller), *end just past its '}'.
 * At most max_entries entries of 1..max_token_bytes bytes each. FBPE_OK, FBPE_ENOMEM, or
 * FBPE_EINVALID where it is not strictly that (the caller then parses it as JSON). */
fbpe_status fbpe_bl_vocab_read(const void *text, int kind, size_t n, size_t pos, size_t max_entries,
                               size_t max_token_bytes, fbpe_bl_vocab *v, size_t *end);

/* The entry whose bytes are s[0..len), or -1. */
int64_t fbpe_bl_vocab_find(const fbpe_bl_vocab *v, const uint8_t *s, size_t len);

/* HF's model.merges at text[pos..n): a JSON array of "left right" strings or of
 * ["left", "right"] pairs (either, mixed), at most max_entries, as the entries of v that the
 * two tokens are, into *out (malloc'd, 2 * *num entries; the caller frees it), *end just past
 * the ']'. FBPE_OK, FBPE_ENOMEM or FBPE_EINVALID (a token not in v among them). */
fbpe_status fbpe_bl_merges_read(const void *text, int kind, size_t n, size_t pos,
                                const fbpe_bl_vocab *v, size_t max_entries, uint32_t **out,
                                size_t *num, size_t *end);

/* GPT-2's vocab.bpe, the whole of text[0..n): lines apart by '\n', an optional first line
 * beginning "#version", empty lines skipped, each other line "left right". As
 * fbpe_bl_merges_read. */
fbpe_status fbpe_bl_lines_read(const void *text, int kind, size_t n, const fbpe_bl_vocab *v,
                               size_t max_entries, uint32_t **out, size_t *num);

/* The merge table of v and its merges (pairs of entries, num of them), as
 * functionalbpe/formats/hf.py _merge_table makes it: the tokens in the order of their first
 * merge after the 256 bytes; each token's merge the first of its merges whose tokens both
 * come before it, its other merges joins.
 *
 * removed[k] (one byte an entry) set: entry k is not a token (an HF added token kept in the
 * vocabulary). With `unreached` set, removed is written instead: every entry that is neither
 * one byte nor made by a merge (GPT-2's files, whose other entries are special tokens).
 *
 * Out: byte_ids[256] (the id of each byte), table (2 a token, internal ids), merge_ids (each
 * token's id), joins (3 a join: left, right, token): table and merge_ids hold num + 1 and
 * joins 3 * num + 1 entries, the caller's; *num_tokens and *num_joins say how many were
 * written. FBPE_OK, FBPE_ENOMEM or FBPE_EINVALID (a merge making a token not in v, of a
 * removed entry, a pair twice, a byte missing, an entry no merge makes, a token made only
 * from later tokens). */
fbpe_status fbpe_bl_table(const fbpe_bl_vocab *v, uint8_t *removed, int unreached,
                          const uint32_t *pairs, size_t num, uint32_t *byte_ids, uint32_t *table,
                          uint32_t *merge_ids, uint32_t *joins, size_t *num_tokens,
                          size_t *num_joins);

#endif
