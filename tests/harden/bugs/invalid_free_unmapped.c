/* A wild pointer into unmapped memory: the fault on its header byte is recognised.
 * EXPECT: heapledger: ERROR: invalid-free on 0x* (0-byte block, none/wild) */
#include <stdint.h>
#include <stdlib.h>
int main(void)
{
    uintptr_t junk = 0x100000000010ull; /* e.g. an uninitialised pointer */
    free((void *)junk);
    return 0;
}
