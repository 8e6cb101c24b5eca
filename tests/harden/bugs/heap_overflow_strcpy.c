/* EXPECT: heapledger: ERROR: heap-overflow on 0x* (8-byte block, tiny/*) */
#include <stdlib.h>
#include <string.h>
int main(void)
{
    char *name = malloc(8);
    strcpy(name, "overflowing");
    free(name);
    return 0;
}
