/* A write into a malloc(0) block: caught at its free (the canary starts at offset 0).
 * EXPECT: heapledger: ERROR: heap-overflow on 0x* (0-byte block, tiny/*) */
#include <stdlib.h>
int main(void)
{
    char *p = malloc(0);
    p[0] = 'x';
    free(p);
    return 0;
}
