/* tests/harden/test_pattern.c — hl_pattern_first_not (liballoc/pattern.c), the scan behind
 * every canary and poison check: against a byte-by-byte reference, for every start offset
 * modulo 16, lengths across the word, tail and chunk boundaries, one bad byte (or a 0 byte,
 * with and without zero_ok) at every position, and both patterns.
 */
#include "harden.h"
#include "pattern.h"

#include <criterion/criterion.h>
#include <string.h>

static size_t reference(const char *p, size_t from, size_t to, uint8_t v, int zero_ok)
{
    for (size_t i = from; i < to; i++)
        if ((uint8_t)p[i] != v && !(zero_ok && p[i] == 0)) return i;
    return to;
}

static char buf[2 * 4096 + 64];

static void sweep(uint8_t v, size_t maxlen, size_t step)
{
    for (size_t from = 0; from < 16; from++)
        for (size_t len = 0; len <= maxlen; len += len < 80 ? 1 : step) {
            size_t to = from + len;
            memset(buf, v, sizeof buf);
            cr_assert_eq(hl_pattern_first_not(buf, from, to, v, 0), to, "intact %zu+%zu", from,
                         len);
            for (size_t bad = from; bad < to; bad += len < 80 ? 1 : 29) {
                for (int kind = 0; kind < 2; kind++) {
                    memset(buf, v, sizeof buf);
                    buf[bad] = kind ? 0 : (char)(v ^ 0x10);
                    for (int zok = 0; zok < 2; zok++) {
                        size_t want = reference(buf, from, to, v, zok);
                        size_t got = hl_pattern_first_not(buf, from, to, v, zok);
                        cr_assert_eq(got, want, "v=%#x from=%zu len=%zu bad=%zu kind=%d zero_ok=%d",
                                     v, from, len, bad, kind, zok);
                    }
                }
            }
            /* A bad byte just outside the range is not seen. */
            memset(buf, v, sizeof buf);
            if (from) buf[from - 1] = 0x11;
            buf[to] = 0x11;
            cr_assert_eq(hl_pattern_first_not(buf, from, to, v, 0), to);
        }
}

Test(pattern, canary_matches_the_reference)
{
    sweep(HL_CANARY_BYTE, 4096 + 300, 127);
}

Test(pattern, poison_matches_the_reference)
{
    sweep(HL_POISON_BYTE, 4096 + 300, 127);
}

Test(pattern, other_bytes_take_the_word_loop)
{
    sweep(0x5a, 300, 13);
}
