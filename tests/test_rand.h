/* tests/test_rand.h — the tests' pseudo-random numbers (xorshift64): every test file keeps
 * its own seeded state, so its sequence is fixed and independent of the others. */
#ifndef HL_TEST_RAND_H
#define HL_TEST_RAND_H

#include <stdint.h>

static inline uint64_t hl_test_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
