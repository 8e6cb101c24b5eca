/* liballoc/pattern.h — finding the first byte that breaks a fill pattern (hardened mode's
 * canaries and poison), at memory speed.
 *
 * Hardened mode writes a canary after every block and poison over every freed one, and checks
 * them on each free, on quarantine exit and when a tiny slot is handed out again: several
 * hundred bytes per operation. The common case is "all intact", so the scan compares whole
 * chunks against a constant buffer of the pattern with memcmp (libc's vectorised compare,
 * 32 bytes and more per step); only a chunk that differs is searched byte by byte.
 * Nothing here allocates, locks or calls stdio.
 */
#ifndef HL_PATTERN_H
#define HL_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HL_PATTERN_FILL 4096 /* bytes of each constant fill buffer (pattern.c) */
extern const uint8_t hl_pattern_poison_fill[HL_PATTERN_FILL]; /* canary and poison alike */

/* The search itself (pattern.c): where the inline checks below find a difference, or for
 * what they do not cover. */
size_t hl_pattern_first_not_slow(const char *p, size_t from, size_t to, uint8_t v, int zero_ok);

/* Offset of the first byte in p[from, to) that is not v, or `to`. With zero_ok a 0 byte also
 * counts as intact (memory the kernel zeroed while a freed slot waited). v must be one of
 * the pattern of harden.h (HL_POISON_BYTE 0xDF, also the canary's); any other byte takes
 * the plain word-wide loop. The common case — intact, at most HL_PATTERN_FILL bytes — is
 * answered inline: a range of 8 bytes and more by whole words (the last one overlapping),
 * up to 32 bytes, by one memcmp with the fill buffer above that. */
static inline size_t hl_pattern_first_not(const char *p, size_t from, size_t to, uint8_t v,
                                          int zero_ok)
{
    size_t n = to - from;
    if (!zero_ok && n >= 8 && n <= 32) {
        const uint64_t pat = 0x0101010101010101ull * v;
        uint64_t w, acc = 0;
        for (size_t i = from; i + 8 <= to; i += 8) {
            memcpy(&w, p + i, 8);
            acc |= w ^ pat;
        }
        memcpy(&w, p + to - 8, 8);
        acc |= w ^ pat;
        if (acc == 0) return to;
    } else if (!zero_ok && n > 32 && n <= HL_PATTERN_FILL && v == 0xDF) {
        if (memcmp(p + from, hl_pattern_poison_fill, n) == 0) return to;
    }
    return hl_pattern_first_not_slow(p, from, to, v, zero_ok);
}

#endif
