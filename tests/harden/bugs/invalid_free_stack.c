/* EXPECT: heapledger: ERROR: invalid-free on 0x* (0-byte block, none/stack) */
#include <stdlib.h>
int main(void)
{
    char buf[64];
    free(buf);
    return 0;
}
