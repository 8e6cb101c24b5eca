/* 200 bytes written past a 50-byte block: the canary, the inline trailer and the next slots
 * are gone; the report still gives the requested size, offset 50 and the allocation stack.
 * EXPECT: heapledger: ERROR: heap-overflow on 0x* (50-byte block, tiny/*) */
#include <stdlib.h>
#include <string.h>
int main(void)
{
    char *p = malloc(50);
    memset(p, 'A', 250);
    free(p);
    return 0;
}
