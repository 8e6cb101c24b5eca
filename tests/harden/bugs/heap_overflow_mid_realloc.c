/* Off by one found when the block is resized.
 * EXPECT: heapledger: ERROR: heap-overflow on 0x* (3000-byte block, mid/tlsf) */
#include <stdlib.h>
#include <string.h>
int main(void)
{
    char *p = malloc(3000);
    memset(p, 0, 3001);
    p = realloc(p, 6000);
    free(p);
    return 0;
}
