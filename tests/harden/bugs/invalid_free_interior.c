/* EXPECT: heapledger: ERROR: invalid-free on 0x* (6000-byte block, mid/tlsf) */
#include <stdlib.h>
int main(void)
{
    char *p = malloc(6000);
    free(p + 256);
    return 0;
}
