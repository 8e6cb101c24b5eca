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

/* Offset of the first byte in p[from, to) that is not v, or `to`. With zero_ok a 0 byte also
 * counts as intact (memory the kernel zeroed while a freed slot waited). v must be one of
 * the patterns of harden.h (HL_CANARY_BYTE, HL_POISON_BYTE); any other byte takes the plain
 * word-wide loop. */
size_t hl_pattern_first_not(const char *p, size_t from, size_t to, uint8_t v, int zero_ok);

#endif
