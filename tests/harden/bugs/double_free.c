/* EXPECT: heapledger: ERROR: double-free on 0x* (24-byte block, tiny/*) */
#include <stdlib.h>
int main(void)
{
    char *p = malloc(24);
    free(p);
    free(p);
    return 0;
}
