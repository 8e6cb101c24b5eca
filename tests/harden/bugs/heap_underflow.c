/* EXPECT: heapledger: ERROR: heap-underflow on 0x* (32-byte block, tiny/*) */
#include <stdlib.h>
int main(void)
{
    char *p = malloc(32);
    for (int i = 31; i >= -1; i--)
        p[i] = 0;
    free(p);
    return 0;
}
