/* analyzer/safetext.h — recorded strings made safe to print (docs/analyze.md, "Output safety").
 *
 * Command lines, thread names, symbol, file and module names come from the traced program:
 * a name holding ESC [ … or an OSC sequence would drive the reader's terminal, and bytes that
 * are not UTF-8 would make JSON invalid. Every text renderer prints a recorded string through
 * hl_safe(); the JSON writer decodes with hl_utf8_decode() (jsonw.c).
 *
 * Text rule: the bytes of valid UTF-8 print as they are, except
 *   C0 controls and DEL    \t \n \r, else \xHH (0x00-0x1f, 0x7f)
 *   C1 controls            \u0080 … \u009f
 *   bidirectional controls \u061c \u200e \u200f \u202a … \u202e \u2066 … \u2069
 *   a backslash            \\ (so that an escape in the output always means an escaped byte)
 *   a byte that does not start a valid UTF-8 sequence (stray continuation, overlong form,
 *   surrogate, beyond U+10FFFF, truncated)   \xHH, and decoding resumes at the next byte.
 */
#ifndef HL_SAFETEXT_H
#define HL_SAFETEXT_H

#include <stddef.h>
#include <stdint.h>

/* The UTF-8 sequence at p (NUL-terminated): its length (1-4) with the code point in *cp, or 0
 * when p[0] does not start a valid, shortest-form sequence of a scalar value. */
size_t hl_utf8_decode(const unsigned char *p, uint32_t *cp);

/* Whether cp is a bidirectional formatting control (U+061C, U+200E/F, U+202A-E, U+2066-9):
 * they reorder what a terminal shows around them. */
int hl_is_bidi_control(uint32_t cp);

/* s escaped by the text rule above. Returns s itself when nothing needs escaping (and NULL for
 * NULL), else a thread-local buffer that stays valid for the next HL_SAFE_SLOTS - 1 calls of
 * the thread: enough for every string of one printf. */
#define HL_SAFE_SLOTS 8
const char *hl_safe(const char *s);

#endif
