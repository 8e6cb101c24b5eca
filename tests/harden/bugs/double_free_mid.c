/* EXPECT: heapledger: ERROR: double-free on 0x* (5000-byte block, mid/tlsf) */
#include <stdlib.h>
int main(void)
{
    char *p = malloc(5000);
    free(p);
    free(p);
    return 0;
}
