/* Off by one found when the block is resized.
 * EXPECT: heapledger: ERROR: heap-overflow on 0x* (5000-byte block, mid/tlsf) */
#include <stdlib.h>
#include <string.h>
int main(void)
{
    char *p = malloc(5000);
    memset(p, 0, 5001);
    p = realloc(p, 9000);
    free(p);
    return 0;
}
