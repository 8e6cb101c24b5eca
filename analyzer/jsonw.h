/* analyzer/jsonw.h — a small streaming JSON writer (objects, arrays, escaped strings).
 *
 * The writer tracks whether a comma is due at each nesting level, so callers write keys and
 * values in order without punctuation bookkeeping. Strings come out as valid UTF-8 whatever
 * bytes they hold (hl_json_escape). Non-finite numbers and negative
 * "unknown" fractions are written as null by hl_json_frac().
 */
#ifndef HL_JSONW_H
#define HL_JSONW_H

#include <stdint.h>
#include <stdio.h>

#define HL_JSON_DEPTH 32

typedef struct hl_json_s {
    FILE *f;
    int depth;
    int count[HL_JSON_DEPTH]; /* values written at each level */
    int after_key;
} hl_json_t;

void hl_json_init(hl_json_t *j, FILE *f);
void hl_json_key(hl_json_t *j, const char *key);
void hl_json_obj(hl_json_t *j);
void hl_json_obj_end(hl_json_t *j);
void hl_json_arr(hl_json_t *j);
void hl_json_arr_end(hl_json_t *j);
void hl_json_str(hl_json_t *j, const char *s);
void hl_json_u64(hl_json_t *j, uint64_t v);
void hl_json_i64(hl_json_t *j, int64_t v);
void hl_json_num(hl_json_t *j, double v);
/* A fraction or other quantity where a negative value means unknown: null then. */
void hl_json_frac(hl_json_t *j, double v);
void hl_json_bool(hl_json_t *j, int v);
void hl_json_null(hl_json_t *j);
/* Write a string escaped for JSON (with quotes) to f. The output is always valid UTF-8: each
 * byte of s that does not start a valid UTF-8 sequence is written as \ufffd (U+FFFD, the
 * replacement character); C0, DEL, C1 and bidirectional controls and U+2028/U+2029 as \u escapes.
 */
void hl_json_escape(FILE *f, const char *s);

#endif
