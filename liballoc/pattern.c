/* liballoc/pattern.c — first byte breaking a fill pattern (see pattern.h). */
#include "pattern.h"
#include "harden.h"

#include <string.h>

/* One memcmp covers any tiny block: 256-byte chunks cost a loop of ~344 k memcmp calls per
 * 200 000 operations of tiny.mixed (harden=1,stacks=0: 150.1 M -> 146.1 M instructions). */
#define CHUNK HL_PATTERN_FILL
_Static_assert(HL_CANARY_BYTE == 0xDF && HL_POISON_BYTE == 0xDF, "pattern.h tests this byte");

const uint8_t hl_pattern_poison_fill[CHUNK] = {[0 ... CHUNK - 1] = HL_POISON_BYTE};

static inline int byte_bad(uint8_t b, uint8_t v, int zero_ok)
{
    return b != v && !(zero_ok && !b);
}

/* The word-wide search of p[from, to): eight bytes per compare, unaligned loads (no byte loop
 * to reach an 8-byte boundary), the last word overlapping the one before it. */
static size_t words_first_not(const char *p, size_t from, size_t to, uint8_t v, int zero_ok)
{
    const uint64_t pat = 0x0101010101010101ull * v;
    size_t i = from;
    uint64_t w;
    for (; i + 8 <= to; i += 8) {
        memcpy(&w, p + i, 8);
        if (w == pat || (zero_ok && w == 0)) continue;
        for (size_t k = 0; k < 8; k++)
            if (byte_bad((uint8_t)p[i + k], v, zero_ok)) return i + k;
    }
    if (i == to) return to;
    if (to - from >= 8) { /* the tail inside one last word: intact in the common case */
        memcpy(&w, p + to - 8, 8);
        if (w == pat || (zero_ok && w == 0)) return to;
    }
    for (; i < to; i++)
        if (byte_bad((uint8_t)p[i], v, zero_ok)) return i;
    return to;
}

size_t hl_pattern_first_not_slow(const char *p, size_t from, size_t to, uint8_t v, int zero_ok)
{
    const uint8_t *fill = v == HL_POISON_BYTE ? hl_pattern_poison_fill : 0;
    if (!fill || to - from < 32) return from < to ? words_first_not(p, from, to, v, zero_ok) : to;
    for (size_t i = from; i < to; i += CHUNK) {
        size_t n = to - i < CHUNK ? to - i : CHUNK;
        if (memcmp(p + i, fill, n) == 0) continue;
        size_t bad = words_first_not(p, i, i + n, v, zero_ok);
        if (bad < i + n) return bad;
    }
    return to;
}
