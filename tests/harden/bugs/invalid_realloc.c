/* EXPECT: heapledger: ERROR: invalid-realloc on 0x* (300-byte block, tiny/*) */
#include <stdlib.h>
int main(void)
{
    char *p = malloc(300);
    free(p);
    p = realloc(p, 600);
    return p != 0;
}
