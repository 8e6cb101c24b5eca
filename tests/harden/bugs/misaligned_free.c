/* EXPECT: heapledger: ERROR: misaligned-free on 0x* (100-byte block, tiny/*) */
#include <stdlib.h>
int main(void)
{
    char *p = malloc(100);
    free(p + 4);
    return 0;
}
